"""Celery tasks: each calls one use case with the worker process's store."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any

import msgspec

from services.bootstrap import build_outbox, build_store, build_views
from services.settings import load_settings
from services.workers.celery_app import app, broker_reachable
from services.workers.probes import worker_metrics
from services.workers.webhooks import play_webhook_turn
from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, now_ms, watch_of
from shared.app.loading import load
from shared.app.tournaments import (
    after_game,
    ensure_tournament,
    last_event,
    reconcile,
    reconcile_games,
    start_pending_games,
)
from shared.messages.envelope import RecordedEvent
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.schedule import run_id
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import DispatchUnavailable, Outbox, Pending
from shared.ports.scheduler import run_definition
from shared.ports.views.port import TournamentViews
from shared.store.port import EventStore, StoreUnavailable


@functools.cache
def worker_store() -> EventStore:
    """Returns this worker process's event store, built on first use."""
    return build_store(load_settings())


@functools.cache
def worker_outbox() -> Outbox:
    """Returns this worker process's outbox (in the event store's Redis), built on first use."""
    return build_outbox(load_settings())


@functools.cache
def worker_views() -> TournamentViews:
    """Returns this worker process's tournament views (the projection's), built on first use."""
    return build_views(load_settings(), worker_store())


RETRIED: dict[str, Any] = {
    "acks_late": True,
    "autoretry_for": (StoreUnavailable,),
    "retry_backoff": True,
    "retry_backoff_max": 30,
    "max_retries": None,
}
"""Every task acks late (a killed worker's task runs again, appending nothing twice) and
retries with backoff, without limit, while the event store is unavailable."""


@app.task(
    name="cardarena.bot_turns",
    **RETRIED,
)
def bot_turns(game_id: str) -> int:
    """Plays every consecutive built-in bot move of `game_id`, then lets its tournament go on
    and watches the wait that follows (a deadline task, webhook tasks).

    Returns how many moves it appended.
    """
    started_ms = now_ms()
    store = worker_store()
    handed = last_event(store, game_id)
    moves = play_bot_turns(store, game_id)
    if moves and handed is not None:
        _count_bot_turns(handed, moves, started_ms)
    after_game(store, game_id, _dispatch)
    _watch(store, game_id)
    return moves


def _count_bot_turns(handed: RecordedEvent, moves: int, started_ms: int) -> None:
    """Counts `moves` bot moves and the wait from `handed` (the event that gave the bots the
    turn) to the task starting to play them."""
    metrics = worker_metrics()
    metrics.bot_turns.labels(handed.kind).inc(moves)
    if handed.recorded_at:
        wait_s = max(0, started_ms - handed.recorded_at) / 1000
        metrics.turn_latency.labels(handed.kind).observe(wait_s)


@app.task(
    name="cardarena.turn_deadline",
    **RETRIED,
)
def turn_deadline(game_id: str, turn_version: int) -> str:
    """Times out the waits of `game_id` begun at `turn_version` whose deadline is past (the
    default action and a strike, once), then plays on; nothing once the game moved on.

    Returns `timed_out`, `moved_on` or `early` (sent again for the deadline).
    """
    check = enforce_deadline(worker_store(), game_id, turn_version, now_ms())
    if check.retry_at_ms is not None:
        countdown = _countdown(check.retry_at_ms)
        _send_or_keep(
            game_id,
            lambda: turn_deadline.apply_async(
                (game_id, turn_version), countdown=countdown, queue=_queue()
            ),
        )
    elif check.status == "timed_out":
        _dispatch(game_id)
    return check.status


@app.task(
    name="cardarena.webhook_turn",
    **RETRIED,
)
def webhook_turn(game_id: str, turn_version: int, seat: int) -> str:
    """Calls `seat`'s webhook for its turn begun at `turn_version` until its answer is played
    or the deadline passes (see `services.workers.webhooks`), then plays on.
    """
    allow_private = load_settings().webhook_allow_private
    status = play_webhook_turn(
        worker_store(), game_id, turn_version, seat, allow_private=allow_private
    )
    if status == "played":
        _dispatch(game_id)
    return status


def _queue() -> str:
    """Returns the queue this worker serves."""
    return load_settings().queue


def _countdown(deadline_ms: int) -> float:
    """Returns the seconds until a little after `deadline_ms`, at most half the broker's
    visibility timeout: a worker holds a countdown task unacknowledged until it runs, and one
    held longer would be sent again after every timeout (harmless, deadlines are
    version-checked, but a day's deadline would run some 300 times). A deadline task run
    early sends itself again."""
    hold = load_settings().broker_visibility_timeout / 2
    return min(max(0.0, (deadline_ms - now_ms()) / 1000) + 0.05, hold)


def _watch(store: EventStore, game_id: str) -> None:
    """Sends a deadline task for the game's timed wait and a task per webhook seat to call."""
    watch = watch_of(load(store, game_id))
    if watch is None:
        return
    version, deadline_ms = watch.turn_version, watch.deadline_ms
    if deadline_ms is not None:
        countdown = _countdown(deadline_ms)
        _send_or_keep(
            game_id,
            lambda: turn_deadline.apply_async(
                (game_id, version), countdown=countdown, queue=_queue()
            ),
        )
    for seat in watch.webhook_seats:
        send = functools.partial(webhook_turn.apply_async, (game_id, version, seat), queue=_queue())
        _send_or_keep(game_id, send)


def _send_or_keep(game_id: str, send: Callable[[], object]) -> None:
    """Sends a task of `game_id`; when the broker is unreachable, keeps the game's bot turns
    in the outbox instead (their task watches the game again), for the game service's
    sender to send once the broker is back (see `shared.ports.outbox`)."""
    try:
        with broker_reachable():
            send()
    except DispatchUnavailable:
        worker_outbox().put(Pending("game", game_id))


@app.task(
    name="cardarena.start_tournament",
    **RETRIED,
)
def start_tournament(definition: dict[str, Any], tournament_id: str) -> str:
    """Records a tournament unless it is recorded already, and starts its games on the workers."""
    store = worker_store()
    ensure_tournament(store, msgspec.convert(definition, TournamentDefinition), tournament_id)
    start_pending_games(store, tournament_id, _dispatch)
    return tournament_id


@app.task(
    name="cardarena.run_scheduled_tournament",
    **RETRIED,
)
def run_scheduled_tournament(definition: dict[str, Any], schedule_id: str, slot: str) -> str:
    """Starts a schedule's run at `slot` on the workers: one tournament per slot, however often.

    Returns the run's tournament id, which derives from the schedule id and the slot.
    """
    tournament_id = run_id(schedule_id, datetime.fromisoformat(slot))
    scheduled = msgspec.convert(definition, TournamentDefinition)
    store = worker_store()
    ensure_tournament(store, run_definition(scheduled), tournament_id)
    start_pending_games(store, tournament_id, _dispatch)
    return tournament_id


RECONCILE_LIMIT = 1000
"""The most running tournaments (newest first), and the most running games of no tournament
(oldest first), one reconciliation looks at."""


@app.task(name="cardarena.reconcile_tournaments")
def reconcile_tournaments(stall_seconds: float) -> int:
    """Plays on the running games that the platform has left waiting for `stall_seconds`
    (their task lost with a killed worker): the running tournaments' games, then the games of
    no tournament. Beat sends it that often, by this name (older than the games of no
    tournament here), and a run that fails (a store or the views unavailable) leaves the rest
    of the work to the next one.

    Returns how many games it sent on.
    """
    store, stall_ms, sent = worker_store(), int(stall_seconds * 1000), 0
    with contextlib.suppress(StoreUnavailable):
        views = worker_views()
        for t in views.tournaments("running", None, RECONCILE_LIMIT):
            sent += reconcile(store, t.tournament_id, stall_ms, now_ms(), _dispatch)
        standalone = views.standalone_games(RECONCILE_LIMIT)
        sent += reconcile_games(store, standalone, stall_ms, now_ms(), _dispatch)
    return sent


def _dispatch(game_id: str) -> None:
    """Queues the bot turns of `game_id` on the queue this worker serves (into the outbox
    while the broker is unreachable)."""
    _send_or_keep(game_id, lambda: bot_turns.apply_async((game_id,), queue=load_settings().queue))


class CeleryDispatcher(BotTurnDispatcher):
    """Sends bot turns to the Celery workers listening on `queue`; raises
    `DispatchUnavailable` when the broker cannot be reached (see `shared.ports.outbox`)."""

    def __init__(self, queue: str) -> None:
        self._queue = queue

    def dispatch(self, game_id: str) -> None:
        with broker_reachable():
            bot_turns.apply_async((game_id,), queue=self._queue)

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        payload = msgspec.to_builtins(definition)
        with broker_reachable():
            start_tournament.apply_async((payload, tournament_id), queue=self._queue)
