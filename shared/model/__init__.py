"""Pure models of the platform beside the games: registry, challenges, tournaments, clocks, deals."""
