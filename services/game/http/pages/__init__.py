"""The pages the game service serves: the arena (`arena`: tournaments, games, bots, ladders
and evaluations, drawn from the public API) and the game viewer (`viewer`: live and replay)."""
