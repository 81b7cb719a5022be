"""An arena tournament's page in headless Chromium: its time left, its games as they were
paired (no rounds), a late joiner and a withdrawal, as the public API answers them.

The entrants are external bots that never move, so the arena stays where the test puts it;
the test cancels it at the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.stack import ADMIN_KEY


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service, with an admin key, in a thread; returns its URL."""
    store = InMemoryEventStore()
    dispatcher = InProcessDispatcher(store)
    access = Access.embedded(store, Settings(admin_key=ADMIN_KEY))
    with served(create_app(store, dispatcher, access=access), "arena-format") as url:
        yield url
    dispatcher.close()


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    """Returns a fresh page; fails the test if the page logged an error or threw."""
    with opened(browser, base_url) as fresh:
        yield fresh


def test_the_arena_page_shows_its_time_left_and_its_games_as_paired(
    page: Page, host: httpx.Client
) -> None:
    tokens = {}
    for name in ("ann", "bob", "cid", "dee"):
        registered = host.post(
            "/v1/bots", json={"name": name, "game": "shithead", "kind": "external"}
        )
        assert registered.status_code == 201, registered.text
        tokens[name] = registered.json()["token"]
    body = {
        "game": "shithead",
        "entrants": [{"bot": "ann"}, {"bot": "bob"}, {"bot": "cid"}],
        "table_size": 2,
        "format": "arena",
        "duration_seconds": 3600,
    }
    created = host.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["tournament_id"]
    page.goto(f"/arena/tournaments/{tournament_id}")
    expect(page.get_by_test_id("def-format")).to_have_text("arena")
    expect(page.get_by_test_id("def-time-left")).to_have_text(re.compile(r"^(59:\d\d|1:00:00)$"))
    expect(page.locator("#rounds-heading")).to_have_text("Games")
    expect(page.get_by_test_id("arena-games").locator("li")).to_have_count(1)
    url = f"/v1/tournaments/{tournament_id}/entrants"
    joined = httpx.post(
        f"{host.base_url}{url}", headers={"Authorization": f"Bearer {tokens['dee']}"}
    )
    assert joined.status_code == 201, joined.text
    assert host.delete(f"{url}/0").status_code == 200
    page.reload()
    expect(page.get_by_test_id("arena-games").locator("li")).to_have_count(2)
    expect(page.get_by_test_id("entrant-3")).to_contain_text("dee@1")
    expect(page.get_by_test_id("entrant-0")).to_contain_text("(withdrew)")
    assert host.post(f"/v1/tournaments/{tournament_id}/cancel").status_code == 200
    page.reload()
    expect(page.get_by_test_id("def-time-left")).to_have_text("over")
