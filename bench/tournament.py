"""Tournament throughput: the engines alone, in-process with the whole log, and on workers.

The same round-robin tournament runs in this process on the in-memory store (every move
appended as events, the tournament's own stream, standings and ratings), and on two Celery
worker processes against Redis (every move appended to the streams and the feed) with the
projection service archiving into PostgreSQL; the distributed run counts until the
projection has caught up. Its games are then played again as `cardarena simulate` plays
games (the engine and the bots, no log at all), each bot's choice seeded as the platform
seeds it, so that they are the same games move for move. Prints games per second of each
and the ratios. Targets (issue 20): in-process at least 0.8 of the engines alone,
distributed at least 0.6 of in-process on this 2-core machine.

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.tournament [--games-per-table 10]
        [--game autobus|shithead] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import redis

from bench.load import RedisMeter, clean_redis, kombu_deadlines, process_stat
from shared.app.tournaments import load_tournament, run_in_process
from shared.catalog import get_game
from shared.messages.common import GameCreated
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.memory import InMemoryEventStore
from shared.store.redis_common import feed_key
from shared.store.redis_store import RedisEventStore

ROOT = Path(__file__).resolve().parents[1]
QUIET: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
"""The services' output, dropped: a terminal printing every task's log line costs CPU."""


def definition(games_per_table: int, game: str = "autobus") -> TournamentDefinition:
    """Returns the benchmark's tournament: four bots of `game`, two-seat tables."""
    entrants = [
        Entrant(bot="heuristic", name="h1"),
        Entrant(bot="heuristic", name="h2"),
        Entrant(bot="random", name="r1"),
        Entrant(bot="random", name="r2"),
    ]
    return TournamentDefinition(
        game=game, entrants=entrants, table_size=2, games_per_table=games_per_table, seed="b"
    )


def in_process(tournament: TournamentDefinition) -> tuple[float, int, list[Table]]:
    """Returns the seconds and games of the in-process run, and each game's table."""
    store = InMemoryEventStore()
    start = time.perf_counter()
    state = run_in_process(store, tournament)
    seconds = time.perf_counter() - start
    tables = [table_of(store, record.game_id) for record in state.records]
    return seconds, len(state.records), tables


Table = tuple[str, Any, list[str], str, str]
"""A game as the engines alone play it: the game's name, its ruleset, the bot of each seat,
the seed it was dealt from, and the seed of its bots' choices."""


def table_of(store: InMemoryEventStore, game_id: str) -> Table:
    """Returns the table of a game played in the store."""
    created = get_game("autobus").codec.decode(store.read(game_id, limit=1)[0])
    assert isinstance(created, GameCreated)
    spec = get_game(created.game)
    bots = [seat.bot or "" for seat in created.seats]
    rules = spec.ruleset(created.ruleset)
    return created.game, rules, bots, created.deal_seed, created.bot_seed or game_id


def alone(table: Table) -> int:
    """Plays a tournament's game as `cardarena simulate` plays games (the engine and the bots,
    `services.cli.simulate.play`'s loop, no log), each choice seeded as the platform seeds it,
    so that it is the same game move for move; returns its events' count."""
    game, rules, bots, deal_seed, bot_seed = table
    spec = get_game(game)
    state = spec.fold([spec.deal(rules, len(bots), deal_seed)])
    version = 2
    while not spec.is_over(state):
        seat = spec.to_move(state)[0]
        legal = spec.legal_actions(state, seat)
        seed = f"{bot_seed}:{version}:{seat}"
        action = spec.bots[bots[seat]].choose(spec.view(state, seat), legal, seed)
        state, events = spec.apply(state, seat, action)
        version += len(events)
    return version


def simulated(tables: list[Table]) -> float:
    """Returns the seconds the engines alone take to play the games of `tables`."""
    start = time.perf_counter()
    for table in tables:
        alone(table)
    return time.perf_counter() - start


def archived(database_url: str) -> int:
    """Returns how many events the projection has archived."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM events").fetchone()
    return int(row[0]) if row else 0


def tree_cpu(root: int) -> float:
    """Returns the CPU seconds (user + system) used so far by process `root` and its live
    descendants (a Celery worker's pool processes)."""
    stats = {
        int(entry.name): stat
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and (stat := process_stat(entry.name)) is not None
    }
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _) in stats.items():
            if ppid == parent and pid not in tree:
                tree.add(pid)
                frontier.append(pid)
    return sum(stats[pid][1] for pid in tree if pid in stats)


def machine_cpu() -> float:
    """Returns the CPU seconds every core of the machine spent busy so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def distributed(
    tournament: TournamentDefinition, redis_url: str, database_url: str
) -> tuple[float, float, int, dict[str, float]]:
    """Returns the seconds of the run on two workers until the tournament finished and until
    the projection archived its every event, its games, and the CPU seconds each part of the
    stack spent meanwhile (the services' output is dropped). It leaves the Redis database as
    it found it: its namespace's keys, kombu's keys of its queue and the binding deadlines its
    workers added are deleted afterwards (`bench.load.clean_redis`)."""
    namespace = f"bench:{uuid.uuid4().hex[:8]}:"
    queue = f"{namespace}bots"
    env = {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": queue,
    }
    cli = [sys.executable, "-m", "services.cli.main"]
    subprocess.run([*cli, "migrate"], cwd=ROOT, env=env, check=True, capture_output=True)
    client = redis.Redis.from_url(redis_url)
    deadlines = kombu_deadlines(client)
    processes = [
        subprocess.Popen(
            [*cli, "serve", "workers", "--concurrency", "2"], cwd=ROOT, env=env, **QUIET
        ),
        subprocess.Popen([*cli, "serve", "projection"], cwd=ROOT, env=env, **QUIET),
    ]
    meter = RedisMeter(redis_url)
    store = RedisEventStore(client, namespace=namespace)
    try:
        time.sleep(3)
        from services.settings import WorkerSettings, load_settings  # noqa: PLC0415
        from services.workers.celery_app import create_celery  # noqa: PLC0415
        from services.workers.dispatch import START_TOURNAMENT  # noqa: PLC0415

        app = create_celery(load_settings(env, WorkerSettings))
        workers, projection = processes[0].pid, processes[1].pid
        parts = {
            "workers": lambda: tree_cpu(workers),
            "projection": lambda: tree_cpu(projection),
            "redis": lambda: meter.read()[0],
            "this process": time.process_time,
            "machine": machine_cpu,
        }
        before = {part: read() for part, read in parts.items()}
        start = time.perf_counter()
        app.send_task(START_TOURNAMENT, (msgspec.to_builtins(tournament), "bench"), queue=queue)
        while True:
            try:
                state, _ = load_tournament(store, "bench")
            except LookupError:
                time.sleep(0.1)
                continue
            if state.status == "finished":
                break
            time.sleep(0.1)
        finished = time.perf_counter() - start
        total = sum(client.xlen(feed_key(namespace, p)) for p in range(16))
        while archived(database_url) < total:
            time.sleep(0.1)
        seconds = time.perf_counter() - start
        cpu = {part: read() - before[part] for part, read in parts.items()}
        named = sum(v for part, v in cpu.items() if part != "machine")
        cpu["the rest (PostgreSQL, ...)"] = cpu.pop("machine") - named
        return finished, seconds, len(state.records), cpu
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        clean_redis(redis_url, namespace, queue, deadlines)
        client.close()
        meter.close()


def main() -> None:
    """Runs both and prints games per second and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games-per-table", type=int, default=10)
    parser.add_argument("--game", choices=["autobus", "shithead"], default="autobus")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    admin = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    database_url = psycopg.conninfo.make_conninfo(admin, dbname=name)
    try:
        tournament = definition(args.games_per_table, args.game)
        runs = []
        for _ in range(args.rounds):
            local_seconds, local_games, tables = in_process(tournament)
            runs.append((simulated(tables), local_seconds))
        finished, remote_seconds, remote_games, cpu = distributed(
            tournament, redis_url, database_url
        )
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    ratios = sorted(engine / local for engine, local in runs)
    engine_seconds = statistics.median(engine for engine, _ in runs)
    local_seconds = statistics.median(local for _, local in runs)
    alone_rate = local_games / engine_seconds
    local = local_games / local_seconds
    remote = remote_games / remote_seconds
    played = remote_games / finished
    print(f"tournament: {args.game} round robin, 4 entrants, {local_games} games")
    print(f"the engines and bots alone (simulate): {alone_rate:8.1f} games/s (median)")
    print(f"in-process (memory store, whole log):   {local:8.1f} games/s (median)")
    print(f"2 Celery workers + Redis + projection:  {remote:8.1f} games/s (all archived)")
    print(f"  the same, until the tournament ended:   {played:8.1f} games/s")
    print(
        f"ratio in-process/alone: {statistics.median(ratios):.2f} median, "
        f"{ratios[0]:.2f}..{ratios[-1]:.2f} (target >= 0.80)"
    )
    print(f"ratio distributed/in-process: {remote / local:.2f} (target >= 0.60)")
    print(f"  the same, until the tournament ended: {played / local:.2f}")
    print("CPU of the distributed run until all archived, per game (ms), by part:")
    for part, seconds in cpu.items():
        print(f"  {part:28} {1000 * seconds / remote_games:7.2f}")
    print(f"  (in-process: {1000 / local:.2f} ms a game)")


if __name__ == "__main__":
    main()
