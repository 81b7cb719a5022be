"""The arena's routes: every page is served with the replay viewer's security headers."""

from __future__ import annotations

import re

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.http.pages.viewer import STATIC
from tests.support.api import KEY

pytestmark = pytest.mark.service(admin_key=KEY)

PAGES = [
    "/arena",
    "/arena/tournaments/some-tournament",
    "/arena/games/some-game",
    "/arena/bots/heuristic/1",
    "/arena/evaluations/some-evaluation",
    "/arena/ladders/some-ladder",
]
"""One address of each arena page (the pages ask the API for what they show)."""
SECURITY = ("content-security-policy", "x-content-type-options")


@pytest.mark.parametrize("path", PAGES)
def test_every_arena_page_is_public_html_with_the_viewer_s_security_headers(
    client: TestClient[Litestar], path: str
) -> None:
    viewer = client.get("/replay/some-game")
    page = client.get(path)
    assert viewer.status_code == page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    for header in SECURITY:
        assert page.headers[header] == viewer.headers[header], header
    scripts = re.findall(r"<script[^>]*>", page.text)
    assert scripts  # its own scripts, by address: the policy runs no inline script
    own = "/replay/static/" if path.startswith("/arena/games/") else "/arena/static/"
    assert all(f'src="{own}' in script for script in scripts), scripts


def test_the_game_page_is_the_viewer_s_page(client: TestClient[Litestar]) -> None:
    assert client.get("/arena/games/some-game").text == client.get("/replay/some-game").text


@pytest.mark.parametrize("name", ["arena.js", "arena.css", "tournament.js", "evaluation.js"])
def test_the_pages_own_scripts_and_style_are_served(
    client: TestClient[Litestar], name: str
) -> None:
    response = client.get(f"/arena/static/{name}")
    assert response.status_code == 200
    kind = "javascript" if name.endswith(".js") else "css"
    assert kind in response.headers["content-type"]


def test_every_module_of_the_viewer_is_served_as_javascript(client: TestClient[Litestar]) -> None:
    modules = sorted(path.relative_to(STATIC).as_posix() for path in STATIC.rglob("*.js"))
    assert "games/index.js" in modules
    assert "games/generic.js" in modules
    for module in modules:
        response = client.get(f"/replay/static/{module}")
        assert response.status_code == 200, module
        assert "javascript" in response.headers["content-type"], module
