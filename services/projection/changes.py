"""Pure helpers of the projection: the latest feed position, and what events change in the views
(a game's `games` row; a challenge's `bot_challenges` rows, through `shared.ports.bot_index`).

Feed positions order with `shared.ports.views.fold.position_key`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from shared.catalog import get_game
from shared.messages.common import Event, GameCreated, GameFinished, Result
from shared.messages.envelope import RecordedEvent
from shared.model import challenges, evaluations, ladder_events, registry
from shared.model.tournaments import model as tournament_model
from shared.ports.bot_index import Answered, Closed, Issued, bot_news
from shared.store.port import position_key

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def latest(positions: Iterable[str]) -> str:
    """Returns the highest of `positions` in feed order."""
    return max(positions, key=position_key)


def to_ms(instant: datetime) -> int:
    """Returns the whole milliseconds from the epoch to `instant`."""
    return (instant - EPOCH) // _MS


def decode(recorded: RecordedEvent) -> Event:
    """Returns the event in `recorded` via its kind's codec; raises on unknown schema or kind."""
    if recorded.kind == tournament_model.KIND:
        return tournament_model.CODEC.decode(recorded)
    if recorded.kind == registry.KIND:
        return registry.CODEC.decode(recorded)
    if recorded.kind == challenges.KIND:
        return challenges.CODEC.decode(recorded)
    if recorded.kind == evaluations.KIND:
        return evaluations.CODEC.decode(recorded)
    if recorded.kind == ladder_events.KIND:
        return ladder_events.CODEC.decode(recorded)
    return get_game(recorded.kind).codec.decode(recorded)


_NOT_GAMES = (
    tournament_model.KIND,
    registry.KIND,
    challenges.KIND,
    evaluations.KIND,
    ladder_events.KIND,
)
"""The kinds of the streams that are no game's."""


class Created(NamedTuple):
    """A game's GameCreated event, with its version and its recording time."""

    version: int
    at_ms: int
    event: GameCreated


class Finished(NamedTuple):
    """A game's result, with the recording time of its GameFinished event."""

    at_ms: int
    result: Result


@dataclass
class GameChange:
    """The net effect of some of one game's events on its `games` row."""

    game_id: str
    version: int = 0
    created: Created | None = None
    finished: Finished | None = None

    def add(self, recorded: RecordedEvent, event: Event) -> None:
        """Folds one decoded event of this game in."""
        self.version = max(self.version, recorded.version)
        if isinstance(event, GameCreated):
            self.created = Created(recorded.version, recorded.recorded_at, event)
        elif isinstance(event, GameFinished):
            self.finished = Finished(recorded.recorded_at, event.result)


def game_changes(records: Iterable[RecordedEvent]) -> list[GameChange]:
    """Returns the change `records` make to each game's row, ordered by game id."""
    changes: dict[str, GameChange] = {}
    for recorded in records:
        event = decode(recorded)
        if recorded.kind in _NOT_GAMES:
            continue
        change = changes.setdefault(recorded.game_id, GameChange(recorded.game_id))
        change.add(recorded, event)
    return [changes[game_id] for game_id in sorted(changes)]


@dataclass
class ChallengeChange:
    """The net effect of some of one challenge's events on its `bot_challenges` rows: first
    delete the rows of the bots that answered (every row, once closed), then insert the rows
    of the bots it still waits for when it was issued among these events."""

    challenge_id: str
    issued: Issued | None = None
    issued_ms: int = 0
    waiting: list[str] = field(default_factory=list)
    """The bots it still waits for, of a ChallengeIssued among these events."""
    answered: list[str] = field(default_factory=list)
    closed: bool = False

    def add(self, recorded: RecordedEvent) -> None:
        """Folds one event of this challenge's stream in."""
        match bot_news(recorded):
            case Issued() as issued:
                self.issued, self.issued_ms = issued, recorded.recorded_at
                self.waiting = list(issued.bots)
            case Answered(bot=bot):
                self.answered.append(bot)
                if bot in self.waiting:
                    self.waiting.remove(bot)
            case Closed():
                self.closed, self.waiting = True, []


def challenge_changes(records: Iterable[RecordedEvent]) -> list[ChallengeChange]:
    """Returns the change `records` make to each challenge's rows, ordered by challenge id."""
    changes: dict[str, ChallengeChange] = {}
    for recorded in records:
        if recorded.kind != challenges.KIND:
            continue
        challenge_id = recorded.game_id.removeprefix(challenges.STREAM_PREFIX)
        changes.setdefault(challenge_id, ChallengeChange(challenge_id)).add(recorded)
    return [changes[challenge_id] for challenge_id in sorted(changes)]
