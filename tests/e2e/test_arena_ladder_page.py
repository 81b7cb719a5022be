"""The ladder page in headless Chromium: the embedded service's pairer thread seats two
accounts' bots game after game, and the page draws the API's ranking and recent games."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.ladder import Pairing
from shared.app.runtime import InProcessDispatcher, LadderPairer
from shared.app.starting import GameCap
from shared.model.ladder import Rules
from shared.ports.game_slots import InMemoryGameSlots
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.stack import ADMIN_KEY

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service (open registration, a pairer every 0.1 s, no rematch
    cooldown) in a thread; returns its URL."""
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=ADMIN_KEY, registration="open"))
    dispatcher = InProcessDispatcher(store)
    pairing = Pairing(
        GameCap(InMemoryGameSlots(), 0), dispatcher, lambda g: {}, Rules(cooldown_s=0)
    )
    pairer = LadderPairer(store, pairing, 0.1)
    app = create_app(store, dispatcher, access=access, ladder_pairer=pairer)
    with served(app, "ladder") as url:
        yield url


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    with opened(browser, base_url) as fresh:
        yield fresh


def test_the_ladder_page_draws_the_api_s_ranking_and_recent_games(
    page: Page, base_url: str
) -> None:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        body = {"game": "shithead", "ruleset": {"max_moves": 60}}
        ladder_id = client.post("/v1/ladders", json=body, headers=ADMIN).json()["ladder_id"]
        for account in ("ada", "bea"):
            key = client.post("/v1/accounts", json={"name": account}).json()["key"]
            spec = {"name": f"{account}-bot", "game": "shithead", "strategy": "random"}
            made = client.post("/v1/bots", json=spec, headers={"Authorization": f"Bearer {key}"})
            assert made.status_code == 201, made.text
            joined = client.post(
                f"/v1/ladders/{ladder_id}/queue", json={"bot": spec["name"]}, headers=ADMIN
            )
            assert joined.status_code == 200, joined.text
        ladder: dict[str, Any] = {}
        for _ in range(100):
            ladder = client.get(f"/v1/ladders/{ladder_id}").json()
            if ladder["games"] >= 3 and len(ladder["ranking"]) == 2:
                break
            page.wait_for_timeout(100)
        assert ladder["games"] >= 3
    page.goto(f"/arena/ladders/{ladder_id}")
    page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")
    assert page.get_by_test_id("ladder-game").text_content() == "shithead"
    ranked = page.locator('[data-testid="ranking-table"] tbody tr')
    assert ranked.count() == 2
    recent = page.locator('[data-testid="recent"] tbody tr')
    assert recent.count() >= 3
    assert page.get_by_test_id("queued-ada-bot@1").count() == 1
