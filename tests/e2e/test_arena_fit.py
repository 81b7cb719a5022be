"""Every arena page (home, tournament, bot) at a laptop's and a phone's width in headless
Chromium: it never scrolls sideways, its key columns stay in view, axe-core finds nothing, it
labels its one ranking, an entrant with no game shows dashes, the rating chart draws one line
per entrant over that entrant's own games, and the tournament page follows the tournament's
stream. A screenshot of each page at each width lands in the artifacts (CARDARENA_ARTIFACTS).

The game service is the embedded one in a thread (in-memory store, built-in bots played
in-process), as in test_arena_pages; two external bots that never move hold a tournament open.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import served
from tests.support.pages import DESKTOP, PHONE, assert_fits, axe_violations, screenshot
from tests.support.stack import ADMIN_KEY

Json = dict[str, Any]


TWINS: Json = {
    "name": "Twins on a phone",
    "description": "One bot version entered twice, to see one line per entrant.",
    "game": "shithead",
    "entrants": [
        {"bot": "heuristic", "version": "fit"},
        {"bot": "heuristic", "version": "fit"},
        {"bot": "random", "version": "fit"},
        {"bot": "mc", "version": "fit-a-long-version-label"},
    ],
    "table_size": 2,
    "games_per_table": 1,
    "ruleset": {"max_moves": 60},
}
"""A round robin that enters one bot version twice: six games, three per entrant, the twins'
own game unrated (one version in two seats)."""

WIDTHS = {"1280": DESKTOP, "390": PHONE}
"""The widths every page is checked at: a laptop's, a phone's."""
DASH = "\N{EN DASH}"
"""What a page shows for a value an entrant does not have yet."""

KEY_COLUMNS = """() => [...document.querySelectorAll('.scroll th[scope="row"]')]
  .filter((cell) => cell.getClientRects().length > 0)
  .map((cell) => {
    const box = cell.getBoundingClientRect();
    return { text: cell.textContent, left: box.left, right: box.right };
  })"""
"""Returns where each table's row heading (its key column) is on the screen."""

SERIES = """() => [...document.querySelectorAll('[data-testid="ratings"] g.series')].map((g) => ({
  testid: g.dataset.testid, key: g.dataset.key,
  games: g.dataset.games ? g.dataset.games.split(" ") : [],
}))"""


# Fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service, with an admin key, in a thread; returns its URL."""
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=ADMIN_KEY))
    with served(create_app(store, InProcessDispatcher(store), access=access), "arena-fit") as url:
        yield url


@pytest.fixture(scope="module")
def twins(host: httpx.Client) -> Json:
    """Plays `TWINS` to its end; returns its creation's answer."""
    created = host.post("/v1/tournaments", json=TWINS)
    assert created.status_code == 201, created.text
    body: Json = created.json()
    assert body["status"] == "finished"
    return body


def idle_swiss(host: httpx.Client, label: str) -> Json:
    """Starts a Swiss of five with two external bots that never move: its first round never
    ends, so the entrant with the bye has no game. Returns its creation's answer."""
    idle = []
    for name in (f"{label}-idle-a", f"{label}-idle-b"):
        bot = {"name": name, "game": "shithead", "kind": "external"}
        registered = host.post("/v1/bots", json=bot)
        assert registered.status_code == 201, registered.text
        idle.append({"bot": name, "version": "1"})
    builtins = [{"bot": bot, "version": label} for bot in ("heuristic", "random", "mc")]
    body = {
        "game": "shithead",
        "format": "swiss",
        "rounds": 2,
        "entrants": [*idle, *builtins],
        "table_size": 2,
        "ruleset": {"max_moves": 60},
    }
    created = host.post("/v1/tournaments", json=body)
    assert created.status_code == 201, created.text
    started: Json = created.json()
    assert started["status"] == "running"
    return started


@pytest.fixture(scope="module")
def running(host: httpx.Client) -> Json:
    """Returns a Swiss that stays running, an entrant of it without a game."""
    return idle_swiss(host, "open")


@pytest.fixture(scope="module")
def pages(browser: Browser, base_url: str) -> Iterator[dict[str, Page]]:
    """Returns a page at each width (by its name: 1280, 390), each failing the test that
    used it if it logged an error or threw."""
    contexts, opened, errors = [], {}, []
    for name, viewport in WIDTHS.items():
        context = browser.new_context(base_url=base_url, viewport=viewport)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        page.on("console", lambda m: errors.append(m.text) if failed(m) else None)
        contexts.append(context)
        opened[name] = page
    yield opened
    for context in contexts:
        context.close()
    assert errors == []


def failed(message: ConsoleMessage) -> bool:
    """Tells whether a console message is an error of the page (the tournament stream's 404 on
    a service without it is not: the page then polls)."""
    stream_missing = message.location.get("url", "").endswith("/stream") and "404" in message.text
    return message.type == "error" and not stream_missing


# Checks ---------------------------------------------------------------------------------


def assert_page_good(page: Page, width: str, name: str) -> None:
    """Asserts that the page fits its width with its key columns in view and that axe-core
    finds nothing; saves its screenshot as `name`-`width`."""
    what = f"{name} at {width} px"
    assert_fits(page, what)
    viewport = int(width)
    for cell in page.evaluate(KEY_COLUMNS):
        assert cell["left"] >= -1, (what, cell)
        assert cell["right"] <= viewport + 1, (what, cell)
    found = axe_violations(page)
    assert found == [], f"{what}: " + "\n".join(found)
    screenshot(page, f"{name}-{width}")


CRITERIA = {
    "buchholz": "Buchholz",
    "median_buchholz": "Median Buchholz",
    "sonneborn_berger": "Sonneborn-Berger",
    "direct_encounter": "Direct encounter",
    "lot": "Lot",
    "stage": "Stage",
    "score": "Score",
}
"""The headings of the standings' criteria besides the points."""


def assert_told(page: Page, tournament: Json, standings: Json, headers: list[str]) -> None:
    """Asserts that the page shows the tournament's name, description and warnings and a
    column per criterion of the standings' order, as far as the API answers them."""
    if tournament.get("name"):
        assert page.get_by_test_id("tournament-name").text_content() == tournament["name"]
    if tournament.get("description"):
        assert page.get_by_test_id("description").text_content() == tournament["description"]
    shown = page.locator('[data-testid="warnings"] li').all_text_contents()
    assert shown == [warning["message"] for warning in tournament.get("warnings", [])]
    for key in standings.get("order", []):
        if key != "points":
            assert CRITERIA[key] in headers, (key, headers)


def read(client: httpx.Client, path: str) -> Json:
    """Returns the JSON of a 200 answer to GET `path`."""
    response = client.get(path)
    assert response.status_code == 200, (path, response.text)
    body: Json = response.json()
    return body


def settled(page: Page) -> None:
    """Waits until the page has drawn what it read first."""
    page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")


# Tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_the_home_page_fits_labels_the_leaderboard_rating_and_shows_tv(
    pages: dict[str, Page], width: str, twins: Json, running: Json
) -> None:
    page = pages[width]
    page.goto("/arena")
    settled(page)
    page.wait_for_selector(f'[data-testid="running-{running["tournament_id"]}"]', state="attached")
    caption = page.locator('[data-testid="board-shithead"] caption').text_content() or ""
    assert "leaderboard rating (OpenSkill ordinal across all rated games)" in caption
    assert "Leaderboard rating" in (page.get_by_test_id("boards-note").text_content() or "")
    # TV: the running tournament's one live game (the idle pair's, or an idle bot's) is on,
    # the live game page embedded in its compact mode.
    screen = page.get_by_test_id(f"tv-{running['tournament_id']}")
    game_id = screen.get_attribute("data-game-id")
    assert game_id is not None
    frame = screen.locator("iframe")
    assert frame.get_attribute("src") == f"/arena/games/{game_id}?embed=1"
    assert frame.get_attribute("title")
    assert page.get_by_test_id("tv-top").get_attribute("data-game-id") is not None
    assert_page_good(page, width, "arena-home")


def test_the_tv_picks_the_running_game_whose_seats_are_rated_highest(
    pages: dict[str, Page], host: httpx.Client, twins: Json, running: Json
) -> None:
    entries = read(host, "/v1/leaderboards/shithead?limit=200")["entries"]
    board = {entry["key"]: entry["ordinal"] for entry in entries}
    playing = read(host, "/v1/games?status=playing&limit=100")["games"]
    assert playing, "no game runs"
    sums = [sum(board.get(seat, 0.0) for seat in game["seats"]) for game in playing]
    best = playing[sums.index(max(sums))]
    page = pages["1280"]
    page.goto("/arena")
    settled(page)
    shown = page.get_by_test_id("tv-top")
    assert shown.get_attribute("data-game-id") == best["game_id"]
    assert float(shown.get_attribute("data-score") or "nan") == pytest.approx(max(sums))
    link = shown.locator("a").first.get_attribute("href")
    assert link == f"/arena/games/{best['game_id']}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_tournament_page_fits_labels_its_standings_and_draws_a_line_per_entrant(
    pages: dict[str, Page], width: str, host: httpx.Client, twins: Json
) -> None:
    page = pages[width]
    tournament_id = twins["tournament_id"]
    page.goto(f"/arena/tournaments/{tournament_id}")
    page.wait_for_selector('[data-testid="page"][data-ratings="complete"]', state="attached")
    caption = page.locator('[data-testid="standings"] caption').text_content() or ""
    assert caption.startswith("Tournament standings (points, then")
    assert page.locator("#ratings-heading").text_content() == "Leaderboard rating"
    note = page.get_by_test_id("ratings-note").text_content() or ""
    assert "across all its rated games" in note
    headers = page.locator('[data-testid="standings"] thead th').all_text_contents()
    assert "Tournament rating" in headers

    answer = read(host, f"/v1/tournaments/{tournament_id}/standings")
    standings = answer["standings"]
    tournament = read(host, f"/v1/tournaments/{tournament_id}")
    assert_told(page, tournament, answer, headers)
    assert page.get_by_test_id("tournament-name").text_content() == TWINS["name"]
    assert page.get_by_test_id("description").text_content() == TWINS["description"]
    codes = [warning["code"] for warning in tournament["warnings"]]
    assert codes == ["version-entered-twice"]
    assert page.locator('[data-testid="warnings"] li').count() == 1
    series = page.evaluate(SERIES)
    assert sorted(line["testid"] for line in series) == sorted(
        f"rating-line-{line['entrant']}" for line in standings
    )
    legend = page.locator('[data-testid="legend"] li').all_text_contents()
    assert len(legend) == len(standings) == len(set(legend))
    games = [game for rnd in tournament["rounds"] for game in rnd["games"]]
    for line in series:
        entrant = int(line["testid"].removeprefix("rating-line-"))
        own = {game["game_id"] for game in games if entrant in game["entrants"]}
        assert set(line["games"]) <= own, f"entrant {entrant}'s line holds games it did not play"
    # The twins' lines are theirs alone: no game on both, and none of their own game.
    twin_lines = [set(line["games"]) for line in series if line["key"] == "heuristic@fit"]
    assert len(twin_lines) == 2
    assert not twin_lines[0] & twin_lines[1]
    most = max(len(line["games"]) for line in series)
    assert most <= max(sum(e in game["entrants"] for game in games) for e in range(4))
    ticks = page.locator('[data-testid="chart"] text.tick').all_text_contents()
    assert f"game {most}" in ticks
    assert f"game {most + 1}" not in ticks
    assert_page_good(page, width, "arena-tournament")


@pytest.mark.parametrize("width", WIDTHS)
def test_an_entrant_without_a_game_shows_dashes(
    pages: dict[str, Page], width: str, host: httpx.Client, running: Json
) -> None:
    page = pages[width]
    tournament_id = running["tournament_id"]
    standings = read(host, f"/v1/tournaments/{tournament_id}/standings")["standings"]
    idle = [index for index, line in enumerate(standings) if line["games"] == 0]
    assert idle, f"every entrant has a game: {standings}"
    page.goto(f"/arena/tournaments/{tournament_id}")
    settled(page)
    page.wait_for_selector('[data-testid="standing-0"]', state="attached")
    for index in idle:
        row = page.get_by_test_id(f"standing-{index}")
        for cell in ("mean-place", "win-rate", "rating"):
            assert row.get_by_test_id(cell).text_content() == DASH, (index, cell)
    assert "0.00" not in (page.get_by_test_id("standings").text_content() or "").split()
    assert_page_good(page, width, "arena-tournament-live")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_bot_page_fits_and_labels_the_leaderboard_rating(
    pages: dict[str, Page], width: str, twins: Json
) -> None:
    page = pages[width]
    page.goto("/arena/bots/mc/fit-a-long-version-label")
    settled(page)
    page.wait_for_selector('[data-testid="recent-shithead"]', state="attached")
    assert page.locator("#ratings-heading").text_content() == "Leaderboard rating"
    assert "on the leaderboard" in (page.get_by_test_id("rank-shithead").text_content() or "")
    assert_page_good(page, width, "arena-bot")


def test_the_tournament_page_follows_the_stream_without_reading_the_standings(
    pages: dict[str, Page], host: httpx.Client, base_url: str
) -> None:
    tournament = idle_swiss(host, "streamed")
    tournament_id = tournament["tournament_id"]
    page = pages["1280"]
    requests: list[str] = []

    def record(request: Request) -> None:
        requests.append(request.url)

    page.goto(f"/arena/tournaments/{tournament_id}")
    page.wait_for_selector('[data-testid="page"][data-live="stream"]', state="attached")
    page.on("request", record)
    try:
        cancelled = host.post(f"/v1/tournaments/{tournament_id}/cancel", json={"reason": "test"})
        assert cancelled.status_code == 200, cancelled.text
        page.wait_for_selector('[data-testid="page"][data-status="cancelled"]', state="attached")
    finally:
        page.remove_listener("request", record)
    standings = [url for url in requests if url.endswith("/standings")]
    assert standings == [], f"the page read the standings after it connected: {standings}"
    assert any(url.endswith(f"/v1/tournaments/{tournament_id}") for url in requests), requests
    # The cancellation's standings came over the stream and were drawn.
    assert int(page.get_by_test_id("page").get_attribute("data-streamed") or 0) >= 1


def test_without_a_stream_the_tournament_page_polls(
    pages: dict[str, Page], host: httpx.Client
) -> None:
    tournament_id = idle_swiss(host, "polled")["tournament_id"]
    page = pages["1280"]
    page.route("**/stream", lambda route: route.fulfill(status=404, body="{}"))
    try:
        page.goto(f"/arena/tournaments/{tournament_id}")
        page.wait_for_selector('[data-testid="page"][data-live^="polling"]', state="attached")
        with page.expect_request(lambda request: request.url.endswith("/standings")):
            pass  # it reads the standings again, as it polls
        cancelled = host.post(f"/v1/tournaments/{tournament_id}/cancel", json={"reason": "test"})
        assert cancelled.status_code == 200, cancelled.text
        page.wait_for_selector('[data-testid="page"][data-status="cancelled"]', state="attached")
    finally:
        page.unroute("**/stream")
