"""The game viewer: a static page that draws any game live from its stream, then at any version
from its replay API; its ES modules are served as they are (no build step)."""

from __future__ import annotations

import functools
from pathlib import Path

from litestar import MediaType, Response, get
from litestar.static_files import create_static_files_router
from litestar.types import ControllerRouterHandler

from services.game.http.params import GameId

STATIC = Path(__file__).parents[2] / "static" / "replay"
"""The viewer's HTML, JavaScript and CSS, served as they are (no build step)."""

PAGE_HEADERS = {
    # The page loads only its own scripts and style sheet and talks only to this service
    # (the arena's game page frames the replay viewer, which is of this service too).
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
    "X-Content-Type-Options": "nosniff",
}
"""The headers of the viewer's page and of the arena's pages."""


@functools.cache
def _page() -> str:
    """Returns the viewer's page; the script reads the game id from the address."""
    return (STATIC / "index.html").read_text(encoding="utf-8")


def viewer_page() -> Response[str]:
    """Returns the viewer's page (the same at /replay/{id} and /arena/games/{id})."""
    return Response(_page(), media_type=MediaType.HTML, headers=PAGE_HEADERS)


@get("/replay/{game_id:str}", include_in_schema=False, sync_to_thread=False)
def replay_page(game_id: GameId) -> Response[str]:
    """Returns the viewer's page for `game_id` (the page itself asks the API for the game)."""
    return viewer_page()


def viewer_handlers() -> list[ControllerRouterHandler]:
    """Returns the viewer's route handlers: its page and its static files (new per app)."""
    static = create_static_files_router(
        "/replay/static", directories=[STATIC], name="replay-static"
    )
    return [replay_page, static]
