"""The replay viewer in headless Chromium: what it draws is what the replay API reports.

The game service runs in a thread (uvicorn over the embedded app: in-memory store, bots
played in-process), so a game created with only bots is finished when its creation
returns. The browser is Debian's `chromium`, driven by Playwright; without it the tests
are skipped (a failure under CARDARENA_REQUIRE_SERVICES=1, as in CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.stack import ROOT

Json = dict[str, Any]
Expected = dict[str, dict[str, str | None]]
"""Per `data-testid`, the data attributes it must carry (None: it must not carry it)."""

GAMES: dict[str, Json] = {
    "shithead": {
        "game": "shithead",
        "seats": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "heuristic"}],
        "seed": 7,
        "ruleset": {"max_moves": 40},
    },
    "autobus": {"game": "autobus", "players": 3, "seed": 7, "ruleset": {"max_turns": 12}},
    "beggar": {"game": "beggar", "players": 3, "seed": 7, "ruleset": {"max_cards": 300}},
}
"""One short finished game of each kind: capped, so that each has a few dozen events."""

ARTIFACTS = Path(os.environ.get("CARDARENA_ARTIFACTS") or ROOT / "tests" / "artifacts")
"""Where the screenshots go: CARDARENA_ARTIFACTS, else tests/artifacts (git-ignored)."""

DRAWN = """() => {
  const data = (el) =>
    el ? { ...el.dataset, hidden: String(el.hidden), value: el.value ?? "" } : null;
  const table = {};
  for (const el of document.querySelectorAll('[data-testid="table"] [data-testid]')) {
    table[el.dataset.testid] = { ...el.dataset };
  }
  const one = (id) => data(document.querySelector(`[data-testid="${id}"]`));
  return {
    table,
    version: one("version"),
    slider: one("slider"),
    event: one("event"),
    result: one("result"),
    seat: one("seat-select"),
  };
}"""
"""Reads what the page drew: every element of the table with a `data-testid`, and the
controls, as their data attributes."""


# The table the API's JSON calls for -------------------------------------------------------


def known(cards: list[str]) -> dict[str, str | None]:
    """Returns the attributes of cards drawn face up, in the API's order."""
    return {"cards": " ".join(cards), "count": str(len(cards))}


def unknown(count: int) -> dict[str, str | None]:
    """Returns the attributes of `count` cards the viewer may not show."""
    return {"cards": None, "count": str(count)}


def seats_to_move(replay: Json, waiting: list[int]) -> Expected:
    """Returns the turn line and the seats' to-move marks for the seats in `waiting`."""
    to_move = [] if replay["result"] is not None else waiting
    players = len(replay["seats"])
    marks: Expected = {
        f"seat-{seat}": {"toMove": "true" if seat in to_move else "false"}
        for seat in range(players)
    }
    return {"turn": {"seats": " ".join(map(str, to_move))}, **marks}


def hand(replay: Json, seat: int, sizes: str) -> dict[str, str | None]:
    """Returns a hand as drawn: every hand for a spectator, else only the viewer's own."""
    state, view = replay["state"], replay["view"]
    if state is not None:
        return known(state["hands"][seat])
    if seat == view["seat"]:
        return known(view["hand"])
    return unknown(view[sizes][seat])


def shithead_table(replay: Json) -> Expected:
    """Returns what a Shithead table must show."""
    state, view = replay["state"], replay["view"]
    table = state if state is not None else view
    players = len(replay["seats"])
    expected: Expected = {}
    for seat in range(players):
        expected[f"hand-{seat}"] = hand(replay, seat, "hand_sizes")
        expected[f"face-up-{seat}"] = known(table["face_up"][seat])
        expected[f"face-down-{seat}"] = (
            known(state["face_down"][seat])
            if state is not None
            else unknown(view["face_down_sizes"][seat])
        )
    pile = table["pile"]
    expected["pile"] = known(pile)
    expected["pile-top"] = {"card": pile[-1] if pile else ""}
    deck = len(state["deck"]) if state is not None else view["deck_size"]
    expected["deck"] = unknown(deck)
    expected["burnt"] = unknown(len(table["burnt"]))
    if table["phase"] == "swap":
        waiting = [seat for seat, ready in enumerate(table["ready"]) if not ready]
    else:
        waiting = [table["turn"]] if table["phase"] == "play" else []
    return expected | seats_to_move(replay, waiting)


def autobus_table(replay: Json) -> Expected:
    """Returns what a Hospodský autobus table must show."""
    state, view = replay["state"], replay["view"]
    table = state if state is not None else view
    expected: Expected = {}
    for seat in range(len(replay["seats"])):
        expected[f"hand-{seat}"] = hand(replay, seat, "hand_sizes")
        if state is not None:
            main = state["mains"][seat]
            expected[f"main-{seat}"] = known(main) | {"top": main[0] if main else None}
        else:
            top = view["main_tops"][seat] or None
            expected[f"main-{seat}"] = unknown(view["main_sizes"][seat]) | {"top": top}
        for slot, cards in enumerate(table["slots"][seat]):
            rank = table["slot_ranks"][seat][slot]
            expected[f"slot-{seat}-{slot}"] = known(cards) | {
                "rank": "" if rank is None else str(rank)
            }
    for index, cards in enumerate(table["sequences"]):
        expected[f"sequence-{index}"] = known(cards)
    expected["sequences"] = unknown(len(table["sequences"]))
    draw = len(state["draw"]) if state is not None else view["draw_size"]
    completed = len(state["completed"]) if state is not None else view["completed_size"]
    expected["draw"] = unknown(draw)
    expected["completed"] = unknown(completed)
    return expected | seats_to_move(replay, [table["turn"]])


def beggar_table(replay: Json) -> Expected:
    """Returns what a Beggar-my-neighbour table must show, with the trick of this event."""
    state, view = replay["state"], replay["view"]
    table = state if state is not None else view
    expected: Expected = {}
    for seat in range(len(replay["seats"])):
        expected[f"pack-{seat}"] = (
            known(state["packs"][seat]) if state is not None else unknown(view["pack_sizes"][seat])
        )
    expected["pile"] = known(table["pile"])
    event = replay["events"][-1]
    if event["type"] == "TrickPlayed":
        trick = event["data"]
        collector = trick["collector"]
        expected["trick"] = {
            "cards": " ".join(trick["cards"]),
            "seats": " ".join(map(str, trick["seats"])),
            "collector": "" if collector is None else str(collector),
        }
    return expected | seats_to_move(replay, [table["leader"]])


TABLES = {"shithead": shithead_table, "autobus": autobus_table, "beggar": beggar_table}


def expected_table(replay: Json) -> Expected:
    """Returns what the table must show for `replay` (before the deal: only a notice)."""
    if replay["state"] is None and replay["view"] is None:
        return {"undealt": {}}
    return TABLES[replay["game"]](replay)


# Fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded game service with uvicorn in a thread; returns its base URL."""
    store = InMemoryEventStore()
    with served(create_app(store, InProcessDispatcher(store)), "replay-viewer") as url:
        yield url


@pytest.fixture
def http(base_url: str) -> Iterator[httpx.Client]:
    """Returns a client of the game service."""
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    """Returns a fresh page; fails the test if the page logged an error or threw."""
    with opened(browser, base_url) as fresh:
        yield fresh


# Checks ---------------------------------------------------------------------------------


def replay_json(http: httpx.Client, game_id: str, version: int, seat: int | None) -> Json:
    """Returns the replay API's answer for `version` as `seat` (None: a spectator)."""
    params = {"version": version} | ({} if seat is None else {"seat": seat})
    response = http.get(f"/v1/games/{game_id}/replay", params=params)
    assert response.status_code == 200, response.text
    body: Json = response.json()
    return body


def shown_version(page: Page) -> int:
    """Returns the version the page shows once it has finished drawing."""
    page.wait_for_selector('[data-testid="table"][aria-busy="false"]', state="attached")
    version = page.get_by_test_id("table").get_attribute("data-version")
    assert version is not None
    return int(version)


def assert_drawn(
    page: Page, http: httpx.Client, game_id: str, version: int, seat: int | None = None
) -> Json:
    """Waits until the page shows `version` as `seat`; asserts that what it drew is the
    replay API's JSON at that version; returns that JSON."""
    seen_as = "" if seat is None else str(seat)
    page.wait_for_selector(
        f'[data-testid="table"][data-version="{version}"][data-seat="{seen_as}"]'
        '[aria-busy="false"]',
        state="attached",
    )
    replay = replay_json(http, game_id, version, seat)
    drawn: Json = page.evaluate(DRAWN)
    expected = expected_table(replay)
    table: dict[str, dict[str, str]] = drawn["table"]
    seen = {
        testid: {attr: table.get(testid, {}).get(attr) for attr in attrs}
        for testid, attrs in expected.items()
    }
    assert seen == expected, f"version {version}, seat {seat}"
    holders = {testid for testid, attrs in table.items() if "count" in attrs}
    assert holders == {testid for testid, attrs in expected.items() if "count" in attrs}

    last = replay["last_version"]
    assert drawn["version"]["version"] == str(version)
    assert drawn["version"]["last"] == str(last)
    assert drawn["slider"]["value"] == str(version)
    event = replay["events"][-1]
    assert (drawn["event"]["version"], drawn["event"]["type"]) == (str(version), event["type"])
    result = replay["result"]
    if result is None:
        assert drawn["result"]["hidden"] == "true"
    else:
        assert drawn["result"]["hidden"] == "false"
        assert drawn["result"]["status"] == result["status"]
        assert drawn["result"]["places"] == " ".join(map(str, result["places"]))
    assert drawn["seat"]["value"] == seen_as
    query = parse_qs(urlsplit(page.url).query)
    assert query.get("version") == [str(version)]
    assert query.get("seat") == (None if seat is None else [str(seat)])
    return replay


def finished_game(http: httpx.Client, body: Json) -> tuple[str, int]:
    """Creates a game of built-in bots (played to its end at once); returns its id and
    last version."""
    created = http.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game = created.json()
    assert game["result"] is not None
    return game["game_id"], game["version"]


def long_game(http: httpx.Client, body: Json, at_least: int = 13) -> tuple[str, int]:
    """Returns the first finished game of `body` from its seed on with `at_least` versions,
    for the test to walk: the deal follows the stack's deal secret too, so that a seed's
    game is not the same from one stack to the next, and a Beggar deal can end in a dozen."""
    for seed in range(body["seed"], body["seed"] + 50):
        game_id, last = finished_game(http, {**body, "seed": seed})
        if last >= at_least:
            return game_id, last
    pytest.fail(f"no game of {body} from its seed on lasted {at_least} versions")


# Tests ----------------------------------------------------------------------------------


def test_the_viewer_has_a_short_game_and_a_table_of_every_game() -> None:
    assert sorted(GAMES) == sorted(TABLES) == game_names()


@pytest.mark.parametrize("game", list(GAMES))
def test_the_viewer_draws_what_the_replay_api_reports_at_every_position_it_visits(
    game: str, page: Page, http: httpx.Client
) -> None:
    game_id, last = long_game(http, GAMES[game])

    page.goto(f"/replay/{game_id}")
    assert_drawn(page, http, game_id, last)

    page.get_by_test_id("first").click()
    assert_drawn(page, http, game_id, 1)
    for version in range(2, 7):
        page.get_by_test_id("forward").click()
        assert_drawn(page, http, game_id, version)
    page.get_by_test_id("back").click()
    assert_drawn(page, http, game_id, 5)
    page.keyboard.press("ArrowRight")
    assert_drawn(page, http, game_id, 6)
    page.keyboard.press("ArrowLeft")
    assert_drawn(page, http, game_id, 5)

    middle = (2 * last) // 3
    page.get_by_test_id("slider").fill(str(middle))
    assert_drawn(page, http, game_id, middle)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"replay-{game}.png", full_page=True)

    page.get_by_test_id("seat-select").select_option("1")
    assert_drawn(page, http, game_id, middle, seat=1)
    page.get_by_test_id("forward").click()
    assert_drawn(page, http, game_id, middle + 1, seat=1)
    page.get_by_test_id("seat-select").select_option("")
    assert_drawn(page, http, game_id, middle + 1)

    page.get_by_test_id("play").click()
    page.wait_for_function(
        "(at) => Number(document.querySelector('[data-testid=table]').dataset.version) >= at",
        arg=middle + 3,
    )
    page.get_by_test_id("play").click()
    assert page.get_by_test_id("play").get_attribute("aria-pressed") == "false"
    assert_drawn(page, http, game_id, shown_version(page))

    page.get_by_test_id("last").click()
    replay = assert_drawn(page, http, game_id, last)
    assert replay["result"] is not None
    assert page.get_by_test_id("forward").is_disabled()


@pytest.mark.parametrize("game", list(GAMES))
def test_an_address_with_a_version_and_a_seat_opens_the_viewer_there(
    game: str, page: Page, http: httpx.Client
) -> None:
    game_id, last = finished_game(http, GAMES[game])

    page.goto(f"/replay/{game_id}?version=3&seat=0")
    assert_drawn(page, http, game_id, 3, seat=0)
    page.goto(f"/replay/{game_id}?version={last + 50}")
    assert_drawn(page, http, game_id, last)
