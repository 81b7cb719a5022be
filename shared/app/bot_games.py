"""The index of which games and challenges wait for which bot, folded from the global feed.

A bot's games are the seats bound to it in each `GameCreated`, less the games that finished;
the index reads only what the feed gained since its last look-up. (The game slots of
`shared.ports.game_slots` are not used: they track only games created over the API while a
cap is set.)
"""

from __future__ import annotations

import threading

from shared.catalog import get_game
from shared.errors import GameNotFound
from shared.messages.common import GameCreated
from shared.model import challenges
from shared.model.challenges import ChallengeIssued
from shared.store.port import EventStore, FeedEntry


class BotGames:
    """The games each bot is seated in, and which have finished, folded from the global feed.

    Each look-up first folds in what the feed gained since the last one. Thread-safe.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._position = "0"
        self._seats: dict[str, dict[str, list[int]]] = {}
        """Per bot (`name@version`): game id -> the seats bound to it."""
        self._finished: set[str] = set()
        self._challenges: dict[str, list[str]] = {}
        """Per bot: the challenges issued to it (open or not), oldest first."""

    def refresh(self) -> None:
        """Folds in the feed entries appended since the last refresh."""
        with self._lock:
            while page := self._store.read_feed(self._position, 1000):
                for entry in page:
                    self._apply(entry)
                self._position = page[-1].position

    def _apply(self, entry: FeedEntry) -> None:
        """Records the bound seats of a created game, or that a game finished."""
        recorded = entry.event
        if recorded.kind == challenges.KIND:
            if recorded.type == "ChallengeIssued":
                issued = challenges.CODEC.decode(recorded)
                assert isinstance(issued, ChallengeIssued)
                for bot in issued.pending:
                    self._challenges.setdefault(bot, []).append(issued.challenge_id)
            return
        if recorded.type == "GameFinished":
            self._finished.add(recorded.game_id)
        if recorded.type != "GameCreated":
            return
        try:
            created = get_game(recorded.kind).codec.decode(recorded)
        except GameNotFound:
            return
        if not isinstance(created, GameCreated):
            return
        for index, seat in enumerate(created.seats):
            if seat.bound_bot is not None:
                games = self._seats.setdefault(seat.bound_bot, {})
                games.setdefault(recorded.game_id, []).append(index)

    def seats_of(self, bot: str, game_id: str) -> list[int]:
        """Returns the seats of `game_id` bound to `bot` (none: not its game), as last refreshed."""
        with self._lock:
            return list(self._seats.get(bot, {}).get(game_id, ()))

    def challenges_of(self, bot: str) -> list[str]:
        """Returns the challenges issued to `bot` (open or not), as last refreshed."""
        with self._lock:
            return list(self._challenges.get(bot, ()))

    def running(self, bot: str) -> list[str]:
        """Returns the games `bot` is seated in that have not finished, as last refreshed."""
        with self._lock:
            return [g for g in self._seats.get(bot, {}) if g not in self._finished]
