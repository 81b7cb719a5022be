"""`bench.scale` in its smallest form runs on real servers it starts itself and prints every
figure it promises; its values are never asserted (the machine is shared and noisy)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.support import redis_cluster as redis_servers

pytestmark = pytest.mark.cluster

ROOT = Path(__file__).resolve().parents[2]
NUMBER = r"[\d,.]+"
FIGURES = [
    rf"autobus \(heuristic vs random\), 1 games\s+{NUMBER} events/game",
    rf"beggar \(random vs random\), 1 games\s+{NUMBER} events/game",
    rf"shithead \(heuristic vs random\), 1 games\s+{NUMBER} events/game",
    rf"mix\s+3 games, {NUMBER} events, {NUMBER} appends",
    rf"one node: project append\s+{NUMBER} µs/event",
    rf"one node: bare XADD\s+{NUMBER} µs/event",
    rf"one node: ratio append : bare XADD\s+{NUMBER}",
    rf"cluster \(sum of 3 primaries\): project append\s+{NUMBER} µs/event",
    rf"cluster: of which COMMAND GETKEYS \(redis-py routing FCALL\)\s+{NUMBER} µs/event",
    rf"cluster \(sum of 3 primaries\): bare XADD\s+{NUMBER} µs/event",
    r"Append throughput \(2 client processes",
    rf"one node: server CPU busy, client CPU per event\s+{NUMBER}% of one core, {NUMBER} µs",
    rf"one node: appends/s, events/s\s+{NUMBER} appends/s, {NUMBER} events/s",
    rf"cluster, 3 primaries: appends/s, events/s\s+{NUMBER} appends/s, {NUMBER} events/s",
    *(
        rf"{n} projector\(s\): events/s, ratio to 1\s+{NUMBER} events/s .*ratio {NUMBER}"
        for n in (1, 2, 4)
    ),
    *(rf"{n} projector\(s\): projector CPU per event\s+{NUMBER} µs/event" for n in (1, 2, 4)),
    rf"trimmed \(retention 0\): feed length peak / at the end\s+{NUMBER} / {NUMBER} entries",
    rf"trimmed \(retention 0\): used_memory start / peak / end\s+{NUMBER} / {NUMBER} / {NUMBER}",
    rf"untrimmed: feed length peak / at the end\s+{NUMBER} / {NUMBER} entries",
    rf"untrimmed: used_memory start / peak / end\s+{NUMBER} / {NUMBER} / {NUMBER} MB",
    r"memory an untrimmed feed entry keeps\s+(-?\d+ bytes/entry|n/a)",
    rf"trimmed: memory left per append \(idempotency records, versions\)\s+-?{NUMBER} bytes",
    r"bench\.scale done in \d+ s",
]


def bench_databases(admin_url: str) -> set[str]:
    """Returns the names of the databases the bench makes (`bench_scale_*`) that exist now."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'bench\\_scale\\_%'"
        ).fetchall()
    return {str(row[0]) for row in rows}


def test_the_smallest_scale_bench_prints_every_figure_and_leaves_no_database(
    admin_database_url: str,
) -> None:
    if reason := redis_servers.missing_binaries():
        pytest.skip(f"bench.scale starts its own Redis servers: {reason}")
    before = bench_databases(admin_database_url)
    command = [sys.executable, "-m", "bench.scale", "--games", "1", "--clients", "2"]
    command += ["--rounds", "1", "--passes", "1"]
    env = {**os.environ, "DATABASE_URL": admin_database_url}
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    missing = [figure for figure in FIGURES if not re.search(figure, done.stdout)]
    assert not missing, f"figures not printed: {missing}\n{done.stdout}"
    assert bench_databases(admin_database_url) <= before
