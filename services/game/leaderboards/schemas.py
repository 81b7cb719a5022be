"""Bodies of the leaderboard routes."""

from __future__ import annotations

import msgspec

from shared.ports.views.port import LeaderboardEntry


class Leaderboard(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game's rated bot versions by mu - 3 sigma, best first; `note` says why none are."""

    game: str
    rated: bool
    entries: list[LeaderboardEntry]
    note: str = ""
