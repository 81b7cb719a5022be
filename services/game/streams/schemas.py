"""Bodies of the streams and long polls: a bot's turns and open challenges, and the data of its
`game_started` and `game_finished` events."""

from __future__ import annotations

from typing import Any

import msgspec

from shared.messages.common import Result
from shared.model.challenges import Challenge


class Turn(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game waiting for a bot's seat: post one of `legal_actions` at `version`."""

    game_id: str
    game: str
    seat: int
    version: int
    legal_actions: list[dict[str, Any]]
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game: when the seat's time runs out, in ms since the epoch."""


class ChallengeList(msgspec.Struct, frozen=True):
    """The open challenges waiting for the calling bot's answer, oldest first."""

    challenges: list[Challenge]


class Turns(msgspec.Struct, frozen=True):
    """The games waiting for the calling bot's move (empty when none came in time)."""

    turns: list[Turn]


class StartedGame(msgspec.Struct, frozen=True):
    """The data of a bot's `game_started` event: a game it has seats in was created."""

    game_id: str
    game: str
    seats: list[int]


class GameOver(msgspec.Struct, frozen=True):
    """The data of a bot's `game_finished` event: a game it has seats in is over; an aborted
    game's `result` has status `aborted`, no places, and its reason (`host`,
    `tournament_cancelled`, `stale`)."""

    game_id: str
    seats: list[int]
    result: Result
