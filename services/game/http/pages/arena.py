"""The arena: static pages to watch tournaments, games and bots, drawn from the public API.

Each page is a fixed HTML file whose script reads the id from the address and asks only
the API's public reads (no credentials): the pages are served as they are, no build step.
See docs/arena.md.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

from litestar import MediaType, Response, get
from litestar.params import PathParameter
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

from services.game.http.pages.viewer import PAGE_HEADERS, viewer_page
from services.game.http.params import BotName, BotVersion, EvaluationId, GameId, TournamentId

LadderId = Annotated[str, PathParameter(description="The ladder's id.")]

STATIC = Path(__file__).parents[2] / "static" / "arena"
"""The arena's HTML, JavaScript and CSS, served as they are (no build step)."""


@functools.cache
def _read(name: str) -> str:
    """Returns the page `name` (a file of `STATIC`)."""
    return (STATIC / name).read_text(encoding="utf-8")


def _page(name: str) -> Response[str]:
    """Returns the page `name` with the arena's headers."""
    return Response(_read(name), media_type=MediaType.HTML, headers=PAGE_HEADERS)


@get("/arena", include_in_schema=False, sync_to_thread=False)
def home_page() -> Response[str]:
    """Returns the home page: running and recent tournaments, each game's leaderboard."""
    return _page("home.html")


@get("/arena/tournaments/{tournament_id:str}", include_in_schema=False, sync_to_thread=False)
def tournament_page(tournament_id: TournamentId) -> Response[str]:
    """Returns the page of `tournament_id` (the page itself asks the API for it)."""
    return _page("tournament.html")


@get("/arena/games/{game_id:str}", include_in_schema=False, sync_to_thread=False)
def game_page(game_id: GameId) -> Response[str]:
    """Returns the page of `game_id`: the replay viewer's page, live while the game runs, then
    its replay (the page itself asks the API for the game)."""
    return viewer_page()


@get("/arena/evaluations/{evaluation_id:str}", include_in_schema=False, sync_to_thread=False)
def evaluation_page(evaluation_id: EvaluationId) -> Response[str]:
    """Returns the page of an evaluation: its LLR drawn between its bounds as it moves (the
    page itself asks the API for it, and again while it runs)."""
    return _page("evaluation.html")


@get("/arena/bots/{name:str}/{version:str}", include_in_schema=False, sync_to_thread=False)
def bot_page(name: BotName, version: BotVersion) -> Response[str]:
    """Returns the page of the bot version `name@version`."""
    return _page("bot.html")


@get("/arena/ladders/{ladder_id:str}", include_in_schema=False, sync_to_thread=False)
def ladder_page(ladder_id: LadderId) -> Response[str]:
    """Returns the page of the ladder `ladder_id`: its ranking, live games, queue and recent
    games (the page itself asks the API for it)."""
    return _page("ladder.html")


def arena_handlers() -> list[ControllerRouterHandler]:
    """Returns the arena's route handlers: its pages and its static files (new per app)."""
    static = create_static_files_router("/arena/static", directories=[STATIC], name="arena-static")
    return [home_page, tournament_page, game_page, evaluation_page, bot_page, ladder_page, static]
