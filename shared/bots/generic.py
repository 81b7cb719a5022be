"""Strategies that work for every game: the first legal action, and a uniform random one."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from shared.games.base import Bot
from shared.messages.common import Action


class FirstLegalBot(Bot[object]):
    """Always takes the first legal action (for games without decisions, the only one)."""

    name = "first"

    def choose(self, view: object, legal: Sequence[Action], seed: str) -> Action:
        """Returns `legal[0]`."""
        return legal[0]


class RandomBot(Bot[object]):
    """Takes a uniformly random legal action, reproducibly from `seed`."""

    name = "random"

    def choose(self, view: object, legal: Sequence[Action], seed: str) -> Action:
        """Returns the legal action that SHA-256(seed) selects."""
        digest = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
        return legal[digest % len(legal)]
