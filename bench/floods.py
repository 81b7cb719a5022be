"""Floods: how much three floods within the rules slow a bot playing a game.

One `cardarena serve game` (`bench.service`: Redis, an admin key, the default rate limits and
caps) on a namespace of its own and a temporary PostgreSQL database (for `/ready`). The bot
`alice` plays an Autobus game against `bob` (both external, played from here one decision
after the other; a new game when one ends): a decision of hers is `GET
/v1/games/{id}/turn?seat=0&wait=0` then `POST /v1/games/{id}/actions` (a seeded random legal
action), and her turn time is the two round trips. Phases take turns over `--rounds`
(default 3, so that a busy machine's drift hits all alike), each `--samples` of her decisions
long; a flood runs in a process of its own (so that it takes nothing of the bot's
interpreter) and has started before the bot plays:

1. quiet: nothing else.
2. a, anonymous: `--posters` clients (default 2) post 1 MiB JSON bodies as moves to the
   bot's game, without credentials, one after the other.
3. a, forged: the same with a forged token (alice's token id, a wrong secret).
4. b, readers: 5 other bot tokens and 3 anonymous clients read the game (`GET
   /v1/games/{id}`), its events, the game list and the leaderboard, one request after the
   other, as fast as their rate limits allow (a token honours Retry-After on a 429;
   anonymous reads have no limit).
5. c, streams: one other bot token opens `--streams` of its event streams (default 40,
   past the cap, CARDARENA_MAX_STREAMS_PER_TOKEN: 32 unless `--cap`) and holds them.

Prints p50 and p99 of alice's turn time per phase, the ratio of each flood's over the quiet
one beside the target (1.5, issue 32), how the flood's requests were answered (status
counts; a transport error by its name) and the game service's CPU in each phase (the
floods' clients run on the same machine: their CPU is not the service's). Before the door
(main 55bcbb0): two anonymous posters made the median turn 44 times slower, the readers 5.8
times, and one token held 80 streams.
Exit code 0 whatever the verdict (the machine is noisy).

    REDIS_URL=... DATABASE_URL=... uv run python -m bench.floods [--samples 100]
        [--rounds 3] [--posters 2] [--streams 40] [--cap 32]
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import random
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from typing import Any

import httpx

from bench.service import (
    HANG_SECONDS,
    ServiceDidNotStart,
    create_game,
    game_service,
    percentile,
    register_bots,
)

ADMIN_KEY = "bench-floods-admin-key"
TARGET_RATIO = 1.5
"""A flood's p50 over the quiet p50, at most (issue 32)."""
BODY_SIZE = 1024 * 1024
"""A poster's body: 1 MiB of JSON."""
READER_TOKENS = 5
ANONYMOUS_READERS = 3
PHASES = ("quiet", "a anonymous", "a forged", "b readers", "c streams")


@dataclass(frozen=True)
class Flood:
    """What a flood process needs: the service, the bot's game, the tokens it uses."""

    kind: str
    url: str
    game_id: str
    tokens: tuple[str, ...]
    count: int


def padded_move() -> bytes:
    """Returns a move's JSON padded to `BODY_SIZE` bytes (valid JSON: a decoder reads it all)."""
    head, tail = b'{"seat":0,"expected_version":1,"action":{"type":"Discard","pad":"', b'"}}'
    return head + b"x" * (BODY_SIZE - len(head) - len(tail)) + tail


def forged(token: str) -> str:
    """Returns `token` with its secret replaced: a live token's id, a wrong secret."""
    head, _, secret = token.partition(".")
    return f"{head}.{'A' * len(secret)}"


def loop(http: httpx.Client, stop: Event, answers: Counter[str], send: Callable[[], int]) -> None:
    """Sends requests one after the other until `stop`, counting their answers."""
    while not stop.is_set():
        try:
            answers[str(send())] += 1
        except httpx.HTTPError as error:
            answers[type(error).__name__] += 1
    http.close()


def poster(flood: Flood, stop: Event, answers: Counter[str]) -> Callable[[], None]:
    """Returns a client posting 1 MiB moves (anonymously, or with a forged token)."""
    headers = {"Authorization": f"Bearer {forged(flood.tokens[0])}"} if flood.tokens else {}
    headers["Content-Type"] = "application/json"
    http = httpx.Client(base_url=flood.url, headers=headers, timeout=HANG_SECONDS)
    body, path = padded_move(), f"/v1/games/{flood.game_id}/actions"
    return lambda: loop(http, stop, answers, lambda: http.post(path, content=body).status_code)


def reader(
    flood: Flood, token: str | None, stop: Event, answers: Counter[str]
) -> Callable[[], None]:
    """Returns a client reading the game, its events, the game list and the leaderboard in
    turn; with a token, it sleeps a 429's Retry-After."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx.Client(base_url=flood.url, headers=headers, timeout=HANG_SECONDS)
    game = f"/v1/games/{flood.game_id}"
    paths = [game, f"{game}/events", "/v1/games", "/v1/leaderboards/autobus"]
    turn = iter(range(sys.maxsize))

    def send() -> int:
        response = http.get(paths[next(turn) % len(paths)])
        if response.status_code == 429:
            stop.wait(float(response.headers.get("Retry-After", "1")))
        return response.status_code

    return lambda: loop(http, stop, answers, send)


def holder(
    flood: Flood, stop: Event, answers: Counter[str], answered: threading.Semaphore
) -> Callable[[], None]:
    """Returns a client holding one of the token's event streams open until `stop`."""
    headers = {"Authorization": f"Bearer {flood.tokens[0]}"}
    timeout = httpx.Timeout(HANG_SECONDS, read=None)
    http = httpx.Client(base_url=flood.url, headers=headers, timeout=timeout)

    def hold() -> None:
        status = "no answer"
        try:
            with http.stream("GET", "/v1/bots/me/events") as response:
                status = str(response.status_code)
                answered.release()
                if response.status_code == 200:
                    for _ in response.iter_bytes():
                        if stop.is_set():
                            break
        except (httpx.HTTPError, RuntimeError) as error:
            status = status if status != "no answer" else type(error).__name__
            answered.release()
        answers[status] += 1

    def run() -> None:
        worker = threading.Thread(target=hold, daemon=True)
        worker.start()
        stop.wait()
        http.close()  # ends the stream at once (its reader may wait for a keep-alive)
        worker.join(timeout=HANG_SECONDS)

    return run


def flood_process(flood: Flood, ready: Event, stop: Event, results: Any) -> None:
    """Runs one flood until `stop` (setting `ready` once it is on), then puts its answers'
    counts in `results`."""
    answers: Counter[str] = Counter()
    answered = threading.Semaphore(0)
    clients: list[Callable[[], None]]
    if flood.kind == "posters":
        clients = [poster(flood, stop, answers) for _ in range(flood.count)]
    elif flood.kind == "readers":
        tokens: list[str | None] = [*flood.tokens, *[None] * ANONYMOUS_READERS]
        clients = [reader(flood, token, stop, answers) for token in tokens]
    else:
        clients = [holder(flood, stop, answers, answered) for _ in range(flood.count)]
    threads = [threading.Thread(target=client, daemon=True) for client in clients]
    for thread in threads:
        thread.start()
    if flood.kind == "streams":
        for _ in clients:
            answered.acquire(timeout=HANG_SECONDS)
    ready.set()
    for thread in threads:
        thread.join(timeout=HANG_SECONDS * 2)
    results.put(dict(answers))


@contextlib.contextmanager
def flooding(flood: Flood | None, answers: Counter[str]) -> Iterator[None]:
    """Runs `flood` (None: nothing) in a process of its own while the block runs; adds how
    its requests were answered to `answers`."""
    if flood is None:
        yield
        return
    context = multiprocessing.get_context("spawn")
    ready, stop, results = context.Event(), context.Event(), context.Queue()
    process = context.Process(target=flood_process, args=(flood, ready, stop, results))
    process.start()
    try:
        ready.wait(HANG_SECONDS)
        time.sleep(0.5)  # let the flood reach its pace
        yield
    finally:
        stop.set()
        answers.update(results.get(timeout=HANG_SECONDS * 3))
        process.join(timeout=HANG_SECONDS)


class Table:
    """The bot's game, played from here: alice (seat 0, measured) against bob (seat 1)."""

    def __init__(self, url: str, tokens: list[str]) -> None:
        self.url = url
        self.bots = [
            httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {t}"}, timeout=HANG_SECONDS
            )
            for t in tokens
        ]
        self.game_id = create_game(url, ADMIN_KEY, ("alice", "bob"))
        self.seat = 0
        self.rng = random.Random(0)
        self.games = 1

    def close(self) -> None:
        """Closes the bots' connections."""
        for bot in self.bots:
            bot.close()

    def decide(self) -> float | None:
        """Plays the next decision of the seat to move; returns its time in ms, or None when
        no move was made (not the seat's turn, a new game, a 429 waited out)."""
        bot = self.bots[self.seat]
        started = time.perf_counter()
        answer = bot.get(f"/v1/games/{self.game_id}/turn", params={"seat": self.seat, "wait": 0})
        if answer.status_code == 429:
            time.sleep(float(answer.headers.get("Retry-After", "1")))
            return None
        answer.raise_for_status()
        view = answer.json()
        if view["status"] != "playing":
            self.game_id, self.seat = create_game(self.url, ADMIN_KEY, ("alice", "bob")), 0
            self.games += 1
            return None
        if not view["legal_actions"]:
            self.seat = view["to_move"][0]
            return None
        body = {
            "seat": self.seat,
            "action": self.rng.choice(view["legal_actions"]),
            "expected_version": view["version"],
        }
        bot.post(f"/v1/games/{self.game_id}/actions", json=body).raise_for_status()
        return (time.perf_counter() - started) * 1000

    def alice(self, samples: int) -> list[float]:
        """Plays on until alice made `samples` decisions; returns their times in ms."""
        found: list[float] = []
        while len(found) < samples:
            seat = self.seat
            took = self.decide()
            if took is not None and seat == 0:
                found.append(took)
        return found


def main(argv: list[str] | None = None) -> int:
    """Runs the benchmark and prints its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--posters", type=int, default=2)
    parser.add_argument("--streams", type=int, default=40)
    parser.add_argument("--cap", type=int, default=None, help="CARDARENA_MAX_STREAMS_PER_TOKEN")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # clean up when told to stop
    times: dict[str, list[float]] = {phase: [] for phase in PHASES}
    answers: dict[str, Counter[str]] = {phase: Counter() for phase in PHASES}
    busy = dict.fromkeys(PHASES, 0.0)
    spent = dict.fromkeys(PHASES, 0.0)
    games = 0
    try:
        settings = {"CARDARENA_MAX_STREAMS_PER_TOKEN": str(args.cap)} if args.cap else {}
        with game_service("floods", ADMIN_KEY, settings) as service:
            url = service.url
            names = ["alice", "bob", "mallory", *(f"reader{i}" for i in range(READER_TOKENS))]
            tokens = register_bots(url, ADMIN_KEY, names)
            table = Table(url, tokens[:2])
            watched = table.game_id
            floods = {
                "quiet": None,
                "a anonymous": Flood("posters", url, watched, (), args.posters),
                "a forged": Flood("posters", url, watched, (tokens[0],), args.posters),
                "b readers": Flood("readers", url, watched, tuple(tokens[3:]), 0),
                "c streams": Flood("streams", url, watched, (tokens[2],), args.streams),
            }
            try:
                for _ in range(args.rounds):
                    for phase, flood in floods.items():
                        with flooding(flood, answers[phase]):
                            cpu, started = service.cpu_seconds(), time.monotonic()
                            times[phase] += table.alice(args.samples)
                            busy[phase] += service.cpu_seconds() - cpu
                            spent[phase] += time.monotonic() - started
            finally:
                games = table.games
                table.close()
    except ServiceDidNotStart:
        print("the game service did not start", file=sys.stderr)
        return 1
    report(times, answers, games, args)
    print("game service's CPU while the bot played (share of one core):")
    for phase in PHASES:
        print(f"  {phase:<12} {busy[phase] / spent[phase]:6.0%}")
    return 0


def report(
    times: dict[str, list[float]],
    answers: dict[str, Counter[str]],
    games: int,
    args: argparse.Namespace,
) -> None:
    """Prints the turn times per phase, their ratios and how the floods were answered."""
    quiet = statistics.median(times["quiet"]), percentile(times["quiet"], 0.99)
    print(
        f"alice's turn time, ms ({args.rounds} rounds x {args.samples} decisions a phase,"
        f" {games} games)"
    )
    print(f"  {'phase':<12} {'p50':>8} {'p99':>8} {'p50 ratio':>10} {'p99 ratio':>10}  verdict")
    for phase, found in times.items():
        p50, p99 = statistics.median(found), percentile(found, 0.99)
        ratio = p50 / quiet[0]
        verdict = "" if phase == "quiet" else ("ok" if ratio <= TARGET_RATIO else "over")
        print(
            f"  {phase:<12} {p50:8.2f} {p99:8.2f} {ratio:10.2f} {p99 / quiet[1]:10.2f}  {verdict}"
        )
    print(f"target: p50 ratio at most {TARGET_RATIO:g} in each flood")
    for phase, counted in answers.items():
        if counted:
            shown = ", ".join(f"{status}: {n}" for status, n in sorted(counted.items()))
            print(f"  {phase} answered (all rounds): {shown}")


if __name__ == "__main__":
    sys.exit(main())
