"""Bodies of the streams and long polls: a bot's turns and open challenges, and the data of its
`game_started` and `game_finished` events."""

from __future__ import annotations

from typing import Any

import msgspec

from shared.messages.common import Result
from shared.model.challenges import Challenge


class Turn(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game waiting for a bot's seat: post one of `legal_actions` at `version`.

    It carries the seat's view as `getSeatView` answers it at `version` (`view`, `status`,
    `to_move`, `legal_actions`, `deadline`), so a bot needs no other read to move.
    """

    game_id: str
    """The game waiting for the seat."""
    game: str
    """The game's name in the catalogue (`shithead`, `autobus`, `beggar`)."""
    seat: int
    """The bot's seat (0-based) the game waits for."""
    version: int
    """The game's version: post the action with this `expected_version`."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post now, in the rules' stable order."""
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game: when the seat's time runs out, in ms since the epoch."""
    view: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    """All the seat may know of the game at `version` (the `view` of `getSeatView`); other
    seats' hidden cards are never in it."""
    status: str | msgspec.UnsetType = msgspec.UNSET
    """The game's status at `version` (`playing` while it waits for the seat)."""
    to_move: list[int] | msgspec.UnsetType = msgspec.UNSET
    """The seats the game waits for at `version` (this one among them)."""


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
    """The data of a bot's `game_finished` event: a game it has seats in is over."""

    game_id: str
    seats: list[int]
    result: Result


class BotGame(msgspec.Struct, frozen=True):
    """One running game the calling bot is seated in."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name in the catalogue."""
    seats: list[int]
    """The seats (0-based) bound to the calling bot, in seat order."""
    version: int
    """The game's version now: a seat's turn is posted at it."""
    status: str
    """The game's status (`playing`)."""
    to_move: list[int]
    """The seats the game waits for now (any seat, the bot's or not)."""
    created_at: str
    """When the game was created (ISO 8601)."""


class BotGames(msgspec.Struct, frozen=True):
    """The calling bot's games in the status asked for, oldest first."""

    games: list[BotGame]
    """Each game with the bot's seats in it."""
