"""Resigning, aborting and the default clock of client entrants through the API, in the embedded
default, tried as an attacker would: with a bot's own token, on seats and games not its own."""

from __future__ import annotations

import time
from typing import Any

import pytest

from shared.app.loading import load
from shared.messages.common import Clock
from shared.ports.bot_index import FeedBotIndex
from shared.store.memory import InMemoryEventStore
from tests.support.api import (
    ADMIN,
    ALICE,
    BOB,
    KEY,
    Client,
    admin_client,
    bearer,
    forbidden,
    problem,
    register,
)
from tests.support.streams import ALICE as STREAM_ALICE
from tests.support.streams import BOB as STREAM_BOB
from tests.support.streams import SHORT, opened, parse

pytestmark = pytest.mark.service(admin_key=KEY)

RESIGN = {"type": "Resign"}
CAROL: dict[str, Any] = {"name": "carol", "game": "shithead", "kind": "external"}


def bots(client: Client, *specs: dict[str, Any]) -> list[str]:
    """Registers the bots; returns their tokens."""
    return [register(client, spec)["token"] for spec in specs]


def game_of(client: Client, names: list[str]) -> str:
    """Creates a Shithead game seating the external bots `names`; returns its id."""
    seats = [{"kind": "external", "bot": name} for name in names]
    body = {"game": "shithead", "seats": seats, "seed": 3}
    created = client.post("/v1/games", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


def post_resign(client: Client, game_id: str, seat: int, token: str | None) -> Any:
    """Posts `Resign` for `seat` at the game's current version with `token` (None: the host)."""
    game = client.get(f"/v1/games/{game_id}", headers=ADMIN).json()
    body = {"seat": seat, "action": RESIGN, "expected_version": game["version"]}
    headers = ADMIN if token is None else bearer(token)
    return client.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)


def test_a_bot_resigns_its_seat_and_the_other_seat_wins(
    client: Client, store: InMemoryEventStore
) -> None:
    alice, _ = bots(client, ALICE, BOB)
    game_id = game_of(client, ["alice", "bob"])
    resigned = post_resign(client, game_id, 0, alice)
    assert resigned.status_code == 200, resigned.text
    game = client.get(f"/v1/games/{game_id}").json()
    assert game["status"] == "finished"
    assert game["result"]["places"] == [2, 1]
    assert game["result"]["reason"] == "resigned: seat 0"
    view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}, headers=bearer(alice))
    assert view.json()["legal_actions"] == []


def test_a_bot_cannot_resign_a_seat_not_its_own_nor_the_host_a_bots_seat(
    client: Client, store: InMemoryEventStore
) -> None:
    alice, _ = bots(client, ALICE, BOB)
    game_id = game_of(client, ["alice", "bob"])
    version = store.version(game_id)
    assert "alice@1" in forbidden(post_resign(client, game_id, 1, alice))["detail"]
    assert post_resign(client, game_id, 1, None).status_code == 403, "only its token acts"
    assert store.version(game_id) == version


def test_resigning_twice_is_422_naming_the_rule_and_changes_nothing(
    client: Client, store: InMemoryEventStore
) -> None:
    alice, _, _ = bots(client, ALICE, BOB, CAROL)
    game_id = game_of(client, ["alice", "bob", "carol"])
    assert post_resign(client, game_id, 0, alice).status_code == 200
    version = store.version(game_id)
    again = problem(post_resign(client, game_id, 0, alice), 422)
    assert again["rule"] == "resigned"
    assert store.version(game_id) == version
    assert client.get(f"/v1/games/{game_id}").json()["status"] == "playing"


def test_resigning_a_finished_game_is_refused_naming_the_rule(
    client: Client, store: InMemoryEventStore
) -> None:
    alice, bob = bots(client, ALICE, BOB)
    game_id = game_of(client, ["alice", "bob"])
    assert post_resign(client, game_id, 1, bob).status_code == 200
    version = store.version(game_id)
    assert problem(post_resign(client, game_id, 0, alice), 422)["rule"] == "game_over"
    assert store.version(game_id) == version


def test_the_host_aborts_a_game_and_then_it_takes_no_action_and_frees_its_bots(
    store: InMemoryEventStore,
) -> None:
    with admin_client(store, max_games_per_bot=1) as client:
        alice, _ = bots(client, ALICE, BOB)
        game_id = game_of(client, ["alice", "bob"])
        capped = {"game": "shithead", "seats": [{"kind": "external", "bot": "alice"}] * 2}
        assert problem(client.post("/v1/games", json=capped, headers=ADMIN), 422)["field"]
        index = FeedBotIndex(store)
        index.refresh()
        assert index.running("alice@1") == [game_id]

        aborted = client.post(f"/v1/games/{game_id}/abort", headers=ADMIN)
        assert aborted.status_code == 200, aborted.text
        assert aborted.json()["status"] == "aborted"
        game = client.get(f"/v1/games/{game_id}").json()
        assert (game["status"], game["result"]["places"], game["result"]["reason"]) == (
            "aborted",
            [],
            "host",
        )
        version = store.version(game_id)
        refused = problem(post_resign(client, game_id, 0, alice), 409)
        assert refused["rule"] == "aborted"
        stale = {"seat": 0, "action": RESIGN, "expected_version": 2}
        late = client.post(f"/v1/games/{game_id}/actions", json=stale, headers=bearer(alice))
        assert problem(late, 409)["rule"] == "aborted", "an action from before the abort too"
        again = problem(client.post(f"/v1/games/{game_id}/abort", headers=ADMIN), 409)
        assert again["rule"] == "aborted"
        assert store.version(game_id) == version
        index.refresh()
        assert index.running("alice@1") == []
        turns = client.get("/v1/bots/me/turns", params={"wait": 0}, headers=bearer(alice))
        assert turns.status_code == 200
        assert turns.json()["turns"] == []
        solo = {"game": "shithead", "seats": [{"kind": "external", "bot": "alice"}, {}]}
        assert client.post("/v1/games", json=solo, headers=ADMIN).status_code == 201


def test_aborting_needs_the_admin_key_a_known_game_and_a_running_one(
    client: Client, store: InMemoryEventStore
) -> None:
    alice, bob = bots(client, ALICE, BOB)
    game_id = game_of(client, ["alice", "bob"])
    version = store.version(game_id)
    assert (
        "alice@1"
        in forbidden(client.post(f"/v1/games/{game_id}/abort", headers=bearer(alice)))["detail"]
    )
    assert problem(client.post(f"/v1/games/{game_id}/abort"), 401)
    assert store.version(game_id) == version
    unknown = problem(client.post("/v1/games/" + "0" * 32 + "/abort", headers=ADMIN), 404)
    assert unknown["type"].endswith("unknown-game")
    assert post_resign(client, game_id, 1, bob).status_code == 200
    over = problem(client.post(f"/v1/games/{game_id}/abort", headers=ADMIN), 409)
    assert over["rule"] == "game_over"
    assert client.get(f"/v1/games/{game_id}").json()["status"] == "finished"


def tournament_body(**extra: Any) -> dict[str, Any]:
    """Returns a Shithead tournament of alice and the built-in heuristic bot."""
    entrants = [{"bot": "alice"}, {"bot": "heuristic"}]
    return {"game": "shithead", "entrants": entrants, "table_size": 2, "seed": "4", **extra}


def test_cancelling_a_tournament_aborts_its_running_games(
    client: Client, store: InMemoryEventStore
) -> None:
    bots(client, ALICE)
    created = client.post("/v1/tournaments", json=tournament_body(), headers=ADMIN)
    assert created.status_code == 201, created.text
    tournament = created.json()
    (game,) = tournament["rounds"][0]["games"]
    aborting = client.post(f"/v1/games/{game['game_id']}/abort", headers=ADMIN)
    assert problem(aborting, 422)["rule"] == "tournament_game"
    url = f"/v1/tournaments/{tournament['tournament_id']}/cancel"
    assert client.post(url, headers=ADMIN).json()["status"] == "cancelled"
    shown = client.get(f"/v1/games/{game['game_id']}").json()
    assert (shown["status"], shown["result"]["reason"]) == ("aborted", "tournament_cancelled")
    version = store.version(game["game_id"])
    assert client.post(url, headers=ADMIN).json()["status"] == "cancelled"
    assert store.version(game["game_id"]) == version, "cancelling again aborts nothing twice"


def test_a_tournaments_external_entrant_gets_the_default_clock_unless_it_sets_one(
    client: Client, store: InMemoryEventStore
) -> None:
    bots(client, ALICE)
    created = client.post("/v1/tournaments", json=tournament_body(), headers=ADMIN).json()
    assert created["definition"]["clock"] == {
        "move_seconds": 60.0,
        "bank_seconds": 300.0,
        "strikes_to_forfeit": 3,
    }
    (game,) = created["rounds"][0]["games"]
    assert load(store, game["game_id"]).created.clock == Clock(move_seconds=60, bank_seconds=300)
    own = {"move_seconds": 5.0, "bank_seconds": 0.0, "strikes_to_forfeit": 1}
    kept = client.post("/v1/tournaments", json=tournament_body(clock=own), headers=ADMIN).json()
    assert kept["definition"]["clock"] == own
    builtin = {"game": "shithead", "entrants": [{"bot": "heuristic"}, {"bot": "random"}]}
    untimed = client.post("/v1/tournaments", json={**builtin, "table_size": 2}, headers=ADMIN)
    assert untimed.json()["definition"]["clock"] is None, "built-in bots are never timed"


def test_a_challenge_between_external_bots_gets_the_default_clock(client: Client) -> None:
    alice, _ = bots(client, ALICE, BOB)
    body = {"game": "shithead", "opponents": [{"bot": "bob"}]}
    issued = client.post("/v1/challenges", json=body, headers=bearer(alice))
    assert issued.status_code == 201, issued.text
    assert issued.json()["clock"] == {
        "move_seconds": 60.0,
        "bank_seconds": 300.0,
        "strikes_to_forfeit": 3,
    }
    own = {"move_seconds": 9.0, "bank_seconds": 1.0, "strikes_to_forfeit": 2}
    mine = client.post("/v1/challenges", json={**body, "clock": own}, headers=bearer(alice))
    assert mine.json()["clock"] == own


def test_a_tournament_with_an_entrant_that_never_moves_finishes_by_its_forfeit(
    store: InMemoryEventStore,
) -> None:
    with admin_client(store, entrant_move_seconds=0.05, entrant_bank_seconds=0.0) as client:
        bots(client, ALICE)
        created = client.post("/v1/tournaments", json=tournament_body(), headers=ADMIN)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        deadline = time.monotonic() + 60
        shown = client.get(f"/v1/tournaments/{tournament_id}").json()
        while shown["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
            shown = client.get(f"/v1/tournaments/{tournament_id}").json()
        assert shown["status"] == "finished", shown
        (game,) = shown["rounds"][0]["games"]
        result = client.get(f"/v1/games/{game['game_id']}").json()["result"]
        seats = load(store, game["game_id"]).created.seats
        alice = next(i for i, seat in enumerate(seats) if seat.bound_bot == "alice@1")
        assert result["places"][alice] == 2
        assert f"forfeited: seat {alice}" in result["reason"]


def test_a_bots_stream_tells_it_of_an_aborted_game_as_finished_with_no_places() -> None:
    with opened(SHORT) as world:
        game_id = world.game(STREAM_ALICE, STREAM_BOB)
        assert world.client.post(f"/v1/games/{game_id}/abort", headers=ADMIN).status_code == 200
        headers = {**bearer(world.tokens["alice"]), "Last-Event-ID": "0"}
        events, _ = parse(world.client.get("/v1/bots/me/events", headers=headers).text)
    news = [(e.event, e.data) for e in events if e.data.get("game_id") == game_id]
    assert [kind for kind, _ in news] == ["game_started", "game_finished"]
    result = news[-1][1]["result"]
    assert (result["status"], result["places"], result["reason"]) == ("aborted", [], "host")
