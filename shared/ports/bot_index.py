"""Which games and challenges wait for which bot: the bot index port and its in-memory twin.

A bot (`name@version`) is seated in a game by the seats bound to it (`Seat.bound_bot`) in the
game's `GameCreated`; the game runs until its `GameFinished` (or `GameAborted`). A challenge
waits for a bot from the `ChallengeIssued` that names it pending until the bot accepts or
declines, an event closes the challenge (declined, cancelled, started) or it expires.
`bot_news` says what one event means to an index; both implementations fold with it.

Two implementations: `FeedBotIndex`, the twin, folds the event store's whole feed in this
process (the embedded default keeps every event in memory anyway, and its store is never
trimmed); `services.projection.bot_index.ProjectedBotIndex` reads the projection's views at
its checkpoint and only the feed after it, so its cost does not grow with history.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from shared.catalog import get_game
from shared.errors import GameNotFound
from shared.messages.common import GameCreated, Seat
from shared.messages.envelope import RecordedEvent
from shared.model import challenges
from shared.model.challenges import (
    ChallengeAccepted,
    ChallengeCancelled,
    ChallengeDeclined,
    ChallengeExpired,
    ChallengeIssued,
    ChallengeStarted,
)
from shared.store.port import EventStore

BoundSeats = dict[str, tuple[int, ...]]
"""Per bot (`name@version`): the seats of one game bound to it, in seat order."""


@dataclass(frozen=True)
class Created:
    """A game was created with these seats bound to bots (possibly none)."""

    game_id: str
    seats: BoundSeats


@dataclass(frozen=True)
class Finished:
    """A game finished."""

    game_id: str


@dataclass(frozen=True)
class Issued:
    """A challenge was issued, waiting for `bots` until `expires_at`."""

    challenge_id: str
    bots: tuple[str, ...]
    expires_at: datetime


@dataclass(frozen=True)
class Answered:
    """`bot` accepted a challenge: it no longer waits for that bot."""

    challenge_id: str
    bot: str


@dataclass(frozen=True)
class Closed:
    """A challenge was declined, cancelled, started or recorded expired: it waits for nobody."""

    challenge_id: str


News = Created | Finished | Issued | Answered | Closed


def bound_seats(seats_of_game: Sequence[Seat]) -> BoundSeats:
    """Returns the seats of a game (its `GameCreated.seats`) bound to each bot."""
    seats: dict[str, list[int]] = {}
    for index, seat in enumerate(seats_of_game):
        if seat.bound_bot is not None:
            seats.setdefault(seat.bound_bot, []).append(index)
    return {bot: tuple(found) for bot, found in seats.items()}


def bot_news(recorded: RecordedEvent) -> News | None:
    """Returns what `recorded` changes in a bot index (None: nothing); only the events that
    change it are decoded. Raises on an event of those types that does not decode."""
    if recorded.kind == challenges.KIND:
        return _challenge_news(recorded)
    if recorded.type in {"GameFinished", "GameAborted"}:
        return Finished(recorded.game_id)
    if recorded.type != "GameCreated":
        return None
    try:
        created = get_game(recorded.kind).codec.decode(recorded)
    except GameNotFound:
        return None
    if not isinstance(created, GameCreated):
        return None
    return Created(recorded.game_id, bound_seats(created.seats))


_CHALLENGE_TYPES = frozenset(
    {"ChallengeIssued", "ChallengeAccepted", "ChallengeDeclined", "ChallengeCancelled"}
    | {"ChallengeStarted", "ChallengeExpired"}
)


def _challenge_news(recorded: RecordedEvent) -> News | None:
    """Returns what an event of a challenge's stream changes in a bot index."""
    if recorded.type not in _CHALLENGE_TYPES:
        return None
    challenge_id = recorded.game_id.removeprefix(challenges.STREAM_PREFIX)
    match challenges.CODEC.decode(recorded):
        case ChallengeIssued() as issued:
            expires = datetime.fromisoformat(issued.expires_at)
            return Issued(issued.challenge_id, tuple(issued.pending), expires)
        case ChallengeAccepted(bot=bot):
            return Answered(challenge_id, bot)
        case ChallengeDeclined() | ChallengeCancelled() | ChallengeStarted() | ChallengeExpired():
            return Closed(challenge_id)
    return None


class BotIndex(abc.ABC):
    """The games a bot is seated in and the challenges waiting for it, as of the last
    `refresh` (or later: an implementation may know more). Thread-safe.

    After a `refresh`, every answer holds every event the store had appended before it.
    """

    @abc.abstractmethod
    def refresh(self) -> None:
        """Catches up with the events appended since the last refresh."""

    @abc.abstractmethod
    def running(self, bot: str) -> list[str]:
        """Returns the games `bot` is seated in that have not finished, in no set order."""

    @abc.abstractmethod
    def seats_of(self, bot: str, game_id: str) -> list[int]:
        """Returns the seats of `game_id` bound to `bot` (none: not its game, or no game);
        a game's seats never change, so this holds for any game ever created."""

    @abc.abstractmethod
    def challenges_of(self, bot: str, now: datetime) -> list[str]:
        """Returns the challenges waiting for `bot`'s answer at `now` (issued to it, not
        answered by it, not closed, not expired), oldest first (the stack's: those the
        projection holds as dead letters after the others)."""


@dataclass
class _Waiting:
    """A challenge the twin knows: the bots it still waits for, and when it expires."""

    bots: list[str]
    expires_at: datetime


class FeedBotIndex(BotIndex):
    """The twin: the index folded in this process from the whole feed of `store`, from its
    start; each refresh reads only what the feed gained since the last one."""

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._position = "0"
        self._seats: dict[str, dict[str, tuple[int, ...]]] = {}
        """Per bot: game id -> the seats bound to it, in creation order."""
        self._finished: set[str] = set()
        self._challenges: dict[str, _Waiting] = {}
        """Open challenges (expired or not) by id, in issue order."""

    def refresh(self) -> None:
        with self._lock:
            while page := self._store.read_feed(self._position, 1000):
                for entry in page:
                    self._apply(bot_news(entry.event))
                self._position = page[-1].position

    def _apply(self, news: News | None) -> None:
        """Folds one event's news in."""
        match news:
            case Created(game_id, seats):
                for bot, found in seats.items():
                    self._seats.setdefault(bot, {})[game_id] = found
            case Finished(game_id):
                self._finished.add(game_id)
            case Issued(challenge_id, bots, expires_at):
                self._challenges[challenge_id] = _Waiting(list(bots), expires_at)
            case Answered(challenge_id, bot):
                waiting = self._challenges.get(challenge_id)
                if waiting is not None and bot in waiting.bots:
                    waiting.bots.remove(bot)
            case Closed(challenge_id):
                self._challenges.pop(challenge_id, None)

    def running(self, bot: str) -> list[str]:
        with self._lock:
            return [g for g in self._seats.get(bot, {}) if g not in self._finished]

    def seats_of(self, bot: str, game_id: str) -> list[int]:
        with self._lock:
            return list(self._seats.get(bot, {}).get(game_id, ()))

    def challenges_of(self, bot: str, now: datetime) -> list[str]:
        with self._lock:
            return [
                challenge_id
                for challenge_id, waiting in self._challenges.items()
                if bot in waiting.bots and now < waiting.expires_at
            ]
