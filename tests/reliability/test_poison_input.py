"""Poison input: what the stores cannot hold is refused at the door, ids and headers that
cannot exist are 4xx, never 500, bodies and parameters are decoded strictly, and an event the
projection cannot project never stops it.

Every HTTP attack runs against a real stack (`cardarena serve game`, a worker and the
projection as separate processes on Redis and PostgreSQL) with the admin key or a bot's own
token. The projection tests write unprojectable events straight into the Redis event store
and watch the real projection process go on, set them aside as dead letters, report them in
`/ready` and its metrics, and project them once the fault is gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import psycopg
import pytest
import redis
from psycopg import sql

from services.cli.dev import Launcher, cardarena, stack_commands, stack_environment
from services.ops.migrate import migrate
from services.projection.projector import Projector
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.messages.common import Seat
from shared.messages.envelope import NewEvent
from shared.store.merged import MergedFeedConsumer
from shared.store.port import FeedEntry
from shared.store.redis_common import feed_key
from shared.store.redis_consumer import RedisFeedConsumer
from shared.store.redis_store import RedisEventStore
from tests.support.faults import wait_for
from tests.support.projection import (
    assert_archive_holds_the_feed_once,
    assert_views_equal_a_rebuild,
    projection_caught_up,
)
from tests.support.stack import ROOT, free_port, wait_until_healthy

ADMIN_KEY = "poison-admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
TOO_BIG = str(2**64)
"""A feed position part one past what a Redis stream id holds."""


class Stack:
    """A running stack of one module or test: its URL, store, database and launcher."""

    def __init__(
        self,
        base_url: str,
        database_url: str,
        client: redis.Redis,
        namespace: str,
        launcher: Launcher,
        env: dict[str, str],
    ) -> None:
        self.base_url = base_url
        self.database_url = database_url
        self.redis = client
        self.namespace = namespace
        self.store = RedisEventStore(client, namespace=namespace)
        self.launcher = launcher
        self.env = env
        self.http = httpx.Client(base_url=base_url, timeout=30)

    def feed_length(self) -> int:
        """Returns how many events the feed holds."""
        return sum(
            int(self.redis.xlen(feed_key(self.namespace, p))) for p in range(self.store.partitions)
        )

    def post(self, path: str, body: Any, **headers: str) -> httpx.Response:
        """POSTs `body` (JSON, or raw bytes) as the admin."""
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.http.post(
            path, content=content, headers={**ADMIN, "content-type": "application/json", **headers}
        )


@contextlib.contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """Yields the URL of a new database of its own, dropped afterwards."""
    name = f"cardarena_poison_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(admin_url)
    info["dbname"] = name
    try:
        yield psycopg.conninfo.make_conninfo(**info)  # type: ignore[arg-type]
    finally:
        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(admin_url, autocommit=True) as admin,
        ):
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@contextlib.contextmanager
def running(redis_url: str, admin_url: str, **extra: str) -> Iterator[Stack]:
    """Runs the game service, a worker and the projection with the admin key on a namespace
    and a database of their own; stops them and deletes both afterwards."""
    namespace = f"test:{uuid.uuid4().hex[:12]}:"
    client = redis.Redis.from_url(redis_url)
    port = free_port()
    heartbeats = tempfile.mkdtemp(prefix="cardarena-heartbeats-")
    try:
        with fresh_database(admin_url) as database_url:
            env = {
                **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", port),
                "CARDARENA_NAMESPACE": namespace,
                "CARDARENA_QUEUE": f"{namespace}bots",
                "CARDARENA_HEARTBEAT_DIR": heartbeats,
                "CARDARENA_PROJECTION_METRICS_PORT": "0",
                "CARDARENA_WORKERS_METRICS_PORT": "0",
                "CARDARENA_ADMIN_KEY": ADMIN_KEY,
                "CARDARENA_RATE_LIMIT": "0",
                **extra,
            }
            base_url = f"http://127.0.0.1:{port}"
            with Launcher(env, cwd=ROOT, grace=30) as launcher:
                for name, command in stack_commands(concurrency=2):
                    if name != "beat":
                        launcher.start(name, command)
                wait_until_healthy(base_url, "the game service")
                stack = Stack(base_url, database_url, client, namespace, launcher, env)
                try:
                    yield stack
                finally:
                    stack.http.close()
    finally:
        shutil.rmtree(heartbeats, ignore_errors=True)
        keys = list(client.scan_iter(match=namespace + "*", count=1000))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture(scope="module")
def stack(redis_url: str, admin_database_url: str) -> Iterator[Stack]:
    """One stack shared by this module's HTTP tests (each leaves the log as it found it)."""
    with running(redis_url, admin_database_url) as started:
        yield started


def assert_problem(
    response: httpx.Response, status: int, field: str | None = None
) -> dict[str, Any]:
    """Checks a problem-details answer of `status` naming `field` (when given); returns it."""
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    if field is not None:
        assert body.get("field") == field, body
    return body


def external_game(stack: Stack) -> str:
    """Creates a two-seat Shithead game of external seats; returns its id."""
    created = stack.post(
        "/v1/games",
        {"game": "shithead", "seats": [{"kind": "external"}, {"kind": "external"}], "seed": 3},
    )
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


# --- What the stores cannot hold is refused, naming the field ----------------------------

NUL = "a\u0000b"

NUL_BODIES = [
    (
        "/v1/games",
        {"game": "shithead", "seats": [{"kind": "external", "name": NUL}, {"kind": "external"}]},
        "seats[0].name",
    ),
    ("/v1/games", {"game": "beggar", "players": 2, "seed": NUL}, "seed"),
    ("/v1/games", {"game": "beggar", "players": 2, "ruleset": {NUL: 1}}, "ruleset"),
    (
        "/v1/tournaments",
        {
            "game": "beggar",
            "table_size": 2,
            "seed": NUL,
            "entrants": [{"bot": "turner"}, {"bot": "random"}],
        },
        "seed",
    ),
    (
        "/v1/tournaments",
        {
            "game": "beggar",
            "table_size": 2,
            "entrants": [{"bot": "turner", "name": NUL}, {"bot": "random"}],
        },
        "entrants[0].name",
    ),
    (
        "/v1/tournaments",
        {
            "game": "beggar",
            "table_size": 2,
            "entrants": [{"bot": "turner", "version": NUL}, {"bot": "random"}],
        },
        "entrants[0].version",
    ),
]
"""Admin requests with a NUL in a string: path, body, and the field named."""


@pytest.mark.parametrize(("path", "body", "field"), NUL_BODIES)
def test_a_nul_in_any_string_of_a_body_is_a_422_naming_the_field_and_writes_nothing(
    stack: Stack, path: str, body: dict[str, Any], field: str
) -> None:
    before = stack.feed_length()
    response = stack.post(path, body)
    problem = assert_problem(response, 422, field)
    assert "NUL" in problem["detail"]
    assert stack.feed_length() == before


def test_a_lone_surrogate_in_a_body_is_a_422_naming_the_field(stack: Stack) -> None:
    before = stack.feed_length()
    body = b'{"game": "shithead", "seats": [{"kind": "external", "name": "x\\ud800"},'
    body += b' {"kind": "external"}]}'
    problem = assert_problem(stack.post("/v1/games", body), 422, "seats[0].name")
    assert "surrogate" in problem["detail"]
    assert stack.feed_length() == before


def test_a_log_holding_a_nul_is_refused_by_import(stack: Stack) -> None:
    created = stack.post("/v1/games", {"game": "beggar", "players": 2, "seed": 5})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]

    def finished() -> bool:
        return bool(stack.http.get(f"/v1/games/{game_id}").json()["status"] != "playing")

    wait_for(finished, "the worker to play the beggar game out")
    export = stack.http.get(f"/v1/games/{game_id}/export")
    assert export.status_code == 200, export.text
    lines = export.content.decode().splitlines()
    header, first = json.loads(lines[0]), json.loads(lines[1])
    header["game_id"] = first["data"]["game_id"] = f"nul-{uuid.uuid4().hex[:8]}"
    first["data"]["seats"][0]["name"] = NUL
    tampered = "\n".join([json.dumps(header), json.dumps(first), *lines[2:]]) + "\n"
    before = stack.feed_length()
    response = stack.http.post(
        "/v1/games/import",
        content=tampered.encode(),
        headers={**ADMIN, "content-type": "application/x-ndjson"},
    )
    problem = assert_problem(response, 422)
    assert problem.get("event_version") == 1, problem
    assert "NUL" in problem["detail"]
    assert stack.feed_length() == before


# --- Ids and headers that cannot exist: 404 or 400, never 500 -----------------------------


def templated_operations(stack: Stack) -> list[tuple[str, str]]:
    """Returns (method, path template) of every operation of the OpenAPI document with a
    path parameter."""
    document = stack.http.get("/schema/openapi.json").json()
    return [
        (method.upper(), path)
        for path, item in document["paths"].items()
        if "{" in path
        for method in item
        if method in {"get", "post", "put", "delete", "patch"}
    ]


def test_an_id_holding_a_nul_is_a_404_naming_it_on_every_route(stack: Stack) -> None:
    operations = templated_operations(stack)
    assert len(operations) >= 20, operations
    tried = 0
    for method, template in operations:
        path = template
        for part in template.split("/"):
            if part.startswith("{"):
                path = path.replace(part, "%00", 1)
        response = stack.http.request(
            method, path, headers={**ADMIN, "content-type": "application/json"}, content=b"{}"
        )
        if response.status_code == 405:
            continue
        name = template.split("{", 1)[1].split("}", 1)[0]
        assert_problem(response, 404, name)
        tried += 1
    print(f"\n%00 ids: {tried} operations answered 404")


def test_a_last_event_id_beyond_64_bits_is_a_400_not_an_aborted_stream(stack: Stack) -> None:
    registered = stack.post(
        "/v1/bots",
        {"name": f"poison-{uuid.uuid4().hex[:6]}", "game": "shithead", "kind": "external"},
    )
    assert registered.status_code == 201, registered.text
    token = {"Authorization": f"Bearer {registered.json()['token']}"}

    def cursor(position: str) -> str:
        """Returns the cursor holding `position` in every partition of the stack's feed."""
        return ",".join([position] * stack.store.partitions)

    for position in (TOO_BIG, f"1-{TOO_BIG}", f"{2**64 - 1}-{2**64 - 1}"):
        response = stack.http.get(
            "/v1/bots/me/events", headers={**token, "Last-Event-ID": cursor(position)}
        )
        assert_problem(response, 400, "Last-Event-ID")
        assert "2**64" in response.json()["detail"]
    wrong_count = stack.http.get(
        "/v1/bots/me/events", headers={**token, "Last-Event-ID": f"{2**64 - 1}-0"}
    )
    assert_problem(wrong_count, 400, "Last-Event-ID")
    with stack.http.stream(
        "GET", "/v1/bots/me/events", headers={**token, "Last-Event-ID": cursor(f"{2**64 - 1}-0")}
    ) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")


def test_a_header_or_id_of_another_type_is_a_400_naming_it(stack: Stack) -> None:
    game_id = external_game(stack)
    for value in ("1e3", "1.0", "0x10"):
        response = stack.http.get(
            f"/v1/games/{game_id}/stream", headers={**ADMIN, "Last-Event-ID": value}
        )
        assert_problem(response, 400, "Last-Event-ID")


# --- Strict decoding: a string is not an integer ------------------------------------------


def test_a_string_or_a_boolean_is_not_an_integer_in_an_action(stack: Stack) -> None:
    game_id = external_game(stack)
    view = stack.http.get(f"/v1/games/{game_id}/view", params={"seat": 0}, headers=ADMIN).json()
    action, version = view["legal_actions"][0], view["version"]
    for body, field in (
        ({"seat": "0", "action": action, "expected_version": version}, "seat"),
        ({"seat": 0, "action": action, "expected_version": str(version)}, "expected_version"),
        ({"seat": 0, "action": action, "expected_version": [version]}, "expected_version"),
        ({"seat": True, "action": action, "expected_version": version}, "seat"),
    ):
        assert_problem(stack.post(f"/v1/games/{game_id}/actions", body), 400, field)
    assert stack.store.version(game_id) == version
    accepted = stack.post(
        f"/v1/games/{game_id}/actions", {"seat": 0, "action": action, "expected_version": version}
    )
    assert accepted.status_code == 200, accepted.text


def test_a_count_of_another_type_in_a_body_is_a_400_naming_it(stack: Stack) -> None:
    before = stack.feed_length()
    assert_problem(stack.post("/v1/games", {"game": "beggar", "players": "2"}), 400, "players")
    assert_problem(stack.post("/v1/games", {"game": "beggar", "players": False}), 400, "players")
    assert stack.feed_length() == before


@pytest.mark.parametrize("value", ["1e3", "1.0", "1e400", "0x10", " 5"])
def test_an_integer_query_parameter_must_be_a_plain_integer(stack: Stack, value: str) -> None:
    game_id = external_game(stack)
    for path, name in (
        (f"/v1/games/{game_id}/events?limit={value}", "limit"),
        (f"/v1/games/{game_id}/view?seat={value}", "seat"),
        (f"/v1/tournaments?limit={value}", "limit"),
        (f"/v1/leaderboards/beggar?limit={value}", "limit"),
    ):
        assert_problem(stack.http.get(path, headers=ADMIN), 400, name)
    assert stack.http.get(f"/v1/games/{game_id}/events?limit=1000", headers=ADMIN).is_success


def test_a_nul_in_a_query_parameter_is_a_400_naming_it(stack: Stack) -> None:
    assert_problem(stack.http.get("/v1/bots?game=%00", headers=ADMIN), 400, "game")
    assert_problem(stack.http.get("/v1/tournaments?game=be%00", headers=ADMIN), 400, "game")


# --- The projection never stops for one event ---------------------------------------------

FAULT = "fault-me"
"""A seat name that the test's own CHECK constraint on `games` refuses: a fault the test
can remove, standing for a bug in the projection fixed by a new release."""


def dead_letters(database_url: str) -> dict[str, list[str]]:
    """Returns the dead letters held: the errors recorded for each stream."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT stream, error FROM projection_dead_letters ORDER BY position"
        ).fetchall()
    found: dict[str, list[str]] = {}
    for stream, error in rows:
        found.setdefault(bytes(stream).decode(), []).append(str(error))
    return found


def games_view(database_url: str) -> set[str]:
    """Returns the game ids in the games view."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        return {str(row[0]) for row in conn.execute("SELECT game_id FROM games").fetchall()}


def beggar_games(store: RedisEventStore, count: int, *seats: Seat) -> list[str]:
    """Creates and plays out `count` beggar games (of `seats`, else two) straight on the store."""
    ids = []
    for _ in range(count):
        outcome = create_game(store, "beggar", seats=list(seats) or None, players=len(seats) or 2)
        play_bot_turns(store, outcome.game_id)
        ids.append(outcome.game_id)
    return ids


def add_fault(database_url: str) -> None:
    """Makes the games view refuse every game with a seat named FAULT (a CHECK constraint)."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("ALTER TABLE games ADD CONSTRAINT poison_fault CHECK ({})").format(
                sql.SQL("seats::text NOT LIKE {}").format(sql.Literal(f"%{FAULT}%"))
            )
        )


def remove_fault(database_url: str) -> None:
    """Drops the constraint of `add_fault`."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE games DROP CONSTRAINT poison_fault")


def metric(port: int, name: str) -> float | None:
    """Returns the value of metric `name` on the projection's metrics port, None if absent."""
    with contextlib.suppress(httpx.HTTPError):
        for line in httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def restart_projection(stack: Stack) -> None:
    """Stops the projection process (SIGTERM, by its pid) and starts it again."""
    (child,) = [c for c in stack.launcher.children if c.name == "projection"]
    os.killpg(child.pid, signal.SIGTERM)
    child.process.wait(timeout=60)
    started = stack.launcher.start("projection", cardarena("serve", "projection"))
    wait_for(lambda: started.saw("following the feed"), "the projection to start again")


def test_an_unprojectable_event_is_set_aside_and_every_other_game_goes_on(
    redis_url: str, admin_database_url: str
) -> None:
    metrics_port = free_port()
    extra = {
        "CARDARENA_PROJECTION_METRICS_PORT": str(metrics_port),
        "CARDARENA_PROJECTION_RETRY_SECONDS": "3600",  # retried at the start only, here
    }
    with running(redis_url, admin_database_url, **extra) as stack:
        before = beggar_games(stack.store, 3)
        wait_for(lambda: games_view(stack.database_url) >= set(before), "the first games")
        add_fault(stack.database_url)

        # Straight into the store: a seat name PostgreSQL cannot hold, a game of a kind this
        # release does not know, and a game the (removable) fault refuses.
        (nul,) = beggar_games(stack.store, 1, Seat(name="a\x00b"), Seat(name="b"))
        unknown = f"unknown-{uuid.uuid4().hex[:8]}"
        stack.store.append(unknown, "nosuchgame", 0, [NewEvent("GameCreated", b'{"x": 1}')])
        (faulty,) = beggar_games(stack.store, 1, Seat(name=FAULT), Seat(name="b"))
        # And feed entries that are no event at all: one missing every field but the game's,
        # one whose game id is not UTF-8 (written by hand, or by a bug).
        feed = feed_key(stack.namespace, 0)
        bare = f"bare-{uuid.uuid4().hex[:8]}"
        stack.redis.xadd(feed, {b"g": bare.encode()})
        garbled = f"garbled-{uuid.uuid4().hex[:8]}"
        stack.redis.xadd(feed, {b"g": garbled.encode() + b"\xff", b"v": b"1", b"k": b"beggar"})
        after = beggar_games(stack.store, 3)

        wait_for(lambda: games_view(stack.database_url) >= set(after), "the games after them")
        (projection,) = [c for c in stack.launcher.children if c.name == "projection"]
        assert projection.process.poll() is None, "the projection died"
        poisoned = {nul, unknown, faulty, bare, garbled + "\ufffd"}

        def all_held() -> dict[str, list[str]] | None:
            found = dead_letters(stack.database_url)
            return found if poisoned <= found.keys() else None

        held = wait_for(all_held, "the dead letters")
        assert set(held) == poisoned
        assert "Unicode" in held[nul][0] or "NUL" in held[nul][0], held
        assert all("held behind" in error for error in held[nul][1:])
        assert nul not in games_view(stack.database_url)

        ready = stack.http.get("/ready")
        assert ready.status_code == 200, ready.text
        report = ready.json()
        assert report["status"] == "degraded", report
        assert "dead letters" in report["degraded"][0], report
        counted = metric(metrics_port, "cardarena_projection_dead_letters_total")
        total = sum(len(errors) for errors in held.values())
        assert counted is not None
        assert counted >= total
        assert metric(metrics_port, "cardarena_projection_dead_letters_held") == total

        # The fault is removed (a fixed release): the restarted projection projects the
        # faulty game's events, and they leave the dead letters; the others stay.
        remove_fault(stack.database_url)
        restart_projection(stack)
        wait_for(
            lambda: faulty in games_view(stack.database_url),
            "the faulty game to be projected",
        )
        assert set(dead_letters(stack.database_url)) == {nul, unknown, bare, garbled + "\ufffd"}
        with psycopg.connect(stack.database_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT status, version FROM games WHERE game_id = %s", (faulty,)
            ).fetchone()
        assert row == ("finished", stack.store.version(faulty)), row
        assert_views_equal_a_rebuild(stack.database_url)
        assert stack.http.get("/ready").json()["status"] == "degraded"


class CrashingOnce(MergedFeedConsumer):
    """A member that dies once, between the commit of its first batch and its ack."""

    crashed = False

    def ack_entries(self, entries: Sequence[FeedEntry]) -> None:
        if not CrashingOnce.crashed:
            CrashingOnce.crashed = True
            raise SimulatedCrashError
        super().ack_entries(entries)


class SimulatedCrashError(Exception):
    """The projection died between committing a batch and acknowledging it."""


def test_dead_letters_are_recorded_once_retried_periodically_and_projected_exactly_once(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    add_fault(database_url)
    ordinary = beggar_games(store, 2)
    (faulty,) = beggar_games(store, 1, Seat(name=FAULT), Seat(name="b"))
    ordinary += beggar_games(store, 2)
    members = [
        RedisFeedConsumer(redis_client, "projection", "projector-1", namespace, partition=p)
        for p in range(store.partitions)
    ]
    consumer = CrashingOnce(store, members)
    with Projector(database_url, consumer) as projector, pytest.raises(SimulatedCrashError):
        projector.run_once(count=1000)
    first = dead_letters(database_url)
    assert set(first) == {faulty}

    # Redelivered after the crash: nothing is projected or dead-lettered twice.
    survivor = store.consumer("projection", "projector-1")
    projector = Projector(database_url, survivor, retry_s=0.2)
    projector.run_once(count=1000)
    assert dead_letters(database_url) == first
    with psycopg.connect(database_url, autocommit=True) as conn:
        attempts = conn.execute("SELECT max(attempts) FROM projection_dead_letters").fetchone()
    assert attempts == (1,)
    assert games_view(database_url) == set(ordinary)

    stop = threading.Event()
    thread = threading.Thread(target=projector.run_forever, args=(stop,), name="projector")
    thread.start()
    try:
        remove_fault(database_url)
        wait_for(lambda: not dead_letters(database_url), "a periodic retry to clear them")
        later = beggar_games(store, 1)
        wait_for(
            lambda: projection_caught_up(redis_client, namespace, "projection"),
            "the projection to catch up",
        )
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive(), "the projector did not stop"
    assert games_view(database_url) == {*ordinary, faulty, *later}
    recovered = projector.metrics.registry.get_sample_value(
        "cardarena_projection_dead_letters_recovered_total"
    )
    assert recovered == len(first[faulty])
    assert_archive_holds_the_feed_once(database_url, redis_client, namespace)
    assert_views_equal_a_rebuild(database_url)
