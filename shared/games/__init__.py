"""Pure rules engines, one module per game, reached through the registry in `base`."""

from shared.games.base import GameSpec, IllegalAction, InvalidRuleset, game_names, get_game

__all__ = ["GameSpec", "IllegalAction", "InvalidRuleset", "game_names", "get_game"]
