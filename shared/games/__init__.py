"""Pure rules engines, one module per game, behind the game interface in `base`."""
