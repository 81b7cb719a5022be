"""Idempotency keys as an attacker sends them: a bot's own token and `Idempotency-Key`s
shaped like the platform's own append keys (`bot:<v>`, `timeout:<v>`, `webhook:<v>:<seat>`),
against the real stack (game service, two Celery worker processes, projection; Redis and
PostgreSQL). A client's key lives in its own namespace (`client:<caller>:<key>`), so none
of them reaches a platform append: the built-in bot still moves, the clock still strikes,
the webhook seat is not struck. And a reused key on `POST /v1/tournaments` is refused.

The attacker guesses the version its key must name: a Shithead move appends two events
most of the time (a play and the turn's end), so `bot:<v+2>` after its move at `v` is the
built-in opponent's next key. Each test checks that its key did land on that version at
least once, so the attack was really made. Beat is not run: no reconciliation hides a
frozen game. Waits are bounded only to detect a hang.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import redis

from shared.catalog import get_game
from shared.messages.common import Event, SeatForfeited, TurnTimedOut
from shared.messages.envelope import RecordedEvent
from shared.sdk.client import Client
from tests.support.faults import WAIT_S, wait_for
from tests.support.stack import ADMIN_KEY, Stack, free_port, register_bot, running_stack

RULES = {"max_moves": 400}
"""Classic Shithead with a move cap, so that every game ends in bounded time."""
SHORT_CLOCK = {"move_seconds": 3, "bank_seconds": 0}
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


@dataclass
class Arena:
    """A secured stack whose workers may call loopback webhooks and serve their metrics."""

    stack: Stack
    metrics_url: str

    @property
    def url(self) -> str:
        """Returns the game service's base URL."""
        return self.stack.base_url

    def stalls(self) -> float:
        """Returns how many platform loops the workers counted as stalled."""
        text = httpx.get(self.metrics_url, timeout=10).text
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith("cardarena_platform_stalls_total")
        )


@pytest.fixture
def arena(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Arena]:
    """Runs the stack with an admin key, no rate limit, private webhooks allowed, and the
    workers' metrics on a port of its own."""
    port = free_port()
    extra = {
        "CARDARENA_ADMIN_KEY": ADMIN_KEY,
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_WEBHOOK_ALLOW_PRIVATE": "1",
        "CARDARENA_WORKERS_METRICS_PORT": str(port),
    }
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as stack:
        yield Arena(stack, f"http://127.0.0.1:{port}/metrics")


def create_game(url: str, seats: list[dict[str, Any]], seed: int, **fields: Any) -> str:
    """Creates a Shithead game as the host; returns its id."""
    with Client(url, token=ADMIN_KEY) as host:
        return host.create_game("shithead", seats, ruleset=RULES, seed=seed, **fields)


def log_of(stack: Stack, game_id: str) -> list[tuple[RecordedEvent, Event]]:
    """Returns the game's log from the store, each entry with its decoded event."""
    recorded = stack.store.read(game_id)
    return list(zip(recorded, get_game("shithead").codec.decode_all(recorded), strict=True))


def status_of(url: str, game_id: str) -> str:
    """Returns the game's public status (`playing` while it runs)."""
    status: str = httpx.get(f"{url}/v1/games/{game_id}", timeout=30).json()["status"]
    return status


@dataclass
class Attack:
    """What an attacking seat did: its moves, and the versions its keys landed on."""

    moves: int = 0
    landed: list[int] = field(default_factory=list)
    """The versions after its move that its key named exactly (the attack was made)."""
    first_landing: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    """Set by the test: the attacker stops at its next turn."""


def attack(
    url: str,
    token: str,
    game_id: str,
    key: Callable[[int], str],
    steps: int,
    *,
    done: Attack | None = None,
    until: Callable[[int], bool] = lambda _version: False,
) -> Attack:
    """Plays seat 0 of `game_id` with `token` (its first legal action) until the game ends,
    `done.stop` is set or `until(version)` holds at a turn; each move at version `v` carries
    `Idempotency-Key: key(v)`, which lands when the move reaches version `v + steps`."""
    done = done if done is not None else Attack()
    headers = {"Authorization": f"Bearer {token}"}
    deadline = time.monotonic() + 4 * WAIT_S
    with Client(url, token=token) as bot, httpx.Client(base_url=url, headers=headers) as http:
        while time.monotonic() < deadline and not done.stop.is_set():
            view = bot.wait_turn(game_id, 0, wait=2)
            if view.status != "playing":
                break
            if not view.legal_actions:
                continue
            if until(view.version):
                break
            body = {"seat": 0, "action": view.legal_actions[0], "expected_version": view.version}
            sent = {"Idempotency-Key": key(view.version)}
            answer = http.post(f"/v1/games/{game_id}/actions", json=body, headers=sent, timeout=30)
            if answer.status_code == 409:  # the clock played the seat first
                continue
            assert answer.status_code == 200, answer.text
            assert answer.json()["replayed"] is False, answer.text
            done.moves += 1
            if answer.json()["version"] == view.version + steps:
                done.landed.append(view.version + steps)
                done.first_landing.set()
    return done


@contextlib.contextmanager
def attacking(runs: list[Callable[[Attack], object]]) -> Iterator[list[Attack]]:
    """Runs each `run(attack)` in a thread of its own while the block runs; stops and joins
    them."""
    attacks = [Attack() for _ in runs]
    threads = [
        threading.Thread(target=run, args=(done,), daemon=True)
        for run, done in zip(runs, attacks, strict=True)
    ]
    for thread in threads:
        thread.start()
    try:
        yield attacks
    finally:
        for done in attacks:
            done.stop.set()
        for thread in threads:
            thread.join(timeout=WAIT_S)


def test_a_bot_sending_the_platforms_bot_key_does_not_freeze_its_game_nor_the_workers(
    arena: Arena,
) -> None:
    """`bot:<version after its move>` is the built-in opponent's next append key: on the old
    code that append was answered "replayed", the game froze and the worker playing it
    spun (two such games took both workers, and every other game stalled)."""
    token = register_bot(arena.url, "mallory")
    seats = [{"kind": "external", "bot": "mallory", "version": "1"}, {"kind": "bot"}]
    games = [create_game(arena.url, seats, seed) for seed in (1, 2)]

    def playing(game_id: str) -> Callable[[Attack], object]:
        return lambda done: attack(arena.url, token, game_id, _bot_key, 2, done=done)

    with attacking([playing(game_id) for game_id in games]) as attacks:
        # Once both games carry a landed key (each would hold a spinning worker), an
        # unrelated game of built-in bots is still played to its end, and so are they.
        wait_for(lambda: all(a.first_landing.is_set() for a in attacks), "both attacks to land")
        bystander = create_game(arena.url, [{"kind": "bot"}] * 4, seed=3)
        wait_for(lambda: status_of(arena.url, bystander) != "playing", "the bystander's end")
        wait_for(lambda: _over(arena.url, games), "the attacked games' end")
    for game_id, done in zip(games, attacks, strict=True):
        log = log_of(arena.stack, game_id)
        versions = {item.version for item, _ in log}
        # After every landed key the game went on (unless that move ended it).
        last = max(versions)
        assert all(v + 1 in versions or v == last for v in done.landed), done.landed
        first = done.landed[0]
        opponent = [e for item, e in log if item.version > first and getattr(e, "seat", 0) == 1]
        assert opponent, "the built-in opponent never moved after the key landed"
    assert arena.stalls() == 0


def _over(url: str, games: list[str]) -> bool:
    """Returns whether every game of `games` is over."""
    return all(status_of(url, game_id) != "playing" for game_id in games)


def _bot_key(version: int) -> str:
    """Returns the built-in opponent's key after a two-event move at `version`."""
    return f"bot:{version + 2}"


def test_a_bot_sending_the_platforms_timeout_key_is_still_struck_by_its_clock(
    arena: Arena,
) -> None:
    """`timeout:<v>`, planted by a move before the seat's wait at `v` began, was the key of
    that wait's timeout: on the old code its enforcement was answered "replayed" and the
    seat escaped its 3 s clock (and, without reconciliation, forever)."""
    token = register_bot(arena.url, "mallory")
    seats = [{"kind": "external", "bot": "mallory", "version": "1"}, {"kind": "bot"}]
    game_id = create_game(arena.url, seats, seed=5, clock=SHORT_CLOCK)
    # Its move at v plants `timeout:<v + 4>`: after its two events and the opponent's two,
    # its next wait begins at v + 4. It stops moving at the first wait that begins there.
    planted: list[int] = []

    def key(version: int) -> str:
        planted.append(version + 4)
        return f"timeout:{version + 4}"

    def reached(version: int) -> bool:
        return bool(planted) and version == planted[-1]

    done = attack(arena.url, token, game_id, key, 2, until=reached)
    assert planted, "the seat never moved"
    wait = planted[-1]
    assert status_of(arena.url, game_id) == "playing", "the game ended before a key landed"

    def strike() -> tuple[RecordedEvent, Event] | None:
        log = log_of(arena.stack, game_id)
        struck = [
            (item, event)
            for item, event in log
            if item.version > wait and isinstance(event, TurnTimedOut) and event.seat == 0
        ]
        return struck[0] if struck else None

    item, _ = wait_for(strike, "the clock to strike the seat that planted the key")
    begun = max(i.recorded_at for i, _ in log_of(arena.stack, game_id) if i.version <= wait)
    late_ms = item.recorded_at - begun - SHORT_CLOCK["move_seconds"] * 1000
    assert late_ms >= 0, "the clock struck before the deadline"
    print(
        f"\nthe wait begun at version {wait} ({done.moves} moves in) was struck {late_ms} ms late"
    )
    assert arena.stalls() == 0


class WebhookBot(ThreadingHTTPServer):
    """A webhook bot on a free loopback port that answers every turn with its first legal
    action (signature checks are `tests/integration/test_webhooks.py`'s)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.turns = 0

    @property
    def url(self) -> str:
        """Returns the URL the bot listens at."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/turn"


class _Handler(BaseHTTPRequestHandler):
    server: WebhookBot

    def do_POST(self) -> None:
        """Answers the turn with its first legal action."""
        turn = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.server.turns += 1
        body = json.dumps({"action": turn["legal_actions"][0]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keeps the test's output quiet."""


@pytest.fixture
def webhook_bot() -> Iterator[WebhookBot]:
    """Runs a webhook bot in a thread while the test runs."""
    bot = WebhookBot()
    thread = threading.Thread(target=bot.serve_forever, daemon=True)
    thread.start()
    yield bot
    bot.shutdown()
    bot.server_close()
    thread.join(timeout=10)


def test_a_bot_sending_the_webhook_seats_key_does_not_make_a_legal_webhook_bot_forfeit(
    arena: Arena, webhook_bot: WebhookBot
) -> None:
    """`webhook:<v>:1` is the key of webhook seat 1's answer to its turn begun at `v`: on
    the old code that answer was answered "replayed" (and not appended), so a webhook bot
    answering every call legally was struck at each deadline and forfeited."""
    token = register_bot(arena.url, "mallory")
    register_bot(arena.url, "hook", kind="webhook", url=webhook_bot.url)
    seats = [
        {"kind": "external", "bot": "mallory", "version": "1"},
        {"kind": "webhook", "bot": "hook", "version": "1"},
    ]
    game_id = create_game(arena.url, seats, seed=7, clock=SHORT_CLOCK)
    done = attack(arena.url, token, game_id, lambda v: f"webhook:{v + 2}:1", 2)
    wait_for(lambda: status_of(arena.url, game_id) != "playing", "the game's end")
    assert done.landed, "no key named the webhook seat's turn"
    assert webhook_bot.turns > 0
    struck = [
        (item.version, event)
        for item, event in log_of(arena.stack, game_id)
        if isinstance(event, TurnTimedOut | SeatForfeited) and event.seat == 1
    ]
    assert not struck, f"the webhook seat was struck: {struck}; keys landed at {done.landed}"
    assert arena.stalls() == 0


TOURNAMENT: dict[str, Any] = {
    "game": "beggar",
    "format": "round_robin",
    "entrants": [{"bot": "turner", "version": "a"}, {"bot": "turner", "version": "b"}],
    "table_size": 2,
    "games_per_table": 1,
}


def test_a_reused_tournament_key_with_another_body_is_422_and_a_replay_is_200(
    arena: Arena,
) -> None:
    with httpx.Client(base_url=arena.url, headers=ADMIN, timeout=30) as http:
        key = {"Idempotency-Key": "cup-2026"}
        first = http.post("/v1/tournaments", json=TOURNAMENT, headers=key)
        assert first.status_code == 201, first.text
        again = http.post("/v1/tournaments", json=TOURNAMENT, headers=key)
        assert again.status_code == 200, again.text
        assert again.json()["tournament_id"] == first.json()["tournament_id"]
        other = http.post("/v1/tournaments", json={**TOURNAMENT, "games_per_table": 2}, headers=key)
        assert other.status_code == 422, other.text
        problem = other.json()
        assert problem["type"].endswith(":idempotency-key-reused"), problem
        assert problem["field"] == "Idempotency-Key"
        tournament_id = first.json()["tournament_id"]
        kept = http.get(f"/v1/tournaments/{tournament_id}").json()
        assert kept["definition"]["games_per_table"] == 1
        stream = f"tournament:{tournament_id}"
        version = arena.stack.store.version(stream)
        assert http.post("/v1/tournaments", json=TOURNAMENT, headers=key).status_code == 200
        assert arena.stack.store.version(stream) >= version
