"""Archive: the projection's write of a batch against a bare psycopg COPY of the same rows.

The workload of `bench.scale` (`bench.scale_workload`: `--games` two-seat games of each
game of the mix, built-in bots, played in memory, `--concurrent` games at a time) is
replayed into an in-memory store of 16 partitions, and its feed read as a projector reads it
(a merged consumer, reads of up to `--batch` entries, the watermark after each). Each round,
in a fresh temporary database on DATABASE_URL's server (migrated), three ways write every
read, taking turns read by read (in an order that turns with the reads, so that the load of
the shared machine weighs on all three alike):

1. projection: the projection's real path after its read, `project_guarded` with
   `project_batch` (one transaction: archive, views, tournament views, checkpoints), then
   the watermarks and the ordered step (`ratings.fold_ordered_ratings`), as
   `Projector.run_once` does;
2. COPY: the read's rows as one binary `COPY ... FROM STDIN` in a transaction, into a table
   of the events table's schema (`LIKE events INCLUDING ALL`: its key and indexes);
3. executemany: the read's rows as one `executemany` of an `INSERT ... VALUES` with the
   archive's `ON CONFLICT (game_id, version) DO NOTHING`, in a transaction, into another.

Prints each round's events per second, their medians, and the ratios projection : COPY and
executemany : COPY (the median of each round's own) beside the target (the projection at
least 0.4 of COPY). Exits 0 whatever the verdict.

    DATABASE_URL=... uv run python -m bench.archive [--games 60] [--rounds 5] [--batch 500]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bench.load import temporary_database
from bench.scale_redis import PARTITIONS
from bench.scale_workload import Call, record, replay
from services.ops.migrate import migrate
from services.projection import ratings
from services.projection.dead_letters import project_guarded
from services.projection.projector import (
    ARCHIVE_COLUMNS,
    ARCHIVE_TYPES,
    archive_row,
    project_batch,
)
from shared.store.memory import InMemoryEventStore
from shared.store.port import FeedEntry

NAME = "bench"
"""The projection's name (its checkpoints)."""
TARGET = 0.4
"""The projection's events per second at least this share of COPY's (issue 32)."""
_INSERT = (
    f"INSERT INTO {{table}} ({ARCHIVE_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (game_id, version) DO NOTHING"
)


Batch = tuple[list[FeedEntry], tuple[int, int] | None]
"""A read of the feed: its entries, and the consumer's watermark after it."""


def interleaved(games: Sequence[Sequence[Call]], concurrent: int) -> list[Call]:
    """Returns the games' calls as `concurrent` games at a time would make them: each group
    of games round robin, a call of each in turn."""
    calls: list[Call] = []
    for first in range(0, len(games), concurrent):
        group = games[first : first + concurrent]
        for turn in itertools.zip_longest(*group):
            calls.extend(call for call in turn if call is not None)
    return calls


def feed_batches(games: int, concurrent: int, count: int) -> list[Batch]:
    """Returns the reads of up to `count` entries a projector makes of the feed of the
    recorded workload (`games` games of each kind, played `concurrent` at a time) on a store
    of `PARTITIONS` partitions, with the watermark after each."""
    store = InMemoryEventStore(partitions=PARTITIONS)
    replay(store, interleaved(record(games).games, concurrent))
    consumer = store.consumer("bench", "projector")
    batches: list[Batch] = []
    while entries := consumer.read(count):
        consumer.ack_entries(entries)
        batches.append((entries, consumer.watermark))
    return batches


def rows_of(entries: Sequence[FeedEntry]) -> list[tuple[Any, ...]]:
    """Returns the archive's rows of `entries`, one tuple a row."""
    return [archive_row(entry) for entry in entries]


def project(conn: psycopg.Connection[Any], batches: Sequence[Batch]) -> int:
    """Projects every batch as `Projector.run_once` does after its read (its transaction,
    then the watermarks and the ordered step); returns the events new to the archive."""
    fresh = 0
    for entries, watermark in batches:
        fresh += project_guarded(conn, NAME, entries, project_batch).fresh
        if watermark is not None:
            ratings.fold_ordered_ratings(conn, NAME, PARTITIONS, range(PARTITIONS), watermark)
    return fresh


def copy(conn: psycopg.Connection[Any], batches: Sequence[Batch]) -> int:
    """COPYs every batch's rows into `events_copy`, one transaction a batch."""
    for entries, _ in batches:
        with (
            conn.transaction(),
            conn.cursor() as cur,
            cur.copy(f"COPY events_copy ({ARCHIVE_COLUMNS}) FROM STDIN (FORMAT BINARY)") as out,
        ):
            out.set_types(list(ARCHIVE_TYPES))
            for row in rows_of(entries):
                out.write_row(row)
    return sum(len(entries) for entries, _ in batches)


def executemany(conn: psycopg.Connection[Any], batches: Sequence[Batch]) -> int:
    """Inserts every batch's rows into `events_many` with executemany, one transaction a
    batch."""
    statement = _INSERT.format(table="events_many")
    for entries, _ in batches:
        with conn.transaction(), conn.cursor() as cur:
            cur.executemany(statement, rows_of(entries))
    return sum(len(entries) for entries, _ in batches)


Way = Callable[[psycopg.Connection[Any], Sequence[Batch]], int]
WAYS: dict[str, Way] = {"projection": project, "COPY": copy, "executemany": executemany}


def measure(database_server: str, batches: Sequence[Batch], turn: int) -> dict[str, float]:
    """Runs every way on every batch in a fresh database, the ways taking turns batch by
    batch (the first batch's first way is way `turn`, modulo): the machine's load, shared and
    noisy, weighs on each alike. Returns each way's events per second."""
    names = list(WAYS)
    seconds = dict.fromkeys(names, 0.0)
    with temporary_database(database_server, prefix="bench_archive") as url:
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            for table in ("events_copy", "events_many"):
                conn.execute(f"CREATE TABLE {table} (LIKE events INCLUDING ALL)")
            conn.execute("CHECKPOINT")
            for n, batch in enumerate(batches):
                first = (turn + n) % len(names)
                for name in names[first:] + names[:first]:
                    started = time.perf_counter()
                    WAYS[name](conn, [batch])
                    seconds[name] += time.perf_counter() - started
            row = conn.execute("SELECT count(*) FROM events").fetchone()
            events = sum(len(entries) for entries, _ in batches)
            if not row or row[0] != events:
                raise RuntimeError(f"the projection archived {row} of {events} events")
    return {name: events / spent for name, spent in seconds.items()}


def main() -> None:
    """Parses the options, records the workload, runs the rounds and prints the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=60, help="games of each game of the mix")
    parser.add_argument("--rounds", type=int, default=5, help="fresh databases, each way once")
    parser.add_argument("--batch", type=int, default=500, help="feed entries a read")
    parser.add_argument("--concurrent", type=int, default=64, help="games played at once")
    args = parser.parse_args()
    if min(args.games, args.rounds, args.batch, args.concurrent) < 1:
        parser.error("every count must be at least 1")
    database_server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")
    print(
        f"bench.archive {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC,"
        f" {os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        flush=True,
    )
    batches = feed_batches(args.games, args.concurrent, args.batch)
    events = sum(len(entries) for entries, _ in batches)
    print(
        f"  {events} feed entries ({args.games} games of each kind, {args.concurrent} at a"
        f" time, {PARTITIONS} partitions), {len(batches)} reads of up to {args.batch}",
        flush=True,
    )
    rounds = []
    for turn in range(args.rounds):
        rates = measure(database_server, batches, turn)
        rounds.append(rates)
        print(
            f"  round {turn + 1}: " + ", ".join(f"{n} {r:,.0f}/s" for n, r in rates.items()),
            flush=True,
        )
    print("median of the rounds (events/s; ratios: the median of each round's own):")
    for name in WAYS:
        print(f"  {name:<12} {statistics.median(r[name] for r in rounds):>10,.0f}")
    ratio = statistics.median(r["projection"] / r["COPY"] for r in rounds)
    verdict = "PASS" if ratio >= TARGET else "FAIL"
    print(f"  projection : COPY   {ratio:.3f} (target >= {TARGET}: {verdict})")
    many = statistics.median(r["executemany"] / r["COPY"] for r in rounds)
    print(f"  executemany : COPY  {many:.3f}")


if __name__ == "__main__":
    main()
