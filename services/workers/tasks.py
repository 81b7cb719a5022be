"""Celery tasks: each calls one use case with the worker process's adapters.

`register` puts them on an app under their names (`services.workers.dispatch`); the
composition root (`services.bootstrap.workers.create_celery_app`) gives them the adapters,
each built on first use in the worker process. Tasks send tasks by name, never through the
task functions.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import msgspec
from celery import Celery

from services.settings import WorkerSettings
from services.workers.dispatch import (
    BOT_TURNS,
    PAIR_LADDERS,
    RECONCILE_TOURNAMENTS,
    RUN_SCHEDULED_TOURNAMENT,
    START_TOURNAMENT,
    TURN_DEADLINE,
    WEBHOOK_TURN,
    broker_reachable,
)
from services.workers.probes import worker_metrics
from services.workers.webhooks import play_webhook_turn
from shared.app import evaluations
from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, now_ms, watch_of
from shared.app.ladder import Pairing, pair_open_ladders, ratings_of, rules_of
from shared.app.loading import load
from shared.app.starting import GameCap
from shared.app.tournaments import (
    abort_stale_games,
    after_game,
    ensure_tournament,
    last_event,
    reconcile,
    reconcile_games,
    start_pending_games,
    tick,
)
from shared.messages.envelope import RecordedEvent
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.schedule import run_id
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.game_slots import GameSlots
from shared.ports.outbox import DispatchUnavailable, Outbox, Pending
from shared.ports.scheduler import run_definition
from shared.ports.views.port import TournamentViews
from shared.store.port import EventStore, StoreUnavailable

RETRIED: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (StoreUnavailable,),
    "retry_backoff": True,
    "retry_backoff_max": 30,
    "max_retries": None,
}
"""Every task acks late (a killed worker's task runs again, appending nothing twice) and
retries with backoff, without limit, while the event store is unavailable."""

RECONCILE_LIMIT = 1000
"""The most running tournaments (newest first), and the most running games of no tournament
(oldest first), one reconciliation looks at."""


class Worker:
    """The tasks' work on `settings`' queue, over adapters built on first use (`store`,
    `outbox`, `views`, and `slots`: the game service's slots of running games per bot),
    sending tasks by name through `app`."""

    def __init__(
        self,
        app: Celery,
        settings: WorkerSettings,
        *,
        store: Callable[[], EventStore],
        outbox: Callable[[], Outbox],
        views: Callable[[], TournamentViews],
        slots: Callable[[], GameSlots],
    ) -> None:
        self.app = app
        self.settings = settings
        self.store = functools.cache(store)
        self.outbox = functools.cache(outbox)
        self.views = functools.cache(views)
        self.slots = functools.cache(slots)

    def bot_turns(self, game_id: str) -> int:
        """Plays every consecutive built-in bot move of `game_id`, then lets its tournament (or
        evaluation) go on and watches the wait that follows (a deadline task, webhook tasks).

        Returns how many moves it appended.
        """
        started_ms = now_ms()
        store = self.store()
        handed = last_event(store, game_id)
        moves = play_bot_turns(store, game_id)
        if moves and handed is not None:
            _count_bot_turns(handed, moves, started_ms)
        after_game(store, game_id, self.dispatch)
        evaluations.after_game(store, game_id, self.dispatch)
        self._watch(store, game_id)
        return moves

    def turn_deadline(self, game_id: str, turn_version: int) -> str:
        """Times out the waits of `game_id` begun at `turn_version` whose deadline is past (the
        default action and a strike, once), then plays on; nothing once the game moved on.

        Returns `timed_out`, `moved_on` or `early` (sent again for the deadline).
        """
        check = enforce_deadline(self.store(), game_id, turn_version, now_ms())
        if check.retry_at_ms is not None:
            self._send_later(TURN_DEADLINE, (game_id, turn_version), check.retry_at_ms)
        elif check.status == "timed_out":
            self.dispatch(game_id)
        return check.status

    def webhook_turn(self, game_id: str, turn_version: int, seat: int) -> str:
        """Calls `seat`'s webhook for its turn begun at `turn_version` until its answer is
        played or the deadline passes (see `services.workers.webhooks`), then plays on.
        """
        allow_private = self.settings.webhook_allow_private
        status = play_webhook_turn(
            self.store(), game_id, turn_version, seat, allow_private=allow_private
        )
        if status == "played":
            self.dispatch(game_id)
        return status

    def start_tournament(self, definition: dict[str, Any], tournament_id: str) -> str:
        """Records a tournament unless it is recorded already, and starts its games on the
        workers."""
        store = self.store()
        ensure_tournament(store, msgspec.convert(definition, TournamentDefinition), tournament_id)
        start_pending_games(store, tournament_id, self.dispatch)
        return tournament_id

    def run_scheduled_tournament(
        self, definition: dict[str, Any], schedule_id: str, slot: str
    ) -> str:
        """Starts a schedule's run at `slot` on the workers: one tournament per slot, however
        often. Returns the run's tournament id, which derives from the schedule id and the slot.
        """
        tournament_id = run_id(schedule_id, datetime.fromisoformat(slot))
        scheduled = msgspec.convert(definition, TournamentDefinition)
        store = self.store()
        ensure_tournament(store, run_definition(scheduled), tournament_id)
        start_pending_games(store, tournament_id, self.dispatch)
        return tournament_id

    def reconcile_tournaments(self, stall_seconds: float) -> int:
        """Plays on the running games that the platform has left waiting for `stall_seconds`
        (their task lost with a killed worker): the running tournaments' games, then the games
        of no tournament; and aborts the untimed games of no tournament that have waited
        CARDARENA_STALE_GAME_SECONDS for a client (`abort_stale_games`), and moves on the
        running evaluations whose game ends were lost (`evaluations.reconcile`); a running arena is
        ticked first (`tick`: its end once its time is up, a pairing its free entrants wait
        for). Beat sends it that often, by this name (older than the games of no tournament
        here), and a run that fails (a store or the views unavailable) leaves the rest of the
        work to the next one.

        Returns how many games it sent on.
        """
        store, stall_ms, sent = self.store(), int(stall_seconds * 1000), 0
        with contextlib.suppress(StoreUnavailable):
            views = self.views()
            for t in views.tournaments("running", None, RECONCILE_LIMIT):
                if t.format == "arena":  # its end (or a pairing) may be due with no game ending
                    sent += len(tick(store, t.tournament_id, self.dispatch))
                sent += reconcile(store, t.tournament_id, stall_ms, now_ms(), self.dispatch)
            standalone = views.standalone_games(RECONCILE_LIMIT)
            sent += reconcile_games(store, standalone, stall_ms, now_ms(), self.dispatch)
            stale_ms = self.settings.stale_game_seconds * 1000
            abort_stale_games(store, standalone, stale_ms, now_ms())
            sent += evaluations.reconcile(store, stall_ms, now_ms(), self.dispatch, RECONCILE_LIMIT)
        return sent

    def pair_ladders(self) -> int:
        """Pairs every open ladder (`shared.app.ladder.pair_open_ladders`): its ladder caps
        hold (CARDARENA_LADDER_*), and the game service's cap of running games per bot
        (CARDARENA_MAX_GAMES_PER_BOT, on the slots every game service process shares). Two
        runs at once (a beat that fired twice, a task run again after
        a worker died) seat no bot twice: each pairing appends at the ladder's version it read.
        Returns how many games it paired."""
        settings = self.settings
        rules = rules_of(
            settings.ladder_max_concurrent,
            settings.ladder_max_daily,
            settings.ladder_cooldown_seconds,
            settings.ladder_provisional_games,
        )
        views = self.views()
        pairing = Pairing(
            GameCap(self.slots(), settings.max_games_per_bot),
            _Dispatch(self),
            ratings_of(views.leaderboard),
            rules,
        )
        return len(pair_open_ladders(self.store(), datetime.now(UTC), pairing))

    def dispatch(self, game_id: str) -> None:
        """Queues the bot turns of `game_id` on the queue this worker serves (into the outbox
        while the broker is unreachable)."""
        self.send_or_keep(game_id, functools.partial(self._send, BOT_TURNS, (game_id,)))

    def send_or_keep(self, game_id: str, send: Callable[[], object]) -> None:
        """Sends a task of `game_id`; when the broker is unreachable, keeps the game's bot
        turns in the outbox instead (their task watches the game again), for the game
        service's sender to send once the broker is back (see `shared.ports.outbox`)."""
        try:
            with broker_reachable():
                send()
        except DispatchUnavailable:
            self.outbox().put(Pending("game", game_id))

    def countdown(self, deadline_ms: int) -> float:
        """Returns the seconds until a little after `deadline_ms`, at most half the broker's
        visibility timeout: a worker holds a countdown task unacknowledged until it runs, and
        one held longer would be sent again after every timeout (harmless, deadlines are
        version-checked, but a day's deadline would run some 300 times). A deadline task run
        early sends itself again."""
        hold = self.settings.broker_visibility_timeout / 2
        return min(max(0.0, (deadline_ms - now_ms()) / 1000) + 0.05, hold)

    def _watch(self, store: EventStore, game_id: str) -> None:
        """Sends a deadline task for the game's timed wait and a task per webhook seat to call."""
        watch = watch_of(load(store, game_id))
        if watch is None:
            return
        version, deadline_ms = watch.turn_version, watch.deadline_ms
        if deadline_ms is not None:
            self._send_later(TURN_DEADLINE, (game_id, version), deadline_ms)
        for seat in watch.webhook_seats:
            send = functools.partial(self._send, WEBHOOK_TURN, (game_id, version, seat))
            self.send_or_keep(game_id, send)

    def _send_later(self, task: str, args: tuple[str, int], deadline_ms: int) -> None:
        """Sends `task` of the game `args[0]` to run a little after `deadline_ms`."""
        countdown = self.countdown(deadline_ms)
        send = functools.partial(self._send, task, args, countdown=countdown)
        self.send_or_keep(args[0], send)

    def _send(self, task: str, args: tuple[Any, ...], countdown: float | None = None) -> None:
        """Sends the task named `task` with `args` to the queue this worker serves."""
        self.app.send_task(task, args, countdown=countdown, queue=self.settings.queue)


class _Dispatch(BotTurnDispatcher):
    """A worker's dispatch as the port the ladder's pairing starts games through."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    def dispatch(self, game_id: str) -> None:
        self._worker.dispatch(game_id)

    def start_tournament(self, definition: TournamentDefinition, tournament_id: str) -> None:
        raise NotImplementedError("a ladder starts no tournament")


def _count_bot_turns(handed: RecordedEvent, moves: int, started_ms: int) -> None:
    """Counts `moves` bot moves and the wait from `handed` (the event that gave the bots the
    turn) to the task starting to play them."""
    metrics = worker_metrics()
    metrics.bot_turns.labels(handed.kind).inc(moves)
    if handed.recorded_at:
        wait_s = max(0, started_ms - handed.recorded_at) / 1000
        metrics.turn_latency.labels(handed.kind).observe(wait_s)


def register(app: Celery, worker: Worker) -> None:
    """Registers the tasks of `worker` on `app` alone (not shared with other apps, as
    Celery's default would) under their names (`services.workers.dispatch`)."""

    @app.task(name=BOT_TURNS, shared=False, **RETRIED)
    def bot_turns(game_id: str) -> int:
        return worker.bot_turns(game_id)

    @app.task(name=TURN_DEADLINE, shared=False, **RETRIED)
    def turn_deadline(game_id: str, turn_version: int) -> str:
        return worker.turn_deadline(game_id, turn_version)

    @app.task(name=WEBHOOK_TURN, shared=False, **RETRIED)
    def webhook_turn(game_id: str, turn_version: int, seat: int) -> str:
        return worker.webhook_turn(game_id, turn_version, seat)

    @app.task(name=START_TOURNAMENT, shared=False, **RETRIED)
    def start_tournament(definition: dict[str, Any], tournament_id: str) -> str:
        return worker.start_tournament(definition, tournament_id)

    @app.task(name=RUN_SCHEDULED_TOURNAMENT, shared=False, **RETRIED)
    def run_scheduled_tournament(definition: dict[str, Any], schedule_id: str, slot: str) -> str:
        return worker.run_scheduled_tournament(definition, schedule_id, slot)

    @app.task(name=RECONCILE_TOURNAMENTS, shared=False)
    def reconcile_tournaments(stall_seconds: float) -> int:
        return worker.reconcile_tournaments(stall_seconds)

    @app.task(name=PAIR_LADDERS, shared=False)
    def pair_ladders() -> int:
        return worker.pair_ladders()
