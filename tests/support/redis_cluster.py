"""Real Redis servers a test starts itself: a standalone `redis-server` (`RedisServer`) or a
Redis Cluster of N primaries with R replicas each (`LocalCluster`).

Every server listens on a free loopback port below the ephemeral range (its cluster bus port,
port + 10000, free too), keeps its files in a temporary directory of its own, persists
nothing (`--save ""`, no AOF) and is stopped by the pid this module started: the machine's
own Redis on 6379 and every process this module did not start are never touched. A wait is
bounded and raises `HarnessTimeout` naming what it waited for and what it saw last.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import redis
from redis.cluster import ClusterNode
from redis.cluster import RedisCluster as RedisClusterClient

T = TypeVar("T")

HOST = "127.0.0.1"
SLOTS = 16384
BUS_OFFSET = 10000
PORTS = range(20000, 22700)
"""Where client ports are picked: below Linux's ephemeral range (32768 and up) with their bus
ports (30000-32699), so no connection's local port takes one between the check and the bind."""
WAIT_S = 60.0
"""How long a bounded wait lasts: far longer than a healthy start or failover needs."""

_handed_out: set[int] = set()


class HarnessTimeout(RuntimeError):
    """A bounded wait of the harness ran out; the message names what it waited for."""


class ServerExited(RuntimeError):
    """A redis-server this module started exited on its own; the message has its log's tail."""


def missing_binaries() -> str | None:
    """Returns why no server can be started here (redis-server or redis-cli not on PATH)."""
    missing = [name for name in ("redis-server", "redis-cli") if shutil.which(name) is None]
    return f"{' and '.join(missing)} not on PATH" if missing else None


def wait_until(check: Callable[[], T | None], what: str, seconds: float = WAIT_S) -> T:
    """Returns the first truthy result of `check`, polling; raises `HarnessTimeout` after
    `seconds`. A `check` may raise `NotYet(detail)` to say what it saw."""
    deadline = time.monotonic() + seconds
    seen = "nothing yet"
    while True:
        try:
            value = check()
        except NotYet as not_yet:
            seen = str(not_yet)
        else:
            if value:
                return value
        if time.monotonic() > deadline:
            raise HarnessTimeout(f"timed out after {seconds}s waiting for {what}; last: {seen}")
        time.sleep(0.05)


class NotYet(Exception):
    """Raised by a wait's check: the condition does not hold yet, and what was seen."""


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def free_server_port() -> int:
    """Returns a loopback port that nothing listens on, nor on its cluster bus port, and that
    this process has not handed out before."""
    for _ in range(1000):
        port = random.choice(PORTS)
        if port in _handed_out or not _bindable(port) or not _bindable(port + BUS_OFFSET):
            continue
        _handed_out.add(port)
        return port
    raise HarnessTimeout(f"no free port pair in {PORTS} after 1000 tries")


class RedisServer:
    """One redis-server process of this test's own: standalone, or a cluster node with
    `cluster=True`. `start()` waits until it answers; `kill()` SIGKILLs it; `stop()` ends it
    and removes its directory (when the server made it)."""

    def __init__(
        self,
        *,
        directory: Path | None = None,
        cluster: bool = False,
        node_timeout_ms: int = 2000,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.host = HOST
        self.port = free_server_port()
        self.cluster = cluster
        self.node_timeout_ms = node_timeout_ms
        self.extra_args = tuple(extra_args)
        self._owns_directory = directory is None
        self.directory = directory or Path(tempfile.mkdtemp(prefix="cardarena-redis-"))
        self.process: subprocess.Popen[bytes] | None = None
        self.node_id = ""

    def __repr__(self) -> str:
        return f"RedisServer({self.host}:{self.port}, pid={self.pid})"

    def __enter__(self) -> RedisServer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        """Returns the pid of the running process, or None once it is stopped or killed."""
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        """Returns whether the process this server started still runs."""
        return self.process is not None and self.process.poll() is None

    @property
    def url(self) -> str:
        """Returns the server's URL (database 0)."""
        return f"redis://{self.host}:{self.port}/0"

    @property
    def address(self) -> str:
        """Returns `host:port`."""
        return f"{self.host}:{self.port}"

    @property
    def log(self) -> Path:
        """Returns the path of the server's log file."""
        return self.directory / f"redis-{self.port}.log"

    def command(self) -> list[str]:
        """Returns the command line the server runs."""
        command = [
            "redis-server",
            *("--port", str(self.port), "--bind", self.host),
            *("--dir", str(self.directory), "--save", "", "--appendonly", "no"),
            *("--daemonize", "no", "--logfile", str(self.log)),
        ]
        if self.cluster:
            command += [
                *("--cluster-enabled", "yes"),
                *("--cluster-config-file", f"nodes-{self.port}.conf"),
                *("--cluster-node-timeout", str(self.node_timeout_ms)),
                # A replica is left out of CLUSTER SLOTS (so clients do not know it) until its
                # replication offset moves; the primary's pings move it each second, not 10.
                *("--repl-ping-replica-period", "1"),
            ]
        return [*command, *self.extra_args]

    def start(self) -> None:
        """Starts the process and waits until it answers a PING; a port taken in the meantime
        is replaced by another (three tries)."""
        assert self.process is None, f"{self!r} already runs"
        for attempt in range(3):
            self.process = subprocess.Popen(
                self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                wait_until(self._answers, f"redis-server on port {self.port} to answer")
            except ServerExited:
                self.process = None
                if attempt == 2 or "Address already in use" not in self.log_tail():
                    raise
                self.port = free_server_port()
            else:
                if self.cluster:
                    self.node_id = str(self.raw("CLUSTER", "MYID"))
                return

    def _answers(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            self.process.wait()
            raise ServerExited(
                f"redis-server on port {self.port} exited with {self.process.returncode}: "
                + self.log_tail()
            )
        with contextlib.suppress(redis.RedisError), self.client() as client:
            return bool(client.ping())
        return False

    def log_tail(self, lines: int = 20) -> str:
        """Returns the last lines of the server's log (empty when it wrote none)."""
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def client(self, **kwargs: Any) -> redis.Redis:
        """Returns a plain client of this one server (strings decoded, short timeouts)."""
        options: dict[str, Any] = {
            "decode_responses": True,
            "socket_connect_timeout": 1,
            "socket_timeout": 5,
            **kwargs,
        }
        return redis.Redis(host=self.host, port=self.port, **options)

    def raw(self, *args: str) -> Any:
        """Returns the reply of one command as the server sent it, unparsed (redis-py parses
        CLUSTER INFO and CLUSTER NODES into shapes that vary between its versions)."""
        with self.client() as client:
            connection = client.connection_pool.get_connection()
            try:
                connection.send_command(*args)
                return connection.read_response()
            finally:
                client.connection_pool.release(connection)

    def info(self, section: str) -> dict[str, Any]:
        """Returns one section of INFO."""
        with self.client() as client:
            return dict(client.info(section))

    def role(self) -> str:
        """Returns the server's role now: "master" or "slave" (as ROLE names them)."""
        return str(self.raw("ROLE")[0])

    def kill(self) -> None:
        """SIGKILLs the process by its pid and reaps it: no shutdown, no last write."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None

    def stop(self) -> None:
        """Ends the process (SIGTERM, then SIGKILL after 10 s) and removes its directory when
        the server made it."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
            self.process = None
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)


class LocalCluster:
    """A real Redis Cluster of `primaries` primaries with `replicas` replicas each, made by
    `redis-cli --cluster create`; `start()` returns once every node says cluster_state:ok,
    all 16384 slots are served and every replica's link to its primary is up."""

    def __init__(self, primaries: int = 3, replicas: int = 0, node_timeout_ms: int = 2000) -> None:
        assert primaries >= 3, "redis-cli --cluster create needs at least three primaries"
        self.node_timeout_ms = node_timeout_ms
        self.replicas_per_primary = replicas
        self.directory = Path(tempfile.mkdtemp(prefix="cardarena-cluster-"))
        self.nodes: list[RedisServer] = []
        for _ in range(primaries * (replicas + 1)):
            self.nodes.append(
                RedisServer(directory=self.directory, cluster=True, node_timeout_ms=node_timeout_ms)
            )
        self._lost_slots: dict[str, list[tuple[int, int]]] = {}

    def __repr__(self) -> str:
        return f"LocalCluster({', '.join(node.address for node in self.nodes)})"

    def __enter__(self) -> LocalCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Returns a URL a cluster client starts from (one node; it discovers the others)."""
        return f"redis://{self.nodes[0].address}"

    def startup_nodes(self) -> list[ClusterNode]:
        """Returns every node as redis-py's startup nodes."""
        # redis-py's cluster module has no annotations, hence the ignore and the Any below.
        return [ClusterNode(node.host, node.port) for node in self.nodes]  # type: ignore[no-untyped-call]

    def client(self, **kwargs: Any) -> Any:
        """Returns a redis-py `RedisCluster` started from every node (bytes unless told), as
        Any: its methods have no annotations, which strict mypy refuses to call."""
        options: dict[str, Any] = {"socket_connect_timeout": 1, "socket_timeout": 5, **kwargs}
        return RedisClusterClient(startup_nodes=self.startup_nodes(), **options)

    def live_nodes(self) -> list[RedisServer]:
        """Returns the nodes whose process runs."""
        return [node for node in self.nodes if node.alive]

    def primaries(self) -> list[RedisServer]:
        """Returns the live nodes that are primaries now."""
        return [node for node in self.live_nodes() if node.role() == "master"]

    def replicas(self) -> list[RedisServer]:
        """Returns the live nodes that are replicas now."""
        return [node for node in self.live_nodes() if node.role() == "slave"]

    def replicas_of(self, primary: RedisServer) -> list[RedisServer]:
        """Returns the live nodes that replicate `primary` now."""
        view = self._view(self.live_nodes()[0])
        return [
            node for node in self.live_nodes() if view[node.address].master_id == primary.node_id
        ]

    def node_for_key(self, key: str | bytes) -> RedisServer:
        """Returns the live primary that serves `key`'s slot now."""
        probe = self.live_nodes()[0]
        with probe.client() as client:
            slot = int(client.execute_command("CLUSTER KEYSLOT", key))
        view = self._view(probe)
        for node in self.live_nodes():
            entry = view[node.address]
            if "master" in entry.flags and any(a <= slot <= b for a, b in entry.slots):
                return node
        raise LookupError(f"no live primary serves slot {slot} of {key!r}")

    def start(self) -> None:
        """Starts every node, joins them into one cluster and waits until it serves."""
        for node in self.nodes:
            node.start()
        command = [
            "redis-cli",
            "--cluster",
            "create",
            *(node.address for node in self.nodes),
            *("--cluster-replicas", str(self.replicas_per_primary), "--cluster-yes"),
        ]
        created = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if created.returncode != 0 or "[OK] All 16384 slots covered" not in created.stdout:
            raise RuntimeError(
                f"redis-cli --cluster create failed ({created.returncode}):\n"
                f"{created.stdout}\n{created.stderr}"
            )
        self.wait_ready()

    def wait_ready(self, seconds: float = WAIT_S) -> None:
        """Waits until every live node says cluster_state:ok with all slots served and knows
        every node, and every live replica's link to its primary is up."""
        wait_until(self._ready, f"{self!r} to serve every slot", seconds)

    def _ready(self) -> bool:
        replicas = set()
        for node in self.live_nodes():
            info = _fields(str(node.raw("CLUSTER", "INFO")))
            if info["cluster_state"] != "ok" or int(info["cluster_slots_ok"]) != SLOTS:
                raise NotYet(f"{node.address}: {info}")
            if int(info["cluster_known_nodes"]) != len(self.nodes):
                raise NotYet(f"{node.address} knows {info['cluster_known_nodes']} nodes")
            replication = node.info("replication")
            if replication["role"] == "slave" and replication["master_link_status"] != "up":
                raise NotYet(f"{node.address}: link to its primary is not up: {replication}")
            if replication["role"] == "slave":
                replicas.add(node.address)
        for node in self.live_nodes():
            listed = {
                f"{entry[0]}:{entry[1]}"
                for shard in node.raw("CLUSTER", "SLOTS")
                for entry in shard[2:]
            }
            if not replicas <= listed:
                raise NotYet(f"{node.address}'s CLUSTER SLOTS lacks replicas {replicas - listed}")
        return True

    def wait_state(self, state: str, seconds: float = WAIT_S) -> None:
        """Waits until every live node's CLUSTER INFO says `cluster_state:<state>` ("ok" or
        "fail": a primary without a replica is gone once its peers mark it failed)."""

        def reached() -> bool:
            for node in self.live_nodes():
                info = _fields(str(node.raw("CLUSTER", "INFO")))
                if info["cluster_state"] != state:
                    raise NotYet(f"{node.address}: cluster_state:{info['cluster_state']}")
            return True

        wait_until(reached, f"cluster_state:{state} on every live node of {self!r}", seconds)

    def kill(self, node: RedisServer) -> None:
        """SIGKILLs `node` by its pid, remembering which slots it served."""
        peer = next(other for other in self.live_nodes() if other is not node)
        self._lost_slots[node.node_id] = list(self._view(peer)[node.address].slots)
        node.kill()

    def wait_failover(self, old_primary: RedisServer, seconds: float = WAIT_S) -> RedisServer:
        """Waits until a replica of the killed `old_primary` serves all its slots and every
        live node says cluster_state:ok again; returns the new primary. Raises
        `HarnessTimeout` when that does not happen within `seconds`."""
        lost = self._lost_slots.get(old_primary.node_id)
        assert lost, f"{old_primary!r} was not killed by this cluster while it served slots"

        def promoted() -> RedisServer:
            self._ready()
            for node in self.live_nodes():
                view = self._view(node)
                if "fail" not in view[old_primary.address].flags:
                    raise NotYet(f"{node.address} does not see {old_primary.address} as failed")
            view = self._view(self.live_nodes()[0])
            for node in self.live_nodes():
                entry = view[node.address]
                if "master" in entry.flags and set(lost) <= set(entry.slots):
                    return node
            raise NotYet(f"no live primary serves {lost}")

        return wait_until(promoted, f"a replica to take over {old_primary!r}'s slots", seconds)

    def stop(self) -> None:
        """Stops every node this cluster started, by pid, and removes the cluster's directory."""
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    @staticmethod
    def _view(node: RedisServer) -> dict[str, NodeEntry]:
        """Returns `node`'s CLUSTER NODES, keyed by `host:port`."""
        text = str(node.raw("CLUSTER", "NODES"))
        entries = (NodeEntry.parse(line) for line in text.splitlines() if line.strip())
        return {entry.address: entry for entry in entries}


@dataclasses.dataclass(frozen=True)
class NodeEntry:
    """One line of CLUSTER NODES: a node as another node sees it."""

    node_id: str
    address: str
    flags: frozenset[str]
    master_id: str
    slots: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, line: str) -> NodeEntry:
        """Parses `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`
        (slots being migrated, in brackets, are left out)."""
        fields = line.split()
        slots = []
        for item in fields[8:]:
            if not item.startswith("["):
                first, _, last = item.partition("-")
                slots.append((int(first), int(last or first)))
        return cls(
            node_id=fields[0],
            address=fields[1].split("@")[0],
            flags=frozenset(fields[2].split(",")),
            master_id=fields[3],
            slots=tuple(slots),
        )


def _fields(text: str) -> dict[str, str]:
    """Returns the `key:value` lines of CLUSTER INFO or INFO as a dict."""
    pairs = (line.split(":", 1) for line in text.splitlines() if ":" in line)
    return {key.strip(): value.strip() for key, value in pairs}
