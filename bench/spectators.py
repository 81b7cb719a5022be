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
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx

from bench.service import (
    HANG_SECONDS,
    ServiceDidNotStart,
    create_game,
    game_service,
    percentile,
    register_bots,
)

ADMIN_KEY = "bench-spectators-admin-key"
TARGET_RATIO = 2.0
"""Crowded p50 over quiet p50, below."""


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


def setup(url: str) -> tuple[str, str]:
    """Registers two external bots and seats them at an Autobus game waiting for the first;
    returns the game's id and the first bot's token."""
    tokens = register_bots(url, ADMIN_KEY, ("alice", "bob"))
    return create_game(url, ADMIN_KEY, ("alice", "bob")), tokens[0]


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
    quiet: list[float] = []
    crowded: list[float] = []
    answers: Counter[int] = Counter()
    settings = {
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_SPECTATOR_RATE_LIMIT": str(args.rate_limit),
        **({"CARDARENA_SPECTATOR_STREAMS": str(args.cap)} if args.cap else {}),
    }
    try:
        with game_service("spectators", ADMIN_KEY, settings) as service:
            url = service.url
            game_id, token = setup(url)
            bot_headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=bot_headers, timeout=HANG_SECONDS) as bot:
                for _ in range(args.rounds):
                    quiet += latencies(bot, game_id, args.samples)
                    with crowd(url, game_id, args.spectators, answers):
                        crowded += latencies(bot, game_id, args.samples)
    except ServiceDidNotStart:
        print("the game service did not start", file=sys.stderr)
        return 1
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
