"""Load: concurrent external bots playing Shithead over HTTP against the whole stack.

Two phases, with the same client count and the same number of server processes, both
running throughout and taking turns (`--rounds`, default 3, so that a busy machine's drift
hits both alike):

1. Bare: `--processes` uvicorn processes of a minimal Litestar app (`bare_app`), each
   request one XADD to a stream.
2. Game: `--processes` `cardarena serve game` processes (Redis store, Celery dispatch) on
   ports of their own, a Celery worker and the projection service into a temporary
   PostgreSQL database. `--clients` external bots, registered with tokens, play two-seat
   Shithead games in pairs (both seats external: every move is a POST through the game
   service; the worker idles). With `--mode act` (the default) each client plays one
   request a move: a POST of a random legal action at its view's version, with an
   Idempotency-Key and `?wait=30`, whose answer carries the seat's next turn (its view once
   the game waits for it again); only a game's start, a 409 or a wait that ran out take a
   long poll of the turn. With `--mode turn` it asks for its seat's turn with the long poll
   `GET /v1/games/{id}/turn?seat=&wait=` and answers that with one POST: two requests a
   move. With `--mode stream` it follows its seat's server-sent events (`GET
   /v1/games/{id}/stream`) and answers every `your_turn`; with `--mode poll` it GETs its
   view in a loop. The clients are spread over the processes. A move's latency is its
   POST's round trip, or in `act` mode (whose answer waits for the next turn) the time from
   sending it to its event's store time in the log.

Each phase sends `--moves` POSTs in all. Meanwhile the projection lag (the function behind
`cardarena_projection_lag_seconds`) is sampled every 200 ms. Afterwards, once the
projection has caught up, every acknowledged move must be in the PostgreSQL archive. Prints
moves/s, p50/p99 latency of a move, requests per move, the projection lag p99, errors
(non-2xx other than 409; 409s apart: both seats may act at once while cards are swapped)
and the ratio of move throughput to the bare endpoint's; and the CPU each part of the stack
spent per bare request and per move: the server processes, Redis (its own `INFO cpu`,
read before and after each phase: every client of that Redis counts, less the lag
sampler's reads, whose Redis CPU per sample is measured with the stack idle before the
rounds), the projection, the workers and the clients (this process, less the lag sampler's
thread), with Redis's commands per request and per move (`INFO commandstats`, which counts
the commands its functions call too, and the lag sampler's).

Targets (issue 20): ratio >= 0.85; the game service's CPU per move at most 1.5 times the
bare server's per request; Redis's CPU per move, over the events a move appends, at most
twice its CPU per bare XADD; lag p99 < 1 s; zero errors; nothing acknowledged missing.
Exit code 0 whatever the verdicts (the machine is noisy: compare within one run).

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.load [--moves 3000] [--clients 16]
        [--processes 2] [--rounds 3] [--mode act|turn|stream|poll] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import redis
from litestar import Litestar, get, post
from psycopg import sql
from rich.console import Console
from rich.table import Table

from services.cli.dev import Launcher, cardarena, service_ready, stack_environment
from services.ops.migrate import migrate
from services.projection.lag import projection_lag
from shared.sdk.client import SseParser, StreamEvent
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 0.85
"""Move throughput over the bare endpoint's, at least."""
TARGET_SERVER_CPU = 1.5
"""The game service's CPU per move over the bare server's per request, at most."""
TARGET_REDIS_CPU = 2.0
"""Redis's CPU per move over the events a move appends, over its CPU per bare XADD, at
most."""
TARGET_LAG_SECONDS = 1.0
"""Projection lag p99, below."""
RULES = {"max_moves": 400}
"""Classic Shithead with a move cap, so that games of random players end."""
POLL_SECONDS = 0.005
"""How long a client waits before reading its view again while the other seat is due."""
LAG_SAMPLE_SECONDS = 0.2
"""How often the lag is sampled: each sample reads every partition's feed and group (three
Redis round trips each), a load of the benchmark's own on the Redis it measures."""
READY_SECONDS = 60.0


# The bare endpoint ---------------------------------------------------------------------


def bare_app() -> Litestar:
    """Returns the reference app: POST /xadd appends one entry to a stream (a uvicorn factory).

    Served like the game service: sync handlers in a thread over a sync Redis client.
    """
    client = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    stream = f"{os.environ.get('CARDARENA_NAMESPACE', 'bench:')}bare"

    @post("/xadd", status_code=200, sync_to_thread=True)
    def append(data: dict[str, Any]) -> dict[str, str]:
        """Appends the body's `n` to the stream; returns the entry id."""
        entry = client.xadd(stream, {"n": str(data.get("n", 0))})
        return {"id": entry.decode() if isinstance(entry, bytes) else str(entry)}

    @get("/health", sync_to_thread=False)
    def health() -> dict[str, str]:
        """Returns `ok` while the app answers."""
        return {"status": "ok"}

    return Litestar([append, health])


# Tallies -------------------------------------------------------------------------------


@dataclass
class Tally:
    """What the clients saw: move latencies, answers by kind, acknowledged versions."""

    latencies: list[float] = field(default_factory=list)
    moves: int = 0
    requests: int = 0
    conflicts: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    acked: set[tuple[str, int]] = field(default_factory=set)
    sent: dict[tuple[str, int], float] = field(default_factory=dict)
    """For moves whose answer waits for the next turn: (game, first version) -> when the
    POST was sent (epoch seconds); their latency is read off the log afterwards."""

    def error(self, what: str, detail: str) -> None:
        """Counts an error of kind `what`, keeping the first few details."""
        self.errors[what] += 1
        if len(self.samples) < 5:
            self.samples.append(f"{what}: {detail[:200]}")

    def answer(self, response: httpx.Response) -> bool:
        """Counts `response`; returns whether it is a 2xx."""
        self.requests += 1
        if response.status_code == 409:
            self.conflicts += 1
        elif not response.is_success:
            self.error(str(response.status_code), response.text)
        return response.is_success


class Budget:
    """A shared count of POSTs still to send."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self) -> bool:
        """Returns whether a POST may still be sent, counting it."""
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def percentile(values: list[float], q: float) -> float:
    """Returns the `q` quantile (0..1) of `values`, nearest rank; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


# Processes ------------------------------------------------------------------------------


def free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_ready(urls: list[str], launchers: list[Launcher]) -> None:
    """Waits until every URL answers /health; raises naming a child that died or the URL."""
    deadline = time.monotonic() + READY_SECONDS
    pending = list(urls)
    while pending:
        for launcher in launchers:
            if (dead := launcher.exited()) is not None:
                tail = "\n".join(dead.tail(20))
                raise RuntimeError(f"{dead.name} exited ({dead.process.returncode}):\n{tail}")
        pending = [url for url in pending if not service_ready(url)]
        if time.monotonic() > deadline:
            raise RuntimeError(f"not ready within {READY_SECONDS:.0f}s: {pending}")
        time.sleep(0.25)


def process_stat(pid: int | str) -> tuple[int, float] | None:
    """Returns the parent pid of process `pid` and the CPU seconds (user + system) it used so
    far (/proc/<pid>/stat), None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(launchers: list[Launcher], prefix: str) -> float:
    """Returns the CPU seconds (user + system) used so far by the children named `prefix`*."""
    total = 0.0
    for launcher in launchers:
        for child in launcher.children:
            if child.name.startswith(prefix) and (stat := process_stat(child.pid)) is not None:
                total += stat[1]
    return total


@contextlib.contextmanager
def servers(
    env: Mapping[str, str], commands: list[tuple[str, list[str], int]]
) -> Iterator[list[Launcher]]:
    """Runs each (name, command, port) with CARDARENA_PORT=port while the block runs.

    Each child writes its log lines to a file of a temporary directory itself: relayed
    through this process, the game services' lines (one a move) would cost the clients'
    process CPU in the game phase alone."""
    with (
        tempfile.TemporaryDirectory(prefix="cardarena-load-logs-") as logs,
        contextlib.ExitStack() as stack,
    ):
        launchers = []
        for name, command, port in commands:
            launcher = stack.enter_context(
                Launcher({**env, "CARDARENA_PORT": str(port)}, cwd=ROOT, logs=Path(logs))
            )
            launcher.start(name, command)
            launchers.append(launcher)
        yield launchers


@contextlib.contextmanager
def temporary_database(server_url: str, prefix: str = "bench_load") -> Iterator[str]:
    """Yields the URL of a new database (`<prefix>_<random>`) on `server_url`'s server; drops
    it afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    admin = psycopg.conninfo.make_conninfo(server_url, dbname="postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield psycopg.conninfo.make_conninfo(server_url, dbname=name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


KOMBU_DEADLINES = "_kombu.binding_deadlines"
"""kombu's sorted set of the exchanges whose bindings expire (a Celery worker's remote control
and events: `celery.pidbox`, `reply.celery.pidbox`, `celeryev`), one for every Celery app of
a Redis database."""


def kombu_deadlines(client: redis.Redis) -> set[bytes]:
    """Returns the exchanges in kombu's set of binding deadlines (`KOMBU_DEADLINES`)."""
    return {member for member in client.zrange(KOMBU_DEADLINES, 0, -1) if isinstance(member, bytes)}


def clean_redis(
    redis_url: str, namespace: str, queue: str, deadlines: set[bytes] | None = None
) -> None:
    """Deletes every key of `namespace`, and what kombu's Redis transport keeps for `queue`
    outside it (`_kombu.binding.<queue>`, `_kombu.binding_permanent.<queue>`); with the
    `deadlines` read before the run's workers started, also the binding deadlines the run
    added (another app's stay)."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = [
            *client.scan_iter(match=f"{namespace}*", count=1000),
            f"_kombu.binding.{queue}",
            f"_kombu.binding_permanent.{queue}",
        ]
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
        added = kombu_deadlines(client) - deadlines if deadlines is not None else set()
        if added:
            client.zrem(KOMBU_DEADLINES, *added)
    finally:
        client.close()


class RedisMeter:
    """Reads what Redis spent so far: its CPU seconds (`INFO cpu`, user + system, every
    thread) and its calls per command (`INFO commandstats`)."""

    def __init__(self, redis_url: str) -> None:
        self.client = redis.Redis.from_url(redis_url)

    def read(self) -> tuple[float, Counter[str], Counter[str]]:
        """Returns the CPU seconds, and the calls and the microseconds spent per command so
        far."""
        cpu = self.client.info("cpu")
        stats = self.client.info("commandstats")
        calls: Counter[str] = Counter()
        usec: Counter[str] = Counter()
        for name, value in stats.items():
            if isinstance(value, dict) and "calls" in value:
                calls[name.removeprefix("cmdstat_")] = int(value["calls"])
                usec[name.removeprefix("cmdstat_")] = int(value.get("usec", 0))
        return float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]), calls, usec

    def close(self) -> None:
        """Closes the client."""
        self.client.close()


@dataclass
class Spent:
    """What the stack spent in one kind of phase, summed over its rounds: CPU seconds per
    part (`cpu`, by the names of `Figures.parts`), and Redis's calls and microseconds per
    command."""

    cpu: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: Counter[str] = field(default_factory=Counter)
    usec: Counter[str] = field(default_factory=Counter)
    samples: int = 0
    """Lag samples taken meanwhile (their CPU here is out of "clients": see `metered`)."""
    sampler_cpu: float = 0.0
    """CPU seconds the lag sampler's thread used meanwhile."""


@contextlib.contextmanager
def metered(
    spent: Spent,
    launchers: list[Launcher],
    meter: RedisMeter,
    server: str,
    sampler: LagSampler | None = None,
) -> Iterator[None]:
    """Adds to `spent` what the block costs: the CPU of the children named `server`*
    ("server"), of the projection and the workers, of this process less `sampler`'s thread
    ("clients") and of Redis, Redis's calls per command, and the lag samples taken."""
    parts = {"server": server, "projection": "projection", "workers": "workers"}
    before = {part: cpu_seconds(launchers, prefix) for part, prefix in parts.items()}
    own = time.process_time()
    sampled = (sampler.taken, sampler.cpu) if sampler is not None else (0, 0.0)
    redis_cpu, calls, usec = meter.read()
    yield
    redis_after, calls_after, usec_after = meter.read()
    for part, prefix in parts.items():
        spent.cpu[part] += cpu_seconds(launchers, prefix) - before[part]
    sampler_cpu = sampler.cpu - sampled[1] if sampler is not None else 0.0
    spent.cpu["clients"] += time.process_time() - own - sampler_cpu
    spent.sampler_cpu += sampler_cpu
    spent.samples += sampler.taken - sampled[0] if sampler is not None else 0
    spent.cpu["redis"] += redis_after - redis_cpu
    calls_after.subtract(calls)
    spent.calls.update(+calls_after)
    usec_after.subtract(usec)
    spent.usec.update(+usec_after)


# Phase 1: the bare endpoint ------------------------------------------------------------


async def bare_client(url: str, budget: Budget, tally: Tally) -> None:
    """Posts to the bare endpoint until the budget is spent."""
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        await http.get("/health")
        n = 0
        while budget.take():
            n += 1
            start = time.perf_counter()
            try:
                response = await http.post("/xadd", json={"n": n})
            except httpx.TransportError as error:
                tally.error("transport", repr(error))
                continue
            if tally.answer(response):
                tally.moves += 1
                tally.latencies.append(time.perf_counter() - start)


async def run_bare(
    urls: list[str], clients: int, requests: int, tally: Tally
) -> tuple[float, Tally]:
    """Returns the seconds and tally (counted on in `tally`) of `requests` POSTs by
    `clients` clients over `urls`."""
    budget = Budget(requests)
    start = time.perf_counter()
    await asyncio.gather(*(bare_client(urls[i % len(urls)], budget, tally) for i in range(clients)))
    return time.perf_counter() - start, tally


# Phase 2: the game ---------------------------------------------------------------------


@dataclass
class Player:
    """One external bot: its client (with its token) and its random choices."""

    name: str
    http: httpx.AsyncClient
    rng: random.Random


async def register(host: httpx.AsyncClient, name: str) -> str:
    """Registers the external Shithead bot `name`; returns its token."""
    body = {"name": name, "game": "shithead", "kind": "external", "version": "1"}
    response = await host.post("/v1/bots", json=body)
    response.raise_for_status()
    return str(response.json()["token"])


async def get_view(
    player: Player, url: str, params: dict[str, Any], tally: Tally
) -> dict[str, Any] | None:
    """Returns the JSON body of a GET of `url`; None after a transport error or a non-2xx
    (counted, then a short pause)."""
    try:
        response = await player.http.get(url, params=params, timeout=60)
    except httpx.TransportError as error:
        tally.error("transport", repr(error))
        await asyncio.sleep(0.05)
        return None
    if not tally.answer(response):
        await asyncio.sleep(0.05)
        return None
    view: dict[str, Any] = response.json()
    return view


async def play_seat(
    player: Player, game_id: str, seat: int, budget: Budget, tally: Tally, over: asyncio.Event
) -> None:
    """Plays `seat` of `game_id` by polling its view until the game ends or the budget is
    spent."""
    await play_views(player, game_id, seat, budget, tally, over, "view", {})


async def turn_seat(
    player: Player, game_id: str, seat: int, budget: Budget, tally: Tally, over: asyncio.Event
) -> None:
    """Plays `seat` of `game_id` with the long poll of its turn (`/turn?seat=&wait=`): each
    answer is the seat's view once the game waits for it, answered with one POST."""
    await play_views(player, game_id, seat, budget, tally, over, "turn", {"wait": 30})


async def act_seat(
    player: Player, game_id: str, seat: int, budget: Budget, tally: Tally, over: asyncio.Event
) -> None:
    """Plays `seat` of `game_id` one request a move: each POST asks for the seat's next turn
    (`?wait=`), whose view its answer carries; the long poll of the turn only starts the game
    and follows a 409 or a wait that ran out."""
    turn_url = f"/v1/games/{game_id}/turn"
    view: dict[str, Any] | None = None
    while not over.is_set():
        if view is None:
            view = await get_view(player, turn_url, {"seat": seat, "wait": 30}, tally)
            continue
        if view["status"] != "playing":
            over.set()
            return
        if seat not in view["to_move"] or not view["legal_actions"]:
            view = None
            continue
        if not budget.take():
            over.set()
            return
        view = (await post_move(player, game_id, seat, view, tally, wait=30)).turn


async def play_views(
    player: Player,
    game_id: str,
    seat: int,
    budget: Budget,
    tally: Tally,
    over: asyncio.Event,
    path: str,
    params: dict[str, Any],
) -> None:
    """Reads the seat's view from `/v1/games/{id}/{path}` and posts one of its legal actions
    whenever it has some, until the game ends or the budget is spent; a view without a move
    is read again after POLL_SECONDS."""
    url = f"/v1/games/{game_id}/{path}"
    while not over.is_set():
        view = await get_view(player, url, {"seat": seat, **params}, tally)
        if view is None:
            continue
        if view["status"] != "playing":
            over.set()
            return
        if seat not in view["to_move"] or not view["legal_actions"]:
            await asyncio.sleep(POLL_SECONDS)
            continue
        if not budget.take():
            over.set()
            return
        await post_move(player, game_id, seat, view, tally)


async def stream_seat(
    player: Player, game_id: str, seat: int, budget: Budget, tally: Tally, over: asyncio.Event
) -> None:
    """Plays `seat` of `game_id` from its server-sent events (`/stream?seat=`): each
    `your_turn` carries the seat's view, answered with one POST, until the game ends or the
    budget is spent. A stream that closes early (its lifetime) is opened again."""
    url = f"/v1/games/{game_id}/stream"
    last: int | None = None
    while not over.is_set():
        headers = {} if last is None else {"Last-Event-ID": str(last)}
        try:
            async with player.http.stream(
                "GET", url, params={"seat": seat}, headers=headers, timeout=None
            ) as response:
                if not tally.answer(response):
                    await asyncio.sleep(0.05)
                    continue
                async for message in sse_messages(response):
                    if message.id is not None and message.id.isdigit():
                        last = int(message.id)
                    if over.is_set():
                        return
                    if message.event == "snapshot" and message.data["status"] != "playing":
                        over.set()
                        return
                    if message.event != "your_turn":
                        continue
                    if not budget.take():
                        over.set()
                        return
                    if not (await post_move(player, game_id, seat, message.data, tally)).ok:
                        break  # an error: the stream resumes, and sends the turn again
                else:
                    over.set()
                    return
        except httpx.TransportError as error:
            tally.error("transport", repr(error))
            await asyncio.sleep(0.05)


async def sse_messages(response: httpx.Response) -> AsyncIterator[StreamEvent]:
    """Yields each event of a server-sent event stream as it comes."""
    parser = SseParser()
    async for line in response.aiter_lines():
        if (event := parser.feed(line)) is not None:
            yield event


@dataclass(frozen=True)
class Posted:
    """What a move POST got: accepted or lost a race (409), not an error; and with a wait,
    the seat's next turn."""

    ok: bool
    turn: dict[str, Any] | None = None


async def post_move(
    player: Player,
    game_id: str,
    seat: int,
    view: dict[str, Any],
    tally: Tally,
    wait: int | None = None,
) -> Posted:
    """Posts a random legal action of `view`, noting the versions it wrote and its latency:
    the round trip, or with a `wait` (the answer waits for the next turn) the time from
    sending it to its event's store time, read off the log afterwards."""
    body = {
        "seat": seat,
        "action": player.rng.choice(view["legal_actions"]),
        "expected_version": view["version"],
    }
    headers = {"Idempotency-Key": uuid.uuid4().hex}
    params = {} if wait is None else {"wait": wait}
    sent, start = time.time(), time.perf_counter()
    try:
        response = await player.http.post(
            f"/v1/games/{game_id}/actions",
            json=body,
            headers=headers,
            params=params,
            timeout=60,
        )
    except httpx.TransportError as error:
        tally.error("transport", repr(error))
        return Posted(False)
    elapsed = time.perf_counter() - start
    if tally.answer(response):
        accepted = response.json()
        tally.moves += 1
        first, last = accepted["first_version"], accepted["version"]
        if wait is None:
            tally.latencies.append(elapsed)
        elif not accepted["replayed"]:
            tally.sent[(game_id, first)] = sent
        tally.acked.update((game_id, v) for v in range(first, last + 1))
        return Posted(True, accepted.get("turn"))
    return Posted(response.status_code == 409)


def logged_latencies(
    redis_url: str, namespace: str, sent: Mapping[tuple[str, int], float]
) -> list[float]:
    """Returns, for each move sent at a known time, the seconds until its first event's
    store time (`recorded_at`, ms: the move's acknowledgement, to the millisecond)."""
    client = redis.Redis.from_url(redis_url)
    store = RedisEventStore(client, namespace)
    latencies = []
    try:
        for game_id in {game for game, _ in sent}:
            for event in store.read(game_id):
                if (at := sent.get((game_id, event.version))) is not None:
                    latencies.append(max(0.0, event.recorded_at / 1000 - at))
    finally:
        client.close()
    return latencies


async def table(
    host: httpx.AsyncClient,
    pair: tuple[Player, Player],
    budget: Budget,
    tally: Tally,
    games: list[str],
    mode: str,
) -> None:
    """Creates games for `pair` and has both play them, one after another, until the budget
    is spent."""
    while budget.left > 0:
        seats = [{"kind": "external", "bot": p.name, "version": "1"} for p in pair]
        body = {"game": "shithead", "seats": seats, "ruleset": RULES, "seed": secrets.token_hex(4)}
        response = await host.post(
            "/v1/games", json=body, headers={"Idempotency-Key": uuid.uuid4().hex}
        )
        if not tally.answer(response):
            await asyncio.sleep(0.1)
            continue
        game_id = str(response.json()["game_id"])
        games.append(game_id)
        over = asyncio.Event()
        play = {"act": act_seat, "stream": stream_seat, "turn": turn_seat, "poll": play_seat}[mode]
        tasks = [
            asyncio.create_task(play(p, game_id, seat, budget, tally, over))
            for seat, p in enumerate(pair)
        ]
        await over.wait()  # the game ended or the budget is spent: the other seat stops too
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def run_game(
    urls: list[str], admin_key: str, clients: int, moves: int, mode: str, tally: Tally
) -> tuple[float, Tally, list[str]]:
    """Returns the seconds, tally (counted on in `tally`) and game ids of `moves` move POSTs
    by `clients` new bots."""
    budget = Budget(moves)
    games: list[str] = []
    auth = {"Authorization": f"Bearer {admin_key}"}
    async with contextlib.AsyncExitStack() as stack:
        hosts = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=u, headers=auth, timeout=30))
            for u in urls
        ]
        run = uuid.uuid4().hex[:6]
        players = []
        for i in range(clients):
            name = f"load-{run}-{i}"
            token = await register(hosts[0], name)
            http = httpx.AsyncClient(
                base_url=urls[i % len(urls)],
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            players.append(Player(name, await stack.enter_async_context(http), random.Random(i)))
        pairs = [(players[i], players[i + 1]) for i in range(0, clients - 1, 2)]
        start = time.perf_counter()
        await asyncio.gather(
            *(
                table(hosts[i % len(hosts)], pair, budget, tally, games, mode)
                for i, pair in enumerate(pairs)
            )
        )
        seconds = time.perf_counter() - start
    return seconds, tally, games


class LagSampler:
    """Samples the projection's lag in seconds every LAG_SAMPLE_SECONDS in a thread while
    entered."""

    def __init__(
        self, redis_url: str, namespace: str, group: str, database_url: str, partitions: int = 16
    ) -> None:
        self.client = redis.Redis.from_url(redis_url)
        self.feed = [feed_key(namespace, p) for p in range(partitions)]
        self.group = group
        self.database_url = database_url
        self.samples: list[float] = []
        self.taken = 0
        """Samples taken (lag read or not)."""
        self.cpu = 0.0
        """CPU seconds the sampling thread used, over every time it ran."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: psycopg.Connection[Any] | None = None

    def lag(self) -> tuple[int, float] | None:
        """Returns (entries, seconds) behind, None while the feed or its group is missing.
        One database connection serves every sample (a new one would be a new server
        process each time)."""
        try:
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(self.database_url, autocommit=True, connect_timeout=2)
            return projection_lag(self.client, self.feed, self.group, self._conn)
        except psycopg.Error:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            return None
        except redis.ResponseError:
            return None

    def close(self) -> None:
        """Closes the database connection and the Redis client."""
        if self._conn is not None:
            self._conn.close()
        self.client.close()

    def _run(self) -> None:
        start, spent = time.thread_time(), self.cpu
        while not self._stop.wait(LAG_SAMPLE_SECONDS):
            self.taken += 1
            if (lag := self.lag()) is not None:
                self.samples.append(lag[1])
            self.cpu = spent + time.thread_time() - start

    def __enter__(self) -> LagSampler:
        """Samples until the block ends (again each time: the samples add up)."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def wait_caught_up(self, seconds: float = 120.0) -> float | None:
        """Waits until nothing is left to project; returns how long it took, None on timeout."""
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            lag = self.lag()
            if lag is not None and lag[0] == 0 and lag[1] == 0.0:
                return time.monotonic() - start
            time.sleep(0.1)
        return None


def redis_per_sample(sampler: LagSampler, meter: RedisMeter, seconds: float = 1.5) -> float:
    """Returns Redis's CPU seconds per lag sample, measured with the stack idle: its CPU
    over `seconds` with the sampler running, less its CPU over `seconds` without (the
    stack's own idle work). The game phases take the sampler's share out of Redis's CPU per
    move with it: the sampler is the benchmark's, not a move's (under load each of its reads
    costs Redis more, so this takes out less than its whole share)."""
    before, _, _ = meter.read()
    time.sleep(seconds)
    idle, _, _ = meter.read()
    taken = sampler.taken
    with sampler:
        time.sleep(seconds)
    after, _, _ = meter.read()
    samples = sampler.taken - taken
    sampler.samples.clear()
    if samples <= 0:
        return 0.0
    return max(0.0, (after - idle) - (idle - before)) / samples


def missing_from_archive(database_url: str, acked: set[tuple[str, int]]) -> int:
    """Returns how many acknowledged (game, version) pairs the archive lacks."""
    with psycopg.connect(database_url) as conn:
        rows = conn.execute("SELECT game_id, version FROM events").fetchall()
    return len(acked - {(str(g), int(v)) for g, v in rows})


# The run -------------------------------------------------------------------------------


@dataclass
class Figures:
    """The measured figures of one run."""

    bare_seconds: float
    bare: Tally
    game_seconds: float
    game: Tally
    games: int
    lag_samples: list[float]
    caught_up: float | None
    missing: int
    bare_spent: Spent
    """What the bare phases cost ("server": the bare processes)."""
    game_spent: Spent
    """What the game phases cost ("server": the game-service processes)."""
    redis_per_sample: float = 0.0
    """Redis's CPU seconds per lag sample (`redis_per_sample`), taken out of a move's."""

    parts = ("server", "redis", "projection", "workers", "clients")
    """The parts of the stack whose CPU is measured."""

    @property
    def bare_rate(self) -> float:
        """Returns the bare endpoint's requests per second."""
        return self.bare.moves / self.bare_seconds

    @property
    def move_rate(self) -> float:
        """Returns accepted moves per second."""
        return self.game.moves / self.game_seconds

    @property
    def events_per_move(self) -> float:
        """Returns the events an accepted move appended, on average."""
        return len(self.game.acked) / max(1, self.game.moves)

    def per_bare(self, part: str) -> float:
        """Returns the CPU seconds `part` spent per bare request."""
        return self.bare_spent.cpu[part] / max(1, self.bare.moves)

    def per_move(self, part: str) -> float:
        """Returns the CPU seconds `part` spent per accepted move (Redis: less the lag
        sampler's reads, see `sampler_redis`)."""
        spent = self.game_spent.cpu[part]
        if part == "redis":
            spent = max(0.0, spent - self.sampler_redis)
        return spent / max(1, self.game.moves)

    @property
    def sampler_redis(self) -> float:
        """Returns Redis's CPU seconds the lag sampler's reads cost in the game phases, as
        measured with the stack idle."""
        return self.game_spent.samples * self.redis_per_sample

    @property
    def errors(self) -> int:
        """Returns the errors of both phases."""
        return sum(self.bare.errors.values()) + sum(self.game.errors.values())


def measure(args: argparse.Namespace, redis_url: str, database_url: str) -> Figures:
    """Runs both phases against fresh processes; returns the figures."""
    namespace = f"bench-load:{uuid.uuid4().hex[:8]}:"
    queue = f"{namespace}bots"
    admin_key = os.environ.get("CARDARENA_ADMIN_KEY") or secrets.token_hex(16)
    heartbeats = tempfile.mkdtemp(prefix="cardarena-load-")
    env = {
        **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", 0),
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": queue,
        "CARDARENA_ADMIN_KEY": admin_key,
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_MAX_GAMES_PER_BOT": "0",
        "CARDARENA_HEARTBEAT_DIR": heartbeats,
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
        "CARDARENA_LOG_JSON": "false",
    }
    bare_seconds, bare_tally, bare_spent = 0.0, Tally(), Spent()
    game_seconds, game_tally, games, game_spent = 0.0, Tally(), [], Spent()
    meter = RedisMeter(redis_url)
    try:
        bare_ports = [free_port() for _ in range(args.processes)]
        bare_urls = [f"http://127.0.0.1:{p}" for p in bare_ports]
        bare = [sys.executable, "-m", "uvicorn", "bench.load:bare_app", "--factory"]
        bare += ["--host", "127.0.0.1", "--log-level", "warning"]
        commands = [(f"bare-{i}", [*bare, "--port", str(p)], p) for i, p in enumerate(bare_ports)]
        migrate(database_url)
        ports = [free_port() for _ in range(args.processes)]
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        commands += [(f"game-{i}", cardarena("serve", "game"), p) for i, p in enumerate(ports)]
        commands += [
            ("projection", cardarena("serve", "projection"), 0),
            ("workers", cardarena("serve", "workers", "--concurrency", "1"), 0),
        ]
        sampler = LagSampler(redis_url, namespace, "projection", database_url)
        with servers(env, commands) as launchers:
            wait_ready([*bare_urls, *urls], launchers)
            per_sample = redis_per_sample(sampler, meter)
            for round_no in range(args.rounds):
                share = args.moves // args.rounds + (round_no < args.moves % args.rounds)
                with metered(bare_spent, launchers, meter, "bare-"):
                    seconds, _ = asyncio.run(run_bare(bare_urls, args.clients, share, bare_tally))
                bare_seconds += seconds
                with metered(game_spent, launchers, meter, "game-", sampler), sampler:
                    seconds, _, played = asyncio.run(
                        run_game(urls, admin_key, args.clients, share, args.mode, game_tally)
                    )
                game_seconds += seconds
                games += played
            caught_up = sampler.wait_caught_up()
            sampler.close()
            game_tally.latencies += logged_latencies(redis_url, namespace, game_tally.sent)
            missing = missing_from_archive(database_url, game_tally.acked)
    finally:
        meter.close()
        clean_redis(redis_url, namespace, queue)
        with contextlib.suppress(OSError):
            for name in os.listdir(heartbeats):
                os.remove(os.path.join(heartbeats, name))
            os.rmdir(heartbeats)
    return Figures(
        bare_seconds,
        bare_tally,
        game_seconds,
        game_tally,
        len(games),
        sampler.samples,
        caught_up,
        missing,
        bare_spent,
        game_spent,
        per_sample,
    )


def report(figures: Figures, args: argparse.Namespace) -> None:
    """Prints the figures as tables and one verdict line per target."""
    f, game = figures, figures.game
    ms, us = 1000.0, 1_000_000.0
    table = Table(
        title=f"Load: {args.clients} clients, {args.processes} server processes, "
        f"{args.moves} POSTs per phase"
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    ratio = f.move_rate / f.bare_rate if f.bare_rate else 0.0
    lag_p99 = percentile(f.lag_samples, 0.99)
    server_ratio = f.per_move("server") / f.per_bare("server") if f.per_bare("server") else 0.0
    redis_per_event = f.per_move("redis") / max(1e-9, f.events_per_move)
    redis_ratio = redis_per_event / f.per_bare("redis") if f.per_bare("redis") else 0.0
    rows = [
        ("bare XADD endpoint", f"{f.bare_rate:.1f} requests/s"),
        ("bare p50 / p99 latency", _pair(f.bare.latencies, ms)),
        ("moves accepted", f"{game.moves} in {f.games} games, {f.game_seconds:.1f} s"),
        ("moves per second", f"{f.move_rate:.1f}"),
        ("move p50 / p99 latency", _pair(game.latencies, ms)),
        (f"requests per move ({args.mode})", f"{game.requests / max(1, game.moves):.2f}"),
        ("events per move", f"{f.events_per_move:.2f}"),
        ("ratio moves/s : bare requests/s", f"{ratio:.2f}"),
        (
            "Redis CPU per move / per event / per bare XADD",
            f"{f.per_move('redis') * us:.0f} / {redis_per_event * us:.0f} / "
            f"{f.per_bare('redis') * us:.0f} µs",
        ),
        (
            "lag sampler's Redis CPU taken out of a move's",
            f"{f.sampler_redis / max(1, game.moves) * us:.0f} µs ({f.game_spent.samples}"
            f" samples, {f.redis_per_sample * us:.0f} µs each, measured idle)",
        ),
        (
            "lag sampler's CPU in this process (not in the clients')",
            f"{f.game_spent.sampler_cpu / max(1, game.moves) * ms:.3f} ms per move",
        ),
        (
            "projection lag p50 / p99",
            f"{percentile(f.lag_samples, 0.5) * ms:.0f} / "
            f"{lag_p99 * ms:.0f} ms ({len(f.lag_samples)} samples)",
        ),
        (
            "projection caught up after the run",
            "no" if f.caught_up is None else f"{f.caught_up:.1f} s",
        ),
        ("acknowledged moves missing from archive", str(f.missing)),
        ("409 conflicts", str(game.conflicts + f.bare.conflicts)),
        ("errors (non-2xx but 409, transport)", str(f.errors)),
    ]
    for name, value in rows:
        table.add_row(name, value)
    console = Console()
    console.print(table)
    console.print(_cpu_table(f))
    console.print(_commands_table(f))
    for sample in [*f.bare.samples, *game.samples]:
        print(f"  error: {sample}")
    verdicts = [
        (
            f"game service CPU per move {f.per_move('server') * ms:.2f} ms ="
            f" {server_ratio:.2f} x bare request's {f.per_bare('server') * ms:.2f} ms",
            f"target <= {TARGET_SERVER_CPU}",
            0 < server_ratio <= TARGET_SERVER_CPU,
        ),
        (f"throughput ratio {ratio:.2f}", f"target >= {TARGET_RATIO}", ratio >= TARGET_RATIO),
        (
            f"Redis CPU per move per event {redis_per_event * us:.0f} µs ="
            f" {redis_ratio:.2f} x per bare XADD {f.per_bare('redis') * us:.0f} µs",
            f"target <= {TARGET_REDIS_CPU}",
            0 < redis_ratio <= TARGET_REDIS_CPU,
        ),
        (
            f"projection lag p99 {lag_p99:.3f} s",
            f"target < {TARGET_LAG_SECONDS:.0f} s",
            lag_p99 < TARGET_LAG_SECONDS and f.caught_up is not None,
        ),
        (f"errors {f.errors}", "target 0", f.errors == 0),
        (f"missing acknowledged moves {f.missing}", "target 0", f.missing == 0),
    ]
    for what, target, passed in verdicts:
        print(f"{what}, {target}: {'PASS' if passed else 'MISS'}")


def _cpu_table(f: Figures) -> Table:
    """Returns the CPU each part of the stack spent per bare request and per move."""
    ms = 1000.0
    table = Table(title="CPU per bare request / per move, by part of the stack")
    for name in ("part", "bare request", "move", "move : bare"):
        table.add_column(name, justify="left" if name == "part" else "right")
    names = {
        "server": "server processes (bare app / game service)",
        "redis": "Redis (less the lag sampler's reads)",
        "projection": "projection",
        "workers": "workers",
        "clients": "clients (this process, less the lag sampler)",
    }
    for part in (*f.parts, "total"):
        bare = sum(map(f.per_bare, f.parts)) if part == "total" else f.per_bare(part)
        move = sum(map(f.per_move, f.parts)) if part == "total" else f.per_move(part)
        table.add_row(
            names.get(part, part),
            f"{bare * ms:.3f} ms",
            f"{move * ms:.3f} ms",
            f"{move / bare:.2f}" if bare > 0 else "-",
        )
    return table


def _commands_table(f: Figures, top: int = 16) -> Table:
    """Returns Redis's commands per bare request and per move (the `top` most called in
    the game phases, then the rest), its functions' calls included, with the time Redis
    spent running them (`INFO commandstats` usec: a function's time includes its calls';
    reading requests and writing replies is not in it)."""
    table = Table(
        title="Redis commands per bare request / per move (functions' calls included), and their µs"
    )
    for name in ("command", "bare request", "move", "µs per bare request", "µs per move"):
        table.add_column(name, justify="left" if name == "command" else "right")
    bare, game = f.bare_spent, f.game_spent
    requests, moves = max(1, f.bare.moves), max(1, f.game.moves)
    shown = [name for name, _ in game.calls.most_common(top)]
    rest = [name for name in {*bare.calls, *game.calls} if name not in shown]
    for label, names in (*((name, [name]) for name in shown), ("(the rest)", rest)):
        table.add_row(
            label,
            f"{sum(bare.calls[n] for n in names) / requests:.2f}",
            f"{sum(game.calls[n] for n in names) / moves:.2f}",
            f"{sum(bare.usec[n] for n in names) / requests:.1f}",
            f"{sum(game.usec[n] for n in names) / moves:.1f}",
        )
    table.add_row(
        "all",
        f"{sum(bare.calls.values()) / requests:.2f}",
        f"{sum(game.calls.values()) / moves:.2f}",
        "",
        "",
    )
    return table


def _pair(latencies: list[float], scale: float) -> str:
    """Returns the p50 / p99 of `latencies` in milliseconds."""
    p50, p99 = percentile(latencies, 0.5) * scale, percentile(latencies, 0.99) * scale
    return f"{p50:.1f} / {p99:.1f} ms"


def main() -> None:
    """Parses the options, runs both phases on a temporary database and prints the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--moves", type=int, default=3000, help="POSTs per phase")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (even)")
    parser.add_argument("--processes", type=int, default=2, help="server processes per phase")
    parser.add_argument("--quick", action="store_true", help="a small run (a smoke test)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="bare and game phases alternate this often (a busy machine's drift hits both)",
    )
    parser.add_argument(
        "--mode",
        choices=["act", "turn", "stream", "poll"],
        default="act",
        help="act: each move's answer carries the seat's next turn (one request a move); turn:"
        " the long poll of each seat's turn, then a POST; stream: each seat's server-sent"
        " events; poll: GET the view in a loop",
    )
    args = parser.parse_args()
    if args.quick:
        args.moves, args.clients, args.processes = 200, 4, 2
    if args.clients < 2 or args.processes < 1 or args.moves < args.rounds or args.rounds < 1:
        parser.error("needs --clients >= 2, --processes >= 1, --rounds >= 1, --moves >= rounds")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    with temporary_database(server) as database_url:
        figures = measure(args, redis_url, database_url)
    report(figures, args)


if __name__ == "__main__":
    main()
