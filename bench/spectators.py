"""Spectators: how much a crowd of anonymous spectator streams slows a bot's turns.

One `cardarena serve game` (Redis store, an admin key, rate limits off unless given) on a
namespace of its own and a temporary PostgreSQL database (for `/ready`). Two external bots
sit at an Autobus game that waits for the first one. Phases take turns (`--rounds`,
default 3, so that a busy machine's drift hits both alike):

1. Quiet: the bot sends `--samples` requests, alternately `GET /v1/games/{id}/turn?seat=0
   &wait=0` and `GET /v1/bots/me/turns?wait=0`, one after the other.
2. Crowded: `--spectators` anonymous clients (default 100) open the game's event stream
   (`GET /v1/games/{id}/stream`, no credentials) and keep it open; once each was answered
   the bot sends the same requests, then the spectators hang up.

Prints p50 and p99 of the bot's request latency in each phase, the ratio crowded / quiet of
each, and how the spectators were answered (200, 503 beyond the cap, 429 beyond the rate
limit). Before the spectators had their own capacity, 100 of them took the 64 places the
bots' long polls wait in and a `turn?wait=0` took 3.5 s instead of 4 ms; the target is a
p50 ratio below 2. Exit code 0 whatever the verdict (the machine is noisy).

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.spectators [--spectators 100]
        [--samples 200] [--rounds 3] [--cap 64] [--rate-limit 0]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.load import clean_redis, free_port, temporary_database
from services.cli.dev import Launcher, cardarena, service_ready, stack_environment
from services.ops.migrate import migrate

ADMIN_KEY = "bench-spectators-admin-key"
TARGET_RATIO = 2.0
"""Crowded p50 over quiet p50, below."""
HANG_SECONDS = 120.0
"""How long anything may take before it counts as a hang."""


class Spectator:
    """One anonymous client holding a game's event stream open in a thread of its own."""

    def __init__(self, url: str, game_id: str) -> None:
        self._http = httpx.Client(base_url=url, timeout=httpx.Timeout(HANG_SECONDS, read=None))
        self._path = f"/v1/games/{game_id}/stream"
        self.status: int | None = None
        self.answered = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        with (
            contextlib.suppress(httpx.HTTPError, RuntimeError),
            self._http.stream("GET", self._path) as response,
        ):
            self.status = response.status_code
            self.answered.set()
            for _ in response.iter_bytes():
                pass
        self.answered.set()

    def hang_up(self) -> None:
        """Closes the connection (the reader notices at the next keep-alive)."""
        self._http.close()

    def join(self) -> None:
        """Waits for the reader to stop."""
        self._thread.join(timeout=HANG_SECONDS)


def latencies(bot: httpx.Client, game_id: str, samples: int) -> list[float]:
    """Returns the round trip in ms of each of `samples` turn requests of the bot."""
    found: list[float] = []
    for index in range(samples):
        started = time.perf_counter()
        if index % 2 == 0:
            response = bot.get(f"/v1/games/{game_id}/turn", params={"seat": 0, "wait": 0})
        else:
            response = bot.get("/v1/bots/me/turns", params={"wait": 0})
        found.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return found


@contextlib.contextmanager
def crowd(url: str, game_id: str, count: int, answers: Counter[int]) -> Iterator[None]:
    """Holds `count` anonymous spectator streams open while the block runs; counts how
    each was answered in `answers`."""
    spectators = [Spectator(url, game_id) for _ in range(count)]
    try:
        for spectator in spectators:
            spectator.answered.wait(HANG_SECONDS)
            answers[spectator.status or 0] += 1
        yield
    finally:
        for spectator in spectators:
            spectator.hang_up()
        for spectator in spectators:
            spectator.join()


def percentile(values: list[float], share: float) -> float:
    """Returns the `share` quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def setup(url: str) -> tuple[str, str]:
    """Registers two external bots and seats them at an Autobus game waiting for the first;
    returns the game's id and the first bot's token."""
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with httpx.Client(base_url=url, headers=admin, timeout=HANG_SECONDS) as host:
        tokens = []
        for name in ("alice", "bob"):
            bot = host.post("/v1/bots", json={"name": name, "game": "autobus", "kind": "external"})
            bot.raise_for_status()
            tokens.append(bot.json()["token"])
        seats = [{"kind": "external", "bot": name, "version": "1"} for name in ("alice", "bob")]
        created = host.post("/v1/games", json={"game": "autobus", "seats": seats})
        created.raise_for_status()
        return created.json()["game_id"], tokens[0]


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spectators", type=int, default=100)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cap", type=int, default=None, help="CARDARENA_SPECTATOR_STREAMS")
    parser.add_argument("--rate-limit", type=int, default=0, help="CARDARENA_SPECTATOR_RATE_LIMIT")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # clean up when told to stop
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server_url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    namespace = f"bench-spectators:{uuid.uuid4().hex[:8]}:"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    quiet: list[float] = []
    crowded: list[float] = []
    answers: Counter[int] = Counter()
    with temporary_database(server_url, "bench_spectators") as database_url:
        migrate(database_url)
        env = {
            **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", port),
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_ADMIN_KEY": ADMIN_KEY,
            "CARDARENA_RATE_LIMIT": "0",
            "CARDARENA_SPECTATOR_RATE_LIMIT": str(args.rate_limit),
            "CARDARENA_LOG_JSON": "false",
            **({"CARDARENA_SPECTATOR_STREAMS": str(args.cap)} if args.cap else {}),
        }
        try:
            with tempfile.TemporaryDirectory() as logs, Launcher(env, logs=Path(logs)) as launcher:
                launcher.start("game", cardarena("serve", "game"))
                deadline = time.monotonic() + HANG_SECONDS
                while not service_ready(url):
                    if time.monotonic() > deadline or launcher.exited():
                        print("the game service did not start", file=sys.stderr)
                        return 1
                    time.sleep(0.2)
                game_id, token = setup(url)
                bot_headers = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=url, headers=bot_headers, timeout=HANG_SECONDS) as bot:
                    for _ in range(args.rounds):
                        quiet += latencies(bot, game_id, args.samples)
                        with crowd(url, game_id, args.spectators, answers):
                            crowded += latencies(bot, game_id, args.samples)
        finally:
            clean_redis(redis_url, namespace, "cardarena")
    report(quiet, crowded, answers, args.spectators)
    return 0


def report(quiet: list[float], crowded: list[float], answers: Counter[int], count: int) -> None:
    """Prints the latencies, their ratios and the spectators' answers."""
    p50 = statistics.median(quiet), statistics.median(crowded)
    p99 = percentile(quiet, 0.99), percentile(crowded, 0.99)
    print(f"bot turn latency, ms  {'quiet':>9}  {f'with {count} spectators':>22}  {'ratio':>6}")
    for name, (alone, with_crowd) in (("p50", p50), ("p99", p99)):
        print(f"  {name:<18}  {alone:9.2f}  {with_crowd:22.2f}  {with_crowd / alone:6.2f}")
    shown = ", ".join(f"{status or 'no answer'}: {n}" for status, n in sorted(answers.items()))
    print(f"spectator streams answered (all rounds): {shown}")
    verdict = "ok" if p50[1] / p50[0] < TARGET_RATIO else "over"
    print(f"p50 ratio {p50[1] / p50[0]:.2f} (target below {TARGET_RATIO:g}): {verdict}")


if __name__ == "__main__":
    sys.exit(main())
