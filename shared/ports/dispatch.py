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

    def dispatch_detached(self, game_id: str) -> None:
        """Like `dispatch`, but never plays in the caller's thread (a request that pairs an
        arena's entrants must not play its games to the arena's end): the embedded default
        plays in a thread of its own; a dispatcher that sends the work away (the workers')
        is detached already."""
        self.dispatch(game_id)

    @abc.abstractmethod
    def start_tournament(self, definition: TournamentDefinition, tournament_id: str) -> None:
        """Arranges for a tournament to be recorded (unless it is already) and its games started."""
