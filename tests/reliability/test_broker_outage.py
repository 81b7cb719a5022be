"""The Celery broker unreachable between the event log and the workers (issue 15, part 4).

The stack runs with a broker of the test's own (a private redis-server as
CELERY_BROKER_URL; the event store stays on the shared Redis, under the test's namespace),
and without beat, so no reconciliation can hide a lost bot turn. With the broker stopped, a
move against a built-in bot, a creation of a game of bots and of a tournament each answer
either 503 with Retry-After and nothing appended, or 2xx; once the broker is back, the bots
play on and the tournament runs to its end (bounded waits, only to detect a hang), no
request answered 500 and no move was lost or appended twice. The same runs over RabbitMQ,
reached through a proxy of the test's own that it cuts, and over a Redis broker that goes
silent (a proxy that stops answering but keeps the connections open), where no request may
hang. And a deadline task that a worker holds when the broker goes down still fires once
it is back. See docs/security.md, part 4.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import kombu
import pytest
import redis

from services.workers.dispatch import TURN_DEADLINE
from shared.model.idempotency import HOST, client_key, game_id_for
from tests.support.faults import PrivateRedis, SilentProxy, TcpProxy, wait_for
from tests.support.stack import Stack, running_stack

RULES = {"max_moves": 400}
"""Classic Shithead with a move cap, so that a game of bots ends in bounded time."""
HUMAN, BOT = 0, 1
"""The seat the test plays (host-played, open mode) and the built-in bot's seat."""
SEAT_DECISIONS = {"CardsSwapped", "PlayerReady", "CardsPlayed", "FaceDownRevealed", "PilePickedUp"}
"""Shithead events that record a seat's own decision."""
DEADLINE_S = 5
"""The human seat's move deadline in the deadline test: past the broker's restart."""
OUTAGE_S = 3.0
"""How long the broker stays down after the requests: long enough for the game service's
sender to fail a few times and back off (its retries start at 0.1 s, double, up to 2 s)."""
TOURNAMENT = {
    "game": "beggar",
    "entrants": [{"bot": "turner"}, {"bot": "random"}, {"bot": "turner", "version": "2"}],
    "table_size": 2,
}
"""A small round robin of built-in bots: its games start, and the next ones follow, on the
workers."""
HOLD_S = 30.0
"""How long the silent-broker test lets a request take before it counts as held (a hang):
a send gives up on a silent broker after a few seconds."""
MAX_TRIES = 20
"""How many moves the test makes, while the broker is down, to give the bot a turn."""


class Answers:
    """Every answer the test got from the game service, to check that none was a 500."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.statuses: list[tuple[str, int]] = []

    def send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Sends a request and keeps its status."""
        response = self.http.request(method, path, **kwargs)
        self.statuses.append((f"{method} {path}", response.status_code))
        return response

    def game(self, game_id: str) -> dict[str, Any]:
        """Returns the game document (200)."""
        response = self.send("GET", f"/v1/games/{game_id}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def errors(self) -> list[tuple[str, int]]:
        """Returns the requests answered with a server error other than 503."""
        return [(what, status) for what, status in self.statuses if status >= 500 and status != 503]


def refused_cleanly(response: httpx.Response) -> bool:
    """Returns whether `response` is a 503 problem document with a Retry-After."""
    if response.status_code != 503:
        return False
    assert response.headers.get("Retry-After", "").isdigit(), response.headers
    assert response.headers["content-type"].startswith("application/problem+json")
    return True


def human_to_move(answers: Answers, game_id: str) -> dict[str, Any]:
    """Waits until the game waits for the human seat alone (the bot has played)."""

    def waiting() -> dict[str, Any] | None:
        game = answers.game(game_id)
        return game if game["status"] != "playing" or game["to_move"] == [HUMAN] else None

    return wait_for(waiting, f"the bot of {game_id} to play")


def move(answers: Answers, game_id: str, key: str) -> tuple[httpx.Response, dict[str, Any]]:
    """Posts the human seat's first legal action under `key`; returns the answer and the
    request's body."""
    view = answers.send("GET", f"/v1/games/{game_id}/view", params={"seat": HUMAN})
    assert view.status_code == 200, view.text
    turn = view.json()
    body = {"seat": HUMAN, "action": turn["legal_actions"][0], "expected_version": turn["version"]}
    posted = answers.send(
        "POST", f"/v1/games/{game_id}/actions", json=body, headers={"Idempotency-Key": key}
    )
    return posted, body


def assert_gapless(stack: Stack, game_id: str) -> int:
    """Asserts that the game's stream holds versions 1..n; returns n."""
    versions = [event.version for event in stack.store.read(game_id)]
    assert versions == list(range(1, len(versions) + 1)), f"{game_id}: gaps or repeats"
    return len(versions)


@dataclass
class Outage:
    """What the attack did: the game played against the bot, the game of bots, and the
    first version of each move of the human seat that was accepted."""

    game_id: str
    bots_game: str
    tournament_id: str = ""
    accepted: list[int] = field(default_factory=list)
    bot_due: bool = False
    """Whether an accepted move gave the bot the turn (its turn is the follow-up work)."""
    deferred: int = 0
    """How many requests the game service accepted while the broker was down."""
    kept: float = 0
    """The game service's `cardarena_outbox_records` at the end of the outage."""


def outage_and_return(
    stack: Stack, stop: Callable[[], None], restart: Callable[[], None], answers: Answers
) -> Outage:
    """Runs the attack: with the broker stopped (`stop()`), moves against the bot until one
    gives it the turn, and creates a game of bots; restarts the broker (`restart()`) and
    retries, with the same Idempotency-Key, what was refused."""
    seats = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]
    body = {"game": "shithead", "ruleset": RULES, "seed": 7, "seats": seats}
    created = answers.send("POST", "/v1/games", json=body)
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]
    human_to_move(answers, game_id)

    stop()
    bots_key = uuid.uuid4().hex
    outage = Outage(game_id, game_id_for(client_key(HOST, bots_key)))
    refused: tuple[str, dict[str, Any]] | None = None
    for _ in range(MAX_TRIES):
        before = stack.store.version(game_id)
        key = uuid.uuid4().hex
        posted, move_body = move(answers, game_id, key)
        if refused_cleanly(posted):
            assert stack.store.version(game_id) == before, "a refused move was appended"
            refused = (key, move_body)
            break
        assert posted.status_code in (200, 201), posted.text
        outage.accepted.append(posted.json()["first_version"])
        game = answers.game(game_id)
        if game["status"] == "playing" and BOT in game["to_move"]:
            outage.bot_due = True
            break
    bots_body = {"game": "shithead", "ruleset": RULES, "players": 2, "seed": 8}
    bots_headers = {"Idempotency-Key": bots_key}
    bots = answers.send("POST", "/v1/games", json=bots_body, headers=bots_headers)
    if refused_cleanly(bots):
        assert stack.store.version(outage.bots_game) == 0, "a refused creation made the game"
    else:
        assert bots.status_code == 201, bots.text
        assert bots.json()["game_id"] == outage.bots_game

    tournament = answers.send("POST", "/v1/tournaments", json=TOURNAMENT)
    if not refused_cleanly(tournament):
        assert tournament.status_code == 201, tournament.text
        outage.tournament_id = tournament.json()["tournament_id"]
    time.sleep(OUTAGE_S)  # the sender's retries fail meanwhile
    outage.kept = outbox_records(answers)
    outage.deferred = sum(1 for r in (bots, tournament) if r.status_code != 503)
    outage.deferred += 0 if refused is not None else 1
    restart()
    if refused is not None:  # a client retries what was refused, with the same key
        path, headers = f"/v1/games/{game_id}/actions", {"Idempotency-Key": refused[0]}
        retried = wait_for(
            lambda: accepted(answers.send("POST", path, json=refused[1], headers=headers)),
            "a refused move to be accepted once the broker is back",
        )
        outage.accepted.append(retried.json()["first_version"])
        outage.bot_due = True  # or the game waits for the human: `human_to_move` sees both
    if bots.status_code == 503:
        again = wait_for(
            lambda: accepted(
                answers.send("POST", "/v1/games", json=bots_body, headers=bots_headers)
            ),
            "a refused creation to be accepted once the broker is back",
        )
        assert again.json()["game_id"] == outage.bots_game
    if not outage.tournament_id:
        again = wait_for(
            lambda: accepted(answers.send("POST", "/v1/tournaments", json=TOURNAMENT)),
            "a refused tournament to be accepted once the broker is back",
        )
        outage.tournament_id = again.json()["tournament_id"]
    return outage


def accepted(response: httpx.Response) -> httpx.Response | None:
    """Returns `response` when it is a 2xx, None when it is a clean 503 (retry later)."""
    if refused_cleanly(response):
        return None
    assert response.status_code in (200, 201), response.text
    return response


def check_played_on(stack: Stack, answers: Answers, outage: Outage) -> None:
    """Asserts that, the broker back, the bot answered the human's last move, the game of
    bots played to its end, each accepted move is in the log once, and no 5xx but 503 came."""
    assert outage.accepted, "no move was accepted"
    assert outage.bot_due, "no accepted move gave the bot the turn"
    human_to_move(answers, outage.game_id)

    def over() -> dict[str, Any] | None:
        found = answers.game(outage.bots_game)
        return found if found["status"] != "playing" else None

    finished = wait_for(over, "the game of bots to play to its end")
    assert finished["status"] in {"finished", "capped"}

    def ended() -> dict[str, Any] | None:
        found = answers.send("GET", f"/v1/tournaments/{outage.tournament_id}")
        assert found.status_code == 200, found.text
        return found.json() if found.json()["status"] != "running" else None

    assert wait_for(ended, "the tournament to play to its end")["status"] == "finished"
    assert assert_gapless(stack, outage.bots_game) == finished["version"]
    assert_gapless(stack, outage.game_id)
    page = answers.send("GET", f"/v1/games/{outage.game_id}/events", params={"seat": HUMAN})
    log = {event["version"]: event for event in page.json()["events"]}
    for first in outage.accepted:
        assert log[first]["type"] in SEAT_DECISIONS, log[first]
        assert log[first]["data"]["seat"] == HUMAN, log[first]
    assert answers.errors() == [], "a request answered a server error"
    assert outage.kept >= (1 if outage.deferred else 0), "no work waited for the broker"
    wait_for(lambda: outbox_records(answers) == 0, "the outbox to be sent")


def outbox_records(answers: Answers) -> float:
    """Returns the game service's `cardarena_outbox_records` (0 when it has none)."""
    exposition = answers.send("GET", "/metrics")
    assert exposition.status_code == 200, exposition.text
    for line in exposition.text.splitlines():
        if line.startswith("cardarena_outbox_records "):
            return float(line.split()[1])
    return 0.0


@pytest.fixture
def broker_stack(
    private_redis: PrivateRedis,
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
) -> Iterator[Stack]:
    """The stack (no beat) with the private Redis as its Celery broker."""
    extra = {"CELERY_BROKER_URL": private_redis.url, "CARDARENA_RECONCILE_SECONDS": "0"}
    with running_stack(redis_url, redis_client, namespace, database_url, extra) as started:
        yield started


def test_a_stopped_redis_broker_loses_no_move_and_no_bot_turn_and_answers_no_500(
    broker_stack: Stack, private_redis: PrivateRedis
) -> None:
    with httpx.Client(base_url=broker_stack.base_url, timeout=30) as http:
        answers = Answers(http)
        outage = outage_and_return(broker_stack, private_redis.kill, private_redis.start, answers)
        check_played_on(broker_stack, answers, outage)


@pytest.fixture
def silent_broker(private_redis: PrivateRedis) -> Iterator[SilentProxy]:
    """A proxy to the private Redis, which the test makes silent."""
    with SilentProxy(("127.0.0.1", private_redis.port)) as proxy:
        yield proxy


def test_a_silent_redis_broker_holds_no_request_and_loses_no_bot_turn(
    silent_broker: SilentProxy,
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
) -> None:
    broker = f"redis://127.0.0.1:{silent_broker.port}/0"
    extra = {"CELERY_BROKER_URL": broker, "CARDARENA_RECONCILE_SECONDS": "0"}
    with (
        running_stack(redis_url, redis_client, namespace, database_url, extra) as stack,
        httpx.Client(base_url=stack.base_url, timeout=HOLD_S) as http,
    ):
        answers = Answers(http)  # a request held HOLD_S by the silent broker fails: a hang
        outage = outage_and_return(stack, silent_broker.hold, silent_broker.release, answers)
        check_played_on(stack, answers, outage)


RABBITMQ = ("127.0.0.1", 5672)
"""The shared RabbitMQ; the test reaches it through a proxy of its own, which it cuts."""


@pytest.fixture
def rabbit_proxy() -> Iterator[TcpProxy]:
    """A proxy to the shared RabbitMQ (skips the test when RabbitMQ does not answer)."""

    try:
        socket.create_connection(RABBITMQ, timeout=2).close()
    except OSError:
        pytest.skip("RabbitMQ does not answer on 127.0.0.1:5672")
    with TcpProxy(RABBITMQ) as proxy:
        yield proxy


def delete_queue(queue: str) -> None:
    """Deletes the test's queue and exchange (both named `queue`) from the shared RabbitMQ."""
    with kombu.Connection(f"amqp://guest:guest@{RABBITMQ[0]}:{RABBITMQ[1]}//") as conn:
        exchange = kombu.Exchange(queue, type="direct")
        kombu.Queue(queue, exchange, routing_key=queue).bind(conn.default_channel).delete()
        exchange.bind(conn.default_channel).delete()


def test_a_cut_rabbitmq_broker_loses_no_move_and_no_bot_turn_and_answers_no_500(
    rabbit_proxy: TcpProxy,
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
) -> None:
    broker = f"amqp://guest:guest@127.0.0.1:{rabbit_proxy.port}//"
    extra = {"CELERY_BROKER_URL": broker, "CARDARENA_RECONCILE_SECONDS": "0"}
    try:
        with (
            running_stack(redis_url, redis_client, namespace, database_url, extra) as stack,
            httpx.Client(base_url=stack.base_url, timeout=30) as http,
        ):
            answers = Answers(http)
            outage = outage_and_return(stack, rabbit_proxy.pause, rabbit_proxy.resume, answers)
            check_played_on(stack, answers, outage)
    finally:
        delete_queue(f"{namespace}bots")


def test_a_deadline_the_worker_held_when_the_redis_broker_went_down_still_fires(
    broker_stack: Stack, private_redis: PrivateRedis, namespace: str
) -> None:
    broker = private_redis.client()
    clock = {"move_seconds": DEADLINE_S, "strikes_to_forfeit": 100}
    seats = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]
    body = {"game": "shithead", "ruleset": RULES, "seed": 7, "seats": seats, "clock": clock}
    with httpx.Client(base_url=broker_stack.base_url, timeout=30) as http:
        answers = Answers(http)
        created = answers.send("POST", "/v1/games", json=body)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        human_to_move(answers, game_id)
        # The worker holds the human's deadline task (unacknowledged, until its time): not
        # just the bot's turn task, which it may still hold while it sends the deadline.

        def deadline_held() -> bool:
            held = broker.hvals(f"{namespace}unacked")
            return any(TURN_DEADLINE.encode() in message for message in held)

        wait_for(deadline_held, "the worker to hold the deadline")
        private_redis.kill()
        private_redis.start()

        def timed_out() -> bool:
            page = answers.send("GET", f"/v1/games/{game_id}/events").json()["events"]
            return any(event["type"] == "TurnTimedOut" for event in page)

        wait_for(timed_out, "the human's deadline to be enforced")
        assert answers.errors() == []
    broker.close()
