"""Sending work to the Celery workers by task name: the names, and the dispatcher.

Nothing here imports the tasks (`services.workers.tasks`): a sender needs only a Celery app
configured for the broker (`services.workers.celery_app.create_celery`) and a task's name.
Sends fail fast while the broker is unreachable, and `broker_reachable` turns their failure
into `DispatchUnavailable`: the sender keeps the work in the outbox (`shared.ports.outbox`)
instead of failing its request.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import msgspec
from celery import Celery
from kombu.exceptions import OperationalError

from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import DispatchUnavailable

BOT_TURNS = "cardarena.bot_turns"
"""(game_id): plays a game's consecutive built-in bot moves, then watches what follows."""
TURN_DEADLINE = "cardarena.turn_deadline"
"""(game_id, turn_version): times out the waits begun at that version once past due."""
WEBHOOK_TURN = "cardarena.webhook_turn"
"""(game_id, turn_version, seat): calls a seat's webhook for its turn."""
START_TOURNAMENT = "cardarena.start_tournament"
"""(definition, tournament_id): records a tournament and starts its games."""
RUN_SCHEDULED_TOURNAMENT = "cardarena.run_scheduled_tournament"
"""(definition, schedule_id, slot=...): starts a schedule's run at a slot."""
RECONCILE_TOURNAMENTS = "cardarena.reconcile_tournaments"
"""(stall_seconds): plays on the running games the platform left waiting."""
PAIR_LADDERS = "cardarena.pair_ladders"
"""(): pairs the waiting bots of every open ladder (beat sends it every
CARDARENA_LADDER_PAIR_SECONDS)."""


@contextlib.contextmanager
def broker_reachable() -> Iterator[None]:
    """Turns a send's failure to reach the broker into `DispatchUnavailable`."""
    try:
        yield
    except (OperationalError, OSError) as error:
        raise DispatchUnavailable(f"broker: {error}") from error


class CeleryDispatcher(BotTurnDispatcher):
    """Sends bot turns, by task name through `app`, to the Celery workers listening on
    `queue`; raises `DispatchUnavailable` when the broker cannot be reached (see
    `shared.ports.outbox`)."""

    def __init__(self, app: Celery, queue: str) -> None:
        self._app = app
        self._queue = queue

    def dispatch(self, game_id: str) -> None:
        with broker_reachable():
            self._app.send_task(BOT_TURNS, (game_id,), queue=self._queue)

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        payload = msgspec.to_builtins(definition)
        with broker_reachable():
            self._app.send_task(START_TOURNAMENT, (payload, tournament_id), queue=self._queue)
