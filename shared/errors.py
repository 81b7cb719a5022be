"""The errors every layer raises and every entry point maps: rules, rulesets, names, requests.

Each carries the field or the rule it is about, so that the game service can answer problem
details naming it and the CLI can say what to fix.
"""

from __future__ import annotations


class IllegalAction(Exception):
    """An action breaks a rule; `rule` names it, the message says how."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message


class GameOver(IllegalAction):
    """The game ended in a way that takes no request any more (aborted); `rule` names how.
    The game service answers it 409, not 422: the request was fine, the game is not."""


class InvalidRuleset(ValueError):
    """A ruleset cannot be played; `field` names the offending field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


class GameNotFound(KeyError):
    """No game is registered under that name."""


class UnknownGame(LookupError):
    """No game has that id."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class InvalidRequest(ValueError):
    """A request is malformed or names something that does not exist; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
