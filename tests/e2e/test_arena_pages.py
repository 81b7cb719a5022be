"""The arena pages in headless Chromium: what they draw is what the public API answers.

The game service runs in a thread (uvicorn over the embedded app: in-memory store, bots
played in-process) with an admin key set, so that the browser, which sends no
credentials, reads as anyone does; a tournament of built-in bots is over when its creation
returns. The browser is Debian's `chromium`, driven by Playwright; without it the tests are
skipped (a failure under CARDARENA_REQUIRE_SERVICES=1, as in CI).
"""

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
from shared.catalog import game_names, get_game
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.stack import ADMIN_KEY, ROOT, Stack

Json = dict[str, Any]

LABEL = "arena"
"""The version label of the tournament's entrants: their ratings are this tournament's."""
TOURNAMENT: Json = {
    "game": "shithead",
    "entrants": [
        {"bot": "heuristic", "version": LABEL},
        {"bot": "random", "version": LABEL},
        {"bot": "mc", "version": LABEL},
        {"bot": "heuristic", "version": f"{LABEL}-b"},
    ],
    "table_size": 2,
    "games_per_table": 2,
    "ruleset": {"max_moves": 60},
}
"""A round robin of four built-in bot versions, two games per pair: twelve games in one
round."""

ARTIFACTS = Path(os.environ.get("CARDARENA_ARTIFACTS") or ROOT / "tests" / "artifacts")
"""Where the screenshots go: CARDARENA_ARTIFACTS, else tests/artifacts (git-ignored)."""

ROWS = """(selector) => [...document.querySelectorAll(selector)].map((el) => ({...el.dataset}))"""
"""Reads the data attributes of every element `selector` matches, in document order."""


# Fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service, with an admin key, in a thread; returns its URL."""
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=ADMIN_KEY))
    with served(create_app(store, InProcessDispatcher(store), access=access), "arena") as url:
        yield url


@pytest.fixture(scope="module")
def tournament(host: httpx.Client) -> Json:
    """Plays the round robin of `TOURNAMENT` to its end; returns its creation's answer."""
    created = host.post("/v1/tournaments", json=TOURNAMENT)
    assert created.status_code == 201, created.text
    body: Json = created.json()
    assert body["status"] == "finished"
    return body


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    """Returns a fresh page; fails the test if the page logged an error or threw."""
    with opened(browser, base_url) as fresh:
        yield fresh


# Reads and checks -------------------------------------------------------------------------


def read(client: httpx.Client, path: str) -> Json:
    """Returns the JSON of a 200 answer to GET `path`."""
    response = client.get(path)
    assert response.status_code == 200, (path, response.text)
    body: Json = response.json()
    return body


def rows(page: Page, selector: str) -> list[dict[str, str]]:
    """Returns the data attributes of every element of the page `selector` matches."""
    found: list[dict[str, str]] = page.evaluate(ROWS, selector)
    return found


def screenshot(page: Page, name: str) -> None:
    """Saves a screenshot of the whole page as the artifact `name`.png."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)


def wait_for_tournament(page: Page, tournament: Json, timeout_ms: float = 30_000) -> None:
    """Waits until the tournament page has drawn `tournament` as the API answers it now,
    its rating chart holding every game over."""
    page.wait_for_selector(
        f'[data-testid="page"][data-status="{tournament["status"]}"]'
        f'[data-games-played="{tournament["games_played"]}"][data-ratings="complete"]',
        state="attached",
        timeout=timeout_ms,
    )


def expected_crosstable(tournament: Json) -> dict[str, dict[str, str]]:
    """Returns per cell `cross-{row}-{column}` the row's games, wins, draws and losses
    against the column, counted from the places of the tournament's games."""
    count = len(tournament["entrants"])
    cells = {
        (row, column): {"games": 0, "wins": 0, "draws": 0, "losses": 0}
        for row in range(count)
        for column in range(count)
        if row != column
    }
    for game in (game for rnd in tournament["rounds"] for game in rnd["games"]):
        if game["places"] is None:
            continue
        seated = list(zip(game["entrants"], game["places"], strict=True))
        for row, mine in seated:
            for column, theirs in seated:
                if row == column:
                    continue
                cell = cells[row, column]
                cell["games"] += 1
                outcome = "wins" if mine < theirs else "draws" if mine == theirs else "losses"
                cell[outcome] += 1
    return {
        f"cross-{row}-{column}": {name: str(value) for name, value in cell.items()}
        for (row, column), cell in cells.items()
    }


def assert_tournament_drawn(
    page: Page, anyone: httpx.Client, tournament_id: str, timeout_ms: float = 30_000
) -> Json:
    """Asserts that the tournament page shows the API's tournament, standings, crosstable,
    rounds and rating histories cell by cell; returns the tournament."""
    tournament = read(anyone, f"/v1/tournaments/{tournament_id}")
    standings = read(anyone, f"/v1/tournaments/{tournament_id}/standings")["standings"]
    wait_for_tournament(page, tournament, timeout_ms)
    definition = tournament["definition"]

    assert page.get_by_test_id("status").get_attribute("data-status") == tournament["status"]
    title = get_game(definition["game"]).title
    assert page.get_by_test_id("def-game").text_content() == title, "the catalogue's title"
    assert page.get_by_test_id("def-table-size").text_content() == str(definition["table_size"])
    per_table = page.get_by_test_id("def-games-per-table").text_content()
    assert per_table == str(definition["games_per_table"]), "every format plays it"
    seeds = page.get_by_test_id("def-seed")
    if tournament["status"] == "running":
        assert definition["seed"] == ""
        assert seeds.count() == 0
    else:
        assert seeds.text_content() == definition["seed"]
    entrants = [row["key"] for row in rows(page, '[data-testid="entrants"] li')]
    assert entrants == [f"{e['bot']}@{e['version']}" for e in definition["entrants"]]

    drawn = rows(page, '[data-testid="standings"] tbody tr')
    assert len(drawn) == len(standings)
    for line, row in zip(standings, drawn, strict=True):
        assert row["entrant"] == str(line["entrant"])
        assert row["name"] == line["name"]
        assert int(row["games"]) == line["games"]
        assert float(row["points"]) == line["points"]
        assert int(row["wins"]) == line["wins"]
        assert float(row["meanPlace"]) == line["mean_place"]
        assert (float(row["rating"]) if row["rating"] else None) == line["rating"]

    cells = {
        cell["testid"]: {name: cell[name] for name in ("games", "wins", "draws", "losses")}
        for cell in rows(page, '[data-testid="crosstable"] td[data-games]')
    }
    assert cells == expected_crosstable(tournament)

    games = {game["game_id"]: game for rnd in tournament["rounds"] for game in rnd["games"]}
    shown = {row["testid"]: row for row in rows(page, '[data-testid="rounds"] li.game')}
    assert set(shown) == {f"game-{game_id}" for game_id in games}
    for game_id, game in games.items():
        row = shown[f"game-{game_id}"]
        places = " ".join(map(str, game["places"])) if game["places"] else ""
        assert (row["entrants"], row["places"]) == (" ".join(map(str, game["entrants"])), places)
        live = game["status"] is None and tournament["status"] == "running"
        assert (row["state"] == "live") == live

    lines = {row["testid"]: row for row in rows(page, '[data-testid="ratings"] g.series')}
    for index, entrant in enumerate(definition["entrants"]):
        key = f"{entrant['bot']}@{entrant['version']}"
        history = read(
            anyone,
            f"/v1/leaderboards/{definition['game']}/{entrant['bot']}/{entrant['version']}/history",
        )
        steps = [step for step in history["steps"] if step["game_id"] in games]
        line = lines[f"rating-line-{index}"]
        assert line["key"] == key
        values = [float(value) for value in line["values"].split()]
        assert values == [step["ordinal"] for step in steps]
        assert line["games"].split() == [step["game_id"] for step in steps]
    return tournament


# Tests ----------------------------------------------------------------------------------


def test_the_tournament_page_draws_the_api_s_standings_crosstable_rounds_and_ratings(
    page: Page, anyone: httpx.Client, tournament: Json
) -> None:
    page.goto(f"/arena/tournaments/{tournament['tournament_id']}")
    drawn = assert_tournament_drawn(page, anyone, tournament["tournament_id"])
    assert drawn["games_played"] == 12
    # From fresh ratings the standings' ratings are the leaderboard's: each line ends there.
    standings = read(anyone, f"/v1/tournaments/{tournament['tournament_id']}/standings")
    for line in standings["standings"]:
        values = page.get_by_test_id(f"rating-line-{line['entrant']}").get_attribute("data-values")
        assert values is not None
        assert float(values.split()[-1]) == pytest.approx(line["rating"])
    screenshot(page, "arena-tournament")


def test_the_home_page_lists_tournaments_recent_games_and_each_game_s_leaderboard(
    page: Page, host: httpx.Client, anyone: httpx.Client, tournament: Json
) -> None:
    # More games than the page lists (the tournament's twelve and these), one still live.
    for seed in range(9):
        created = host.post("/v1/games", json={"game": "beggar", "players": 2, "seed": seed})
        assert created.status_code == 201, created.text
    seats = [{"kind": "external", "name": "someone"}, {"bot": "heuristic"}]
    live = host.post("/v1/games", json={"game": "shithead", "seats": seats, "seed": 9})
    assert live.status_code == 201, live.text
    page.goto("/arena")
    page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")
    recent = read(anyone, "/v1/tournaments?limit=20")["tournaments"]
    drawn = rows(page, '[data-testid="recent"] tbody tr')
    assert [row["testid"] for row in drawn] == [f"recent-{t['tournament_id']}" for t in recent]
    assert_games_drawn(page, read(anyone, "/v1/games?limit=20")["games"])
    assert page.get_by_test_id(f"games-{live.json()['game_id']}").get_attribute("data-live") == (
        "true"
    )
    assert page.get_by_test_id("running").text_content() == "No tournament is running."
    for game in game_names():
        board = read(anyone, f"/v1/leaderboards/{game}?limit=20")
        lines = rows(page, f'[data-testid="board-{game}"] tbody tr')
        assert [(row["key"], float(row["ordinal"])) for row in lines] == [
            (entry["key"], entry["ordinal"]) for entry in board["entries"]
        ]
    assert rows(page, '[data-testid="board-beggar"] tbody tr') == []
    assert "no decisions" in (page.get_by_test_id("leaderboard-beggar").text_content() or "")
    screenshot(page, "arena-home")


def assert_games_drawn(page: Page, games: list[Json]) -> None:
    """Asserts that the home page's recent games are `games` (`listGames`' answer), row by
    row: game, status (live ones marked), seats, tournament, and the link to the game page."""
    assert len(games) == 20
    drawn = rows(page, '[data-testid="games"] tbody tr')
    assert [row["testid"] for row in drawn] == [f"games-{game['game_id']}" for game in games]
    for game, row in zip(games, drawn, strict=True):
        assert (row["game"], row["status"], row["tournament"]) == (
            game["game"],
            game["status"],
            game["tournament_id"] or "",
        )
        assert row["seats"] == " | ".join(game["seats"])
        assert row["live"] == str(game["status"] == "playing").lower()
        shown = page.get_by_test_id(f"games-{game['game_id']}")
        badge = shown.locator(".badge").text_content()
        assert badge == ("live" if game["status"] == "playing" else game["status"])
        link = shown.locator("th a").get_attribute("href")
        assert link == f"/arena/games/{game['game_id']}"


def focused(page: Page) -> Json:
    """Returns the focused element's address (if a link) and whether its outline shows."""
    found: Json = page.evaluate(
        """() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          return {
            href: el.getAttribute("href") || "",
            outline: style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0,
          };
        }"""
    )
    return found


def tab_to(page: Page, href: str, presses: int = 150) -> None:
    """Presses Tab until the link to `href` has the focus (and shows it); fails otherwise."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        now = focused(page)
        if now["href"] == href:
            assert now["outline"], f"the focus on {href} is not visible"
            return
    pytest.fail(f"no link to {href} within {presses} presses of Tab")


def test_the_keyboard_goes_from_the_home_page_to_the_tournament_to_a_game(
    page: Page, anyone: httpx.Client, tournament: Json
) -> None:
    tournament_id = tournament["tournament_id"]
    page.goto("/arena")
    page.wait_for_selector(f'[data-testid="recent-{tournament_id}"]', state="attached")
    tab_to(page, f"/arena/tournaments/{tournament_id}")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/arena/tournaments/{tournament_id}")
    assert_tournament_drawn(page, anyone, tournament_id)

    game = tournament["rounds"][0]["games"][0]
    tab_to(page, f"/arena/games/{game['game_id']}")
    screenshot(page, "arena-keyboard-focus")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/arena/games/{game['game_id']}")
    result = page.get_by_test_id("result")
    result.wait_for(state="visible")
    api_game = read(anyone, f"/v1/games/{game['game_id']}")
    assert result.get_attribute("data-status") == api_game["result"]["status"]
    assert result.get_attribute("data-places") == " ".join(map(str, game["places"]))
    assert page.get_by_test_id("replay-link").get_attribute("href") == f"/replay/{game['game_id']}"
    page.locator(
        f'[data-testid="table"][data-version="{api_game["version"]}"][data-mode="replay"]'
    ).wait_for(state="attached")
    screenshot(page, "arena-finished-game")


def register_external(host: httpx.Client, name: str) -> str:
    """Registers an external Shithead bot `name`; returns its token."""
    response = host.post("/v1/bots", json={"name": name, "game": "shithead", "kind": "external"})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


def test_the_game_page_follows_a_running_game_as_a_spectator_then_shows_its_replay(
    page: Page, host: httpx.Client, anyone: httpx.Client, base_url: str
) -> None:
    token = register_external(host, "watched")
    seats = [{"kind": "external", "bot": "watched", "version": "1"}, {"bot": "heuristic"}]
    body = {"game": "shithead", "seats": seats, "seed": 3, "ruleset": {"max_moves": 16}}
    created = host.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    page.goto(f"/arena/games/{game_id}")
    page.wait_for_selector('body[data-status="playing"]', state="attached")

    bot = httpx.Client(base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {token}"})
    spectated, turns, deadline = False, 0, time.monotonic() + 120
    with bot:
        while time.monotonic() < deadline:
            view = bot.get(f"/v1/games/{game_id}/view", params={"seat": 0})
            assert view.status_code == 200, view.text
            seen = view.json()
            if seen["status"] != "playing":
                break
            if 0 not in seen["to_move"]:  # the built-in bot's turn, played in-process
                time.sleep(0.02)
                continue
            turns += 1
            if turns == 3:
                assert_spectated(page, anyone, game_id)
                spectated = True
                screenshot(page, "arena-live-game")
            action = {
                "seat": 0,
                "action": seen["legal_actions"][0],
                "expected_version": seen["version"],
            }
            posted = bot.post(f"/v1/games/{game_id}/actions", json=action)
            assert posted.status_code == 200, posted.text

    assert spectated, "the game ended before the page was checked mid-game"
    final = read(anyone, f"/v1/games/{game_id}")
    assert final["result"] is not None
    page.get_by_test_id("result").wait_for(state="visible")
    assert page.get_by_test_id("result").get_attribute("data-status") == final["result"]["status"]
    assert page.get_by_test_id("replay-link").get_attribute("href") == f"/replay/{game_id}"


def assert_spectated(page: Page, anyone: httpx.Client, game_id: str) -> None:
    """Asserts that the live page shows the game's version, seats to move and its latest
    events as anyone may read them (`listGameEvents` without credentials: redacted); the
    cards themselves are checked in tests/e2e/test_live_game_page.py."""
    game = read(anyone, f"/v1/games/{game_id}")
    page.wait_for_selector(
        f'[data-testid="table"][data-version="{game["version"]}"][data-mode="live"]'
        f'[aria-busy="false"]',
        state="attached",
    )
    seats = [row["toMove"] for row in rows(page, '[data-testid="table"] section.seat')]
    assert seats == [str(seat in game["to_move"]).lower() for seat in range(len(game["seats"]))]
    events = read(anyone, f"/v1/games/{game_id}/events")["events"]
    logged = rows(page, '[data-testid="log"] li')
    assert logged, "the page logged no event of the stream"
    shown = [(int(row["version"]), row["type"]) for row in reversed(logged)]
    assert shown == [(event["version"], event["type"]) for event in events][-len(shown) :]


def test_the_bot_page_shows_its_leaderboard_line_and_rating_history(
    page: Page, anyone: httpx.Client, tournament: Json
) -> None:
    page.goto(f"/arena/bots/mc/{LABEL}")
    page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")
    key = f"mc@{LABEL}"
    board = read(anyone, "/v1/leaderboards/shithead?limit=1000")["entries"]
    rank = next(index for index, entry in enumerate(board) if entry["key"] == key)
    line = page.get_by_test_id("rank-shithead")
    assert line.get_attribute("data-rank") == str(rank + 1)
    assert float(line.get_attribute("data-ordinal") or "nan") == board[rank]["ordinal"]
    history = read(anyone, f"/v1/leaderboards/shithead/mc/{LABEL}/history")["steps"]
    chart = page.get_by_test_id("rating-line-shithead")
    values = (chart.get_attribute("data-values") or "").split()
    assert [float(value) for value in values] == [step["ordinal"] for step in history]
    recent = [row["testid"] for row in rows(page, '[data-testid="recent-shithead"] tbody tr')]
    assert recent == [f"recent-{step['game_id']}" for step in reversed(history)][:20]
    assert page.get_by_test_id("about-kind").text_content() is not None
    screenshot(page, "arena-bot")


STACK_TOURNAMENT: Json = {
    **TOURNAMENT,
    "entrants": [
        {**entrant, "version": f"{entrant['version']}-stack"} for entrant in TOURNAMENT["entrants"]
    ],
    "games_per_table": 6,
    "ruleset": {"max_moves": 200},
}
"""The round robin again, longer (36 games), played by the workers of the real stack."""


def test_a_tournament_on_the_workers_is_followed_live_from_start_to_end(
    secured_stack: Stack, browser: Browser
) -> None:
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with (
        httpx.Client(base_url=secured_stack.base_url, timeout=30, headers=headers) as host,
        httpx.Client(base_url=secured_stack.base_url, timeout=30) as anyone,
    ):
        created = host.post("/v1/tournaments", json=STACK_TOURNAMENT)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        context = browser.new_context(
            base_url=secured_stack.base_url, viewport={"width": 1400, "height": 1000}
        )
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        try:
            page.goto(f"/arena/tournaments/{tournament_id}")
            page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")
            # It follows the tournament's stream (and stops polling the standings).
            following = '[data-testid="page"][data-live="stream"], [data-live="over"]'
            page.wait_for_selector(following, state="attached")
            seen = [page_state(page)]
            screenshot(page, "arena-stack-tournament-live")
            while seen[-1][0] != "finished":
                page.wait_for_timeout(500)
                seen.append(page_state(page))
                assert len(seen) < 600, "the tournament did not finish in five minutes"
            drawn = assert_tournament_drawn(page, anyone, tournament_id, timeout_ms=120_000)
            assert drawn["games_played"] == 36
            played = [count for _, count in seen]
            assert played == sorted(played), "the games played went back"
            screenshot(page, "arena-stack-tournament")
        finally:
            context.close()
        assert errors == []
        assert seen[0] == ("running", seen[0][1]), f"the page first saw {seen[0]}"
        # It followed the tournament live: it drew games played while it ran.
        assert any(0 < count < 36 for status, count in seen if status == "running"), seen


def page_state(page: Page) -> tuple[str, int]:
    """Returns the status and games played the tournament page shows now."""
    main = page.get_by_test_id("page")
    return main.get_attribute("data-status") or "", int(
        main.get_attribute("data-games-played") or 0
    )
