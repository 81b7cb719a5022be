"""Duplicate tournaments that are fair to bots with memory, on the real stack (the game
service, two Celery workers and the projection over Redis and PostgreSQL).

A duplicate deal is played at several tables of disjoint entrants, so that no entrant plays
it twice, and every table of a deal is sealed (served as a running game, and only to its
seats' bots) until the deal's last table ends. The attacker is a bot at one table of a deal
(its own token) or anyone without credentials, reading another table of the same deal: the
cards of its seats there are its opponents' cards here. Ground truth (what each table was
dealt) is read from Redis by the test itself, never by the attacker.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import psycopg
import pytest
import redis

from shared.app.tournaments import run_in_process
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.standings import standings as standings_of
from shared.sdk.client import Client, SeatView
from shared.store.memory import InMemoryEventStore
from shared.store.redis_store import RedisEventStore
from tests.support import deals
from tests.support.faults import wait_for
from tests.support.stack import ADMIN_KEY, Stack, running_stack

ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
RULES = {"max_moves": 400}
"""Shithead with a move cap, so that a game of weak bots ends in bounded time."""
HIDDEN = "??"


@pytest.fixture
def secured_stack(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """The stack with an admin key (`ADMIN_KEY`): hosting needs it, seats need tokens."""
    extra = {"CARDARENA_ADMIN_KEY": ADMIN_KEY, "CARDARENA_RATE_LIMIT": "0"}
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as started:
        yield started


def first_legal(view: SeatView) -> dict[str, Any]:
    """Plays the first legal action."""
    return view.legal_actions[0]


def dealt(store: RedisEventStore, game_id: str) -> dict[str, Any]:
    """Returns what the game was dealt (its GameStarted event), as stored: ground truth."""
    started = next(r for r in store.read(game_id) if r.type == "GameStarted")
    value: dict[str, Any] = msgspec.msgpack.decode(started.data)
    return {k: value[k] for k in ("face_down", "face_up", "hands", "deck")}


def games_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Returns every scheduled game of a tournament document."""
    return [game for rnd in doc["rounds"] for game in rnd["games"]]


def recorded(store: RedisEventStore, tournament_id: str, key: str) -> bool:
    """Returns whether the tournament's stream records the game scheduled under `key`."""
    for event in store.read(f"tournament:{tournament_id}"):
        if event.type == "GameRecorded" and msgspec.msgpack.decode(event.data)["key"] == key:
            return True
    return False


def create(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    """Creates a tournament as the host; returns its document."""
    created = http.post("/v1/tournaments", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    doc: dict[str, Any] = created.json()
    return doc


def finished(http: httpx.Client, tournament_id: str) -> dict[str, Any]:
    """Waits for the tournament to finish on the workers; returns its document."""

    def done() -> dict[str, Any] | None:
        doc: dict[str, Any] = http.get(f"/v1/tournaments/{tournament_id}").json()
        return doc if doc["status"] == "finished" else None

    return wait_for(done, "the tournament to finish", 240)


def walk(value: Any) -> Iterator[dict[str, Any]]:
    """Yields every JSON object inside `value`."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def bodies(response: httpx.Response) -> list[Any]:
    """Returns the JSON documents of an answer: one, or one per line (an export, a stream)."""
    if response.status_code != 200:
        return []
    documents = []
    for line in response.text.splitlines():
        text = line.removeprefix("data:").strip()
        if text.startswith(("{", "[")):
            documents.append(msgspec.json.decode(text))
    return documents


def learned(responses: list[httpx.Response], secret: dict[str, Any], seat: int) -> int:
    """Returns how many of `seat`'s hidden cards (hand and face down, as `secret` was dealt)
    the answers give away: in a dealt GameStarted, or all of them when an answer reveals
    the deal's seed (the deal then follows)."""
    hidden = Counter([*secret["hands"][seat], *secret["face_down"][seat]])
    seen: Counter[str] = Counter()
    for document in (doc for response in responses for doc in bodies(response)):
        for item in walk(document):
            if item.get("seed") or item.get("deal_seed") or item.get("salt"):
                return sum(hidden.values())
            for field in ("hands", "face_down"):
                cards = item.get(field)
                if isinstance(cards, list) and len(cards) > seat and isinstance(cards[seat], list):
                    seen |= Counter(c for c in cards[seat] if c != HIDDEN)
    return sum((seen & hidden).values())


def reads(http: httpx.Client, game_id: str, headers: dict[str, str]) -> list[httpx.Response]:
    """Returns every read of a game a caller may try: the game, its events (as a spectator
    and as each seat), each seat's view, its replay, export, verification and stream."""
    paths = [
        f"/v1/games/{game_id}",
        f"/v1/games/{game_id}/events",
        f"/v1/games/{game_id}/events?seat=0",
        f"/v1/games/{game_id}/events?seat=1",
        f"/v1/games/{game_id}/view?seat=0",
        f"/v1/games/{game_id}/view?seat=1",
        f"/v1/games/{game_id}/replay",
        f"/v1/games/{game_id}/replay?seat=1",
        f"/v1/games/{game_id}/replay?version=2&seat=1",
        f"/v1/games/{game_id}/export",
        f"/v1/games/{game_id}/verification",
    ]
    answers = [http.get(path, headers=headers) for path in paths]
    with http.stream("GET", f"/v1/games/{game_id}/stream", headers=headers) as streamed:
        streamed.read()
        answers.append(streamed)
    return answers


def archived(database_url: str, game_id: str, version: int) -> bool:
    """Returns whether the projection's archive holds the game's first `version` events."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM events WHERE game_id = %s", (game_id,)).fetchone()
    return row is not None and row[0] >= version


def test_no_entrant_plays_a_deal_twice_and_every_table_of_a_deal_is_dealt_alike(
    secured_stack: Stack,
) -> None:
    entrants = [{"bot": "heuristic", "version": "h"}] + [
        {"bot": "random", "version": v} for v in "abcd"
    ]
    body = {
        "game": "shithead",
        "ruleset": RULES,
        "format": "duplicate",
        "entrants": entrants,
        "table_size": 2,
        "seed": "fair",
    }
    with httpx.Client(base_url=secured_stack.base_url, timeout=30) as http:
        doc = finished(http, create(http, body)["tournament_id"])
        standings = http.get(f"/v1/tournaments/{doc['tournament_id']}/standings").json()
    games = games_of(doc)
    decks = {game["game_id"]: dealt(secured_stack.store, game["game_id"]) for game in games}
    by_deal: dict[bytes, list[dict[str, Any]]] = {}  # the games dealt alike, as Redis holds them
    for game in games:
        by_deal.setdefault(msgspec.json.encode(decks[game["game_id"]]), []).append(game)
    seen: Counter[tuple[int, bytes]] = Counter()
    for deal, tables in by_deal.items():
        seated = [entrant for table in tables for entrant in table["entrants"]]
        assert len(seated) == len(set(seated)), f"an entrant plays a deal twice: {tables}"
        assert len(tables) == 2  # 5 entrants, tables of 2: two tables, one entrant sits out
        seen.update((entrant, deal) for entrant in seated)
        assert len({table["deal"] for table in tables}) == 1  # the label says so too
    assert len(by_deal) == len(entrants)
    assert set(seen.values()) == {1}  # nobody was dealt one deal twice
    assert Counter(entrant for entrant, _ in seen) == dict.fromkeys(range(5), 4)  # sits one out
    seats = Counter((e, g["entrants"].index(e)) for g in games for e in g["entrants"])
    assert set(seats.values()) == {2}  # every entrant plays every seat alike
    lines = standings["standings"]
    assert all(line["score"] is not None for line in lines)
    assert sum(line["score"] for line in lines) == pytest.approx(0.0)


def test_a_finished_table_stays_sealed_while_another_table_of_its_deal_runs(
    secured_stack: Stack,
) -> None:
    url, store = secured_stack.base_url, secured_stack.store
    names = [f"sealed-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    with Client(url, token=ADMIN_KEY) as host:
        tokens = [str(host.register_bot(n, game="shithead", kind="external").token) for n in names]
    body = {
        "game": "shithead",
        "ruleset": RULES,
        "format": "duplicate",
        "entrants": [
            {"bot": "heuristic", "version": "h"},
            {"bot": "random", "version": "r"},
            *({"bot": name, "version": "1"} for name in names),
        ],
        "table_size": 2,
        "seed": "sealed",
    }
    anonymous: dict[str, str] = {}
    bot = {"Authorization": f"Bearer {tokens[0]}"}  # plays seat 0 of the deal's other table
    with httpx.Client(base_url=url, timeout=30) as http:
        doc = create(http, body)
        tournament_id = doc["tournament_id"]
        first = [game for game in games_of(doc) if game["deal"] == games_of(doc)[0]["deal"]]
        built_in, external = sorted(first, key=lambda game: game["entrants"])
        assert (built_in["entrants"], external["entrants"]) == ([0, 1], [2, 3])
        done, running = built_in["game_id"], external["game_id"]

        wait_for(lambda: recorded(store, tournament_id, built_in["key"]), "the built-in table")
        secret = dealt(store, running)
        assert dealt(store, done) == secret  # the same deal: seat 1 there is seat 1 here
        assert len(secret["hands"][1]) + len(secret["face_down"][1]) == 6

        for who in (anonymous, bot):
            answers = reads(http, done, who)
            assert learned(answers, secret, 1) == 0
            assert {a.status_code for a in answers} <= {200, 401, 403}
            assert [a for a in answers if a.status_code == 200] == [answers[10]]
            verification = answers[10].json()
            assert verification["status"] == "unrevealed"
            assert not verification.get("seed")
            assert not verification.get("salt")
            sealed = answers[1].json()
            assert (sealed["status"], sealed["rule"]) == (403, "deal_sealed")
        hosted = http.get(f"/v1/games/{done}/events", headers=ADMIN)
        assert hosted.status_code == 200  # the host reads it, as a running game
        assert learned([hosted], secret, 1) == 0
        fork = http.post(f"/v1/games/{done}/fork", params={"version": 3}, headers=ADMIN)
        assert (fork.status_code, fork.json().get("rule")) == (403, "deal_sealed")
        shown = http.get(f"/v1/tournaments/{tournament_id}").json()
        assert next(g for g in games_of(shown) if g["game_id"] == done)["places"] is None

        # The finished table leaves Redis (as retention does once it is archived): still sealed.
        version = store.version(done)
        wait_for(lambda: archived(secured_stack.database_url, done, version), "the archive")
        assert store.drop(done)
        answers = reads(http, done, anonymous)
        assert learned(answers, secret, 1) == 0
        assert [a for a in answers if a.status_code == 200] == [answers[10]]

        clients = [Client(url, token=token) for token in tokens]
        threads = [
            threading.Thread(target=c.play, args=(running, seat, first_legal))
            for seat, c in enumerate(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        for client in clients:
            client.close()
        wait_for(lambda: recorded(store, tournament_id, external["key"]), "the last table")

        for game_id in (done, running):
            answers = reads(http, game_id, anonymous)
            assert learned(answers, secret, 1) == 6, game_id  # open: the whole log is public
            assert http.get(f"/v1/games/{game_id}/export").status_code == 200
            assert http.get(f"/v1/games/{game_id}/verification").json()["status"] == "ok"
            assert http.get(f"/v1/games/{game_id}/replay").json()["over"] is True
        shown = http.get(f"/v1/tournaments/{tournament_id}").json()
        assert all(g["places"] for g in games_of(shown) if g["deal"] == built_in["deal"])


def test_a_field_too_small_for_duplicate_is_refused_naming_entrants_and_how_many(
    secured_stack: Stack,
) -> None:
    url, store = secured_stack.base_url, secured_stack.store
    name = f"twice-{uuid.uuid4().hex[:8]}"
    with Client(url, token=ADMIN_KEY) as host:
        host.register_bot(name, game="shithead", kind="external")
    before = len(store.read_feed("0", 10_000))
    refusals = [
        (2, ["random"] * 3, "entrants", "at least 4 entrants"),
        (3, ["random"] * 5, "entrants", "at least 6 entrants"),
        (2, ["random", name, "random", name], "entrants[3].bot", "entered twice"),
    ]
    with httpx.Client(base_url=url, timeout=30) as http:
        for size, bots, field, says in refusals:
            body = {
                "game": "shithead",
                "format": "duplicate",
                "entrants": [
                    {"bot": b, "version": str(i) if b == "random" else "1"}
                    for i, b in enumerate(bots)
                ],
                "table_size": size,
            }
            refused = http.post("/v1/tournaments", json=body, headers=ADMIN)
            assert refused.status_code == 422, refused.text
            assert refused.json()["field"] == field
            assert says in refused.json()["detail"]
    assert len(store.read_feed("0", 10_000)) == before  # nothing was recorded


def test_standings_cancel_the_luck_of_the_deal_and_the_stronger_bot_still_wins(
    secured_stack: Stack,
) -> None:
    luck = {
        "game": "beggar",  # no decisions: the deal alone decides, by seat
        "format": "duplicate",
        "entrants": [{"bot": "turner", "version": str(i)} for i in range(4)],
        "table_size": 2,
        "games_per_table": 2,
        "seed": "luck",
    }
    skill = {
        "game": "shithead",
        "ruleset": RULES,
        "format": "duplicate",
        "entrants": [{"bot": "heuristic", "version": "h"}]
        + [{"bot": "random", "version": str(i)} for i in range(3)],
        "table_size": 2,
        "games_per_table": 4,
        "seed": "skill",
    }
    with httpx.Client(base_url=secured_stack.base_url, timeout=30) as http:
        by_luck, by_skill = create(http, luck), create(http, skill)
        for doc in (by_luck, by_skill):
            finished(http, doc["tournament_id"])
        equal = http.get(f"/v1/tournaments/{by_luck['tournament_id']}/standings").json()
        unequal = http.get(f"/v1/tournaments/{by_skill['tournament_id']}/standings").json()
    assert [line["games"] for line in equal["standings"]] == [8, 8, 8, 8]
    assert [line["score"] for line in equal["standings"]] == [0.0, 0.0, 0.0, 0.0]
    # The deals are pinned (the stack's given deal secret, tests/support/deals.py) and a random
    # bot chooses from its game's deal key: the games are those of an in-process run, the same
    # on every run, where the heuristic bot scores 6 and each random bot -2.
    definition = msgspec.convert(skill, TournamentDefinition)
    pinned = run_in_process(deals.attached(InMemoryEventStore()), definition, "skill")
    assert unequal["standings"] == msgspec.to_builtins(standings_of(pinned))
    best, *rest = unequal["standings"]
    assert best["name"] == "heuristic@h"
    assert best["score"] > max(line["score"] for line in rest)
