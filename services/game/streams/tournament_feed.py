"""What a tournament's public stream says at each event of the tournament's own stream: a pure
translation, so that every connection derives the same messages with the same ids.

Every message comes from the tournament's event stream (`tournament:<id>`) alone, never from
its games' streams: one stream to wait on per client, one slot on a Redis Cluster, and ids
that order everything. A message's id is `V-i`: the version `V` of the tournament event it
follows from and its index `i` among that event's messages. The messages of each event:

- `TournamentCreated`: `standings` (every entrant at nought);
- `RoundScheduled`: `round_started`, then one `game_started` per game of the round (the
  tournament has fixed the game and its id; the process manager creates it right after);
- `GameRecorded`: `game_finished` (the record is what counts for the standings), then
  `standings`. A duplicate deal's table is sealed until the deal's last table is recorded:
  its `game_finished` follows that last record, with its deal's other tables';
- `RoundCompleted`: nothing (its games were told as they were recorded);
- an arena's `RoundScheduled` is a pairing of free entrants (its `round` numbers the
  pairings); `ArenaStarted`: nothing; `EntrantJoined`, `EntrantWithdrew`: `standings`;
- `TournamentFinished`: `standings`, then `tournament_finished`;
- `TournamentCancelled`: `standings`, then `tournament_cancelled`, naming the games the
  tournament never recorded (not rated: `tournament_cancelled`). The records of a sealed deal
  are not told once the tournament is cancelled (its tables stop being recorded).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from services.game.streams.schemas import (
    StreamedGame,
    TournamentGameFinished,
    TournamentGameStarted,
    TournamentRoundStarted,
    TournamentStandingsChanged,
    TournamentStreamCancelled,
    TournamentStreamFinished,
)
from shared.messages.common import Event
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import (
    EntrantJoined,
    EntrantWithdrew,
    GameRecorded,
    RoundScheduled,
    TournamentCancelled,
    TournamentCreated,
    TournamentFinished,
    TournamentState,
    evolve,
)
from shared.model.tournaments.sealing import other_tables, unsealed
from shared.model.tournaments.standings import standings
from shared.model.unrated import tournament_game_reason

EVENT_ID = re.compile(r"^(\d{1,12})(?:-(\d{1,7}))?$")
"""A message id: `V-i`; `V` alone stands for every message of version `V`."""

EVENTS = (
    "standings",
    "round_started",
    "game_started",
    "game_finished",
    "tournament_finished",
    "tournament_cancelled",
)
"""Every event name the stream sends (`sse_events.TOURNAMENT_STREAM` documents each)."""

TERMINAL = frozenset({"tournament_finished", "tournament_cancelled"})
"""The messages after which the stream ends."""


class BadEventId(ValueError):
    """A Last-Event-ID that is no message id of a tournament stream."""


@dataclass(frozen=True)
class Message:
    """One message of the stream: its id's parts, its event name and its data."""

    version: int
    index: int
    event: str
    data: Any

    @property
    def id(self) -> str:
        """Returns the message's id, `V-i`."""
        return f"{self.version}-{self.index}"

    @property
    def key(self) -> tuple[int, int]:
        """Returns what orders the messages: (version, index)."""
        return self.version, self.index


def parse_event_id(text: str) -> tuple[int, int]:
    """Returns the (version, index) after which a Last-Event-ID resumes (`V` alone: after
    every message of version V); raises BadEventId."""
    matched = EVENT_ID.match(text)
    if matched is None:
        raise BadEventId(
            f"{text[:40]!r} is no id of this stream: `V-i` (the `id:` of the last message)"
        )
    version, index = matched.groups()
    return int(version), (int(index) if index is not None else 10**7)


def _shown(state: TournamentState) -> TournamentState:
    """Returns what the tournament shows of itself: without sealed duplicate tables' records
    (a table that records no more counts as running: nothing sealed is told)."""
    return unsealed(state, lambda _key: False)


def _standings(tournament_id: str, state: TournamentState) -> TournamentStandingsChanged:
    """Returns the standings as the tournament shows them at `state`."""
    return TournamentStandingsChanged(tournament_id, state.status, standings(_shown(state)))


def _finished(tournament_id: str, state: TournamentState, record: GameRecorded) -> Any:
    """Returns the `game_finished` data of a record, with whether the game is rated."""
    table = next(game.table for rnd in state.rounds for game in rnd.games if game.key == record.key)
    rated, unrated = tournament_game_reason(state, table, record.game_id)
    return TournamentGameFinished(
        tournament_id=tournament_id,
        round=record.round,
        key=record.key,
        game_id=record.game_id,
        entrants=list(table),
        places=list(record.places),
        status=record.status,
        rated=bool(rated),
        unrated=unrated,
    )


def _released(state: TournamentState, record: GameRecorded) -> list[GameRecorded]:
    """Returns the records a new `record` lets the stream tell: itself, unless another table
    of its deal is unrecorded; the deal's every record when it is the last."""
    if state.status != "running" or other_tables(state, record.key):
        return []
    sealed = [
        game.key
        for rnd in state.rounds
        for game in rnd.games
        if game.deal and any(g.key == record.key and g.deal == game.deal for g in rnd.games)
    ]
    if not sealed:
        return [record]
    return [r for r in state.records if r.key in sealed]


def messages(
    tournament_id: str, before: TournamentState | None, event: Event, version: int
) -> tuple[TournamentState, list[Message]]:
    """Returns the state after `event` (version `version` of the tournament's stream) and the
    stream's messages for it."""
    after = evolve(before, event)
    out: list[tuple[str, Any]] = []
    if isinstance(event, TournamentCreated):
        out.append(("standings", _standings(tournament_id, after)))
    elif isinstance(event, RoundScheduled):
        games = [
            StreamedGame(key=g.key, game_id=game_id_for(g.key), entrants=list(g.table), deal=g.deal)
            for g in event.games
        ]
        out.append(
            ("round_started", TournamentRoundStarted(tournament_id, event.round, games, event.byes))
        )
        out += [
            ("game_started", TournamentGameStarted(tournament_id, event.round, game))
            for game in games
        ]
    elif isinstance(event, GameRecorded):
        told = _released(after, event)
        out += [("game_finished", _finished(tournament_id, after, record)) for record in told]
        if told:
            out.append(("standings", _standings(tournament_id, after)))
    elif isinstance(event, TournamentFinished):
        out.append(("standings", _standings(tournament_id, after)))
        labels = [entrant.label for entrant in after.definition.entrants]
        winner = after.winner
        label = labels[winner] if winner is not None and 0 <= winner < len(labels) else None
        out.append(("tournament_finished", TournamentStreamFinished(tournament_id, winner, label)))
    elif isinstance(event, (EntrantJoined, EntrantWithdrew)):
        out.append(("standings", _standings(tournament_id, after)))
    elif isinstance(event, TournamentCancelled):
        recorded = {record.key for record in after.records}
        unrecorded = [
            game_id_for(game.key)
            for rnd in after.rounds
            for game in rnd.games
            if game.key not in recorded
        ]
        out.append(("standings", _standings(tournament_id, after)))
        out.append(
            (
                "tournament_cancelled",
                TournamentStreamCancelled(tournament_id, event.reason, unrecorded),
            )
        )
    assert all(name in EVENTS for name, _ in out)
    return after, [Message(version, i, name, data) for i, (name, data) in enumerate(out)]


def coalesced(batch: list[Message]) -> list[Message]:
    """Returns `batch` with only its last `standings` (each supersedes the ones before it):
    a reconnect's catch-up sends the standings as they are now, not every step to them."""
    last = max((i for i, m in enumerate(batch) if m.event == "standings"), default=-1)
    return [m for i, m in enumerate(batch) if m.event != "standings" or i == last]
