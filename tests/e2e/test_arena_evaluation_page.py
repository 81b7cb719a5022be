"""The evaluation page in headless Chromium: it draws the LLR after each unit that the public
API answers, between its bounds, and the verdict once the evaluation has finished."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.stack import ADMIN_KEY, ROOT

ARTIFACTS = Path(os.environ.get("CARDARENA_ARTIFACTS") or ROOT / "tests" / "artifacts")
"""Where the screenshot goes: CARDARENA_ARTIFACTS, else tests/artifacts (git-ignored)."""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service, with an admin key, in a thread; returns its URL."""
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=ADMIN_KEY))
    with served(create_app(store, InProcessDispatcher(store), access=access), "evaluation") as url:
        yield url


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    """Returns a fresh page; fails the test if the page logged an error or threw."""
    with opened(browser, base_url) as fresh:
        yield fresh


def finished(client: httpx.Client, evaluation_id: str, seconds: float = 30) -> dict[str, Any]:
    """Returns the evaluation once it has finished (fails after `seconds`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body: dict[str, Any] = client.get(f"/v1/evaluations/{evaluation_id}").json()
        if body["status"] == "finished":
            return body
        time.sleep(0.05)
    pytest.fail(f"evaluation {evaluation_id} did not finish")


def test_the_evaluation_page_draws_the_llr_between_its_bounds_and_the_verdict(
    page: Page, host: httpx.Client, anyone: httpx.Client
) -> None:
    for name, strategy in (("smart", "heuristic"), ("plain", "random")):
        body = {"name": name, "game": "shithead", "kind": "builtin", "strategy": strategy}
        assert host.post("/v1/bots", json=body).status_code == 201
    asked = {
        "game": "shithead",
        "candidate": {"bot": "smart"},
        "baseline": {"bot": "plain"},
        "elo1": 200,
        "seed": "7",
    }
    created = host.post("/v1/evaluations", json=asked)
    assert created.status_code == 201, created.text
    evaluation_id = created.json()["evaluation_id"]
    shown = finished(anyone, evaluation_id)
    page.goto(f"/arena/evaluations/{evaluation_id}")
    page.wait_for_selector('[data-testid="verdict"][data-verdict="H1"]', state="attached")
    line = page.get_by_test_id("llr-line").get_attribute("data-values") or ""
    assert [float(value) for value in line.split()] == shown["llr_history"]
    assert page.get_by_test_id("bound-upper").count() == 1
    assert page.get_by_test_id("bound-lower").count() == 1
    assert str(shown["games"]) in (page.get_by_test_id("summary-games").text_content() or "")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / "arena-evaluation.png", full_page=True)
