"""The game service's parts that its busiest handlers use, as one dependency."""

from __future__ import annotations

from dataclasses import dataclass

from services.ops.metrics import GameMetrics
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore


@dataclass(frozen=True)
class GameContext:
    """The store, the bot-turn dispatcher and the metrics: the dependency `context`.

    Litestar resolves two or more dependencies of a request in a task group, a task each;
    a move's handler takes this one instead (and no `caller`: see
    `services.game.http.pipeline.auth.IDENTIFIED_BY_HANDLER`), so its dependencies cost one call.
    """

    store: EventStore
    dispatcher: BotTurnDispatcher
    metrics: GameMetrics
