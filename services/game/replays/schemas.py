"""Bodies of the replay routes: a game replayed at a version, and who plays a fork."""

from __future__ import annotations

from typing import Any

import msgspec

from services.game.http.schemas import EventItem, SeatSpec
from shared.messages.common import Result, Seat


class Replay(msgspec.Struct, frozen=True):
    """A game as it was after event `version`, with its events up to there, as the caller
    may see them.

    `state` (the whole engine state) only for a finished game replayed without a seat;
    `view` (what `seat` knew) only with a seat. At version 1 only GameCreated exists, so
    both are null then, and `result` is null until the game is over at `version`.
    """

    game_id: str
    """The game's id."""
    game: str
    """The game's name."""
    version: int
    """The version the game is replayed at."""
    last_version: int
    """The game's last version."""
    over: bool
    """Whether the game is over at `version`: its result is decided by event `version` or
    before (false at earlier versions of a finished game, and while its deal is sealed)."""
    finished: bool
    """Whether the game is over at its last version: its whole log is then public, and a
    replay without `seat` is allowed (false while its deal is sealed)."""
    seat: int | None
    """The seat whose knowledge the replay shows; null for the whole (public) game."""
    seats: list[Seat]
    """Who plays each seat, in seat order."""
    ruleset: dict[str, Any]
    """The game's ruleset, every option a field."""
    state: dict[str, Any] | None
    """The engine's whole state at `version` (a finished game replayed without a seat); else
    null."""
    view: dict[str, Any] | None
    """What `seat` knew at `version`; null without a seat or at version 1."""
    events: list[EventItem]
    """The events up to `version`, as the caller may see them."""
    result: Result | None
    """The result, once the game is over at `version`; else null."""


class ForkGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who plays the fork (as in `POST /v1/games`; none: the original's seats), and a seed
    for its bots' choices (none: random)."""

    seats: list[SeatSpec] | None = None
    """Who plays the fork's seats, as in `createGame` (none: the original's seats)."""
    seed: int | str | None = None
    """Seeds the fork's built-in bots' choices (none: random)."""
