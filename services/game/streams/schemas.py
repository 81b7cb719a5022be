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
    """The game's id."""
    game: str
    """The game's name."""
    seat: int
    """The bot's seat the game waits for."""
    version: int
    """The game's version: post the action at this `expected_version`."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post now, in a stable order."""
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game: when the seat's time runs out, in ms since the epoch."""


class ChallengeList(msgspec.Struct, frozen=True):
    """The open challenges waiting for the calling bot's answer, oldest first."""

    challenges: list[Challenge]
    """The open challenges, oldest first."""


class Turns(msgspec.Struct, frozen=True):
    """The games waiting for the calling bot's move (empty when none came in time)."""

    turns: list[Turn]
    """The games waiting for the bot, one item per seat."""


class StartedGame(msgspec.Struct, frozen=True):
    """The data of a bot's `game_started` event: a game it has seats in was created."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name."""
    seats: list[int]
    """The bot's seats in it."""


class GameOver(msgspec.Struct, frozen=True):
    """The data of a bot's `game_finished` event: a game it has seats in is over."""

    game_id: str
    """The game's id."""
    seats: list[int]
    """The bot's seats in it."""
    result: Result
    """How the game ended."""
