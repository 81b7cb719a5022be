"""REST v1 leaderboards: OpenSkill ratings per game and bot version, best first, and each
version's rating after each of its rated games.

A bot version is `name@version` (a tournament seat's rating key); it is ranked by the
conservative estimate mu - 3 sigma. Beggar-my-neighbour exists but has no decisions, so
its games are never rated: its leaderboard is empty, `rated` false, with a note saying
why (a 200, not a 404, since the game is known and a client may list every game's board).
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.params import PathParameter, QueryParameter

from services.game.http.params import BotName, BotVersion
from services.game.http.pipeline.problems import Problem, problem, responses
from services.game.leaderboards.schemas import Leaderboard, RatingHistory, RatingStep
from shared.catalog import game_names, get_game
from shared.errors import GameNotFound
from shared.games.base import AnyGame
from shared.ports.views.port import TournamentViews

GameName = Annotated[str, PathParameter(description="The game, e.g. shithead")]
BoardLimit = Annotated[
    int, QueryParameter(ge=1, le=1000, description="At most this many entries (1-1000)")
]


def _unknown_game(_: Request[Any, Any, Any], error: GameNotFound) -> Response[Problem]:
    """Returns the 404 of a leaderboard asked for a game that is not registered."""
    name = str(error.args[0]) if error.args else ""
    detail = f"no game named {name!r}; one of {', '.join(game_names())}"
    return problem(404, "unknown-game", detail, field="game")


def _unrated(spec: AnyGame) -> str:
    """Returns why a game without decisions has no ratings."""
    return f"{spec.title} has no decisions: its games are counted but never rated"


class LeaderboardsController(Controller):
    """Leaderboards: ratings per game and bot version."""

    path = "/v1/leaderboards"
    tags = ("leaderboards",)
    exception_handlers = {GameNotFound: _unknown_game}

    @get(
        "/{game:str}",
        operation_id="getLeaderboard",
        summary="A game's leaderboard: rating per bot version, by mu - 3 sigma",
        description=(
            "OpenSkill (Plackett-Luce) ratings over every rated game (a tournament game whose "
            "seats are all distinct bot versions): a game of no tournament as it finishes, a "
            "tournament's games when their round completes, in schedule order, the order its "
            "standings rate them in, so both give the same ratings for the same games. "
            "Beggar-my-neighbour has no decisions and is never rated: its board is empty, "
            "with `rated` false. Reads the projection's views, which may lag the event store."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(
        self, views: NamedDependency[TournamentViews], game: GameName, limit: BoardLimit = 100
    ) -> Leaderboard:
        """Returns the game's best `limit` bot versions; 404 for an unknown game."""
        spec = get_game(game)
        if not spec.has_decisions:
            return Leaderboard(game, rated=False, entries=[], note=_unrated(spec))
        return Leaderboard(game, rated=True, entries=views.leaderboard(game, limit))

    @get(
        "/{game:str}/{name:str}/{version:str}/history",
        operation_id="getRatingHistory",
        summary="A bot version's rating after each of its rated games of a game",
        description=(
            "The leaderboard's OpenSkill rating of `name@version` in `game` right after each of "
            "its rated games, oldest first, in the order the leaderboard folded them (a "
            "tournament's games when their round completes, in schedule order): the last step "
            "is the bot version's line of `getLeaderboard`. A bot version that has no rated "
            "game yet (or that the views do not know) has no steps. Beggar-my-neighbour is "
            "never rated: no steps, `rated` false. Reads the projection's views, which may lag "
            "the event store."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def history(
        self,
        views: NamedDependency[TournamentViews],
        game: GameName,
        name: BotName,
        version: BotVersion,
    ) -> RatingHistory:
        """Returns the bot version's rating steps in the game; 404 for an unknown game."""
        spec, key = get_game(game), f"{name}@{version}"
        if not spec.has_decisions:
            return RatingHistory(game, key, rated=False, steps=[], note=_unrated(spec))
        steps = [RatingStep.of(point) for point in views.rating_history(game, key)]
        return RatingHistory(game, key, rated=True, steps=steps)
