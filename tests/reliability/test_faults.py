"""Faults injected into real servers: Redis killed and restarted, PostgreSQL cut off, a
projection consumer dying with pending entries, the projection service killed under load.

Each test checks that nothing acknowledged is lost or duplicated. Figures of each run are
printed (`pytest -s` shows them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis
from litestar.testing import TestClient

from services.bootstrap.game import build_access
from services.bootstrap.stores import build_store
from services.cli.dev import Launcher, cardarena
from services.game.app import create_app
from services.ops.health import StackReadiness
from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.queries import checkpoint
from services.settings import load_settings
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.runtime import InProcessDispatcher
from shared.model.idempotency import HOST, client_key, game_id_for
from shared.store.port import partition_of, position_key
from shared.store.redis_common import feed_key, stream_key
from shared.store.redis_store import RedisEventStore
from tests.support.faults import PrivateRedis, TcpProxy, target_of, through, wait_for
from tests.support.projection import (
    assert_archive_holds_the_feed_once,
    assert_views_equal_a_rebuild,
    projection_caught_up,
)

ROOT = Path(__file__).resolve().parents[2]
CATCH_UP_S = 300.0
"""How long a projection may take to catch up on a busy two-core machine (a hang fails)."""

SHITHEAD = {
    "game": "shithead",
    "ruleset": "classic",
    "seats": [{"kind": "external"}, {"kind": "external"}],
    "seed": 7,
}
"""A two-seat Shithead game whose every move the test posts."""


def _app(redis_url: str, namespace: str, database_url: str | None = None) -> TestClient[Any]:
    """Returns a test client of the game service wired as `cardarena serve game` wires it
    (its Redis clients, store and access), playing bot turns in-process."""
    settings = load_settings(
        {"CARDARENA_STORE": "redis", "REDIS_URL": redis_url, "CARDARENA_NAMESPACE": namespace}
    )
    store = build_store(settings)
    app = create_app(
        store,
        InProcessDispatcher(store),
        access=build_access(settings, store),
        readiness=StackReadiness(redis_url, database_url),
    )
    return TestClient(app)


class _Unanswered(Exception):
    """A read the game service did not answer with 200."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"{status}: {text}")
        self.status = status


def _read(api: TestClient[Any], url: str, **params: Any) -> Any:
    """Returns the JSON of a GET that must answer 200, else raises _Unanswered."""
    answer = api.get(url, params=params)
    if answer.status_code != 200:
        raise _Unanswered(answer.status_code, answer.text)
    return answer.json()


def _due_move(api: TestClient[Any], game_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Returns the view of a seat due to move and the body of its first legal action, None
    when the game is over."""
    for seat in _read(api, f"/v1/games/{game_id}")["to_move"]:
        view = _read(api, f"/v1/games/{game_id}/view", seat=seat)
        if view["legal_actions"]:
            body = {
                "seat": seat,
                "action": view["legal_actions"][0],
                "expected_version": view["version"],
            }
            return view, body
    return None


def _move(api: TestClient[Any], game_id: str) -> dict[str, Any]:
    """Posts one legal move with a fresh Idempotency-Key; returns the key, body and answer."""
    due = _due_move(api, game_id)
    assert due is not None, "the game ended too early for this test"
    _, body = due
    key = uuid.uuid4().hex
    answer = api.post(f"/v1/games/{game_id}/actions", json=body, headers={"Idempotency-Key": key})
    assert answer.status_code == 200, answer.text
    return {"key": key, "body": body, "answer": answer.json()}


def _assert_unavailable(response: httpx.Response) -> None:
    """Asserts a 503 problem with Retry-After (never a 500)."""
    assert response.status_code == 503, (response.status_code, response.text)
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["content-type"].startswith("application/problem+json")


def test_with_redis_down_the_game_service_answers_503_and_recovers_by_itself(
    private_redis: PrivateRedis,
) -> None:
    namespace = "faults:"
    probe = private_redis.client()
    with _app(private_redis.url, namespace) as api:
        created = api.post("/v1/games", json=SHITHEAD)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        for _ in range(3):
            _move(api, game_id)
        due = _due_move(api, game_id)
        assert due is not None
        _, pending_move = due
        version = int(probe.get(version_key(namespace, game_id)) or 0)
        feed_length = feed_length_of(probe, namespace)
        keys_before = sorted(probe.scan_iter(match=f"{namespace}*"))

        private_redis.kill()
        new_game_key = uuid.uuid4().hex
        move_key = uuid.uuid4().hex
        requests = 0
        for _ in range(3):
            answers = [
                api.post("/v1/games", json=SHITHEAD, headers={"Idempotency-Key": new_game_key}),
                api.post("/v1/games", json=SHITHEAD),
                api.post(
                    f"/v1/games/{game_id}/actions",
                    json=pending_move,
                    headers={"Idempotency-Key": move_key},
                ),
                api.get(f"/v1/games/{game_id}"),
                api.get(f"/v1/games/{game_id}/view", params={"seat": 0}),
                api.get(f"/v1/games/{game_id}/events"),
                api.get("/v1/tournaments"),
                api.get("/ready"),
            ]
            for response in answers:
                _assert_unavailable(response)
            requests += len(answers)
        down = api.get("/ready").json()
        assert down["detail"].startswith("redis:"), down
        assert api.get("/health").status_code == 200

        private_redis.start()
        wait_for(
            lambda: api.get(f"/v1/games/{game_id}").status_code == 200,
            "the game service to answer again",
        )
        assert api.get("/ready").status_code == 200
        assert int(probe.get(version_key(namespace, game_id)) or 0) == version
        assert feed_length_of(probe, namespace) == feed_length
        assert sorted(probe.scan_iter(match=f"{namespace}*")) == keys_before

        moved = api.post(
            f"/v1/games/{game_id}/actions", json=pending_move, headers={"Idempotency-Key": move_key}
        )
        assert moved.status_code == 200, moved.text
        assert (moved.json()["first_version"], moved.json()["replayed"]) == (version + 1, False)
        again = api.post("/v1/games", json=SHITHEAD, headers={"Idempotency-Key": new_game_key})
        assert again.status_code == 201, again.text
        assert again.json()["game_id"] == game_id_for(client_key(HOST, new_game_key))
    probe.close()
    print(f"\nredis down: {requests} requests answered 503 with Retry-After, none 500;")
    print(f"  version {version}, {feed_length} feed entries unchanged; recovered unrestarted")


def test_moves_acknowledged_before_a_redis_crash_survive_it_and_retries_replay(
    private_redis: PrivateRedis,
) -> None:
    namespace = "faults:"
    probe = private_redis.client()
    store = RedisEventStore(probe, namespace)
    acknowledged: list[dict[str, Any]] = []
    stop = threading.Event()
    failures: list[int] = []
    with _app(private_redis.url, namespace) as api:
        created = api.post("/v1/games", json=SHITHEAD)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]

        def client() -> None:
            """Plays moves until stopped; a move that fails is retried with its key."""
            while not stop.is_set():
                try:
                    due = _due_move(api, game_id)
                except _Unanswered as unanswered:
                    # Redis is down or loading its AOF: a read may only be refused with 503.
                    if unanswered.status != 503:
                        raise
                    failures.append(503)
                    time.sleep(0.05)
                    continue
                if due is None:
                    return
                body, key = due[1], uuid.uuid4().hex
                while not stop.is_set():
                    answer = api.post(
                        f"/v1/games/{game_id}/actions",
                        json=body,
                        headers={"Idempotency-Key": key},
                    )
                    if answer.status_code == 200:
                        acknowledged.append({"key": key, "body": body, "answer": answer.json()})
                        break
                    assert answer.status_code == 503, answer.text
                    failures.append(answer.status_code)
                    time.sleep(0.05)

        player = threading.Thread(target=client, name="client")
        player.start()
        try:
            wait_for(lambda: len(acknowledged) >= 10, "ten acknowledged moves")
            private_redis.kill()
            acked_at_crash = len(acknowledged)
            time.sleep(0.5)
            private_redis.start()
            wait_for(lambda: len(acknowledged) >= acked_at_crash + 10, "ten moves after restart")
        finally:
            stop.set()
            player.join(timeout=60)
        assert not player.is_alive()

        log = store.read(game_id)
        versions = [event.version for event in log]
        assert versions == list(range(1, len(versions) + 1))
        for move in acknowledged:
            first, last = move["answer"]["first_version"], move["answer"]["version"]
            assert 1 <= first <= last <= len(log), f"acknowledged versions {first}..{last} lost"
        spans = sorted((m["answer"]["first_version"], m["answer"]["version"]) for m in acknowledged)
        tiled = [version for first, last in spans for version in range(first, last + 1)]
        # The creation wrote versions 1 and 2; every later version is one acknowledged move's.
        assert tiled == list(range(3, len(log) + 1)), "a move is missing, repeated or unacked"

        replays = 0
        for move in acknowledged:
            retried = api.post(
                f"/v1/games/{game_id}/actions",
                json=move["body"],
                headers={"Idempotency-Key": move["key"]},
            )
            assert retried.status_code == 200, retried.text
            assert retried.json() == {**move["answer"], "replayed": True}
            replays += 1
        assert store.version(game_id) == len(log), "a retry appended a second move"
    probe.close()
    print(f"\nredis crash (AOF always): {len(acknowledged)} moves acknowledged, all in the log")
    print(f"  ({acked_at_crash} before the crash, {len(log)} events), {len(failures)} 503s")
    print(f"  retried meanwhile; {replays} retries after the restart all replayed")


def _games_view(database_url: str) -> dict[str, tuple[int, str]]:
    """Returns each game of the games view with its version and status."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT game_id, version, status FROM games").fetchall()
    return {str(game_id): (int(version), str(status)) for game_id, version, status in rows}


def _assert_games_view_is_the_store(
    database_url: str, store: RedisEventStore, game_ids: set[str]
) -> None:
    """Asserts that the games view holds exactly `game_ids`, each at the store's version."""
    view = _games_view(database_url)
    assert set(view) == game_ids
    for game_id in game_ids:
        assert view[game_id][0] == store.version(game_id), f"{game_id}: the view lags"


@contextlib.contextmanager
def _projecting(projector: Projector) -> Iterator[None]:
    """Runs `projector` in a thread while the block runs."""
    stop = threading.Event()
    thread = threading.Thread(
        target=projector.run_forever,
        args=(stop,),
        kwargs={"block_ms": 200, "pause_s": 0.05},
        name="projector",
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=60)
        assert not thread.is_alive(), "the projector did not stop"


def test_with_postgresql_down_moves_go_on_ready_says_so_and_the_projection_catches_up(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    group = "projection"
    with (
        TcpProxy(target_of(database_url)) as proxy,
        _app(redis_url, namespace, through(database_url, proxy)) as api,
    ):
        consumer = RedisEventStore(redis.Redis.from_url(redis_url), namespace).consumer(
            group, "projector-1"
        )
        game_ids: set[str] = set()

        def create_games(count: int) -> None:
            for _ in range(count):
                created = api.post("/v1/games", json={"game": "beggar", "players": 3})
                assert created.status_code == 201, created.text
                game_ids.add(created.json()["game_id"])

        with _projecting(Projector(through(database_url, proxy), consumer)):
            create_games(5)
            wait_for(lambda: projection_caught_up(redis_client, namespace, group), "projection")
            assert api.get("/ready").status_code == 200

            proxy.pause()
            feed_before = feed_length_of(redis_client, namespace)
            archived_before = len(_games_view(database_url))

            def not_ready() -> str | None:
                answer = api.get("/ready")
                detail = str(answer.json().get("detail", ""))
                return detail if answer.status_code == 503 and "postgresql" in detail else None

            detail = wait_for(not_ready, "/ready to name PostgreSQL")
            assert "redis" not in detail
            create_games(10)
            external = api.post("/v1/games", json=SHITHEAD)
            assert external.status_code == 201, external.text
            game_ids.add(external.json()["game_id"])
            moves = [_move(api, external.json()["game_id"]) for _ in range(10)]
            during = feed_length_of(redis_client, namespace) - feed_before
            assert not_ready() is not None
            assert len(_games_view(database_url)) == archived_before, "PostgreSQL was reachable"
            refused = proxy.refused

            proxy.resume()
            wait_for(lambda: api.get("/ready").status_code == 200, "/ready to recover")
            wait_for(
                lambda: (
                    projection_caught_up(redis_client, namespace, group)
                    and len(_games_view(database_url)) == len(game_ids)
                ),
                "the projection to catch up",
                seconds=CATCH_UP_S,
            )
    _assert_games_view_is_the_store(database_url, store, game_ids)
    events = assert_archive_holds_the_feed_once(database_url, redis_client, namespace)
    assert_views_equal_a_rebuild(database_url)
    print(f"\npostgresql down: {len(moves)} moves and 11 games ({during} events) accepted;")
    print(f"  {refused} connections refused; caught up: {len(game_ids)} games, {events} events")


def _beggar_games(store: RedisEventStore, count: int) -> list[str]:
    """Creates and plays `count` three-seat beggar games to their end; returns their ids."""
    game_ids = []
    for _ in range(count):
        outcome = create_game(store, "beggar", players=3)
        play_bot_turns(store, outcome.game_id)
        game_ids.append(outcome.game_id)
    return game_ids


def test_entries_a_dead_consumer_held_are_claimed_and_the_views_converge(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    group = "projection"
    # Enough games that every partition holds more than the 200 entries that consumer-a takes
    # of each (a merged read takes up to its count of every partition).
    game_ids = _beggar_games(store, 80)
    dead = store.consumer(group, "consumer-a")
    held = dead.read(count=200)
    assert len(held) == 200
    # consumer-b reads the newer entries first (consumer-a's are not idle long enough yet),
    # then claims consumer-a's: older than its checkpoint by then.
    survivor = store.consumer(group, "consumer-b", claim_idle_ms=1000)
    with Projector(database_url, survivor) as projector:
        projector.run_once(count=100)
        overtaken = checkpoint(database_url)
        assert overtaken is not None
        assert position_key(overtaken) > position_key(held[-1].position)

        def converged() -> bool:
            projector.run_once(count=100)
            return projection_caught_up(redis_client, namespace, group)

        wait_for(converged, "consumer-b to claim and project every entry")
    for partition in range(store.partitions):
        assert redis_client.xpending(feed_key(namespace, partition), group)["pending"] == 0
    _assert_games_view_is_the_store(database_url, store, set(game_ids))
    events = assert_archive_holds_the_feed_once(database_url, redis_client, namespace)
    games = assert_views_equal_a_rebuild(database_url)
    print(f"\nstuck entries: {len(held)} held by a dead consumer, claimed by another after")
    print(f"  it had projected past them (checkpoint {overtaken});")
    print(f"  {events} events archived once, {games} games equal a rebuild")


def test_the_projection_service_killed_repeatedly_under_load_loses_and_repeats_nothing(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    heartbeats = tempfile.mkdtemp(prefix="cardarena-heartbeats-")
    env = {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_HEARTBEAT_DIR": heartbeats,
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "PYTHONUNBUFFERED": "1",
    }
    kills_wanted, games_wanted = 5, 50
    game_ids: list[str] = []
    kills = 0
    loading = threading.Event()
    failed: list[BaseException] = []

    def load() -> None:
        try:
            while loading.is_set() or len(game_ids) < games_wanted:
                game_ids.extend(_beggar_games(store, 1))
                time.sleep(0.05)
        except BaseException as error:
            failed.append(error)

    with (
        contextlib.ExitStack() as cleanup,
        open(os.devnull, "w") as sink,
        Launcher(env, out=sink, cwd=ROOT, grace=30) as launcher,
    ):
        cleanup.callback(shutil.rmtree, heartbeats, ignore_errors=True)
        child = launcher.start("projection", cardarena("serve", "projection"))
        loading.set()
        loader = threading.Thread(target=load, name="load")
        loader.start()
        try:
            for _ in range(kills_wanted):
                wait_for(
                    lambda c=child: c.saw("following the feed"),  # type: ignore[misc]
                    "the projection to start",
                )
                archived = len(_games_view(database_url))
                wait_for(
                    lambda n=archived: len(_games_view(database_url)) > n,  # type: ignore[misc]
                    "the projection to make progress",
                )
                time.sleep(0.5)
                assert child.process.poll() is None, "the projection died on its own"
                os.killpg(child.pid, signal.SIGKILL)
                child.process.wait(timeout=30)
                kills += 1
                child = launcher.start("projection", cardarena("serve", "projection"))
        finally:
            loading.clear()
            loader.join(timeout=120)
        assert not failed, failed
        wait_for(
            lambda: (
                projection_caught_up(redis_client, namespace, "projection")
                and len(_games_view(database_url)) == len(game_ids)
            ),
            "the projection to catch up",
            seconds=CATCH_UP_S,
        )
    _assert_games_view_is_the_store(database_url, store, set(game_ids))
    events = assert_archive_holds_the_feed_once(database_url, redis_client, namespace)
    games = assert_views_equal_a_rebuild(database_url)
    print(f"\nprojection killed {kills} times (SIGKILL) under load: {len(game_ids)} games,")
    print(f"  {events} events archived once each, {games} games equal a rebuild")


def version_key(namespace: str, stream: str, partitions: int = 16) -> str:
    """Returns the key of `stream`'s version counter in a store of `partitions`."""
    return stream_key(namespace, partition_of(stream, partitions), stream) + ":version"


def feed_length_of(client: redis.Redis, namespace: str, partitions: int = 16) -> int:
    """Returns how many entries every partition's feed holds."""
    return sum(int(client.xlen(feed_key(namespace, p))) for p in range(partitions))
