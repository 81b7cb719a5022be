"""Events, commands and results that every game shares.

Stored events are a contract: new fields get defaults, nothing is renamed or retyped.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec


class Event(msgspec.Struct, frozen=True, tag=True, tag_field="type"):
    """Base of every event; the tag is the class name (`"GameCreated"`)."""


class Action(msgspec.Struct, frozen=True, tag=True, tag_field="type", forbid_unknown_fields=True):
    """Base of every command a seat can take; the tag is the class name (`"PlayCards"`)."""


class Seat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who plays a seat: a built-in bot strategy run by the platform, or an external client.

    A tournament seat names its entrant (`name`) and the entrant's `version` label; ratings
    are kept per `name@version`. Ad-hoc seats leave `version` empty and are not rated.
    """

    kind: Literal["bot", "external"] = "bot"
    bot: str | None = None
    name: str | None = None
    version: str = ""

    @property
    def rating_key(self) -> str | None:
        """Returns the key this seat is rated under (`name@version`), None when unrated."""
        if self.kind != "bot" or not self.version:
            return None
        return f"{self.name or self.bot}@{self.version}"


class Result(msgspec.Struct, frozen=True):
    """How a game ended: one place per seat (1 is best, ties share), and game-specific figures."""

    status: str
    places: list[int]
    reason: str = ""
    scores: list[int] | None = None
    detail: dict[str, int] = {}


class GameCreated(Event, frozen=True):
    """A game was created: which game, with which ruleset and seats. Written by the service."""

    game: str
    ruleset: dict[str, Any]
    seats: list[Seat]
    created_at: str = ""
    bot_seed: str = ""
    """Seeds the built-in bots' choices (derived from the game's seed; hidden while it runs)."""
    tournament: str = ""
    """The tournament this game belongs to, if any."""
    tournament_key: str = ""
    """The game's key in its tournament's schedule."""


class GameFinished(Event, frozen=True):
    """The game is over; `result` holds the places and the reason."""

    result: Result
