"""Tournament use cases over the event store: create, record finished games, run in-process.

A tournament's events live in their own stream (`tournament:<id>`, kind `tournament`).
Its games are created with the scheduled game's key as idempotency key, so a game is
created once however often its creation is retried, and its id follows from the key.

The workers' reconciliation plays on the games that the platform left waiting (their task
lost with a killed worker): a running tournament's (`reconcile`), and those of no
tournament (`reconcile_games`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterable, Sequence

import msgspec

from shared.app import stalls
from shared.app.bot_turns import platform_due, play_bot_turns
from shared.app.deadlines import now_ms, watch_of
from shared.app.games import abort_game, create_game
from shared.app.loading import load
from shared.app.registry import registered_bots
from shared.catalog import get_game
from shared.errors import GameOver, IllegalAction, InvalidRequest, UnknownGame
from shared.messages.codec import encode_all
from shared.messages.common import Clock, Seat
from shared.messages.envelope import RecordedEvent
from shared.model import clocks, idempotency
from shared.model.idempotency import game_id_for
from shared.model.registry import RegisteredBot
from shared.model.tournaments import seeds
from shared.model.tournaments.model import (
    CODEC,
    KIND,
    Entrant,
    GameRecorded,
    RoundScheduled,
    ScheduledGame,
    TournamentCancelled,
    TournamentCreated,
    TournamentDefinition,
    TournamentEvent,
    TournamentState,
    advance,
    evolve,
    fold,
    pending,
    resolve_entrants,
    stream_id,
    validate,
)
from shared.ports import deal_secret
from shared.store.port import ConcurrencyConflict, EventStore


def create_tournament(
    store: EventStore,
    definition: TournamentDefinition,
    tournament_id: str | None = None,
    fingerprint: str = "",
    clock: Callable[[], int] = now_ms,
) -> str:
    """Validates and records a tournament with its first round; returns its id. A host that
    gave no seed gets a fresh random one (`seeds.drawn`). An arena's clock starts at
    `clock()` (ms since the epoch).

    `fingerprint` is the digest of the request that asked for it (see `store.recall`)."""
    bots = registered_bots(store)
    validate(definition, bots)
    definition = seeds.drawn(resolve_entrants(definition, bots))
    tournament_id = tournament_id or uuid.uuid4().hex
    created = TournamentCreated(definition=definition)
    events: list[TournamentEvent] = [created]
    events += advance(evolve(None, created), tournament_id, clock())
    key = idempotency.tournament_created(tournament_id)
    store.append(stream_id(tournament_id), KIND, 0, encode_all(events), key, fingerprint)
    return tournament_id


def with_entrant_clock(
    definition: TournamentDefinition, bots: Sequence[RegisteredBot], clock: Clock | None
) -> TournamentDefinition:
    """Returns a valid `definition` timed by `clock` (the default clock of client entrants)
    when it sets no clock (nor its ruleset) and an entrant is an external or webhook bot of
    `bots`, or it is an arena (a client bot may join it late); else `definition` as it is."""
    if clock is None or definition.clock is not None:
        return definition
    rules = get_game(definition.game).ruleset(definition.ruleset)
    kinds = [str(entrant.kind) for entrant in resolve_entrants(definition, bots).entrants]
    if definition.format == "arena":
        kinds.append("external")  # a client bot may join it later
    timed = clocks.with_default(None, rules, kinds, clock)
    return definition if timed is None else msgspec.structs.replace(definition, clock=timed)


def ensure_tournament(
    store: EventStore,
    definition: TournamentDefinition,
    tournament_id: str,
    clock: Callable[[], int] = now_ms,
) -> None:
    """Records the tournament unless its stream exists already (a retry, or the service did)."""
    if store.version(stream_id(tournament_id)) == 0:
        create_tournament(store, definition, tournament_id, clock=clock)


class UnknownTournament(LookupError):
    """No tournament has that id."""

    def __init__(self, tournament_id: str) -> None:
        super().__init__(f"no tournament {tournament_id!r}")
        self.tournament_id = tournament_id


def load_tournament(store: EventStore, tournament_id: str) -> tuple[TournamentState, int]:
    """Returns a tournament's state and its stream's version; raises UnknownTournament."""
    recorded = store.read(stream_id(tournament_id))
    if not recorded:
        raise UnknownTournament(tournament_id)
    return fold(CODEC.decode_all(recorded)), recorded[-1].version


def start_game(
    store: EventStore, tournament_id: str, state: TournamentState, game: ScheduledGame
) -> str:
    """Creates a scheduled game (once, whatever the retries); returns its id."""
    d = state.definition
    seats = [_seat(d.entrants[entrant]) for entrant in game.table]
    outcome = create_game(
        store,
        d.game,
        ruleset=d.ruleset,
        seats=seats,
        seed=deal_secret.deal_key(store, "tournament", game.seed),
        idempotency_key=game.key,
        tournament=(tournament_id, game.key),
        clock=d.clock,
    )
    return outcome.game_id


def _seat(entrant: Entrant) -> Seat:
    """Returns the seat an entrant plays, rated under `bot@version`: its strategy, or a seat
    bound to it when it is an external or webhook bot.
    """
    if entrant.kind in {"external", "webhook"}:
        return Seat(
            kind=entrant.kind, name=entrant.bot, version=entrant.version, account=entrant.account
        )
    strategy = entrant.strategy or entrant.bot
    return Seat(
        kind="bot", bot=strategy, name=entrant.bot, version=entrant.version, account=entrant.account
    )


def start_pending_games(
    store: EventStore, tournament_id: str, dispatch: Callable[[str], None]
) -> list[str]:
    """Creates every game of the current round not yet finished and has its bots play it.

    Safe to repeat: creation is idempotent per game key and bot turns append nothing twice.
    """
    state, _ = load_tournament(store, tournament_id)
    if state.status != "running":
        return []
    started = [start_game(store, tournament_id, state, game) for game in pending(state)]
    for game_id in started:
        dispatch(game_id)
    return started


def after_game(
    store: EventStore,
    game_id: str,
    dispatch: Callable[[str], None],
    clock: Callable[[], int] = now_ms,
) -> None:
    """The process manager's reaction to a finished game: record it, start what follows.

    Only a game of an earlier round than the tournament's current one starts the current
    round's games: its record completed the round (or a rerun after a crash finds the round
    advanced and starts its games again, harmlessly). The other games of a round are
    running already; starting them again on every finish would flood the workers. An arena
    starts the games of the pairing its record appended (a pairing lost with a crash is the
    reconciliation's: `reconcile` starts any game missing).
    """
    loaded = load(store, game_id)
    created = loaded.created
    if not created.tournament or not loaded.spec.is_over(loaded.state) or loaded.aborted:
        return
    state, appended = _record(store, created.tournament, created.tournament_key, game_id, clock)
    if state.definition.format == "arena":
        start_paired(store, created.tournament, state, appended, dispatch)
        return
    recorded = next((r for r in state.records if r.key == created.tournament_key), None)
    if state.rounds and (recorded is None or recorded.round < state.rounds[-1].round):
        start_pending_games(store, created.tournament, dispatch)


def start_paired(
    store: EventStore,
    tournament_id: str,
    state: TournamentState,
    appended: Sequence[TournamentEvent],
    dispatch: Callable[[str], None],
) -> list[str]:
    """Creates the games of the pairings among `appended` (events just appended to the
    tournament, folded into `state`) and dispatches them; returns their ids."""
    started = []
    for event in appended:
        if isinstance(event, RoundScheduled):
            for game in event.games:
                started.append(start_game(store, tournament_id, state, game))
    for game_id in started:
        dispatch(game_id)
    return started


def record_game(
    store: EventStore,
    tournament_id: str,
    key: str,
    game_id: str,
    clock: Callable[[], int] = now_ms,
) -> TournamentState:
    """Records a finished game of the tournament and what follows; idempotent per game."""
    return _record(store, tournament_id, key, game_id, clock)[0]


def _round_of(state: TournamentState, key: str) -> int:
    """Returns the round of the scheduled game `key` (an arena's pairing), else the last."""
    for rnd in state.rounds:
        if any(game.key == key for game in rnd.games):
            return rnd.round
    return state.rounds[-1].round


def _record(
    store: EventStore,
    tournament_id: str,
    key: str,
    game_id: str,
    clock: Callable[[], int],
) -> tuple[TournamentState, list[TournamentEvent]]:
    """Records a finished game and what follows at `clock()`; returns the state and the
    events this call appended (none: recorded already, or the tournament is over)."""
    while True:
        state, version = load_tournament(store, tournament_id)
        if any(record.key == key for record in state.records) or state.status != "running":
            return state, []
        loaded = load(store, game_id)
        result = loaded.spec.result(loaded.state)
        if result is None:
            raise ValueError(f"game {game_id} is not over")
        round_no = _round_of(state, key)
        recorded = GameRecorded(
            round=round_no,
            key=key,
            game_id=game_id,
            places=list(result.places),
            status=result.status,
        )
        events: list[TournamentEvent] = [recorded]
        events += advance(evolve(state, recorded), tournament_id, clock())
        try:
            appended = store.append(
                stream_id(tournament_id),
                KIND,
                version,
                encode_all(events),
                idempotency.game_recorded(key),
            )
        except ConcurrencyConflict:
            continue
        state = fold([*CODEC.decode_all(store.read(stream_id(tournament_id)))])
        if appended.replayed and not any(record.key == key for record in state.records):
            # The record's key answered an append that wrote no record: never loop on it.
            stalls.report(stalls.Stall("tournament", stream_id(tournament_id), version, 1))
            return state, []
        return state, [] if appended.replayed else events


class TournamentOver(InvalidRequest):
    """The tournament has finished; it can no longer be cancelled."""


def cancel_tournament(store: EventStore, tournament_id: str, reason: str = "") -> TournamentState:
    """Cancels a running tournament: no new game starts, and its games still running are
    aborted (reason `tournament_cancelled`: no result, not rated, their bots freed).

    Cancelling a cancelled tournament appends nothing to it and aborts any of its games still
    running (a retry completes a cancel cut short); a finished one raises TournamentOver.
    """
    while True:
        state, version = load_tournament(store, tournament_id)
        if state.status == "cancelled":
            break
        if state.status == "finished":
            raise TournamentOver("tournament_id", f"tournament {tournament_id} has finished")
        event = TournamentCancelled(reason=reason)
        try:
            store.append(stream_id(tournament_id), KIND, version, encode_all([event]))
        except ConcurrencyConflict:
            continue
        state = evolve(state, event)
        break
    abort_running_games(store, state)
    return state


def abort_running_games(store: EventStore, state: TournamentState) -> list[str]:
    """Aborts the games of the tournament's current round that have no record and still run
    (reason `tournament_cancelled`); returns their ids."""
    aborted: list[str] = []
    for game in pending(state):
        game_id = game_id_for(game.key)
        if store.version(game_id) == 0:
            continue
        with contextlib.suppress(GameOver, UnknownGame):
            abort_game(store, game_id, "tournament_cancelled", tournament=True)
            aborted.append(game_id)
    return aborted


def run_in_process(
    store: EventStore,
    definition: TournamentDefinition,
    tournament_id: str | None = None,
    on_game: Callable[[TournamentState], None] | None = None,
    play: Callable[[EventStore, str], object] = play_bot_turns,
    clock: Callable[[], int] = now_ms,
    sleep: Callable[[float], None] = time.sleep,
) -> TournamentState:
    """Runs a whole tournament in this process, game after game; returns its final state.

    `play(store, game_id)` plays a started game to its end: by default the built-in bots'
    turns alone (a tournament of built-in bots); a caller whose client seats play here too
    (`cardarena tournament`'s local programs) passes its own. An arena runs by `clock` (ms
    since the epoch) until its time is up, and `sleep`s (seconds) to its end when it has
    nobody to pair and no game in progress."""
    tournament_id = create_tournament(store, definition, tournament_id, clock=clock)
    while True:
        state, _ = load_tournament(store, tournament_id)
        games = pending(state)
        if state.status != "running":
            return state
        if not games:
            if state.definition.format != "arena":
                return state
            if not tick(store, tournament_id, lambda _: None, clock) and state.ends_ms:
                sleep(max(0.0, (state.ends_ms - clock()) / 1000))
            continue
        for game in games:
            game_id = start_game(store, tournament_id, state, game)
            play(store, game_id)
            after = record_game(store, tournament_id, game.key, game_id, clock)
            if on_game is not None:
                on_game(after)


def tick(
    store: EventStore,
    tournament_id: str,
    dispatch: Callable[[str], None],
    clock: Callable[[], int] = now_ms,
) -> list[TournamentEvent]:
    """Lets a running arena go on at `clock()`: pairs its free entrants, or ends it once its
    time is up and no game of it is in progress; starts and dispatches the games it paired.
    Returns the events appended (none: nothing to do, or not a running arena)."""
    while True:
        state, version = load_tournament(store, tournament_id)
        if state.definition.format != "arena" or state.status != "running":
            return []
        events = advance(state, tournament_id, clock())
        if not events:
            return []
        try:
            store.append(stream_id(tournament_id), KIND, version, encode_all(events))
        except ConcurrencyConflict:
            continue
        after = state
        for event in events:
            after = evolve(after, event)
        start_paired(store, tournament_id, after, events, dispatch)
        return events


def last_event(store: EventStore, stream: str) -> RecordedEvent | None:
    """Returns the last event of a stream, None when it has none."""
    last = store.read(stream, after=max(0, store.version(stream) - 1), limit=1)
    return last[0] if last else None


def reconcile(
    store: EventStore,
    tournament_id: str,
    stall_ms: int,
    now: int,
    dispatch: Callable[[str], None],
) -> int:
    """Plays on a running tournament that has recorded no game for `stall_ms` before `now`:
    starts its round again if one of its games is missing (idempotent), else dispatches each
    game stalled as long. Returns how many games it dispatched; a tournament still moving
    costs two reads.
    """
    last = last_event(store, stream_id(tournament_id))
    if last is None or _age(last, now) < stall_ms:
        return 0
    state, _ = load_tournament(store, tournament_id)
    game_ids = [game_id_for(game.key) for game in pending(state)]
    if state.status != "running":
        return 0
    if any(store.version(game_id) == 0 for game_id in game_ids):
        return len(start_pending_games(store, tournament_id, dispatch))
    stalled = [game_id for game_id in game_ids if _stalled(store, game_id, stall_ms, now)]
    for game_id in stalled:
        dispatch(game_id)
    return len(stalled)


def reconcile_games(
    store: EventStore,
    game_ids: Iterable[str],
    stall_ms: int,
    now: int,
    dispatch: Callable[[str], None],
) -> int:
    """Plays on the games of no tournament among `game_ids` that have waited `stall_ms` before
    `now` on the platform: dispatches each whose next move is a built-in bot's, or whose
    deadline is `stall_ms` past and not enforced. A game that is over (nothing is left to
    record) or that the store does not hold (unknown, or its stream dropped) is skipped.
    Returns how many games it dispatched; a game still moving costs one read.
    """
    dispatched = 0
    for game_id in game_ids:
        try:
            stalled = _stalled(store, game_id, stall_ms, now, over=False)
        except UnknownGame:
            continue
        if stalled:
            dispatch(game_id)
            dispatched += 1
    return dispatched


def abort_stale_games(
    store: EventStore, game_ids: Iterable[str], stale_ms: int, now: int
) -> list[str]:
    """Aborts (reason `stale`) the untimed games among `game_ids` whose last event is
    `stale_ms` or more before `now` and that wait for a client, not for the platform (that
    is `reconcile_games`' to play on); returns their ids. `stale_ms` 0: none is. A game the
    store does not hold, or over, is skipped; a game still moving costs one read."""
    aborted: list[str] = []
    if stale_ms <= 0:
        return aborted
    for game_id in game_ids:
        if _age(last_event(store, game_id), now) < stale_ms:
            continue
        try:
            loaded = load(store, game_id)
        except UnknownGame:
            continue
        if loaded.clock is not None or loaded.spec.is_over(loaded.state) or platform_due(loaded):
            continue
        with contextlib.suppress(IllegalAction, ConcurrencyConflict):  # over, a tournament's
            abort_game(store, game_id, "stale")
            aborted.append(game_id)
    return aborted


def _stalled(
    store: EventStore, game_id: str, stall_ms: int, now: int, *, over: bool = True
) -> bool:
    """Returns whether the game has waited `stall_ms` on the platform: over (and `over`: a
    tournament's game to record), a built-in bot's move, or a deadline `stall_ms` past and not
    enforced. A seat that may still think (its deadline not that far past) is not stalled.
    Raises UnknownGame when the store does not hold the game."""
    if _age(last_event(store, game_id), now) < stall_ms:
        return False
    loaded = load(store, game_id)
    if loaded.spec.is_over(loaded.state):
        return over
    watch = watch_of(loaded)
    deadline = None if watch is None else watch.deadline_ms
    return platform_due(loaded) and (deadline is None or now - deadline >= stall_ms)


def _age(event: RecordedEvent | None, now: int) -> float:
    """Returns the milliseconds since `event` was recorded (unknown, none: forever)."""
    if event is None or not event.recorded_at:
        return float("inf")
    return now - event.recorded_at
