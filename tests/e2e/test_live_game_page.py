"""The game page in headless Chromium: a running game drawn live from its stream (cards as
cards, every seat's clock, the public table only), then its replay without a reload; every
game of the catalogue, a toy game hosted by the test included, at a phone's width and a
laptop's.

The game service runs in a thread (uvicorn over the embedded app, in-memory store); the
games' seats are the host's (external, unbound), so the test plays every move itself and each
step is deterministic (the deal pinned by its seed and the session's deal secret).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared import catalog
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names, get_game
from shared.store.memory import InMemoryEventStore
from tests.support.browsing import opened, served
from tests.support.pages import axe_violations
from tests.support.stack import ADMIN_KEY
from tests.support.toy_game import HIGH_CARD

Json = dict[str, Any]

CLOCK = {"move_seconds": 600.0, "bank_seconds": 900.0, "strikes_to_forfeit": 3}
"""A clock no step of the test runs out of."""
WIDTHS = {"phone": (390, 844), "laptop": (1280, 800)}
ARTIFACTS = Path(os.environ.get("CARDARENA_ARTIFACTS") or tempfile.gettempdir()) / "live-pages"
"""Where the screenshots go: CARDARENA_ARTIFACTS, else a folder of the system's temp dir."""
GAMES = [*game_names(), HIGH_CARD.name]
"""Every game of the catalogue and the toy game this module hosts."""

HOLDERS = """() => Object.fromEntries(
  [...document.querySelectorAll('[data-testid="table"] [data-count]')].map((el) => [
    el.dataset.testid, { count: el.dataset.count, cards: el.dataset.cards ?? null },
  ]))"""
"""Every holder of cards the table drew: its count and, when shown, its cards."""
FACES = """() => [...document.querySelectorAll('[data-testid="table"] [data-card]')]
  .map((el) => el.dataset.card).filter((card) => card && card !== "??")"""
"""Every card the table shows face up."""
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


# Fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """Serves the embedded service, hosting the toy game too, in a thread; returns its URL."""
    store = InMemoryEventStore()
    with catalog.hosting(HIGH_CARD):
        access = Access.embedded(store, Settings(admin_key=ADMIN_KEY))
        app = create_app(store, InProcessDispatcher(store), access=access)
        with served(app, "live-pages") as url:
            yield url


@pytest.fixture
def page(browser: Browser, base_url: str) -> Iterator[Page]:
    """Returns a fresh page; fails the test if the page logged an error or threw."""
    with opened(browser, base_url) as fresh:
        fresh.set_viewport_size({"width": 1280, "height": 800})
        yield fresh


# Helpers --------------------------------------------------------------------------------


def read(client: httpx.Client, path: str) -> Json:
    """Returns the JSON of a 200 answer to GET `path`."""
    response = client.get(path)
    assert response.status_code == 200, (path, response.text)
    body: Json = response.json()
    return body


def hosted_game(host: httpx.Client, body: Json) -> Json:
    """Creates a game whose seats are the host's; returns it."""
    created = host.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game: Json = created.json()
    return game


def move(host: httpx.Client, game_id: str) -> Json:
    """Plays the first legal action of the first seat to move; returns the game after it."""
    game = read(host, f"/v1/games/{game_id}")
    seat = game["to_move"][0]
    view = read(host, f"/v1/games/{game_id}/view?seat={seat}")
    action = {"seat": seat, "action": view["legal_actions"][0], "expected_version": view["version"]}
    posted = host.post(f"/v1/games/{game_id}/actions", json=action)
    assert posted.status_code == 200, posted.text
    return read(host, f"/v1/games/{game_id}")


def drawn_at(page: Page, version: int, mode: str) -> None:
    """Waits until the table shows `version` in `mode` (`live` or `replay`)."""
    page.wait_for_selector(
        f'[data-testid="table"][data-version="{version}"][data-mode="{mode}"][aria-busy="false"]',
        state="attached",
    )


def shots(page: Page, name: str) -> None:
    """Saves a screenshot at each width and fails on a page wider than the window or on what
    axe-core finds."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width, (x, y) in WIDTHS.items():
        page.set_viewport_size({"width": x, "height": y})
        page.wait_for_timeout(100)
        assert page.evaluate(OVERFLOW) <= 0, f"{name} scrolls sideways at {x} px"
        assert axe_violations(page) == [], f"axe-core on {name} at {x} px"
        page.screenshot(path=ARTIFACTS / f"{name}-{width}.png", full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})


def shithead_public(table: Json) -> dict[str, Json]:
    """Returns what a spectator's Shithead table must hold, by test id: counts of the hidden
    cards, the cards everyone sees."""
    expected: dict[str, Json] = {}
    for seat, face_up in enumerate(table["face_up"]):
        expected[f"hand-{seat}"] = {"count": str(table["hand_sizes"][seat]), "cards": None}
        expected[f"face-up-{seat}"] = {"count": str(len(face_up)), "cards": " ".join(face_up)}
        down = table["face_down_sizes"][seat]
        expected[f"face-down-{seat}"] = {"count": str(down), "cards": None}
    expected["deck"] = {"count": str(table["deck_size"]), "cards": None}
    expected["pile"] = {"count": str(len(table["pile"])), "cards": " ".join(table["pile"])}
    expected["burnt"] = {"count": str(len(table["burnt"])), "cards": None}
    return expected


# Tests ----------------------------------------------------------------------------------


def test_a_live_game_is_followed_to_its_end_with_the_public_cards_and_clocks_then_replayed(
    page: Page, host: httpx.Client, anyone: httpx.Client
) -> None:
    seats = [{"kind": "external", "name": "north"}, {"kind": "external", "name": "south"}]
    body = {"game": "shithead", "seats": seats, "seed": 11, "clock": CLOCK}
    game = hosted_game(host, {**body, "ruleset": {"max_moves": 12}})
    game_id = game["game_id"]
    for _ in range(3):  # events before the page opens: it must show them on arrival
        game = move(host, game_id)
    page.goto(f"/arena/games/{game_id}")
    drawn_at(page, game["version"], "live")
    page.evaluate("() => { window.notReloaded = true; }")
    logged = page.locator('[data-testid="log"] li')
    assert logged.count() == min(12, game["version"]), "the events so far are listed"
    assert "{" not in (logged.first.text_content() or ""), "events are told in words"

    deadline = game["clocks"][game["to_move"][0]]["deadline"]
    clock = page.get_by_test_id(f"clock-{game['to_move'][0]}")
    assert clock.get_attribute("data-deadline") == str(deadline)
    first = int(clock.get_attribute("data-left-ms") or "0")
    page.wait_for_function(
        "([id, ms]) => Number(document.querySelector(`[data-testid=${id}]`).dataset.leftMs) < ms",
        arg=[f"clock-{game['to_move'][0]}", first],
    )
    assert page.locator('[data-testid^="clock-"]').count() == len(seats)

    steps = 0
    while game["result"] is None:
        public = read(anyone, f"/v1/games/{game_id}")
        drawn_at(page, public["version"], "live")
        holders = page.evaluate(HOLDERS)
        expected = shithead_public(public["table"])
        assert {key: holders.get(key) for key in expected} == expected, f"at {public['version']}"
        seen = set(public["table"]["pile"]) | {c for up in public["table"]["face_up"] for c in up}
        seen |= {card for known in public["table"]["known"] for card in known}
        assert set(page.evaluate(FACES)) <= seen, "a spectator saw a card it may not know"
        if steps == 2:
            shots(page, "live-followed-shithead")
        game = move(host, game_id)
        steps += 1

    drawn_at(page, game["version"], "replay")
    assert page.evaluate("() => window.notReloaded") is True, "the page reloaded"
    result = page.get_by_test_id("result")
    assert result.get_attribute("data-status") == game["result"]["status"]
    replay = read(anyone, f"/v1/games/{game_id}/replay")
    hands = page.evaluate(HOLDERS)["hand-0"]
    assert hands["cards"] == " ".join(replay["state"]["hands"][0]), "the replay shows every card"
    page.keyboard.press("ArrowLeft")
    drawn_at(page, game["version"] - 1, "replay")
    page.keyboard.press("Home")
    drawn_at(page, 1, "replay")
    shots(page, "replay-followed-shithead")


def test_a_bot_s_token_shows_its_own_seat_live_and_no_other_seat(
    page: Page, host: httpx.Client
) -> None:
    registered = host.post(
        "/v1/bots", json={"name": "watcher", "game": "shithead", "kind": "external"}
    )
    assert registered.status_code == 201, registered.text
    token = registered.json()["token"]
    seats = [{"kind": "external", "bot": "watcher", "version": "1"}, {"kind": "external"}]
    game = hosted_game(host, {"game": "shithead", "seats": seats, "seed": 12})
    game_id = game["game_id"]
    page.goto(f"/arena/games/{game_id}")
    drawn_at(page, game["version"], "live")
    page.get_by_text("Watch as your bot's seat").click()
    page.get_by_test_id("token").fill(token)
    page.get_by_role("button", name="Use").click()
    page.get_by_test_id("seat-select").select_option("0")
    page.wait_for_selector('[data-testid="table"][data-seat="0"]', state="attached")
    own = read(host, f"/v1/games/{game_id}/view?seat=0")["view"]["hand"]
    holders = page.evaluate(HOLDERS)
    assert holders["hand-0"]["cards"] == " ".join(own)
    assert holders["hand-1"]["cards"] is None, "the other seat's hand stays hidden"
    other = read(host, f"/v1/games/{game_id}/view?seat=1")["view"]["hand"]
    assert not set(other) & set(page.evaluate(FACES)), "the bot saw another seat's cards"


NOTE = "thinker-secret: keep the tens\n\tfor a full pile"


def test_a_bot_s_note_shows_beside_its_move_in_the_replay_to_its_token_only_after_the_game(
    page: Page, host: httpx.Client, base_url: str
) -> None:
    registered = host.post(
        "/v1/bots", json={"name": "thinker", "game": "shithead", "kind": "external"}
    )
    assert registered.status_code == 201, registered.text
    token = registered.json()["token"]
    seats = [{"kind": "external", "bot": "thinker", "version": "1"}, {"kind": "external"}]
    game_id = hosted_game(host, {"game": "shithead", "seats": seats, "seed": 12})["game_id"]
    with httpx.Client(
        base_url=base_url, timeout=30, headers={"Authorization": f"Bearer {token}"}
    ) as bot:
        view = read(bot, f"/v1/games/{game_id}/view?seat=0")
        body = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
        posted = bot.post(f"/v1/games/{game_id}/actions", json={**body, "note": NOTE})
        assert posted.status_code == 200, posted.text
    noted, version = posted.json()["first_version"], posted.json()["version"]
    page.goto(f"/arena/games/{game_id}")
    drawn_at(page, version, "live")
    page.get_by_text("Watch as your bot's seat").click()
    page.get_by_test_id("token").fill(token)
    page.get_by_role("button", name="Use").click()
    page.get_by_test_id("seat-select").select_option("0")
    page.wait_for_selector('[data-testid="table"][data-seat="0"]', state="attached")
    assert "thinker-secret" not in page.content(), "a note shown while the game runs"

    resign = {"seat": 1, "action": {"type": "Resign"}, "expected_version": version}
    assert host.post(f"/v1/games/{game_id}/actions", json=resign).status_code == 200
    page.goto(f"/replay/{game_id}?version={noted + 1}")
    drawn_at(page, noted + 1, "replay")
    shown = page.get_by_test_id("note")
    assert shown.get_attribute("data-seat") == "0"
    assert page.get_by_test_id("note-text").inner_text() == NOTE
    assert "thinker-secret" in page.get_by_test_id("log").inner_text()
    assert axe_violations(page) == [], "axe-core on the replay with a note"

    page.get_by_text("Watch as your bot's seat").click()
    page.get_by_test_id("token").fill("")
    page.get_by_role("button", name="Use").click()
    page.wait_for_selector('[data-testid="note"]', state="detached")
    drawn_at(page, noted + 1, "replay")
    assert "thinker-secret" not in page.content(), "a note shown to a reader without its token"


def running_game(host: httpx.Client, name: str) -> Json:
    """Creates a game of `name` at its fewest seats, every seat the host's when it has
    decisions (a game without decisions is played to its end at once)."""
    spec = HIGH_CARD if name == HIGH_CARD.name else get_game(name)
    if not spec.has_decisions:
        return hosted_game(host, {"game": name, "players": spec.min_players, "seed": 5})
    seats = [{"kind": "external"} for _ in range(spec.min_players)]
    return hosted_game(host, {"game": name, "seats": seats, "seed": 5, "clock": CLOCK})


@pytest.mark.parametrize("name", GAMES)
def test_every_game_renders_live_and_as_its_replay_at_a_phone_s_width_and_a_laptop_s(
    name: str, page: Page, host: httpx.Client
) -> None:
    game = running_game(host, name)
    game_id = game["game_id"]
    page.goto(f"/arena/games/{game_id}")
    if game["result"] is None:
        drawn_at(page, game["version"], "live")
        assert page.locator('[data-testid="table"] [data-count]').count() > 0, "no card drawn"
        shots(page, f"live-{name}")
        page.goto(f"/arena/games/{game_id}?embed=1")
        drawn_at(page, game["version"], "live")
        assert page.get_by_test_id("slider").is_hidden(), "an embedded page has no controls"
        assert page.get_by_test_id("embed-link").is_visible()
        shots(page, f"embed-{name}")
        for _ in range(2):
            game = move(host, game_id)
            if game["result"] is not None:
                break
        if game["result"] is None:
            aborted = host.post(f"/v1/games/{game_id}/abort")
            assert aborted.status_code == 200, aborted.text
            game = aborted.json()
    drawn_at(page, game["version"], "replay")
    shots(page, f"replay-{name}")
    page.keyboard.press("ArrowLeft")
    drawn_at(page, game["version"] - 1, "replay")


def test_the_toy_game_is_drawn_by_the_generic_drawing_with_its_cards_as_cards(
    page: Page, host: httpx.Client, anyone: httpx.Client
) -> None:
    game = running_game(host, HIGH_CARD.name)
    game_id = game["game_id"]
    page.goto(f"/arena/games/{game_id}")
    drawn_at(page, game["version"], "live")
    assert page.get_by_test_id("title").text_content() == "High card live"
    game = move(host, game_id)
    table = read(anyone, f"/v1/games/{game_id}")["table"]
    drawn_at(page, game["version"], "live")
    holders = page.evaluate(HOLDERS)
    assert holders["field-shown"] == {
        "count": str(len(table["shown"])),
        "cards": " ".join(table["shown"]),
    }
    held = page.locator('[data-testid^="field-held-"]').evaluate_all(
        "(els) => els.map((el) => Number(el.dataset.value))"
    )
    assert held == table["held"]


def test_the_toy_game_s_tournament_page_renders_its_standings_and_games(
    page: Page, host: httpx.Client
) -> None:
    for name in ("toy-a", "toy-b", "toy-c"):
        bot = {"name": name, "game": HIGH_CARD.name, "strategy": "random"}
        assert host.post("/v1/bots", json=bot).status_code == 201
    entrants = [{"bot": name} for name in ("toy-a", "toy-b", "toy-c")]
    body = {"game": HIGH_CARD.name, "format": "round_robin", "entrants": entrants, "seed": "3"}
    created = host.post("/v1/tournaments", json={**body, "table_size": 2})
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert tournament["status"] == "finished", "the embedded service plays it at once"
    page.goto(f"/arena/tournaments/{tournament['tournament_id']}")
    page.wait_for_selector('[data-testid="page"][aria-busy="false"]', state="attached")
    assert page.get_by_test_id("tournament-name").text_content() == "High card round robin"
    assert page.get_by_test_id("def-game").text_content() == HIGH_CARD.title
    rows = page.locator('[data-testid="standings"] tbody tr')
    assert rows.count() == 3
    games = [game for rnd in tournament["rounds"] for game in rnd["games"]]
    assert len(games) == 3
    for game in games:
        assert page.locator(f'a[href="/arena/games/{game["game_id"]}"]').count() >= 1
    shots(page, "tournament-high-card")
