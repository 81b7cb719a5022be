"""The tier of every test, from its folder; fixtures for real Redis and PostgreSQL servers.

Servers come from `REDIS_URL` / `DATABASE_URL` when set, else from testcontainers where
Docker runs. Where neither is available the tests that need them are skipped with a
reason; with `CARDARENA_REQUIRE_SERVICES=1` (as `.ci/run` sets it) that skip is a failure.
Each test gets its own Redis key namespace and its own PostgreSQL database.

Every deal is pinned: the stores a test builds and the processes it starts deal with the
tests' given deal secret (tests/support/deals.py), so a seeded game deals the same cards on
every run, and a game without a seed draws the same keys on every run; a test that wants a
random secret asks for `random_deal_secret`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql

from tests.support import deals
from tests.support import redis_cluster as redis_servers
from tests.support.tiers import TIERS

REQUIRE_SERVICES = os.environ.get("CARDARENA_REQUIRE_SERVICES") == "1"
TESTS = Path(__file__).resolve().parent


def pytest_itemcollected(item: pytest.Item) -> None:
    """Marks a test with its tier: the folder under tests/ it lives in."""
    tier = item.path.resolve().relative_to(TESTS).parts[0]
    if tier in TIERS:
        item.add_marker(tier)


def _unavailable(what: str, how: str) -> None:
    """Skips the test, or fails it when the servers are required."""
    message = f"{what} is not available: {how}"
    if REQUIRE_SERVICES:
        pytest.fail(message + " (CARDARENA_REQUIRE_SERVICES=1 turns this skip into a failure)")
    pytest.skip(message)


@pytest.fixture(scope="session", autouse=True)
def _given_deal_secret() -> Iterator[None]:
    """Pins every deal of the session: stores and processes deal with `deals.SECRET`."""
    with pytest.MonkeyPatch.context() as patch:
        deals.pin(patch)
        yield


@pytest.fixture(autouse=True)
def _fresh_deal_keys(request: pytest.FixtureRequest) -> None:
    """Makes the fresh keys this test draws (games without a seed) the same on every run."""
    deals.FRESH.start(request.node.nodeid)


@pytest.fixture
def random_deal_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a test of the secret's or a fresh key's drawing itself: stores draw a random deal
    secret again and games without a seed random keys, as in production (the test prints
    what it drew when it fails)."""
    deals.unpin(monkeypatch)


def _docker_runs() -> bool:
    """Returns whether a Docker engine answers a ping (a TCP DOCKER_HOST is trusted)."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        return True
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        try:
            sock.connect(host.removeprefix("unix://"))
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return b" 200 " in sock.recv(64)
        except OSError:
            return False


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """Returns the URL of a real Redis: REDIS_URL, else a testcontainers Redis."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    if not _docker_runs():
        _unavailable("Redis", "set REDIS_URL=redis://127.0.0.1:6379/0 or start Docker")
    from testcontainers.redis import RedisContainer  # noqa: PLC0415

    with RedisContainer("redis:7-alpine") as container:
        host = container.get_container_host_ip()
        port = container.get_exposed_port(6379)
        yield f"redis://{host}:{port}/0"


@pytest.fixture(scope="session")
def admin_database_url() -> Iterator[str]:
    """Returns the URL of a real PostgreSQL: DATABASE_URL, else a testcontainers PostgreSQL."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    if not _docker_runs():
        _unavailable(
            "PostgreSQL",
            "set DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test or start Docker",
        )
    from testcontainers.postgres import PostgresContainer  # noqa: PLC0415

    with PostgresContainer("postgres:16-alpine", driver=None) as container:
        yield container.get_connection_url()


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """Returns a client of the real Redis."""
    client = redis.Redis.from_url(redis_url)
    try:
        client.ping()
    except redis.ConnectionError as error:
        _unavailable("Redis", f"{redis_url} does not answer ({error})")
    yield client
    client.close()


@pytest.fixture
def namespace(redis_client: redis.Redis) -> Iterator[str]:
    """Returns a key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    keys = list(redis_client.scan_iter(match=prefix + "*", count=1000))
    if keys:
        redis_client.delete(*keys)


@pytest.fixture
def database_url(admin_database_url: str) -> Iterator[str]:
    """Returns the URL of a fresh database of this test's own, dropped afterwards."""
    name = f"cardarena_test_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(admin_database_url, autocommit=True)
    except psycopg.OperationalError as error:
        _unavailable("PostgreSQL", f"{admin_database_url} does not answer ({error})")
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    info = psycopg.conninfo.conninfo_to_dict(admin_database_url)
    info["dbname"] = name
    yield psycopg.conninfo.make_conninfo(**info)  # type: ignore[arg-type]
    with (
        contextlib.suppress(psycopg.Error),
        psycopg.connect(admin_database_url, autocommit=True) as admin,
    ):
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


# A Redis Cluster is never taken from the environment: the tests start their own from the
# installed redis-server (tests/support/redis_cluster.py), on free loopback ports.


def _redis_binaries() -> None:
    """Skips (or fails) a test where redis-server or redis-cli is not installed."""
    reason = redis_servers.missing_binaries()
    if reason:
        _unavailable("A Redis Cluster", reason)


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[redis_servers.LocalCluster]:
    """Returns a real Redis Cluster of this module's own: three primaries, no replicas, on free
    loopback ports; stopped by its pids after the module's last test."""
    _redis_binaries()
    with redis_servers.LocalCluster(primaries=3, replicas=0) as cluster:
        yield cluster


@pytest.fixture
def redis_cluster_factory() -> Iterator[Callable[..., redis_servers.LocalCluster]]:
    """Returns `start(primaries=3, replicas=0, node_timeout_ms=2000)`, which starts a real
    Redis Cluster of this test's own; every cluster it started is stopped afterwards."""
    _redis_binaries()
    started: list[redis_servers.LocalCluster] = []

    def start(
        primaries: int = 3, replicas: int = 0, node_timeout_ms: int = 2000
    ) -> redis_servers.LocalCluster:
        cluster = redis_servers.LocalCluster(primaries, replicas, node_timeout_ms)
        started.append(cluster)
        cluster.start()
        return cluster

    yield start
    for cluster in started:
        cluster.stop()


@pytest.fixture
def redis_cluster_with_replicas(
    redis_cluster_factory: Callable[..., redis_servers.LocalCluster],
) -> redis_servers.LocalCluster:
    """Returns a real Redis Cluster of this test's own, three primaries with one replica each,
    for a test that kills a node; stopped by its pids afterwards."""
    return redis_cluster_factory(primaries=3, replicas=1)


@pytest.fixture
def redis_server() -> Iterator[redis_servers.RedisServer]:
    """Returns a started standalone redis-server of this test's own on a free port (not a
    cluster node); stopped by its pid and its directory removed afterwards."""
    _redis_binaries()
    with redis_servers.RedisServer() as server:
        yield server


@pytest.fixture
def amqp_url() -> Iterator[str]:
    """Returns the URL of a RabbitMQ virtual host of this test's own, on the server at
    AMQP_URL (default amqp://guest:guest@127.0.0.1:5672//); deletes it afterwards.

    The virtual host is made with `rabbitmqctl` (on this machine, as the user that may), and
    the URL's user gets every permission on it: whatever the test's Celery apps declare
    (queues, exchanges, pidbox and event exchanges) goes with it.
    """
    import subprocess  # noqa: PLC0415 - what only the tests that use RabbitMQ need
    from urllib.parse import urlsplit  # noqa: PLC0415

    import kombu  # noqa: PLC0415

    server = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
    probe = kombu.Connection(server, connect_timeout=2)
    refused: tuple[type[BaseException], ...] = (OSError, *probe.connection_errors)
    try:
        probe.connect()
    except refused as error:
        _unavailable("RabbitMQ", f"{server} does not answer ({error}); set AMQP_URL")
    finally:
        probe.release()
    vhost = f"cardarena-test-{uuid.uuid4().hex[:12]}"
    user = probe.userid or "guest"

    def ctl(*args: str) -> None:
        subprocess.run(["rabbitmqctl", "-q", *args], check=True, capture_output=True)

    try:
        ctl("add_vhost", vhost)
    except (OSError, subprocess.CalledProcessError) as error:
        _unavailable("rabbitmqctl", f"cannot add a virtual host ({error})")
    try:
        ctl("set_permissions", "-p", vhost, user, ".*", ".*", ".*")
        parts = urlsplit(server)
        yield f"{parts.scheme}://{parts.netloc}/{vhost}"
    finally:
        ctl("delete_vhost", vhost)
