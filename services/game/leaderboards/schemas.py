"""Bodies of the leaderboard routes."""

from __future__ import annotations

import msgspec

from shared.ports.views.port import LeaderboardEntry


class Leaderboard(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game's rated bot versions by mu - 3 sigma, best first; `note` says why none are."""

    game: str
    """The game."""
    rated: bool
    """Whether the game is rated (a game without decisions is not)."""
    entries: list[LeaderboardEntry]
    """The rated bot versions, best first."""
    note: str = ""
    """Why there are no entries, when there are none."""
