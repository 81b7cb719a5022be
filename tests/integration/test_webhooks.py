"""Webhook bots and clocks on a real Celery worker, against a real HTTP server in the test.

The server plays the webhook seat: it answers correctly, never answers, or answers garbage.
Clocks are short (a 1 s move, no bank) except where a correct bot must never time out;
nothing asserts on durations: the tests poll the log with generous timeouts.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest
import redis
from celery import Celery

from services.workers.dispatch import CeleryDispatcher
from services.workers.webhooks import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.registry import register
from shared.catalog import get_game
from shared.games.autobus.messages import CardDiscarded, CardUnderTheBus, TurnEnded
from shared.messages.common import (
    Clock,
    DefaultActionPlayed,
    Event,
    GameFinished,
    NoteTaken,
    Seat,
    SeatForfeited,
    TurnTimedOut,
    WebhookFailed,
)
from shared.model.registry import BotSpec
from shared.store.redis_store import RedisEventStore

Mode = Literal["correct", "silent", "garbage"]
SHORT = Clock(move_seconds=1, bank_seconds=0)


class WebhookBot(ThreadingHTTPServer):
    """A webhook bot on a free local port: it checks each request's signature, then answers
    as its `mode` says."""

    daemon_threads = True

    def __init__(self, mode: Mode) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.secret = ""
        self.verified: list[bool] = []
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()

    @property
    def url(self) -> str:
        """Returns the URL the bot listens at."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/turn"


class _Handler(BaseHTTPRequestHandler):
    server: WebhookBot

    def do_POST(self) -> None:
        """Records the request and whether its signature verifies, then answers by mode."""
        body = self.rfile.read(int(self.headers["content-length"]))
        bot = self.server
        bot.verified.append(
            verify_signature(
                bot.secret,
                self.headers[TIMESTAMP_HEADER] or "",
                body,
                self.headers[SIGNATURE_HEADER] or "",
            )
        )
        turn = json.loads(body)
        bot.requests.append(turn)
        if bot.mode == "silent":
            bot.release.wait(30)
            return
        if bot.mode == "garbage":
            self._answer(b"this is not an action")
            return
        note = f"hook-note: v{turn['version']}"
        self._answer(json.dumps({"action": turn["legal_actions"][0], "note": note}).encode())

    def _answer(self, body: bytes) -> None:
        """Sends `body` as a 200 JSON answer."""
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keeps the test's output quiet."""


@pytest.fixture
def webhook_bot(request: pytest.FixtureRequest) -> Iterator[WebhookBot]:
    """Runs a webhook bot in a thread, in the mode the test is parametrized with."""
    bot = WebhookBot(request.param)
    thread = threading.Thread(target=bot.serve_forever, daemon=True)
    thread.start()
    yield bot
    bot.release.set()
    bot.shutdown()
    bot.server_close()
    thread.join(timeout=10)


def _store(redis_client: redis.Redis, namespace: str) -> RedisEventStore:
    """Returns the event store of this test's namespace (the worker's too)."""
    return RedisEventStore(redis_client, namespace=namespace)


def _hook_seat(store: RedisEventStore, bot: WebhookBot, game: str) -> Seat:
    """Registers the bot (on 127.0.0.1: private webhooks allowed, in the worker too) as
    webhook bot `hook@1` of `game`; returns a seat bound to it."""
    spec = BotSpec(name="hook", game=game, kind="webhook", url=bot.url)
    registration = register(store, spec, allow_private_urls=True)
    assert registration.credentials is not None
    bot.secret = registration.credentials.signing_secret
    return Seat(kind="webhook", name="hook", version="1")


def _events(store: RedisEventStore, game_id: str) -> list[Event]:
    """Returns the game's decoded log."""
    spec = get_game(store.read(game_id, limit=1)[0].kind)
    return spec.codec.decode_all(store.read(game_id))


def _wait_for(
    store: RedisEventStore,
    game_id: str,
    done: Callable[[list[Event]], bool],
    what: str,
    seconds: float = 180,
) -> list[Event]:
    """Polls the game's log until `done` holds, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        events = _events(store, game_id)
        if done(events):
            return events
        time.sleep(0.2)
    pytest.fail(f"{what} did not happen in {seconds}s; log: {_events(store, game_id)[-5:]}")


def _finished(events: list[Event]) -> bool:
    """Returns whether the log holds the game's end."""
    return any(isinstance(e, GameFinished) for e in events)


@pytest.mark.parametrize("webhook_bot", ["correct"], indirect=True)
def test_a_webhook_that_answers_plays_its_seat_to_the_end_and_every_request_is_signed(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
    webhook_bot: WebhookBot,
) -> None:
    store = _store(redis_client, namespace)
    seats = [_hook_seat(store, webhook_bot, "autobus"), Seat(kind="bot", bot="random")]
    clock = Clock(move_seconds=30, bank_seconds=60)
    rules = {"main_pile": 3, "max_turns": 20}
    game_id = create_game(store, "autobus", ruleset=rules, seats=seats, seed=3, clock=clock).game_id
    CeleryDispatcher(celery_app, f"{namespace}bots").dispatch(game_id)
    events = _wait_for(store, game_id, _finished, "the game's end")
    assert webhook_bot.requests, "the webhook was never called"
    assert all(webhook_bot.verified)
    assert {r["seat"] for r in webhook_bot.requests} == {0}
    first = webhook_bot.requests[0]
    assert set(first) == {
        "game_id",
        "game",
        "seat",
        "version",
        "deadline",
        "view",
        "legal_actions",
    }
    assert first["game_id"] == game_id
    assert not [e for e in events if isinstance(e, TurnTimedOut | WebhookFailed)]
    assert not [e for e in events if isinstance(e, DefaultActionPlayed)]
    turns_ended = (CardDiscarded, CardUnderTheBus, TurnEnded)
    assert [e for e in events if isinstance(e, turns_ended) and e.seat == 0]
    loaded = load(store, game_id)
    assert loaded.spec.is_over(loaded.state)
    noted = [(i, e) for i, e in enumerate(events) if isinstance(e, NoteTaken)]
    assert 0 < len(noted) <= len(webhook_bot.requests), "an answer's note is taken with its move"
    assert all(e.seat == 0 and e.text.startswith("hook-note: v") for _, e in noted)
    assert all(not isinstance(events[i + 1], NoteTaken) for i, _ in noted)


@pytest.mark.parametrize("webhook_bot", ["silent"], indirect=True)
def test_a_webhook_that_never_answers_is_struck_three_times_forfeits_and_places_last(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
    webhook_bot: WebhookBot,
) -> None:
    store = _store(redis_client, namespace)
    bots = [Seat(kind="bot", bot="random"), Seat(kind="bot", bot="random")]
    seats = [_hook_seat(store, webhook_bot, "shithead"), *bots]
    clock = Clock(move_seconds=2, bank_seconds=0)
    game_id = create_game(store, "shithead", seats=seats, seed=4, clock=clock).game_id
    CeleryDispatcher(celery_app, f"{namespace}bots").dispatch(game_id)
    events = _wait_for(store, game_id, _finished, "the game's end")
    assert [e.strikes for e in events if isinstance(e, TurnTimedOut) and e.seat == 0] == [1, 2, 3]
    assert [e.seat for e in events if isinstance(e, SeatForfeited)] == [0]
    failures = [e for e in events if isinstance(e, WebhookFailed)]
    assert failures
    assert {f.reason for f in failures} == {"timeout"}
    (finished,) = [e for e in events if isinstance(e, GameFinished)]
    assert finished.result.places[0] == 3
    assert all(webhook_bot.verified)


@pytest.mark.parametrize("webhook_bot", ["garbage"], indirect=True)
def test_a_webhook_answering_garbage_is_recorded_as_failed_then_given_the_default_action(
    worker: subprocess.Popen[bytes],
    celery_app: Celery,
    redis_client: redis.Redis,
    namespace: str,
    webhook_bot: WebhookBot,
) -> None:
    store = _store(redis_client, namespace)
    seats = [_hook_seat(store, webhook_bot, "autobus"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=5, clock=SHORT).game_id
    CeleryDispatcher(celery_app, f"{namespace}bots").dispatch(game_id)

    def failed_then_defaulted(events: list[Event]) -> bool:
        failed = [i for i, e in enumerate(events) if isinstance(e, WebhookFailed)]
        return bool(failed) and any(isinstance(e, DefaultActionPlayed) for e in events[failed[0] :])

    # The first turn's deadline may pass while the worker starts: the first failure
    # recorded is the one to follow.
    events = _wait_for(store, game_id, failed_then_defaulted, "a failure, then a default action")
    first_failure = next(i for i, e in enumerate(events) if isinstance(e, WebhookFailed))
    failure = events[first_failure]
    assert isinstance(failure, WebhookFailed)
    assert (failure.seat, failure.reason) == (0, "invalid_answer")
    after = events[first_failure:]
    first_timeout = next(i for i, e in enumerate(after) if isinstance(e, TurnTimedOut))
    assert all(isinstance(e, WebhookFailed) for e in after[:first_timeout])
    timed_out, played = after[first_timeout : first_timeout + 2]
    assert isinstance(timed_out, TurnTimedOut)
    assert timed_out.seat == 0
    assert isinstance(played, DefaultActionPlayed)
    assert (played.seat, played.reason) == (0, "timeout")
    assert all(webhook_bot.verified)


def test_an_external_seat_that_never_moves_is_timed_out_by_the_worker_and_forfeits(
    worker: subprocess.Popen[bytes], celery_app: Celery, redis_client: redis.Redis, namespace: str
) -> None:
    store = _store(redis_client, namespace)
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=6, clock=SHORT).game_id
    CeleryDispatcher(celery_app, f"{namespace}bots").dispatch(game_id)
    events = _wait_for(store, game_id, _finished, "the game's end")
    assert [e.strikes for e in events if isinstance(e, TurnTimedOut)] == [1, 2, 3]
    assert [e.seat for e in events if isinstance(e, SeatForfeited)] == [0]
    (finished,) = [e for e in events if isinstance(e, GameFinished)]
    assert finished.result.places[0] == 3
    assert finished.result.reason.endswith("forfeited: seat 0")
    versions = [item.version for item in store.read(game_id)]
    assert versions == list(range(1, len(versions) + 1))
