"""The bot-turn dispatcher port: who plays a game's bot turns and starts tournaments.

Its twins: `shared.app.runtime.InProcessDispatcher` (the embedded default, in the caller's
thread), `shared.app.runtime.OutboxDispatcher` (through the outbox) and the workers'
Celery dispatcher (`services/workers/tasks.py`).
"""

from __future__ import annotations

import abc

from shared.model.tournaments.model import TournamentDefinition


class BotTurnDispatcher(abc.ABC):
    """Starts the platform's play of a game's consecutive bot turns (in-process or on workers)."""

    @abc.abstractmethod
    def dispatch(self, game_id: str) -> None:
        """Arranges for `play_bot_turns(game_id)` to run, and its tournament to go on after."""

    @abc.abstractmethod
    def start_tournament(self, definition: TournamentDefinition, tournament_id: str) -> None:
        """Arranges for a tournament to be recorded (unless it is already) and its games started."""
