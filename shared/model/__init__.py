"""Pure models of the platform beside its games: registry, challenges, tournaments, deals."""
