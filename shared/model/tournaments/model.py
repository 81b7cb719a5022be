"""A tournament as an event-sourced process: its events, state and next steps (its definition:
`shared.model.tournaments.definition`, whose names this module re-exports).

The process manager is `advance(state)`: given what has happened (rounds scheduled, games
recorded), it returns the events that follow: the next round's games, a round's end, the
tournament's end. Whoever runs the tournament (in-process, or the workers reacting to
`GameFinished`) appends those events and creates the scheduled games.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Literal

import msgspec

from shared.messages.codec import EventCodec
from shared.messages.common import Event
from shared.model.tournaments import arena, formats, tiebreaks
from shared.model.tournaments.definition import (
    ARENA_MAX_GAMES,
    DESCRIPTION_LENGTH,
    MAX_GAMES,
    NAME_LENGTH,
    Entrant,
    Format,
    InvalidTournament,
    TournamentDefinition,
    TournamentWarning,
    description_of,
    display_name,
    duplicate_minimum,
    planned_games,
    resolve_entrants,
    validate,
    warnings,
)
from shared.model.tournaments.events import (
    AnyTournamentEvent,
    ArenaStarted,
    EntrantJoined,
    EntrantWithdrew,
    GameRecorded,
    RoundCompleted,
    RoundScheduled,
    ScheduledGame,
    TournamentCancelled,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from shared.model.tournaments.formats import PlannedGame

__all__ = [
    "CODEC",
    "DESCRIPTION_LENGTH",
    "KIND",
    "MAX_GAMES",
    "NAME_LENGTH",
    "AnyTournamentEvent",
    "ArenaStarted",
    "Entrant",
    "EntrantJoined",
    "EntrantWithdrew",
    "Format",
    "GameRecorded",
    "InvalidTournament",
    "RoundCompleted",
    "RoundScheduled",
    "ScheduledGame",
    "TournamentCancelled",
    "TournamentCreated",
    "TournamentDefinition",
    "TournamentEvent",
    "TournamentFinished",
    "TournamentState",
    "TournamentWarning",
    "advance",
    "busy",
    "description_of",
    "display_name",
    "duplicate_minimum",
    "duplicate_scores",
    "evolve",
    "fold",
    "pending",
    "planned_games",
    "ranked",
    "ranking",
    "resolve_entrants",
    "stream_id",
    "table_winners",
    "tiebreak_field",
    "validate",
    "warnings",
]


class TournamentState(msgspec.Struct, frozen=True):
    """What has happened so far."""

    definition: TournamentDefinition
    rounds: tuple[RoundScheduled, ...] = ()
    records: tuple[GameRecorded, ...] = ()
    completed: int = 0
    status: Literal["running", "finished", "cancelled"] = "running"
    winner: int | None = None
    started_ms: int | None = None
    """Arena: when its clock started (None: not yet, or another format)."""
    ends_ms: int | None = None
    """Arena: when it stops pairing."""
    withdrawn: frozenset[int] = frozenset()
    """Arena: the entrants that left."""


def evolve(state: TournamentState | None, event: Event) -> TournamentState:
    """Returns the state after `event`."""
    if isinstance(event, TournamentCreated):
        return TournamentState(definition=event.definition)
    assert state is not None
    if isinstance(event, RoundScheduled):
        return msgspec.structs.replace(state, rounds=(*state.rounds, event))
    if isinstance(event, GameRecorded):
        return msgspec.structs.replace(state, records=(*state.records, event))
    if isinstance(event, RoundCompleted):
        return msgspec.structs.replace(state, completed=event.round)
    if isinstance(event, TournamentFinished):
        winner = event.winner
        if winner is None and state.definition.format != "knockout":
            winner = ranking(state)[0]
        return msgspec.structs.replace(state, status="finished", winner=winner)
    if isinstance(event, TournamentCancelled):
        return msgspec.structs.replace(state, status="cancelled")
    if isinstance(event, ArenaStarted):
        return msgspec.structs.replace(state, started_ms=event.started_ms, ends_ms=event.ends_ms)
    if isinstance(event, EntrantJoined):
        entrants = [*state.definition.entrants, event.entrant]
        joined = msgspec.structs.replace(state.definition, entrants=entrants)
        return msgspec.structs.replace(state, definition=joined)
    if isinstance(event, EntrantWithdrew):
        return msgspec.structs.replace(state, withdrawn=state.withdrawn | {event.entrant})
    raise TypeError(f"a tournament has no event {type(event).__name__}")


def fold(events: Sequence[Event]) -> TournamentState:
    """Returns the state after folding a tournament's events."""
    state: TournamentState | None = None
    for event in events:
        state = evolve(state, event)
    assert state is not None
    return state


def pending(state: TournamentState) -> list[ScheduledGame]:
    """Returns the scheduled games of the current round that have no result yet (an arena:
    of every pairing so far)."""
    if not state.rounds:
        return []
    done = {record.key for record in state.records}
    rounds = state.rounds if state.definition.format == "arena" else state.rounds[-1:]
    return [game for rnd in rounds for game in rnd.games if game.key not in done]


def busy(state: TournamentState) -> set[int]:
    """Returns the entrants at a table whose game has no result yet."""
    return {entrant for game in pending(state) for entrant in game.table}


def advance(
    state: TournamentState, tournament_id: str, now_ms: int | None = None
) -> list[TournamentEvent]:
    """Returns what follows from `state`: a round to schedule, a round's end, the end. An
    arena decides at `now_ms` (ms since the epoch; None: it decides nothing but its start)
    through `_advance_arena`."""
    if state.status != "running":
        return []
    if state.definition.format == "arena":
        return _advance_arena(state, tournament_id, now_ms)
    if not state.rounds:
        return [_schedule(state, tournament_id, 1)]
    current = state.rounds[-1].round
    if pending(state) or state.completed == current:
        return []
    events: list[TournamentEvent] = [RoundCompleted(round=current)]
    after = evolve(state, events[0])
    finished, winner = _is_over(after)
    if finished:
        events.append(TournamentFinished(winner=winner))
    else:
        events.append(_schedule(after, tournament_id, current + 1))
    return events


def _advance_arena(
    state: TournamentState, tournament_id: str, now_ms: int | None
) -> list[TournamentEvent]:
    """Returns what follows in an arena at `now_ms`: its clock's start (with its first
    pairing); while its time runs and it has started fewer than ARENA_MAX_GAMES games, a
    pairing of its free entrants (`arena.pair`; a rematch only when no game is in progress);
    after its time (or that many games), once no game of it is in progress, its end: its
    last pairing completed (`RoundCompleted`, which completes every pairing) and finished."""
    d = state.definition
    if state.ends_ms is None:
        if now_ms is None:
            return []
        assert isinstance(d.duration_seconds, int)
        start = ArenaStarted(started_ms=now_ms, ends_ms=now_ms + d.duration_seconds * 1000)
        return [start, *_advance_arena(evolve(state, start), tournament_id, now_ms)]
    if now_ms is None:
        return []
    started = sum(len(rnd.games) for rnd in state.rounds)
    in_progress = busy(state)
    if now_ms >= state.ends_ms or started >= ARENA_MAX_GAMES:
        if in_progress:
            return []
        # One RoundCompleted for every pairing: the leaderboard rates the arena's games then.
        done = [RoundCompleted(round=len(state.rounds))] if state.rounds else []
        return [*done, TournamentFinished()]
    free = [e for e in range(len(d.entrants)) if e not in in_progress and e not in state.withdrawn]
    history = [game.table for rnd in state.rounds for game in rnd.games]
    tables, _ = arena.pair(
        free,
        d.table_size,
        _points(state),
        history,
        d.seed,
        rematch_ok=not in_progress,
        max_tables=ARENA_MAX_GAMES - started,
    )
    if not tables:
        return []
    round_no = len(state.rounds) + 1
    games = [
        _scheduled(
            tournament_id,
            round_no,
            index,
            PlannedGame(table, formats.game_seed(d.seed, round_no, index)),
        )
        for index, table in enumerate(tables)
    ]
    return [RoundScheduled(round=round_no, games=games)]


def _schedule(state: TournamentState, tournament_id: str, round_no: int) -> RoundScheduled:
    """Returns round `round_no`'s games under the tournament's format."""
    d = state.definition
    n = len(d.entrants)
    byes: list[int] = []
    if d.format == "round_robin":
        planned = formats.round_robin(n, d.table_size, d.games_per_table, d.seed)
    elif d.format == "duplicate":
        planned = formats.duplicate(n, d.table_size, d.games_per_table, d.seed)
    elif d.format == "swiss":
        history = [game.table for rnd in state.rounds for game in rnd.games]
        byes_had: dict[int, int] = {}
        for rnd in state.rounds:
            for entrant in rnd.byes:
                byes_had[entrant] = byes_had.get(entrant, 0) + 1
        planned, byes = formats.swiss_round(
            n, d.table_size, round_no, _points(state), history, byes_had, d.seed,
            d.games_per_table,
        )  # fmt: skip
    else:
        planned, byes = formats.knockout_round(
            _alive(state), d.table_size, round_no, d.seed, d.games_per_table
        )
    games = [_scheduled(tournament_id, round_no, i, game) for i, game in enumerate(planned)]
    return RoundScheduled(round=round_no, games=games, byes=byes)


def _scheduled(tournament_id: str, round_no: int, index: int, game: PlannedGame) -> ScheduledGame:
    """Returns a planned game with the key its game is created under."""
    return ScheduledGame(
        key=f"{tournament_id}:{round_no}:{index}", table=game.table, seed=game.seed, deal=game.deal
    )


def _bye_games(definition: TournamentDefinition) -> int:
    """Returns how many games a bye stands for: a table's games (Swiss, knockout)."""
    return definition.games_per_table if definition.format in ("swiss", "knockout") else 1


def _points(state: TournamentState) -> dict[int, float]:
    """Returns each entrant's points so far (table size minus place; a bye as a win of each
    game its round's tables play)."""
    size = state.definition.table_size
    points: dict[int, float] = {}
    for entrant, place in _results(state):
        points[entrant] = points.get(entrant, 0.0) + (size - place)
    bye = (size - 1) * _bye_games(state.definition)
    for rnd in state.rounds[: state.completed]:
        for entrant in rnd.byes:
            points[entrant] = points.get(entrant, 0.0) + bye
    return points


def _results(state: TournamentState) -> list[tuple[int, int]]:
    """Returns (entrant, place) of every recorded game."""
    tables = {game.key: game.table for rnd in state.rounds for game in rnd.games}
    return [
        (entrant, place)
        for record in state.records
        for entrant, place in zip(tables[record.key], record.places, strict=True)
    ]


def tiebreak_field(state: TournamentState) -> tiebreaks.Field:
    """Returns what the tie-breaks read of the tournament: its recorded games in schedule
    order, the byes of its completed rounds, and its format's own (duplicate scores,
    knockout stages)."""
    d = state.definition
    records = {record.key: record for record in state.records}
    games = [
        tiebreaks.Played(rnd.round, game.table, tuple(records[game.key].places))
        for rnd in state.rounds
        for game in rnd.games
        if game.key in records
    ]
    scores = _duplicate_fractions(state) if d.format == "duplicate" else {}
    return tiebreaks.Field(
        entrants=len(d.entrants),
        table_size=d.table_size,
        format=d.format,
        seed=d.seed,
        rounds=d.rounds,
        games=games,
        byes={rnd.round: list(rnd.byes) for rnd in state.rounds[: state.completed]},
        games_per_bye=_bye_games(d),
        scores=scores,
        stages=_stages(state) if d.format == "knockout" else {},
    )


def ranked(state: TournamentState) -> tuple[list[int], list[tiebreaks.Values]]:
    """Returns every entrant, best first, under its format's tie-breaks
    (`tiebreaks.ORDER`), and each one's tie-break values (in entrant order)."""
    return tiebreaks.rank(tiebreak_field(state))


def ranking(state: TournamentState) -> list[int]:
    """Returns every entrant, best first, under its format's order (`tiebreaks.ORDER`): never
    the order of entry, a tie on every count going to the seeded drawing of lots. The
    standings list their lines in this order; a finished round robin, Swiss or duplicate
    names its first as the winner, a knockout the entrant that came through every round."""
    return ranked(state)[0]


def duplicate_scores(state: TournamentState) -> dict[int, float]:
    """Returns each entrant's duplicate score: over its recorded games, its points minus the
    mean points of the same seat on the same deal at the deal's other recorded tables (a
    deal recorded at one table only compares nothing)."""
    return {entrant: float(score) for entrant, score in _duplicate_fractions(state).items()}


def _duplicate_fractions(state: TournamentState) -> dict[int, Fraction]:
    """Returns `duplicate_scores` exactly, as fractions."""
    size = state.definition.table_size
    records = {record.key: record for record in state.records}
    by_seat: dict[tuple[int, str, int], list[tuple[int, Fraction]]] = {}
    for rnd in state.rounds:
        for game in rnd.games:
            record = records.get(game.key)
            if record is None:
                continue
            for seat, (entrant, place) in enumerate(zip(game.table, record.places, strict=True)):
                by_seat.setdefault((rnd.round, game.deal, seat), []).append(
                    (entrant, Fraction(size - place))
                )
    scores: dict[int, Fraction] = {}
    for results in by_seat.values():
        total = sum((points for _, points in results), Fraction(0))
        for entrant, points in results:
            others = len(results) - 1
            compared = points - (total - points) / others if others else Fraction(0)
            scores[entrant] = scores.get(entrant, Fraction(0)) + compared
    return scores


def table_winners(state: TournamentState, rnd: RoundScheduled) -> list[int]:
    """Returns the winner of each table of a knockout round, in table order: the most points
    over the table's games, a tie going to the seeded drawing of lots (never a seat)."""
    d = state.definition
    by_key = {record.key: record for record in state.records}
    totals: dict[frozenset[int], dict[int, int]] = {}
    for game in rnd.games:
        table = totals.setdefault(frozenset(game.table), {})
        for entrant, place in zip(game.table, by_key[game.key].places, strict=True):
            table[entrant] = table.get(entrant, 0) + d.table_size - place
    drawn = tiebreaks.lots(len(d.entrants), d.seed)
    return [max(table, key=lambda e: (table[e], -drawn[e])) for table in totals.values()]


def _alive(state: TournamentState) -> list[int]:
    """Returns the knockout's entrants still in: the field, then each round's winners and byes."""
    if not state.rounds:
        return list(range(len(state.definition.entrants)))
    last = state.rounds[-1]
    return table_winners(state, last) + list(last.byes)


def _stages(state: TournamentState) -> dict[int, int]:
    """Returns how many completed knockout rounds each entrant came through: read from the
    next round's schedule (its tables and byes), and for the last round from its winners."""
    stages: dict[int, int] = {}
    completed = state.rounds[: state.completed]
    for index, rnd in enumerate(completed):
        if index + 1 < len(state.rounds):
            following = state.rounds[index + 1]
            through = [e for game in following.games for e in game.table] + list(following.byes)
        else:
            through = table_winners(state, rnd) + list(rnd.byes)
        for entrant in dict.fromkeys(through):
            stages[entrant] = stages.get(entrant, 0) + 1
    return stages


def _is_over(state: TournamentState) -> tuple[bool, int | None]:
    """Returns whether the tournament is over after its last completed round, and any winner."""
    d = state.definition
    if d.format in ("round_robin", "duplicate"):
        return True, ranking(state)[0]
    if d.format == "swiss":
        over = state.completed >= d.rounds
        return over, ranking(state)[0] if over else None
    alive = _alive(state)
    return (len(alive) == 1, alive[0] if len(alive) == 1 else None)


KIND = "tournament"


CODEC: EventCodec[TournamentEvent] = EventCodec(AnyTournamentEvent)


def stream_id(tournament_id: str) -> str:
    """Returns the id of a tournament's event stream."""
    return f"tournament:{tournament_id}"
