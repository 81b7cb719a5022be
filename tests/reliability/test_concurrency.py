"""Concurrent writers against real Redis: conflicting actions, duplicate Idempotency-Keys and
racing appends each write a version once, and exactly one of the racers wins it.

The HTTP tests serve the game service with uvicorn in a thread on a free port over
`RedisEventStore` (this test's own namespace) and fire each round's requests from 16
threads released together by a barrier, so every request of a round races for the same
version. Afterwards the stream and the feed are read back: versions 1..n, each once.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis
import uvicorn

from services.game.app import create_app
from shared.app.runtime import InProcessDispatcher
from shared.messages.envelope import NewEvent
from shared.store.port import AppendResult, ConcurrencyConflict
from shared.store.redis_store import RedisEventStore

# Beside its tier (reliability, from the folder): these races need a real Redis, as the
# integration tier's tests do.
pytestmark = pytest.mark.integration

THREADS = 16
ACTION_ROUNDS = 125
"""125 rounds of 16 racing POSTs: 2,000 attempts at conflicting actions."""
IDEMPOTENT_ROUNDS = 40
STORE_ROUNDS = 150


def _free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def store(redis_url: str, namespace: str) -> Iterator[RedisEventStore]:
    """Returns a Redis event store under this test's namespace (its keys go with it)."""
    client = redis.Redis.from_url(redis_url, max_connections=64)
    yield RedisEventStore(client, namespace=namespace)
    client.close()


@pytest.fixture
def base_url(store: RedisEventStore) -> Iterator[str]:
    """Serves the game service over `store` with uvicorn in a thread; returns its URL."""
    port = _free_port()
    app = create_app(store, InProcessDispatcher(store))
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    serving = threading.Thread(target=server.run, daemon=True)
    serving.start()
    deadline = time.monotonic() + 30
    while not server.started and serving.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        serving.join(timeout=30)


def _race(count: int, attempt: Callable[[int], Any]) -> list[Any]:
    """Runs `attempt(i)` for i in 0..count-1 on `count` threads released together."""
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait(timeout=60)
        return attempt(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def _poster(
    http: httpx.Client,
    url: str,
    bodies: list[dict[str, Any]],
    headers: dict[str, str] | None = None,
) -> Callable[[int], httpx.Response]:
    """Returns an attempt that POSTs `bodies[i]` to `url` as racer i."""

    def post(index: int) -> httpx.Response:
        return http.post(url, json=bodies[index], headers=headers)

    return post


def _assert_versions_once(store: RedisEventStore, game_ids: list[str]) -> int:
    """Checks that each game's stream and the feed hold versions 1..n once; returns sum n."""
    in_feed: dict[str, list[int]] = {game_id: [] for game_id in game_ids}
    position = "0"
    while page := store.read_feed(position, 1000):
        position = page[-1].position
        for entry in page:
            if entry.event.game_id in in_feed:
                in_feed[entry.event.game_id].append(entry.event.version)
    total = 0
    for game_id in game_ids:
        versions = [event.version for event in store.read(game_id)]
        assert versions == list(range(1, len(versions) + 1)), game_id
        assert in_feed[game_id] == versions, game_id
        assert store.version(game_id) == len(versions)
        total += len(versions)
    return total


@dataclass
class Table:
    """The game the racers play, replaced by a new one when it ends."""

    http: httpx.Client
    game_ids: list[str]

    def new_game(self) -> None:
        """Creates a two-seat Shithead game played by the host on both seats."""
        body = {
            "game": "shithead",
            "seats": [{"kind": "external"}, {"kind": "external"}],
            "seed": len(self.game_ids),
        }
        created = self.http.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        self.game_ids.append(created.json()["game_id"])

    def turn(self) -> tuple[str, int, int, list[dict[str, Any]]]:
        """Returns the game, the seat to move, the version and its legal actions."""
        game_id = self.game_ids[-1]
        game = self.http.get(f"/v1/games/{game_id}").json()
        if game["status"] != "playing":
            self.new_game()
            return self.turn()
        seat = game["to_move"][0]
        view = self.http.get(f"/v1/games/{game_id}/view", params={"seat": seat}).json()
        return game_id, seat, view["version"], view["legal_actions"]


def test_racing_conflicting_actions_write_each_version_once_and_the_losers_get_409(
    store: RedisEventStore, base_url: str
) -> None:
    rng = random.Random(9)
    outcomes: Counter[int] = Counter()
    with httpx.Client(base_url=base_url, timeout=60) as http:
        table = Table(http, [])
        table.new_game()
        for _ in range(ACTION_ROUNDS):
            game_id, seat, version, legal = table.turn()
            actions = [rng.choice(legal) for _ in range(THREADS)]  # conflicting choices
            bodies = [
                {"seat": seat, "action": action, "expected_version": version} for action in actions
            ]
            post = _poster(http, f"/v1/games/{game_id}/actions", bodies)
            answers = _race(THREADS, post)
            statuses = Counter(answer.status_code for answer in answers)
            assert statuses == {200: 1, 409: THREADS - 1}, [a.text for a in answers]
            won = next(a.json() for a in answers if a.status_code == 200)
            assert won["first_version"] == version + 1
            for answer in answers:
                if answer.status_code == 409:
                    problem = answer.json()
                    assert answer.headers["content-type"].startswith("application/problem+json")
                    assert problem["current_version"] >= won["version"]
            outcomes += statuses
            assert store.version(game_id) == won["version"]
    written = _assert_versions_once(store, table.game_ids)
    assert outcomes == {200: ACTION_ROUNDS, 409: ACTION_ROUNDS * (THREADS - 1)}
    print(
        f"conflicting actions: {sum(outcomes.values())} POSTs from {THREADS} threads,"
        f" {outcomes[200]} accepted, {outcomes[409]} conflicts (409),"
        f" {len(table.game_ids)} games, {written} versions each written once"
    )


def test_racing_duplicate_idempotency_keys_append_once_and_answer_the_same(
    store: RedisEventStore, base_url: str
) -> None:
    appended = replayed = 0
    with httpx.Client(base_url=base_url, timeout=60) as http:
        table = Table(http, [])
        table.new_game()
        for round_ in range(IDEMPOTENT_ROUNDS):
            game_id, seat, version, legal = table.turn()
            body = {"seat": seat, "action": legal[0], "expected_version": version}
            key = {"Idempotency-Key": f"race-{round_}"}
            url = f"/v1/games/{game_id}/actions"
            answers = _race(THREADS, _poster(http, url, [body] * THREADS, key))
            assert {a.status_code for a in answers} == {200}, [a.text for a in answers]
            bodies = [a.json() for a in answers]
            assert sum(not b["replayed"] for b in bodies) == 1
            assert len({(b["game_id"], b["first_version"], b["version"]) for b in bodies}) == 1
            assert bodies[0]["first_version"] == version + 1
            assert store.version(game_id) == bodies[0]["version"]
            appended += 1
            replayed += THREADS - 1
        creation = {"game": "shithead", "players": 2, "seed": 1}
        creations = _race(
            THREADS,
            _poster(http, "/v1/games", [creation] * THREADS, {"Idempotency-Key": "one-game"}),
        )
    assert Counter(c.status_code for c in creations) == {201: 1, 200: THREADS - 1}
    created = {c.json()["game_id"] for c in creations}
    assert len(created) == 1
    _assert_versions_once(store, [*table.game_ids, *created])
    print(
        f"duplicate Idempotency-Keys: {IDEMPOTENT_ROUNDS * THREADS} POSTs from {THREADS}"
        f" threads, {appended} appends, {replayed} replays; {THREADS} racing creations, 1 game"
    )


def test_racing_appends_at_one_expected_version_let_exactly_one_win(
    store: RedisEventStore,
) -> None:
    game_id = "race-store"
    wins = conflicts = 0
    for version in range(STORE_ROUNDS):

        def append(i: int, version: int = version) -> AppendResult | ConcurrencyConflict:
            event = NewEvent("Raced", f'{{"writer": {i}}}'.encode())
            try:
                return store.append(game_id, "test", version, [event])
            except ConcurrencyConflict as conflict:
                return conflict

        results = _race(THREADS, append)
        won = [r for r in results if isinstance(r, AppendResult)]
        lost = [r for r in results if isinstance(r, ConcurrencyConflict)]
        assert len(won) == 1
        assert won[0].first_version == won[0].last_version == version + 1
        assert len(lost) == THREADS - 1
        assert all(c.actual == version + 1 for c in lost)
        wins += 1
        conflicts += len(lost)
    assert _assert_versions_once(store, [game_id]) == STORE_ROUNDS
    print(
        f"store appends: {STORE_ROUNDS * THREADS} appends from {THREADS} threads,"
        f" {wins} won, {conflicts} conflicts"
    )
