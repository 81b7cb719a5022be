"""What the browser tests share: the embedded game service served in a thread, Debian's
Chromium under Playwright, and the one way to say that something they need is missing."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator
from typing import NoReturn

import pytest
import uvicorn
from litestar import Litestar
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.stack import free_port, wait_until_healthy


def unavailable(message: str) -> NoReturn:
    """Skips the test for want of `message`'s tool; fails it under
    CARDARENA_REQUIRE_SERVICES=1 (as in CI), where every tool must be there."""
    if os.environ.get("CARDARENA_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (CARDARENA_REQUIRE_SERVICES=1 turns this skip into a failure)")
    pytest.skip(message)


@contextlib.contextmanager
def served(app: Litestar, name: str) -> Iterator[str]:
    """Serves `app` with uvicorn in a thread named `name` while the block runs; yields its
    base URL once it answers."""
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    serving = threading.Thread(target=server.run, name=name)
    serving.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, "the game service")
        yield url
    finally:
        server.should_exit = True
        serving.join(timeout=30)


def chromium() -> str:
    """Returns the path of Debian's chromium (see `unavailable` when it is missing)."""
    executable = shutil.which("chromium")
    if executable is None:
        unavailable("the browser test needs Debian's chromium (apt-get install chromium)")
    return executable


@contextlib.contextmanager
def launched() -> Iterator[Browser]:
    """Yields headless Debian Chromium under Playwright (never a downloaded browser)."""
    executable = chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        yield browser
        browser.close()


@contextlib.contextmanager
def opened(browser: Browser, base_url: str) -> Iterator[Page]:
    """Yields a fresh page of `base_url`; fails the test if the page logged an error or threw."""
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.on(
        "console",
        lambda message: errors.append(message.text) if message.type == "error" else None,
    )
    yield page
    context.close()
    assert errors == []
