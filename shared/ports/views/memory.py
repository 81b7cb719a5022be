"""The in-memory twin of the tournament views: folds any event store's feed on demand.

Each read first folds the feed entries appended since the last read, in feed order, so
it is always as fresh as the store. The embedded default (`CARDARENA_STORE=memory`)
serves the API's tournament, leaderboard and game list reads from it.
"""

from __future__ import annotations

import heapq
import threading
from dataclasses import dataclass

from shared.catalog import get_game
from shared.messages.common import GameAborted, GameCreated, GameFinished, Seat
from shared.messages.envelope import RecordedEvent
from shared.model.tournaments import model
from shared.model.tournaments.model import GameRecorded
from shared.model.tournaments.standings import standings
from shared.ports.views.fold import (
    RatedGame,
    RatingBook,
    game_summary,
    ranked,
    rated_at,
    rated_game,
    rated_record,
    summary,
    tournament_id_of,
)
from shared.ports.views.port import (
    GameSummary,
    LeaderboardEntry,
    RatingPoint,
    TournamentStandings,
    TournamentStatus,
    TournamentSummary,
    TournamentViews,
)
from shared.store.port import EventStore, FeedEntry, own_position, position_key

_GAME_TYPES = frozenset({"GameCreated", "GameFinished", "GameAborted"})
"""The only events of a game's stream that the views read."""


@dataclass
class _Tournament:
    """A tournament's folded state, and the feed position and time of its first event."""

    state: model.TournamentState
    created: tuple[int, int]
    created_ms: int


@dataclass
class _Game:
    """A game's line as folded so far: its creation, and its result's status and time (ms)
    once it ended."""

    game: str
    seats: list[Seat]
    created_ms: int
    tournament: str
    finished: tuple[str, int] | None = None
    forked: bool = False
    abort_reason: str | None = None
    """Its GameAborted's reason; None unless aborted."""


class InMemoryTournamentViews(TournamentViews):
    """Tournament views folded in this process from `store.read_feed`; thread-safe."""

    def __init__(self, store: EventStore, batch: int = 1000) -> None:
        self._store = store
        self._batch = batch
        self._lock = threading.Lock()
        self._position = "0"
        self._seats: dict[str, tuple[str, list[Seat]]] = {}
        """The games of a tournament: rated when their round completes, not as they end."""
        self._tournaments: dict[str, _Tournament] = {}
        self._book = RatingBook()
        self._history: dict[tuple[str, str], list[RatingPoint]] = {}
        self._games: dict[str, _Game] = {}
        """Every game created: the list of games, and the running ones of no tournament."""

    def tournaments(
        self, status: TournamentStatus | None = None, game: str | None = None, limit: int = 50
    ) -> list[TournamentSummary]:
        with self._lock:
            self._catch_up()
            newest = sorted(
                self._tournaments.items(), key=lambda item: item[1].created, reverse=True
            )
            lines = [
                summary(tournament_id, t.state, t.created_ms)
                for tournament_id, t in newest
                if (status is None or t.state.status == status)
                and (game is None or t.state.definition.game == game)
            ]
        return lines[:limit]

    def standings(self, tournament_id: str) -> TournamentStandings | None:
        with self._lock:
            self._catch_up()
            known = self._tournaments.get(tournament_id)
        if known is None:
            return None
        return TournamentStandings(tournament_id, known.state.status, standings(known.state))

    def leaderboard(self, game: str, limit: int = 100) -> list[LeaderboardEntry]:
        with self._lock:
            self._catch_up()
            entries = [entry for (name, _), entry in self._book.entries.items() if name == game]
        return ranked(entries)[:limit]

    def rating_history(self, game: str, key: str) -> list[RatingPoint]:
        with self._lock:
            self._catch_up()
            return list(self._history.get((game, key), []))

    def recent_games(
        self, game: str | None = None, status: str | None = None, limit: int = 20
    ) -> list[GameSummary]:
        with self._lock:
            self._catch_up()
            matching = (
                (game_id, g)
                for game_id, g in self._games.items()
                if (game is None or g.game == game)
                and (status is None or (g.finished[0] if g.finished else "playing") == status)
            )
            newest = heapq.nlargest(limit, matching, key=lambda item: (item[1].created_ms, item[0]))
            return [
                game_summary(
                    game_id,
                    g.game,
                    g.seats,
                    g.created_ms,
                    g.tournament,
                    g.finished,
                    forked=g.forked,
                    abort_reason=g.abort_reason,
                    cancelled_unrecorded=self._cancelled_unrecorded(game_id, g.tournament),
                )
                for game_id, g in newest
            ]

    def _cancelled_unrecorded(self, game_id: str, tournament_id: str) -> bool:
        """Returns whether the game belongs to a cancelled tournament that never recorded it."""
        known = self._tournaments.get(tournament_id) if tournament_id else None
        if known is None or known.state.status != "cancelled":
            return False
        return all(record.game_id != game_id for record in known.state.records)

    def standalone_games(self, limit: int) -> list[str]:
        with self._lock:
            self._catch_up()
            running = (
                (g.created_ms, game_id)
                for game_id, g in self._games.items()
                if not g.tournament and g.finished is None
            )
            oldest = heapq.nsmallest(limit, running)
        return [game_id for _, game_id in oldest]

    def _catch_up(self) -> None:
        """Folds every feed entry past the last one folded."""
        while entries := self._store.read_feed(self._position, self._batch):
            for entry in entries:
                self._fold(entry)
            self._position = entries[-1].position

    def _fold(self, entry: FeedEntry) -> None:
        """Folds one feed entry into the views."""
        recorded = entry.event
        if recorded.kind == model.KIND:
            tournament_id = tournament_id_of(recorded.game_id)
            event = model.CODEC.decode(recorded)
            known = self._tournaments.get(tournament_id)
            if known is None:
                created = position_key(own_position(entry))
                state = model.evolve(None, event)
                self._tournaments[tournament_id] = _Tournament(state, created, recorded.recorded_at)
            else:
                known.state = model.evolve(known.state, event)
                for record in rated_at(known.state, event):
                    self._rate_record(record, recorded.recorded_at)
            return
        if recorded.type not in _GAME_TYPES:
            return
        decoded = get_game(recorded.kind).codec.decode(recorded)
        if isinstance(decoded, GameCreated):
            self._games[recorded.game_id] = _Game(
                decoded.game,
                list(decoded.seats),
                recorded.recorded_at,
                decoded.tournament,
                forked=bool(decoded.forked_from),
            )
            if not decoded.forked_from:  # a fork (a what-if) is never rated
                self._seats[recorded.game_id] = (decoded.game, list(decoded.seats))
        elif isinstance(decoded, GameAborted):  # over, with no result to rate
            if (line := self._ended(recorded, decoded)) is not None:
                line.abort_reason = decoded.result.reason
            self._seats.pop(recorded.game_id, None)
        elif isinstance(decoded, GameFinished):
            line = self._ended(recorded, decoded)
            # A tournament's game is rated when its round completes (`_rate_record`).
            if (line is None or not line.tournament) and recorded.game_id in self._seats:
                self._rate(recorded, decoded)

    def _ended(self, recorded: RecordedEvent, finished: GameFinished) -> _Game | None:
        """Marks a game's line over, with its result's status and the time of `finished`;
        returns the line (None for a game whose creation the views never saw)."""
        known = self._games.get(recorded.game_id)
        if known is not None:
            known.finished = (finished.result.status, recorded.recorded_at)
        return known

    def _rate(self, recorded: RecordedEvent, finished: GameFinished) -> None:
        """Folds a game's GameFinished into the ratings, when the game is rated."""
        game, seats = self._seats.pop(recorded.game_id)
        rated = rated_game(game, recorded.game_id, seats, finished.result, recorded.recorded_at)
        self._apply(rated)

    def _rate_record(self, record: GameRecorded, at_ms: int) -> None:
        """Folds a tournament's recorded game into the ratings, when the game is rated."""
        known = self._seats.pop(record.game_id, None)
        if known is not None:
            self._apply(rated_record(known[0], known[1], record, at_ms))

    def _apply(self, rated: RatedGame | None) -> None:
        """Folds a rated game into the book and the histories."""
        if rated is not None:
            for point in self._book.apply(rated):
                self._history.setdefault((rated.game, point.key), []).append(point)
