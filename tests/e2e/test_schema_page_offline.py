"""The documentation page `/schema` renders in headless Chromium with every other origin cut
off: the operations' summaries appear, and the page asked no other origin for anything: no
request left for one, the policy had nothing to refuse (an image it blocks never reaches the
network), and no element of the rendered page names one as its source.

The game service runs in a thread (uvicorn over the embedded app). The browser is Debian's
`chromium`, driven by Playwright; without it the test is skipped (a failure under
CARDARENA_REQUIRE_SERVICES=1, as in CI).
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Route, sync_playwright

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import chromium, served

REMOTE_SOURCES = """() => Array.from(
  document.querySelectorAll("img, script, iframe, source, link[rel~=stylesheet], link[rel~=icon]")
).map((e) => e.getAttribute("src") || e.getAttribute("srcset") || e.getAttribute("href") || "")
 .filter((address) => /^(https?:|\\/\\/)/i.test(address))"""
"""Returns the sources of the page's elements that load something, when they name an origin."""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service with uvicorn in a thread; returns its base URL."""
    store = InMemoryEventStore()
    with served(create_app(store, InProcessDispatcher(store)), "schema-page") as url:
        yield url


def test_the_documentation_page_renders_its_operations_with_no_other_origin(
    base_url: str,
) -> None:
    executable = chromium()
    origin = urlsplit(base_url).netloc
    elsewhere: list[str] = []

    def only_the_service(route: Route) -> None:
        url = route.request.url
        if url.startswith("data:") or urlsplit(url).netloc == origin:
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            context = browser.new_context(base_url=base_url)
            context.route("**/*", only_the_service)
            page = context.new_page()
            errors: list[str] = []
            refused: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on(
                "console",
                lambda message: (
                    refused.append(message.text)
                    if "Content Security Policy" in message.text
                    else None
                ),
            )
            page.goto("/schema")
            # Redoc draws each operation's summary as a heading of the middle panel.
            page.locator("h2", has_text="Create a game").first.wait_for(timeout=30_000)
            page.locator("h2", has_text="Take an action").first.wait_for(timeout=10_000)
            assert page.title() == "cardarena game service"
            remote = page.evaluate(REMOTE_SOURCES)
            context.close()
        finally:
            browser.close()
    assert elsewhere == []
    assert refused == []
    assert remote == []
    assert errors == []
