"""The tournament views port: what the API reads about tournaments, standings, ratings and
recent games, and what the workers' reconciliation reads about running games of no tournament.

Two adapters implement it: the in-memory twin (`shared.ports.views.memory`), which folds an
event store's feed on demand, and the PostgreSQL reader of the projection
(`services.projection.views`). Both derive every row with `shared.ports.views.fold`, so for the
same feed they return equal values.
"""

from __future__ import annotations

import abc
from datetime import datetime
from typing import Literal

import msgspec

from shared.model.tournaments.standings import Standing
from shared.model.unrated import Unrated
from shared.store.port import StoreUnavailable

TournamentStatus = Literal["running", "finished", "cancelled"]


class TournamentSummary(msgspec.Struct, frozen=True):
    """One line of the tournament list: its name, what it plays, how far it is, when it was
    created."""

    tournament_id: str
    """The tournament's id."""
    name: str
    """The tournament's name: the host's, else the game's title and the format (e.g.
    "Shithead Swiss")."""
    description: str | None
    """What it is for, as its host wrote it; null when it has none."""
    game: str
    """The game it plays."""
    format: str
    """`round_robin`, `swiss`, `knockout` or `duplicate`."""
    status: TournamentStatus
    """`running`, `finished` or `cancelled`."""
    table_size: int
    """Seats per table."""
    entrants: list[str]
    """The entrants' labels, in entrant order."""
    rounds: int
    """Rounds scheduled so far."""
    games_scheduled: int
    """Games scheduled so far."""
    games_played: int
    """Games that are over."""
    winner: int | None
    """The winning entrant's index, once known; else null."""
    created_at: datetime
    """When it was created."""


class TournamentStandings(msgspec.Struct, frozen=True):
    """A tournament's standings as projected, best first."""

    tournament_id: str
    status: TournamentStatus
    standings: list[Standing]


class LeaderboardEntry(msgspec.Struct, frozen=True):
    """A bot version's rating in one game: rated games, mu, sigma and mu - 3 sigma."""

    key: str
    """The bot version, `name@version`."""
    games: int
    """Rated games played."""
    mu: float
    """The OpenSkill mean skill."""
    sigma: float
    """The OpenSkill uncertainty of `mu`."""
    ordinal: float
    """`mu - 3 sigma`: what the board ranks by."""


class RatingPoint(msgspec.Struct, frozen=True):
    """A bot version's rating right after one rated game."""

    key: str
    game_id: str
    place: int
    games: int
    """Rated games of this bot version so far, this one included."""
    mu: float
    sigma: float
    ordinal: float
    finished_at: datetime


class GameSummary(msgspec.Struct, frozen=True):
    """One line of the list of recent games: what it plays, who sits, how far it is. Nothing
    secret: no seed, no ruleset, no card."""

    game_id: str
    """The game's id."""
    game: str
    """The game it plays."""
    status: str
    """`playing` while it runs, else its result's status (`finished`, `capped`, `loop`,
    `draw`, `aborted`)."""
    seats: list[str]
    """Each seat's label, in seat order: `name@version` for a seat with a version, else the
    seat's name, its built-in bot, or its kind."""
    created_at: datetime
    """When it was created."""
    finished_at: datetime | None
    """When it ended; null while it runs."""
    tournament_id: str | None
    """The tournament it is a game of; null for a game of no tournament."""
    rated: bool | None = None
    """Whether it counts (once over, will count) for the ratings: false with `unrated` saying
    why, null while it runs and nothing rules it out yet."""
    unrated: Unrated | None = None
    """Why it is not rated (`code` and `message`); null when it is, or may still be."""


class ViewsUnavailable(StoreUnavailable):
    """The views' database could not be reached; the read may be retried."""


class TournamentViews(abc.ABC):
    """Reads of the tournament, standings and rating views, and of the games."""

    @abc.abstractmethod
    def tournaments(
        self, status: TournamentStatus | None = None, game: str | None = None, limit: int = 50
    ) -> list[TournamentSummary]:
        """Returns up to `limit` tournaments, newest first, only those matching the filters."""

    @abc.abstractmethod
    def standings(self, tournament_id: str) -> TournamentStandings | None:
        """Returns a tournament's projected standings, None when the views hold no such id."""

    @abc.abstractmethod
    def leaderboard(self, game: str, limit: int = 100) -> list[LeaderboardEntry]:
        """Returns up to `limit` rated bot versions of `game`, best ordinal first (ties: key)."""

    @abc.abstractmethod
    def rating_history(self, game: str, key: str) -> list[RatingPoint]:
        """Returns `key`'s rating after each of its rated games of `game`, oldest first."""

    @abc.abstractmethod
    def recent_games(
        self, game: str | None = None, status: str | None = None, limit: int = 20
    ) -> list[GameSummary]:
        """Returns up to `limit` games, newest first (by creation time, ties: id descending),
        only those of `game` and in `status` (`playing` or a result's status) when given."""

    @abc.abstractmethod
    def standalone_games(self, limit: int) -> list[str]:
        """Returns the ids of up to `limit` running games (no GameFinished yet) that belong to
        no tournament, forks included, oldest first (by creation time, ties: id)."""
