"""Bodies of the leaderboard routes."""

from __future__ import annotations

import msgspec

from shared.ports.views.port import LeaderboardEntry, RatingPoint


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


class RatingStep(msgspec.Struct, frozen=True):
    """A bot version's rating in one game right after one of its rated games."""

    game_id: str
    """The rated game."""
    place: int
    """The bot version's place in it (1 is best)."""
    games: int
    """Rated games of the bot version in this game so far, this one included."""
    mu: float
    """The OpenSkill mean skill after the game."""
    sigma: float
    """The OpenSkill uncertainty of `mu` after the game."""
    ordinal: float
    """`mu - 3 sigma` after the game: what the leaderboard ranks by."""
    finished_at: str
    """When the game finished (ISO 8601, UTC)."""

    @classmethod
    def of(cls, point: RatingPoint) -> RatingStep:
        """Returns the step of a rating history's `point`."""
        return cls(
            game_id=point.game_id,
            place=point.place,
            games=point.games,
            mu=point.mu,
            sigma=point.sigma,
            ordinal=point.ordinal,
            finished_at=point.finished_at.isoformat(timespec="milliseconds"),
        )


class RatingHistory(msgspec.Struct, frozen=True, omit_defaults=True):
    """A bot version's rating after each of its rated games of one game, oldest first."""

    game: str
    """The game."""
    key: str
    """The bot version, `name@version`."""
    rated: bool
    """Whether the game is rated (a game without decisions is not)."""
    steps: list[RatingStep]
    """Its rating after each of its rated games, oldest first (empty: none yet)."""
    note: str = ""
    """Why there are no steps, when the game is never rated."""
