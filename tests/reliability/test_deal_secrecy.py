"""Deals that nobody can compute, tried as an attacker would against the real stack (the
game service, the Celery workers and the projection over Redis and PostgreSQL): with only
public requests and one bot's own token, from the documented shuffle.

- The prediction attack: the tournament document (anonymous) shows no seed while the
  tournament runs, and dealing its games from the public seed, the host's real seed or the
  old default `0` (by `shared.model.tournaments.formats.game_seed` and the engines' shuffle)
  predicts none of them; the seed shows once the tournament is over.
- The brute force of a small host seed: no seed in 0..100000 (nor 31337) deals what one
  seat sees of its own cards in a game the host seeded with 7 or 31337.
- A host's seed keeps its purpose: the same seed deals the same cards on one deployment
  (two games; two tournaments of one definition), and no seed deals fresh cards.
- Every finished game still verifies offline: `shared.model.deals.verify` and `cardarena verify`
  on its export, and `GET /v1/games/{id}/verification`.

The test reads the store only as the referee (the true deal); every attack uses HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from services.cli.main import main
from shared.catalog import get_game
from shared.games.shithead.messages import GameStarted
from shared.model import deals
from shared.model.exported_log import read_log
from shared.model.tournaments.formats import game_seed
from shared.sdk.client import Client
from tests.support.faults import wait_for
from tests.support.stack import ADMIN_KEY, Stack, play_until_over, register_bot, running_stack

HOST = {"Authorization": f"Bearer {ADMIN_KEY}"}
RULES = {"max_moves": 400}
"""Classic Shithead with a move cap, so that a game of weak bots ends in bounded time."""
SMALL_SEEDS = range(100_001)
"""The host seeds an attacker tries first: 0..100000 (the README's 7 among them)."""


@pytest.fixture
def stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """The whole stack with an admin key: hosting needs it, a seat needs its bot's token,
    and a request without either is anonymous."""
    extra = {"CARDARENA_ADMIN_KEY": ADMIN_KEY, "CARDARENA_RATE_LIMIT": "0"}
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as started:
        yield started


def true_deal(stack: Stack, game_id: str) -> GameStarted:
    """Returns the deal of a game as the store holds it: the referee's truth, no attack."""
    started = get_game("shithead").codec.decode(stack.store.read(game_id)[1])
    assert isinstance(started, GameStarted)
    return started


def dealt(seed: int | str, players: int = 2) -> GameStarted:
    """Returns the Shithead deal of `seed` by the documented shuffle (what an attacker runs)."""
    spec = get_game("shithead")
    started = spec.deal(spec.ruleset(RULES), players, seed)
    assert isinstance(started, GameStarted)
    return started


def finished(http: httpx.Client, game_id: str) -> dict[str, Any]:
    """Waits until the game is over; returns its public summary."""

    def over() -> dict[str, Any] | None:
        game: dict[str, Any] = http.get(f"/v1/games/{game_id}").json()
        return game if game["status"] != "playing" else None

    return wait_for(over, f"game {game_id} to end")


def tournament_over(http: httpx.Client, tournament_id: str) -> dict[str, Any]:
    """Waits until the tournament has finished; returns its document (anonymous)."""

    def over() -> dict[str, Any] | None:
        document: dict[str, Any] = http.get(f"/v1/tournaments/{tournament_id}").json()
        return document if document["status"] == "finished" else None

    return wait_for(over, f"tournament {tournament_id} to finish")


def game_ids(document: dict[str, Any]) -> list[str]:
    """Returns the ids of a tournament document's games, in schedule order."""
    return [game["game_id"] for rnd in document["rounds"] for game in rnd["games"]]


def check_verifies_offline(
    http: httpx.Client, game_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> deals.Verification:
    """Checks that a finished game verifies: the route, `shared.model.deals.verify` on its export
    and `cardarena verify` on the exported file; returns the offline check."""
    route = http.get(f"/v1/games/{game_id}/verification").json()
    assert route["status"] == "ok", route
    exported = http.get(f"/v1/games/{game_id}/export")
    assert exported.status_code == 200, exported.text
    checked = deals.verify(read_log(exported.content.splitlines()).events)
    assert checked.status == "ok", checked
    assert (checked.seed, checked.salt, checked.commitment) == (
        route["seed"],
        route["salt"],
        route["commitment"],
    )
    assert deals.commitment(checked.seed, checked.salt) == checked.commitment
    path = tmp_path / f"{game_id}.jsonl"
    path.write_bytes(exported.content)
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("ok: ")
    return checked


def test_the_public_tournament_document_predicts_no_card_of_its_running_games(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = stack.base_url
    name = f"mole-{uuid.uuid4().hex[:8]}"
    token = register_bot(url, name)
    definition = {
        "game": "shithead",
        "ruleset": RULES,
        "entrants": [{"bot": name, "version": "1"}, {"bot": "random", "version": "r"}],
        "table_size": 2,
        "games_per_table": 2,
        "seed": "7",
    }
    with httpx.Client(base_url=url, timeout=30) as anonymous:
        created = anonymous.post("/v1/tournaments", json=definition, headers=HOST)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        document = anonymous.get(f"/v1/tournaments/{tournament_id}").json()
        ids = game_ids(document)
        assert len(ids) == 2
        wait_for(lambda: all(stack.store.version(g) > 0 for g in ids), "the games")

        # While its games run (the mole has not moved), dealing from any seed an attacker
        # can read or guess (the document's, the host's real one, the old default) by the
        # documented schedule and shuffle predicts no game's hidden cards...
        document = anonymous.get(f"/v1/tournaments/{tournament_id}").json()
        assert document["status"] == "running"
        for candidate in {document["definition"]["seed"], "7", "0"}:
            for index, game_id in enumerate(ids):
                truth = true_deal(stack, game_id)
                predicted = dealt(game_seed(candidate, 1, index))
                assert predicted.hands != truth.hands, (candidate, index)
                assert predicted.face_down != truth.face_down, (candidate, index)
                assert predicted.deck != truth.deck, (candidate, index)

        # ...and nothing shows the seed: the document, the creation's answer, the list, the
        # games' creation events.
        assert document["definition"]["seed"] == ""
        assert created.json()["definition"]["seed"] == ""
        listed = anonymous.get("/v1/tournaments").json()["tournaments"]
        assert all("seed" not in t and "definition" not in t for t in listed)
        for game_id in ids:
            created_event = anonymous.get(f"/v1/games/{game_id}/events").json()["events"][0]
            assert created_event["data"]["deal_seed"] == created_event["data"]["salt"] == ""
        for read in ("events", "export", "replay"):
            stream = anonymous.get(f"/v1/games/tournament:{tournament_id}/{read}")
            assert stream.status_code == 404, (read, stream.text[:200])

        with Client(url, token=token) as mole:
            for game_id in ids:
                play_until_over(mole, game_id)
        over = tournament_over(anonymous, tournament_id)
        assert over["definition"]["seed"] == "7"
        for index, game_id in enumerate(ids):
            checked = check_verifies_offline(anonymous, game_id, tmp_path, capsys)
            assert checked.seed != game_seed("7", 1, index)
            assert dealt(checked.seed) == true_deal(stack, game_id)


def test_a_small_host_seed_is_not_found_from_one_seats_own_cards(
    stack: Stack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = stack.base_url
    name = f"brute-{uuid.uuid4().hex[:8]}"
    token = register_bot(url, name)
    seats = [{"kind": "external", "bot": name, "version": "1"}, {"bot": "random"}]
    with Client(url, token=ADMIN_KEY) as host:
        games = {
            seed: host.create_game("shithead", seats, ruleset=RULES, seed=seed)
            for seed in (7, 31337)
        }
    with Client(url, token=token) as attacker:
        seen = {}
        for seed, game_id in games.items():
            view = attacker.view(game_id, 0).view  # before seat 0 moves: its own cards as dealt
            seen[seed] = (view["hand"], view["face_up"][0])
        found = [
            (candidate, seed)
            for candidate in [*SMALL_SEEDS, 31337]
            for deal in [dealt(candidate)]
            for seed, (hand, face_up) in seen.items()
            if deal.hands[0] == hand and deal.face_up[0] == face_up
        ]
        assert found == []
        for game_id in games.values():
            play_until_over(attacker, game_id)
    with httpx.Client(base_url=url, timeout=30) as anonymous:
        for seed, game_id in games.items():
            finished(anonymous, game_id)
            checked = check_verifies_offline(anonymous, game_id, tmp_path, capsys)
            assert checked.seed != str(seed)
            assert dealt(checked.seed) == true_deal(stack, game_id)


def deals_of_games(stack: Stack, ids: list[str]) -> list[Any]:
    """Returns the deals of finished games (the start event of each public log)."""
    with httpx.Client(base_url=stack.base_url, timeout=30) as anonymous:
        started = []
        for game_id in ids:
            finished(anonymous, game_id)
            events = anonymous.get(f"/v1/games/{game_id}/events").json()["events"]
            started.append(events[1]["data"])
        return started


def test_a_hosts_seed_deals_the_same_cards_on_one_deployment_and_no_seed_fresh_ones(
    stack: Stack,
) -> None:
    url = stack.base_url
    bots = [{"bot": "random"}, {"bot": "random"}]
    with Client(url, token=ADMIN_KEY) as host:
        same = [host.create_game("shithead", bots, ruleset=RULES, seed=99) for _ in range(2)]
        other = host.create_game("shithead", bots, ruleset=RULES, seed=100)
        unseeded = [host.create_game("shithead", bots, ruleset=RULES) for _ in range(2)]
    first, again, third, *fresh = deals_of_games(stack, [*same, other, *unseeded])
    assert first == again
    assert third != first
    assert fresh[0] != fresh[1]

    definition: dict[str, Any] = {
        "game": "autobus",
        "entrants": [{"bot": "random", "version": "a"}, {"bot": "heuristic", "version": "h"}],
        "table_size": 2,
        "games_per_table": 2,
    }
    with httpx.Client(base_url=url, timeout=30) as http:

        def run(body: dict[str, Any]) -> tuple[str, list[Any]]:
            created = http.post("/v1/tournaments", json=body, headers=HOST)
            assert created.status_code == 201, created.text
            over = tournament_over(http, created.json()["tournament_id"])
            return over["definition"]["seed"], deals_of_autobus(http, game_ids(over))

        seeded = [run({**definition, "seed": "cup"}) for _ in range(2)]
        drawn = [run(definition) for _ in range(2)]
    assert seeded[0] == seeded[1]
    assert seeded[0][0] == "cup"
    assert drawn[0][0] != drawn[1][0]
    assert len(drawn[0][0]) == 64
    assert drawn[0][1] != drawn[1][1]


def deals_of_autobus(http: httpx.Client, ids: list[str]) -> list[Any]:
    """Returns the start events of finished games, from their public logs."""
    return [http.get(f"/v1/games/{g}/events").json()["events"][1]["data"] for g in ids]
