"""Celery tasks: each calls one use case with the worker process's store."""

from __future__ import annotations

import functools

from services.wiring import build_store
from services.workers.celery_app import app
from shared.handlers import BotTurnDispatcher, play_bot_turns
from shared.settings import load_settings
from shared.store.port import EventStore, StoreUnavailable


@functools.cache
def worker_store() -> EventStore:
    """Returns this worker process's event store, built on first use."""
    return build_store(load_settings())


@app.task(
    name="cardarena.bot_turns",
    acks_late=True,
    autoretry_for=(StoreUnavailable,),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=None,
)
def bot_turns(game_id: str) -> int:
    """Plays every consecutive built-in bot move of `game_id`; returns how many it appended."""
    return play_bot_turns(worker_store(), game_id)


class CeleryDispatcher(BotTurnDispatcher):
    """Sends bot turns to the Celery workers listening on `queue`."""

    def __init__(self, queue: str) -> None:
        self._queue = queue

    def dispatch(self, game_id: str) -> None:
        bot_turns.apply_async((game_id,), queue=self._queue)
