"""Ladder: simulated external bots on a ladder, paired by beat's task, on the whole stack.

Starts `--processes` game-service processes (Redis store, Celery dispatch, open
registration, rate limits off), a Celery worker, beat (its `cardarena.pair_ladders` every
`--pair-seconds`) and the projection into a temporary PostgreSQL database (the pairing's
ratings come from its views). The host opens a two-seat ladder of `--game` (autobus: its
random games take some 120 decisions; Shithead is played with a cap of `SHITHEAD_MAX_MOVES`
moves). `--bots` simulated bots (asyncio + httpx, in this process) each make an account of
their own (`POST /v1/accounts`), register one external bot with its key, join the ladder
with the bot's token and play every turn they are given through the public API (the long
poll `GET /v1/bots/me/turns?wait=` and a random legal action POSTed at the turn's version)
for `--seconds` (and until seated once); then they leave the ladder and play their last games
out. `--quick` (a smoke test, `tests/e2e/test_bench_ladder.py`): 12 bots for 6 s on one
game-service process.

Afterwards the ladder's stream and its games' streams are read back, and every figure comes
from their store times (`recorded_at`), never from a client's clock:

- free -> seated: for each time a bot waited, from "free" to "seated". Free is the store
  time of its `BotQueued`, or of the last event of its previous ladder game (its game
  stream's `GameFinished`; for a game that never started, the `LadderGameEnded` that says
  so); seated is the store time of the `LadderPaired` that seats it. A wait still open when
  the bot left is not a wait (counted apart). p50 and p99.
- the share of a bot's games its most frequent opponent took: median and max over the bots
  that played, and how many of those with 4 games or more exceed the diversity share (0.25).
- the pairing's CPU per game: the worker's and beat's process CPU (with only external bots
  the worker runs nothing but the pairing and, per game, one bot-turns task that finds no
  platform seat; the reconciliation is off) over the ladder games paired; beside it the game
  services' own CPU per game, and Redis's (`INFO cpu`: every client of that Redis counts).
  Worker and beat idle (measured with the ladder open and empty before the bots come) is
  printed too.
- the caps: replaying `LadderPaired`/`LadderGameEnded`, no bot ever sat in more than
  `CARDARENA_LADDER_MAX_CONCURRENT` games at once, nor began more than the daily cap in one
  UTC day; and every game paired was created and has ended.

Prints the figures and verdicts; exit code 0 whatever the verdicts (the machine is noisy).

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.ladder [--bots 100] [--seconds 120]
        [--game autobus|shithead] [--pair-seconds 1] [--cooldown 300] [--processes 2] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import secrets
import statistics
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import httpx
import redis
from rich.console import Console
from rich.table import Table

from bench.load import (
    RedisMeter,
    clean_redis,
    free_port,
    percentile,
    servers,
    temporary_database,
    wait_ready,
)
from bench.tournament import tree_cpu
from services.cli.dev import Launcher, cardarena, stack_environment
from services.ops.migrate import migrate
from shared.app.loading import load
from shared.errors import UnknownGame
from shared.model.ladder_events import (
    CODEC,
    BotLeft,
    BotQueued,
    LadderGameEnded,
    LadderPaired,
    stream_id,
)
from shared.store.redis_store import RedisEventStore

SHITHEAD_MAX_MOVES = 80
"""Shithead's move cap on the ladder: random players' games end (by places) this soon."""
DIVERSITY_SHARE = 0.25
"""The share of a bot's games one opponent may take (`shared.model.ladder.Rules`)."""
DIVERSITY_FROM_GAMES = 4
"""Bots with at least this many games are held to the diversity share."""
MAX_CONCURRENT = 1
MAX_DAILY = 200
DRAIN_SECONDS = 120.0
"""How long the bots play on after leaving, for their last games to end."""
PARTS = ("game", "workers", "beat", "projection", "redis", "clients")


# The bots ------------------------------------------------------------------------------


@dataclass
class Tally:
    """What the bots saw: moves, answers by kind, errors."""

    moves: int = 0
    requests: int = 0
    conflicts: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)

    def answer(self, response: httpx.Response) -> bool:
        """Counts `response`; returns whether it is a 2xx (a 409 is counted apart)."""
        self.requests += 1
        if response.status_code == 409:
            self.conflicts += 1
        elif not response.is_success:
            self.error(str(response.status_code), response.text)
        return response.is_success

    def error(self, what: str, detail: str) -> None:
        """Counts an error of kind `what`, keeping the first few details."""
        self.errors[what] += 1
        if len(self.samples) < 5:
            self.samples.append(f"{what}: {detail[:200]}")


@dataclass
class Bot:
    """One simulated external bot: its name, client (with its token once registered) and
    random choices."""

    name: str
    http: httpx.AsyncClient
    rng: random.Random
    key: str = ""


async def make_bot(url: str, run: str, index: int, game: str, tally: Tally) -> Bot:
    """Makes an account, registers its external bot; returns the bot with its token set."""
    account = f"lb{run}a{index}"
    http = httpx.AsyncClient(base_url=url, timeout=30)
    made = await http.post("/v1/accounts", json={"name": account})
    tally.answer(made)
    made.raise_for_status()
    key = str(made.json()["key"])
    name = f"lb{run}b{index}"
    body = {"name": name, "game": game, "kind": "external", "version": "1"}
    registered = await http.post("/v1/bots", json=body, headers={"Authorization": f"Bearer {key}"})
    tally.answer(registered)
    registered.raise_for_status()
    http.headers["Authorization"] = f"Bearer {registered.json()['token']}"
    return Bot(name, http, random.Random(index), f"{name}@1")


async def play(
    bot: Bot, ladder_id: str, until: float, stop: asyncio.Event, left: list[str], tally: Tally
) -> None:
    """Joins the ladder, plays every turn it is given until `until` (monotonic) and it was
    seated once (at most DRAIN_SECONDS / 2 longer), leaves, and plays on until `stop` is set
    (its last game ends). A bot that fails counts as left."""
    queue = f"/v1/ladders/{ladder_id}/queue"
    queued = False
    try:
        while not queued and not stop.is_set() and time.monotonic() < until:
            queued = await request(bot, "POST", queue, tally)
        if not queued:
            left.append(bot.key)
        seated = False
        while not stop.is_set():
            due = seated or time.monotonic() >= until + DRAIN_SECONDS / 2
            if queued and due and time.monotonic() >= until:
                queued = not await request(bot, "DELETE", queue, tally)
                if not queued:
                    left.append(bot.key)
            wait = 2 if not queued else max(1, min(10, round(until - time.monotonic())))
            try:
                response = await bot.http.get(
                    "/v1/bots/me/turns", params={"wait": wait}, timeout=70
                )
            except httpx.TransportError as error:
                tally.error("transport", repr(error))
                await asyncio.sleep(0.1)
                continue
            if not tally.answer(response):
                await asyncio.sleep(0.1)
                continue
            for turn in response.json()["turns"]:
                seated = True
                await move(bot, turn, tally)
    except Exception:
        if bot.key not in left:
            left.append(bot.key)
        raise


async def request(bot: Bot, method: str, url: str, tally: Tally) -> bool:
    """Sends one request without a body; returns whether it succeeded (a transport error or a
    non-2xx is counted, then a short pause)."""
    try:
        response = await bot.http.request(method, url)
    except httpx.TransportError as error:
        tally.error("transport", repr(error))
        await asyncio.sleep(0.1)
        return False
    if not tally.answer(response):
        await asyncio.sleep(0.1)
        return False
    return True


async def move(bot: Bot, turn: dict[str, Any], tally: Tally) -> None:
    """Posts a random legal action of `turn` at its version."""
    if turn.get("status", "playing") != "playing" or not turn.get("legal_actions"):
        return
    body = {
        "seat": turn["seat"],
        "action": bot.rng.choice(turn["legal_actions"]),
        "expected_version": turn["version"],
    }
    try:
        response = await bot.http.post(
            f"/v1/games/{turn['game_id']}/actions",
            json=body,
            headers={"Idempotency-Key": uuid.uuid4().hex},
        )
    except httpx.TransportError as error:
        tally.error("transport", repr(error))
        return
    if tally.answer(response):
        tally.moves += 1


async def drain(host: httpx.AsyncClient, ladder_id: str, bots: int, left: list[str]) -> float:
    """Waits until every bot left and the ladder has no live game (the pairing recorded the
    last ones' ends), at most DRAIN_SECONDS; returns how long it took."""
    start = time.monotonic()
    while time.monotonic() - start < DRAIN_SECONDS:
        if len(left) >= bots:
            answer = await host.get(f"/v1/ladders/{ladder_id}")
            if answer.is_success and not answer.json()["live"]:
                break
        await asyncio.sleep(0.5)
    return time.monotonic() - start


async def open_ladder(url: str, admin_key: str, game: str) -> str:
    """Opens a two-seat ladder of `game` as the host; returns its id."""
    ruleset = {"max_moves": SHITHEAD_MAX_MOVES} if game == "shithead" else None
    auth = {"Authorization": f"Bearer {admin_key}"}
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=30) as host:
        body = {"game": game, "table_size": 2, "ruleset": ruleset}
        response = await host.post("/v1/ladders", json=body)
        response.raise_for_status()
        return str(response.json()["ladder_id"])


async def make_bots(urls: list[str], count: int, game: str, tally: Tally) -> list[Bot]:
    """Makes `count` bots, each with its own account, spread over `urls`."""
    run = uuid.uuid4().hex[:6]
    made: list[Bot] = []
    for start in range(0, count, 10):  # ten at a time: registration is not what is measured
        made += await asyncio.gather(
            *(
                make_bot(urls[i % len(urls)], run, i, game, tally)
                for i in range(start, min(count, start + 10))
            )
        )
    return made


async def run_bots(
    bots: list[Bot], url: str, admin_key: str, ladder_id: str, seconds: float, tally: Tally
) -> float:
    """Has every bot join, play for `seconds`, leave and play its last game out; returns
    how long the last games took to end after the bots left."""
    stop = asyncio.Event()
    left: list[str] = []
    until = time.monotonic() + seconds
    auth = {"Authorization": f"Bearer {admin_key}"}
    tasks = [asyncio.create_task(play(b, ladder_id, until, stop, left, tally)) for b in bots]
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=30) as host:
        await asyncio.sleep(seconds)
        drained = await drain(host, ladder_id, len(bots), left)
    stop.set()
    for outcome in await asyncio.gather(*tasks, return_exceptions=True):
        if isinstance(outcome, BaseException):
            tally.error("bot", repr(outcome))
    for bot in bots:
        await bot.http.aclose()
    return drained


# Reading the log back ------------------------------------------------------------------


@dataclass
class Replay:
    """What the ladder's log says: the waits, each bot's opponents, the caps' peaks and the
    games' fates."""

    waits: list[float] = field(default_factory=list)
    open_waits: int = 0
    """Waits still open when the bot left (never seated again)."""
    opponents: defaultdict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    games: int = 0
    peak_concurrent: int = 0
    peak_daily: int = 0
    not_created: list[str] = field(default_factory=list)
    not_ended: list[str] = field(default_factory=list)
    never_seated: int = 0
    queued: int = 0


def replay(store: RedisEventStore, ladder_id: str) -> Replay:
    """Replays the ladder's stream (see the module docstring for what it measures)."""
    recorded = store.read(stream_id(ladder_id))
    events = CODEC.decode_all(recorded)
    found = Replay()
    free: dict[str, float] = {}
    live: Counter[str] = Counter()
    daily: Counter[tuple[str, str]] = Counter()
    tables: dict[str, list[str]] = {}
    seated: set[str] = set()
    queued: set[str] = set()
    for entry, event in zip(recorded, events, strict=True):
        at = entry.recorded_at / 1000
        match event:
            case BotQueued(bot=bot):
                queued.add(bot)
                if live[bot] < MAX_CONCURRENT:
                    free.setdefault(bot, at)
            case BotLeft(bot=bot):
                queued.discard(bot)
                if free.pop(bot, None) is not None:
                    found.open_waits += 1
            case LadderPaired(tables=paired, game_ids=ids, at=stamp):
                day = stamp[:10]
                for table, game_id in zip(paired, ids, strict=True):
                    tables[game_id] = table
                    found.games += 1
                    for bot in table:
                        seated.add(bot)
                        if (since := free.pop(bot, None)) is not None:
                            found.waits.append(max(0.0, at - since))
                        live[bot] += 1
                        daily[(bot, day)] += 1
                        found.peak_concurrent = max(found.peak_concurrent, live[bot])
                        found.peak_daily = max(found.peak_daily, daily[(bot, day)])
                        found.opponents[bot].update(b for b in table if b != bot)
            case LadderGameEnded(game_id=game_id):
                ended_at = _last_event_at(store, game_id) or at
                for bot in tables.get(game_id, []):
                    live[bot] -= 1
                    if bot in queued and live[bot] < MAX_CONCURRENT:
                        free.setdefault(bot, ended_at)
            case _:
                pass
    for game_id in tables:
        try:
            loaded = load(store, game_id)
        except UnknownGame:
            found.not_created.append(game_id)
            continue
        if not loaded.spec.is_over(loaded.state):
            found.not_ended.append(game_id)
    found.queued = len({e.bot for e in events if isinstance(e, BotQueued)})
    found.never_seated = found.queued - len(seated)
    return found


def _last_event_at(store: RedisEventStore, game_id: str) -> float | None:
    """Returns the store time (seconds) of a game's last event; None when it has none."""
    version = store.version(game_id)
    if version <= 0:
        return None
    return store.read(game_id, version - 1)[-1].recorded_at / 1000


# The run -------------------------------------------------------------------------------


@dataclass
class Figures:
    """The measured figures of one run."""

    seconds: float
    drained: float
    tally: Tally
    found: Replay
    cpu: dict[str, float]
    idle: dict[str, float]
    """CPU seconds per second of worker and beat with the ladder open and empty."""


def measure(args: argparse.Namespace, redis_url: str, database_url: str) -> Figures:
    """Runs the stack and the bots; returns the figures."""
    namespace = f"bench-ladder:{uuid.uuid4().hex[:8]}:"
    queue = f"{namespace}bots"
    admin_key = os.environ.get("CARDARENA_ADMIN_KEY") or secrets.token_hex(16)
    heartbeats = tempfile.mkdtemp(prefix="cardarena-ladder-")
    env = {
        **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", 0),
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": queue,
        "CARDARENA_ADMIN_KEY": admin_key,
        "CARDARENA_REGISTRATION": "open",
        "CARDARENA_REGISTRATION_RATE_LIMIT": "0",
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_TURN_RATE_LIMIT": "0",
        "CARDARENA_MAX_GAMES_PER_BOT": "0",
        "CARDARENA_LADDER_PAIR_SECONDS": str(args.pair_seconds),
        "CARDARENA_LADDER_MAX_CONCURRENT": str(MAX_CONCURRENT),
        "CARDARENA_LADDER_MAX_DAILY": str(MAX_DAILY),
        "CARDARENA_LADDER_COOLDOWN_SECONDS": str(args.cooldown),
        "CARDARENA_RECONCILE_SECONDS": "0",
        "CARDARENA_HEARTBEAT_DIR": heartbeats,
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
        "CARDARENA_LOG_JSON": "false",
    }
    meter = RedisMeter(redis_url)
    client = redis.Redis.from_url(redis_url)
    tally = Tally()
    try:
        migrate(database_url)
        ports = [free_port() for _ in range(args.processes)]
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        commands = [(f"game-{i}", cardarena("serve", "game"), p) for i, p in enumerate(ports)]
        commands += [
            ("projection", cardarena("serve", "projection"), 0),
            ("workers", cardarena("serve", "workers", "--concurrency", "1"), 0),
            ("beat", cardarena("serve", "beat", "--max-interval", "1"), 0),
        ]
        with servers(env, commands) as launchers:
            wait_ready(urls, launchers)
            seconds, drained, cpu, idle, ladder_id = asyncio.run(
                session(args, urls, admin_key, launchers, meter, tally)
            )
            found = replay(RedisEventStore(client, namespace), ladder_id)
    finally:
        meter.close()
        client.close()
        clean_redis(redis_url, namespace, queue)
        with contextlib.suppress(OSError):
            for name in os.listdir(heartbeats):
                os.remove(os.path.join(heartbeats, name))
            os.rmdir(heartbeats)
    return Figures(seconds, drained, tally, found, cpu, idle)


async def session(
    args: argparse.Namespace,
    urls: list[str],
    admin_key: str,
    launchers: list[Launcher],
    meter: RedisMeter,
    tally: Tally,
) -> tuple[float, float, dict[str, float], dict[str, float], str]:
    """Opens the ladder, makes the bots, samples the idle CPU, and runs the bots; returns the
    run's seconds, the seconds its last games took to end, the CPU of each part over the
    run, the idle CPU and the ladder's id."""
    ladder_id = await open_ladder(urls[0], admin_key, args.game)
    bots = await make_bots(urls, args.bots, args.game, tally)
    before = {p: cpu_seconds(launchers, p) for p in ("workers", "beat")}
    await asyncio.sleep(args.idle_seconds)
    idle = {p: (cpu_seconds(launchers, p) - before[p]) / args.idle_seconds for p in before}
    started = spent(launchers, meter)
    start = time.monotonic()
    drained = await run_bots(bots, urls[0], admin_key, ladder_id, args.seconds, tally)
    seconds = time.monotonic() - start
    ended = spent(launchers, meter)
    cpu = {part: ended[part] - started[part] for part in PARTS}
    return seconds, drained, cpu, idle, ladder_id


def cpu_seconds(launchers: list[Launcher], prefix: str) -> float:
    """Returns the CPU seconds used so far by the children named `prefix`* and their live
    descendants (a Celery worker's pool processes)."""
    return sum(
        tree_cpu(child.pid)
        for launcher in launchers
        for child in launcher.children
        if child.name.startswith(prefix)
    )


def spent(launchers: list[Launcher], meter: RedisMeter) -> dict[str, float]:
    """Returns the CPU seconds each part of the stack used so far."""
    parts = {p: cpu_seconds(launchers, p) for p in ("game-", "workers", "beat", "projection")}
    return {
        "game": parts["game-"],
        "workers": parts["workers"],
        "beat": parts["beat"],
        "projection": parts["projection"],
        "redis": meter.read()[0],
        "clients": time.process_time(),
    }


# The report ----------------------------------------------------------------------------


def report(f: Figures, args: argparse.Namespace) -> None:
    """Prints the figures and one verdict line per check."""
    found, ms = f.found, 1000.0
    games = max(1, found.games)
    played = {bot: sum(c.values()) for bot, c in found.opponents.items()}
    shares = {bot: max(c.values()) / played[bot] for bot, c in found.opponents.items()}
    held = [bot for bot in shares if played[bot] >= DIVERSITY_FROM_GAMES]
    over = [bot for bot in held if shares[bot] > DIVERSITY_SHARE + 1e-9]
    pairing = f.cpu["workers"] + f.cpu["beat"]
    idle = (f.idle["workers"] + f.idle["beat"]) * f.seconds
    per_game = {part: f.cpu[part] / games for part in PARTS}
    table = Table(
        title=f"Ladder: {args.bots} external bots, {args.game}, {args.seconds:.0f} s,"
        f" pairing every {args.pair_seconds} s, cooldown {args.cooldown:.0f} s"
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    rows = [
        ("ladder games paired", f"{found.games} ({found.games / f.seconds:.2f}/s)"),
        (
            "games per bot: median / min / max",
            f"{_median(list(played.values())):.0f} / {min(played.values(), default=0)}"
            f" / {max(played.values(), default=0)}",
        ),
        ("moves accepted", f"{f.tally.moves} ({f.tally.moves / games:.0f} per game)"),
        (
            "free -> seated p50 / p99",
            f"{percentile(found.waits, 0.5) * ms:.0f} / {percentile(found.waits, 0.99) * ms:.0f}"
            f" ms ({len(found.waits)} waits; {found.open_waits} open when the bot left)",
        ),
        (
            "most frequent opponent's share: median / max",
            f"{_median(list(shares.values())):.2f} / {max(shares.values(), default=0):.2f}",
        ),
        (
            f"bots with >= {DIVERSITY_FROM_GAMES} games over {DIVERSITY_SHARE} share",
            f"{len(over)} of {len(held)}",
        ),
        (
            "peak games at once / begun in a day, per bot",
            f"{found.peak_concurrent} / {found.peak_daily}",
        ),
        ("bots queued / never seated", f"{found.queued} / {found.never_seated}"),
        ("games not created / not ended", f"{len(found.not_created)} / {len(found.not_ended)}"),
        ("last games ended after the bots left", f"{f.drained:.1f} s"),
        (
            "requests / 409s / errors",
            f"{f.tally.requests} / {f.tally.conflicts} / {sum(f.tally.errors.values())}",
        ),
    ]
    for name, value in rows:
        table.add_row(name, value)
    cpu = Table(title="CPU per ladder game, by part of the stack")
    for name in ("part", "per game", "run total"):
        cpu.add_column(name, justify="left" if name == "part" else "right")
    names = {
        "game": "game services (the game's own)",
        "workers": "worker (pairing and one bot-turns task per game)",
        "beat": "beat (sends the pairing task)",
        "projection": "projection",
        "redis": "Redis (INFO cpu: every client of it)",
        "clients": "the bots (this process)",
    }
    for part in PARTS:
        cpu.add_row(names[part], f"{per_game[part] * ms:.2f} ms", f"{f.cpu[part]:.1f} s")
    cpu.add_row(
        "worker + beat idle (empty ladder), over the run",
        f"{idle / games * ms:.2f} ms",
        f"{idle:.1f} s",
    )
    console = Console()
    console.print(table)
    console.print(cpu)
    for sample in f.tally.samples:
        print(f"  error: {sample}")
    ratio = pairing / f.cpu["game"] if f.cpu["game"] else 0.0
    verdicts = [
        (
            f"pairing CPU per game {pairing / games * ms:.2f} ms (worker + beat) ="
            f" {ratio:.2f} x the game services' {per_game['game'] * ms:.2f} ms",
            "target <= 0.25",
            ratio <= 0.25,
        ),
        (
            f"peak games at once per bot {found.peak_concurrent}",
            f"cap {MAX_CONCURRENT}",
            found.peak_concurrent <= MAX_CONCURRENT,
        ),
        (
            f"peak games begun in a day per bot {found.peak_daily}",
            f"cap {MAX_DAILY}",
            found.peak_daily <= MAX_DAILY,
        ),
        (
            f"paired games not created {len(found.not_created)}, not ended {len(found.not_ended)}",
            "target 0",
            not found.not_created and not found.not_ended,
        ),
        (f"bots never seated {found.never_seated}", "target 0", found.never_seated == 0),
        (
            f"bots with >= {DIVERSITY_FROM_GAMES} games over the diversity share {len(over)}",
            "target 0",
            not over,
        ),
        (f"errors {sum(f.tally.errors.values())}", "target 0", not f.tally.errors),
    ]
    for what, target, passed in verdicts:
        print(f"{what}, {target}: {'PASS' if passed else 'MISS'}")


def _median(values: list[float] | list[int]) -> float:
    """Returns the median of `values`; 0 when empty."""
    return float(statistics.median(values)) if values else 0.0


def main() -> None:
    """Parses the options, runs the bots on a temporary database and prints the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bots", type=int, default=100, help="simulated external bots")
    parser.add_argument("--seconds", type=float, default=120.0, help="how long they queue")
    parser.add_argument("--game", choices=["autobus", "shithead"], default="autobus")
    parser.add_argument("--processes", type=int, default=2, help="game-service processes")
    parser.add_argument("--pair-seconds", type=float, default=1.0, help="beat's pairing period")
    parser.add_argument(
        "--cooldown",
        type=float,
        default=300.0,
        help="the rematch cooldown (seconds; the deployment's default): at 0 opponent"
        " diversity is left to its own rule",
    )
    parser.add_argument("--idle-seconds", type=float, default=4.0, help="idle CPU sample")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="12 bots for 6 s on one game-service process (a smoke test)",
    )
    args = parser.parse_args()
    if args.quick:
        args.bots, args.seconds, args.idle_seconds, args.processes = 12, 6.0, 1.0, 1
    if args.bots < 2 or args.processes < 1 or args.seconds <= 0 or args.pair_seconds <= 0:
        parser.error("needs --bots >= 2, --processes >= 1, --seconds > 0, --pair-seconds > 0")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    with temporary_database(server, "bench_ladder") as database_url:
        figures = measure(args, redis_url, database_url)
    report(figures, args)


if __name__ == "__main__":
    main()
