"""Scale: what an event costs Redis and PostgreSQL, and how far one node, a cluster and
several projectors go; every figure measured in one run (the machine is shared and noisy:
read the ratios, not the absolute times).

The workload is recorded first (`bench.scale_workload`): `--games` two-seat games of each
game of the mix, built-in bots, played in memory; every phase replays those same calls.

1. Redis CPU per event, on a standalone Redis of the bench's own: the project's append
   (`RedisEventStore`, one FCALL a move, bot moves pipelined as the worker sends them)
   against a bare XADD of each event's type and data (the same pipelining), alternating
   `--rounds` times, one client; the server's used_cpu_sys + used_cpu_user from INFO before
   and after. Then the project's append on a 3-primary Redis Cluster, summed over its
   primaries.
2. Appends and events per second by `--clients` client processes (each a share of the
   games), on the standalone Redis and on the cluster.
3. Projector throughput: the standalone Redis's feed of phase 2 projected from its start
   into a fresh PostgreSQL database by 1, 2 and 4 projector processes sharing the
   partitions; events per second and the ratio to one projector.
4. The feed's memory over a long run: the workload played `--passes` times into a fresh
   Redis at `--rate` events a second while a projector process projects it, game streams
   dropped once archived (retention 0), with the feed trimmer on (retention 0) and without
   it; Redis
   `used_memory` and the feeds' total length sampled every 250 ms.

Starts every Redis it uses itself (`tests/support/redis_cluster.py`, free loopback ports,
stopped by pid); PostgreSQL databases of its own on DATABASE_URL's server, dropped after.

    DATABASE_URL=... uv run python -m bench.scale [--quick] [--games 60] [--clients 4]
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys
import time

from bench.scale_projection import MemoryRun, ProjectorRun, measure_memory, measure_projectors
from bench.scale_redis import CpuFigures, Throughput, measure_cpu, measure_throughput, namespace
from bench.scale_workload import Workload, record
from tests.support.redis_cluster import LocalCluster, RedisServer, missing_binaries

PROJECTORS = (1, 2, 4)
MB = 1024 * 1024


def line(label: str, value: str) -> None:
    """Prints one figure."""
    print(f"  {label:<52} {value}", flush=True)


def heading(text: str) -> None:
    """Prints a section's heading."""
    print(f"\n{text}", flush=True)


def report_workload(workload: Workload, seconds: float) -> None:
    """Prints the mix and what a game of each kind costs."""
    heading(f"Workload (recorded in memory in {seconds:.1f} s)")
    for f in workload.figures:
        line(
            f"{f.game} ({' vs '.join(f.bots)}), {f.games} games",
            f"{f.events / f.games:.1f} events/game, {f.appends / f.games:.1f} appends/game,"
            f" {f.calls / f.games:.1f} round trips/game",
        )
    games = sum(f.games for f in workload.figures)
    line(
        "mix",
        f"{games} games, {workload.events} events, {workload.appends} appends,"
        f" {workload.events / games:.1f} events/game",
    )


def report_cpu(standalone: CpuFigures, cluster: CpuFigures) -> None:
    """Prints the server CPU per event and the ratios."""
    heading("Redis CPU per event (server used_cpu_sys + used_cpu_user, one client)")
    line(
        "idle CPU taken off (one node / cluster)",
        f"{standalone.idle * 1e3:.1f} / {cluster.idle * 1e3:.1f} ms per second",
    )
    line("one node: project append", f"{standalone.project_us:.2f} µs/event")
    line("one node: bare XADD", f"{standalone.bare_us:.2f} µs/event")
    line("one node: ratio append : bare XADD", f"{standalone.ratio:.2f}")
    line("cluster (sum of 3 primaries): project append", f"{cluster.project_us:.2f} µs/event")
    line(
        "cluster: of which COMMAND GETKEYS (redis-py routing FCALL)",
        f"{cluster.getkeys_cpu / max(1, cluster.project_events) * 1e6:.2f} µs/event",
    )
    line("cluster (sum of 3 primaries): bare XADD", f"{cluster.bare_us:.2f} µs/event")
    line("cluster: ratio append : bare XADD", f"{cluster.ratio:.2f}")
    if standalone.project_us:
        line(
            "ratio cluster : one node (append)",
            f"{cluster.project_us / standalone.project_us:.2f}",
        )


def report_throughput(one: Throughput, cluster: Throughput) -> None:
    """Prints appends and events per second on one node and on the cluster."""
    heading(f"Append throughput ({one.clients} client processes, sync redis-py, one each)")
    for name, t in (("one node", one), ("cluster, 3 primaries", cluster)):
        line(
            f"{name}: appends/s, events/s",
            f"{t.appends_per_s:,.0f} appends/s, {t.events_per_s:,.0f} events/s"
            f" ({t.events} events in {t.seconds:.2f} s)",
        )
        line(
            f"{name}: server CPU busy, client CPU per event",
            f"{t.server_cpu / t.seconds * 100 if t.seconds else 0:.0f}% of one core,"
            f" {t.client_cpu / max(1, t.events) * 1e6:.1f} µs/event",
        )
    if one.events_per_s:
        ratio = cluster.events_per_s / one.events_per_s
        line("ratio cluster : one node (events/s)", f"{ratio:.2f}")


def report_projectors(runs: list[ProjectorRun]) -> None:
    """Prints the projectors' throughput and the ratio to one."""
    heading("Projector throughput (backlog projected from the feed's start into PostgreSQL)")
    base = runs[0].events_per_s
    for run in runs:
        ratio = run.events_per_s / base if base else 0.0
        line(
            f"{run.projectors} projector(s): events/s, ratio to 1",
            f"{run.events_per_s:,.0f} events/s ({run.events} in {run.seconds:.2f} s),"
            f" ratio {ratio:.2f}",
        )
        line(
            f"{run.projectors} projector(s): projector CPU per event",
            f"{run.cpu / max(1, run.events) * 1e6:.1f} µs/event (PostgreSQL's apart)",
        )


def report_memory(trimmed: MemoryRun, untrimmed: MemoryRun) -> None:
    """Prints the feed's length and Redis memory with and without trimming."""
    heading(
        f"Feed memory over a long run ({trimmed.events} events: the mix played"
        f" {trimmed.passes} times at {trimmed.rate:,.0f} events/s, projected as it is played;"
        " game streams dropped once archived)"
    )
    for run in (trimmed, untrimmed):
        name = "trimmed (retention 0)" if run.trimmed else "untrimmed"
        memory, length = run.final
        line(
            f"{name}: feed length peak / at the end",
            f"{run.peak_feed:,} / {length:,} entries ({len(run.samples)} samples,"
            f" {run.seconds:.1f} s)",
        )
        line(
            f"{name}: used_memory start / peak / end",
            f"{run.baseline / MB:.1f} / {run.peak_memory / MB:.1f} / {memory / MB:.1f} MB",
        )
    kept = untrimmed.final[1] - trimmed.final[1]
    saved = untrimmed.final[0] - trimmed.final[0]
    per_entry = f"{saved / kept:.0f} bytes/entry" if kept > 0 else "n/a"
    line("memory an untrimmed feed entry keeps", per_entry)
    left = (trimmed.final[0] - trimmed.baseline) / max(1, trimmed.appends)
    line(
        "trimmed: memory left per append (idempotency records, versions)",
        f"{left:.0f} bytes/append",
    )
    print("  feed length over time (s: trimmed | untrimmed):", flush=True)
    for t, lengths in _series(trimmed, untrimmed):
        print(f"    {t:6.1f}: {lengths}", flush=True)


def _series(trimmed: MemoryRun, untrimmed: MemoryRun, points: int = 8) -> list[tuple[float, str]]:
    """Returns about `points` evenly spaced samples of both runs' feed length."""
    rows = []
    for n in range(points):
        pair = []
        for run in (trimmed, untrimmed):
            sample = run.samples[min(len(run.samples) - 1, n * len(run.samples) // points)]
            pair.append((sample[0], sample[2]))
        rows.append((pair[0][0], f"{pair[0][1]:>8,} | {pair[1][1]:>8,}"))
    return rows


def _terminated(signum: int, frame: object) -> None:
    """Exits on SIGTERM, so that every server this run started is stopped on the way out."""
    sys.exit(128 + signum)


def main() -> None:
    """Parses the options, starts the servers, runs every phase and prints the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=60, help="games of each game of the mix")
    parser.add_argument("--clients", type=int, default=4, help="client processes (phase 2)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of phase 1")
    parser.add_argument("--passes", type=int, default=3, help="plays of the mix (phase 4)")
    parser.add_argument("--rate", type=float, default=3000, help="events/s played (phase 4)")
    parser.add_argument("--quick", action="store_true", help="a small run (under a minute)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _terminated)
    if args.quick:
        args.games, args.clients, args.rounds, args.passes = 6, 2, 1, 2
    if min(args.games, args.clients, args.rounds, args.passes) < 1:
        parser.error("every count must be at least 1")
    if reason := missing_binaries():
        sys.exit(f"bench.scale needs Redis: {reason}")
    database_server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    started = time.monotonic()
    print(
        f"bench.scale {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC,"
        f" {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        flush=True,
    )
    workload = record(args.games)
    report_workload(workload, time.monotonic() - started)
    with RedisServer() as server, LocalCluster(primaries=3, replicas=0) as cluster:
        primaries = cluster.primaries()
        one_cpu = measure_cpu([server], False, workload, args.rounds)
        cluster_cpu = measure_cpu(primaries, True, workload, args.rounds)
        report_cpu(one_cpu, cluster_cpu)
        prefix = namespace("throughput")
        one = measure_throughput([server], False, workload, args.clients, prefix)
        spread = measure_throughput(primaries, True, workload, args.clients, namespace("tp"))
        report_throughput(one, spread)
        cluster.stop()
        report_projectors(measure_projectors(server, prefix, database_server, PROJECTORS))
    trimmed = measure_memory(workload, args.passes, True, database_server, args.rate)
    untrimmed = measure_memory(workload, args.passes, False, database_server, args.rate)
    report_memory(trimmed, untrimmed)
    print(f"\nbench.scale done in {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
