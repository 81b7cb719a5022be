"""Revocation, consent and a fair share of capacity, tried on the real stack (game service,
worker and projection over Redis and PostgreSQL) with public requests and bot tokens only.

- A rotated or revoked token's open streams (a seat's game stream, `/v1/bots/me/events`)
  end at once and its long polls (`GET .../turn?wait=`, `GET /v1/bots/me/turns?wait=`)
  answer 401 at once; nothing after the revocation reaches them (not the game created after
  it, not the opponent's move).
- A hundred and more anonymous spectator streams leave the bots their long polls, turns and
  streams, and those beyond the cap get 503 (beyond the rate limit: 429), with Retry-After.
- Floods (issue 32): strangers' 1 MiB writes (anonymous, a forged token) are 401 without
  their body being read (answered when it is never sent) while the bots play on; a bot's
  write padded past 16 KiB is 413; a token's streams and long polls past
  `CARDARENA_MAX_STREAMS_PER_TOKEN` are 429 while another token streams and it still moves.
- A bot holds at most `CARDARENA_MAX_OPEN_CHALLENGES` open challenges; a webhook bot is
  seated by a challenge only as its `accept_challenges` allows.

Waits are bounded only to detect hangs: `BOUND_S` is far below a stream's lifetime (600 s),
the time an open stream went on for after its token's revocation before this was fixed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
import redis

from shared.messages.envelope import RecordedEvent
from shared.model import registry
from shared.sdk.client import StreamEvent, parse_sse
from tests.support.api import bot_client, problem, register, unauthorized
from tests.support.faults import wait_for
from tests.support.stack import ADMIN_KEY, Stack, running_stack

SECURED = {"CARDARENA_ADMIN_KEY": ADMIN_KEY, "CARDARENA_RATE_LIMIT": "0"}
"""A stack with an admin key, and no rate limit on bot tokens (tests send many requests)."""
BOUND_S = 60.0
"""The longest any stream here may take to end, or a request to be answered: a hang."""
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


@contextlib.contextmanager
def stack_with(
    redis_url: str,
    redis_client: redis.Redis,
    namespace: str,
    database_url: str,
    **settings: str,
) -> Iterator[Stack]:
    """Runs a secured stack with these extra settings while the block runs."""
    env = {**SECURED, **settings}
    with running_stack(redis_url, redis_client, namespace, database_url, env) as started:
        yield started


@pytest.fixture
def secured(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """A secured stack with the default settings."""
    with stack_with(redis_url, redis_client, namespace, database_url) as started:
        yield started


class Host:
    """The host's requests (the admin key)."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers=ADMIN, timeout=BOUND_S)

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def register(self, name: str, game: str = "autobus", **fields: Any) -> dict[str, Any]:
        """Registers the bot `name@1` (external unless `fields` say otherwise); returns it."""
        spec = {"name": name, "game": game, "kind": "external", **fields}
        return register(self.http, spec, admin={})  # the client sends the admin key

    def game(self, *bots: str) -> str:
        """Creates an Autobus game seating the external bots `bots` in order; returns its id."""
        seats = [{"kind": "external", "bot": bot, "version": "1"} for bot in bots]
        created = self.http.post("/v1/games", json={"game": "autobus", "seats": seats})
        assert created.status_code == 201, created.text
        game_id: str = created.json()["game_id"]
        return game_id


class Streamed:
    """One server-sent-events GET read in a thread of its own: its status, each event with
    the moment it came, and whether the stream has ended. Closed when the block ends."""

    def __init__(self, url: str, path: str, token: str | None, **params: Any) -> None:
        self._http = bot_client(url, token, timeout=httpx.Timeout(BOUND_S, read=None))
        self._path, self._params = path, params
        self.status: int | None = None
        self.headers: httpx.Headers | None = None
        self.body = b""
        self.events: list[tuple[float, StreamEvent]] = []
        self.opened = threading.Event()
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> Streamed:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def cut(self) -> None:
        """Drops the connection (a stream still open is cut; its reader notices at the next
        keep-alive)."""
        self._http.close()

    def close(self) -> None:
        """Drops the connection and waits for the reader to stop."""
        self.cut()
        self._thread.join(timeout=BOUND_S)

    def _read(self) -> None:
        with (
            contextlib.suppress(httpx.HTTPError, RuntimeError),
            self._http.stream("GET", self._path, params=self._params) as response,
        ):
            self.status, self.headers = response.status_code, response.headers
            if response.status_code != 200:
                self.body = response.read()
            self.opened.set()
            for event in parse_sse(response.iter_lines()):
                self.events.append((time.monotonic(), event))
        self.opened.set()
        self.ended.set()

    def after(self, moment: float) -> list[StreamEvent]:
        """Returns the events that came after `moment`."""
        return [event for at, event in self.events if at > moment]


class Polled:
    """One long-poll GET (or, with `body`, POST) sent in a thread of its own: its answer
    once it came."""

    def __init__(self, url: str, path: str, token: str, body: Any = None, **params: Any) -> None:
        self._http = bot_client(url, token, timeout=BOUND_S + 70)
        self._path, self._params, self._body = path, params, body
        self.response: httpx.Response | None = None
        self.answered = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> Polled:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()
        self._thread.join(timeout=BOUND_S)

    def _poll(self) -> None:
        with contextlib.suppress(httpx.HTTPError, RuntimeError):
            if self._body is None:
                self.response = self._http.get(self._path, params=self._params)
            else:
                self.response = self._http.post(self._path, params=self._params, json=self._body)
        self.answered.set()


def action(url: str, token: str, game_id: str, seat: int, ending: bool = False) -> dict[str, Any]:
    """Returns the body posting `seat`'s first legal action (with `ending`, its first
    discard: the end of its Autobus turn), read with `token`."""
    with bot_client(url, token, timeout=BOUND_S) as bot:
        view = bot.get(f"/v1/games/{game_id}/view", params={"seat": seat}).json()
    legal = [a for a in view["legal_actions"] if not ending or a["type"] == "Discard"]
    return {"seat": seat, "action": legal[0], "expected_version": view["version"]}


def move(url: str, token: str, game_id: str, seat: int, ending: bool = False) -> None:
    """Plays `seat`'s first legal action (with `ending`, its first discard) with `token`."""
    body = action(url, token, game_id, seat, ending)
    with bot_client(url, token, timeout=BOUND_S) as bot:
        played = bot.post(f"/v1/games/{game_id}/actions", json=body)
        assert played.status_code == 200, played.text


def assert_unauthorized(polled: Polled) -> None:
    """Asserts the long poll was answered 401 (its token ended), carrying no view or turn."""
    assert polled.answered.wait(BOUND_S), "the long poll is still waiting"
    response = polled.response
    assert response is not None
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "legal_actions" not in response.text
    assert "turns" not in response.json()


# Revocation and rotation ----------------------------------------------------------------


@pytest.mark.parametrize("ending", ["revoke", "rotate"])
def test_a_revoked_or_rotated_token_ends_its_streams_and_long_polls_at_once(
    secured: Stack, ending: str
) -> None:
    url = secured.base_url
    with Host(url) as host:
        alice, bob = host.register("alice")["token"], host.register("bob")["token"]
        watched = host.game("bob", "alice")  # bob (seat 0) moves first: alice's seat 1 waits
        with (
            Streamed(url, f"/v1/games/{watched}/stream", alice, seat=1) as seat_stream,
            Streamed(url, "/v1/bots/me/events", alice) as bot_events,
            Polled(url, f"/v1/games/{watched}/turn", alice, seat=1, wait=60) as seat_poll,
            Polled(url, "/v1/bots/me/turns", alice, wait=60) as bot_poll,
        ):
            wait_for(lambda: seat_stream.events, "the seat stream's snapshot")
            assert bot_events.opened.wait(BOUND_S)
            assert bot_events.status == 200
            time.sleep(1)  # let the long polls reach their wait (a late one is 401 all the same)
            assert not seat_poll.answered.is_set()
            assert not bot_poll.answered.is_set()

            revoked_at = time.monotonic()
            if ending == "revoke":
                ended = host.http.delete("/v1/bots/alice/1/token")
                assert ended.status_code == 204, ended.text
                fresh = None
            else:
                ended = host.http.post("/v1/bots/alice/1/token")
                assert ended.status_code == 201, ended.text
                fresh = ended.json()["token"]
            started = host.game("alice", "bob")  # today announced on the old token's streams
            move(url, bob, watched, 0)  # today sent on alice's seat stream, with her turn next

            assert seat_stream.ended.wait(BOUND_S), "the seat's game stream goes on"
            assert bot_events.ended.wait(BOUND_S), "the bot's event stream goes on"
            assert_unauthorized(seat_poll)
            assert_unauthorized(bot_poll)
            assert seat_stream.after(revoked_at) == []
            assert bot_events.after(revoked_at) == []

        with bot_client(url, alice, timeout=BOUND_S) as old:
            assert old.get("/v1/bots/me/turns", params={"wait": 0}).status_code == 401
        if fresh is not None:  # the rotated token's successor plays on
            with bot_client(url, fresh, timeout=BOUND_S) as new:
                turns = new.get("/v1/bots/me/turns", params={"wait": 0})
                assert turns.status_code == 200, turns.text
                assert started in {turn["game_id"] for turn in turns.json()["turns"]}


def test_an_action_waiting_for_its_next_turn_across_a_revocation_answers_without_the_turn(
    secured: Stack,
) -> None:
    url = secured.base_url
    with Host(url) as host:
        alice, bob = host.register("alice")["token"], host.register("bob")["token"]
        game_id = host.game("alice", "bob")
        ends_turn = action(url, alice, game_id, 0, ending=True)
        path = f"/v1/games/{game_id}/actions"
        with Polled(url, path, alice, ends_turn, wait=60) as acted:
            time.sleep(1)  # let the action land and its wait for alice's next turn begin
            assert not acted.answered.is_set()
            revoked = host.http.delete("/v1/bots/alice/1/token")
            assert revoked.status_code == 204, revoked.text
            move(url, bob, game_id, 1, ending=True)  # alice's turn again: today in the answer
            assert acted.answered.wait(BOUND_S), "the action's wait goes on"
        assert acted.response is not None
        assert acted.response.status_code == 200, acted.response.text  # the action stands
        assert "turn" not in acted.response.json()
        assert "legal_actions" not in acted.response.text


# Capacity ---------------------------------------------------------------------------------

SPECTATORS = 120
"""Anonymous spectator streams opened at once: more than the 64 waiter places there were."""


def test_a_hundred_anonymous_spectators_leave_the_bots_their_capacity_and_the_rest_get_503(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    # The default cap (64 anonymous streams); no rate limit, so that the cap is what refuses.
    with stack_with(
        redis_url, redis_client, namespace, database_url, CARDARENA_SPECTATOR_RATE_LIMIT="0"
    ) as stack:
        url = stack.base_url
        with Host(url) as host:
            alice = host.register("alice")["token"]
            host.register("bob")
            game_id = host.game("alice", "bob")
            with contextlib.ExitStack() as crowd:
                spectators = [
                    crowd.enter_context(Streamed(url, f"/v1/games/{game_id}/stream", None))
                    for _ in range(SPECTATORS)
                ]
                # First of all, cut them all at once: each reader ends at its next keep-alive.
                for spectator in spectators:
                    crowd.callback(spectator.cut)
                for spectator in spectators:
                    assert spectator.opened.wait(BOUND_S), "a spectator got no answer"
                admitted = [s for s in spectators if s.status == 200]
                refused = [s for s in spectators if s.status != 200]
                assert len(admitted) == 64
                for spectator in refused:
                    assert spectator.status == 503
                    assert spectator.headers is not None
                    assert int(spectator.headers["Retry-After"]) >= 1
                    problem = msgspec.json.decode(spectator.body)
                    assert problem["type"].endswith(":streams-busy")
                    assert problem["limit"] == 64
                wait_for(lambda: all(s.events for s in admitted), "every admitted snapshot")

                # The bot plays on while the spectators hold their places (bounded only by BOUND_S).
                with bot_client(url, alice, timeout=BOUND_S) as bot:
                    turn = bot.get(f"/v1/games/{game_id}/turn", params={"seat": 0, "wait": 0})
                    assert turn.status_code == 200, turn.text
                    assert turn.json()["legal_actions"]
                    turns = bot.get("/v1/bots/me/turns", params={"wait": 0})
                    assert turns.status_code == 200, turns.text
                    assert [t["game_id"] for t in turns.json()["turns"]] == [game_id]
                with Streamed(url, f"/v1/games/{game_id}/stream", alice, seat=0) as seat:
                    wait_for(lambda: len(seat.events) >= 2, "the seat's snapshot and turn")
                    assert [e.event for _, e in seat.events[:2]] == ["snapshot", "your_turn"]
                with Streamed(url, "/v1/bots/me/events", alice) as events:
                    wait_for(lambda: events.events, "the bot's turn on its event stream")
                    assert events.events[0][1].event == "your_turn"
                move(url, alice, game_id, 0)  # and its move is taken


def test_anonymous_streams_over_the_rate_limit_get_429_and_a_bot_token_is_not_limited(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    with stack_with(
        redis_url, redis_client, namespace, database_url, CARDARENA_SPECTATOR_RATE_LIMIT="3"
    ) as stack:
        url = stack.base_url
        with Host(url) as host:
            alice = host.register("alice")["token"]
            host.register("bob")
            game_id = host.game("alice", "bob")
            statuses = []
            for _ in range(4):
                with Streamed(url, f"/v1/games/{game_id}/stream", None) as spectator:
                    assert spectator.opened.wait(BOUND_S)
                    statuses.append(spectator.status)
                    if spectator.status != 200:
                        assert spectator.headers is not None
                        assert int(spectator.headers["Retry-After"]) >= 1
                        assert msgspec.json.decode(spectator.body)["type"].endswith(":rate-limited")
            assert statuses == [200, 200, 200, 429]
            with Streamed(url, f"/v1/games/{game_id}/stream", alice) as watching_bot:
                assert watching_bot.opened.wait(BOUND_S)
                assert watching_bot.status == 200


# Floods (issue 32) ------------------------------------------------------------------------

MIB = 1024 * 1024
"""A stranger's body: 1 MiB."""


def padded(body: dict[str, Any], size: int) -> bytes:
    """Returns `body` as JSON padded (a `pad` field) to `size` bytes."""
    head = msgspec.json.encode({**body, "pad": ""})
    return head[:-2] + b"x" * (size - len(head)) + head[-2:]


def forged(token: str) -> str:
    """Returns a live token's id with a wrong secret."""
    head, _, secret = token.partition(".")
    return f"{head}.{'A' * len(secret)}"


def answered_unread(url: str, path: str, authorization: str | None, size: int) -> httpx.Response:
    """Sends a POST's head announcing a JSON body of `size` bytes and none of it; returns the
    answer that came without it (a server that reads the body first waits for it: a hang,
    BOUND_S)."""
    target = httpx.URL(url)
    assert target.host
    assert target.port
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {target.host}:{target.port}",
        "Content-Type: application/json",
        f"Content-Length: {size}",
        "Connection: close",
        *([f"Authorization: {authorization}"] if authorization else []),
    ]
    received = b""
    with socket.create_connection((target.host, target.port), timeout=BOUND_S) as sent:
        sent.sendall("\r\n".join([*lines, "", ""]).encode())
        while chunk := sent.recv(65536):  # the server closes once it answered
            received += chunk
    head, _, content = received.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = [(name, value) for name, _, value in (f.partition(": ") for f in fields)]
    request = httpx.Request("POST", url + path)
    return httpx.Response(
        int(status_line.split()[1]), headers=headers, content=content, request=request
    )


def test_strangers_1_mib_writes_are_401_unread_and_a_bots_padded_write_is_413_while_it_plays(
    secured: Stack,
) -> None:
    url = secured.base_url
    with Host(url) as host:
        alice, bob = host.register("alice")["token"], host.register("bob")["token"]
        game_id = host.game("alice", "bob")
        move_body = action(url, alice, game_id, 0)
        writes = {  # a move, and other writes: a bot's, then the host's
            f"/v1/games/{game_id}/actions": move_body,
            "/v1/challenges": {"game": "autobus", "opponents": [{"bot": "bob"}]},
            "/v1/ladders/autobus-open/queue": {"bot": "alice", "version": "1"},
            "/v1/games": {"game": "autobus", "seats": []},
            "/v1/bots": {"name": "eve", "game": "autobus", "kind": "external"},
        }
        strangers = {"anonymous": None, "forged": f"Bearer {forged(alice)}"}  # alice's id
        for seat, (path, body) in enumerate(writes.items()):
            for authorization in strangers.values():
                # Sent whole (1 MiB): 401 with a problem body.
                headers = {"Content-Type": "application/json"}
                if authorization:
                    headers["Authorization"] = authorization
                with httpx.Client(base_url=url, timeout=BOUND_S) as stranger:
                    sent = stranger.post(path, content=padded(body, MIB), headers=headers)
                unauthorized(sent)
                # Announced and never sent: answered all the same, so never read.
                unread = answered_unread(url, path, authorization, MIB)
                unauthorized(unread)
            # The bots' game goes on between the floods: each move lands.
            move(url, [alice, bob][seat % 2], game_id, seat % 2, ending=True)

        # A bot's own write padded past 16 KiB is 413 naming the limit, sent or announced.
        seat, token = (1, bob) if len(writes) % 2 else (0, alice)
        body = action(url, token, game_id, seat)
        path = f"/v1/games/{game_id}/actions"
        with bot_client(url, token, timeout=BOUND_S) as bot:
            headers = {"Content-Type": "application/json"}
            large = bot.post(path, content=padded(body, 16 * 1024 + 1), headers=headers)
            refused = problem(large, 413, "body-too-large")
            assert refused["limit"] == 16 * 1024
            challenged = padded({"game": "autobus", "opponents": [{"bot": "alice"}]}, 20_000)
            large = bot.post("/v1/challenges", content=challenged, headers=headers)
            assert problem(large, 413, "body-too-large")["limit"] == 16 * 1024
            unread = answered_unread(url, path, f"Bearer {token}", 16 * 1024 + 1)
            assert problem(unread, 413, "body-too-large")["limit"] == 16 * 1024
            played = bot.post(path, json=body)  # the same move, unpadded, lands
            assert played.status_code == 200, played.text


def test_one_tokens_streams_past_its_cap_get_429_while_another_token_streams_and_it_moves(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    with stack_with(
        redis_url, redis_client, namespace, database_url, CARDARENA_MAX_STREAMS_PER_TOKEN="4"
    ) as stack:
        url = stack.base_url
        with Host(url) as host:
            mallory, alice = host.register("mallory")["token"], host.register("alice")["token"]
            game_id = host.game("mallory", "alice")
            seat_stream = f"/v1/games/{game_id}/stream"
            with contextlib.ExitStack() as held:
                streams = [
                    held.enter_context(Streamed(url, "/v1/bots/me/events", mallory))
                    for _ in range(3)
                ]
                streams.append(held.enter_context(Streamed(url, seat_stream, mallory, seat=0)))
                for stream in streams:
                    assert stream.opened.wait(BOUND_S)
                    assert stream.status == 200, stream.body
                with bot_client(url, mallory, timeout=BOUND_S) as capped:
                    refused = [
                        capped.get("/v1/bots/me/turns", params={"wait": 30}),
                        capped.get(f"/v1/games/{game_id}/turn", params={"seat": 0, "wait": 30}),
                    ]
                for path, params in (("/v1/bots/me/events", {}), (seat_stream, {"seat": 0})):
                    with Streamed(url, path, mallory, **params) as more:
                        assert more.opened.wait(BOUND_S)
                        assert more.headers is not None
                        refused.append(
                            httpx.Response(
                                more.status or 0,
                                headers=more.headers,
                                content=more.body,
                                request=httpx.Request("GET", url + path),
                            )
                        )
                for response in refused:
                    body = problem(response, 429, "too-many-streams")
                    assert body["limit"] == 4
                    assert int(response.headers["Retry-After"]) >= 1
                    assert "CARDARENA_MAX_STREAMS_PER_TOKEN" in body["detail"]

                # Another token's streams are its own; the capped token still moves.
                other = held.enter_context(Streamed(url, "/v1/bots/me/events", alice))
                assert other.opened.wait(BOUND_S)
                assert other.status == 200
                with bot_client(url, mallory, timeout=BOUND_S) as capped:
                    body = action(url, mallory, game_id, 0, ending=True)
                    played = capped.post(
                        f"/v1/games/{game_id}/actions", params={"wait": 1}, json=body
                    )
                    assert played.status_code == 200, played.text

                # A stream that ends gives its place back (noticed within a keep-alive).
                streams[0].cut()

                def admitted() -> bool:
                    again = held.enter_context(Streamed(url, "/v1/bots/me/events", mallory))
                    assert again.opened.wait(BOUND_S)
                    return again.status == 200

                wait_for(admitted, "the ended stream's place")
                # First of all, cut them all at once: each reader ends at its next keep-alive.
                for stream in [*streams, other]:
                    held.callback(stream.cut)


# Challenges -------------------------------------------------------------------------------


def challenge(url: str, token: str, *opponents: str) -> httpx.Response:
    """Issues a challenge of Autobus with `token` against the registered `opponents`."""
    body = {"game": "autobus", "opponents": [{"bot": name} for name in opponents]}
    with bot_client(url, token, timeout=BOUND_S) as caller:
        return caller.post("/v1/challenges", json=body)


def test_a_bot_holds_at_most_twenty_open_challenges(secured: Stack) -> None:
    url = secured.base_url
    with Host(url) as host:
        alice, bob = host.register("alice")["token"], host.register("bob")["token"]
        issued = [challenge(url, alice, "bob") for _ in range(20)]
        assert [r.status_code for r in issued] == [201] * 20
        assert {r.json()["status"] for r in issued} == {"open"}

        refused = challenge(url, alice, "bob")
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["Retry-After"]) >= 1
        assert refused.json()["limit"] == 20
        assert "20 open challenges" in refused.json()["detail"]
        with bot_client(url, bob, timeout=BOUND_S) as challenged:
            assert len(challenged.get("/v1/bots/me/challenges").json()["challenges"]) == 20
            first = issued[0].json()["challenge_id"]
            assert challenged.post(f"/v1/challenges/{first}/decline").status_code == 200
        assert challenge(url, alice, "bob").status_code == 201  # a closed one gave its place back
        assert challenge(url, alice, "bob").status_code == 429
        # Another bot's places are its own, and the host is not capped.
        carol = host.register("carol")["token"]
        assert challenge(url, carol, "bob").status_code == 201
        assert challenge(url, ADMIN_KEY, "bob", "carol").status_code == 201


def test_a_webhook_bot_is_seated_by_a_challenge_only_as_its_registration_allows(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> None:
    with stack_with(
        redis_url, redis_client, namespace, database_url, CARDARENA_WEBHOOK_ALLOW_PRIVATE="1"
    ) as stack:
        url = stack.base_url
        with Host(url) as host:
            alice = host.register("alice")["token"]
            hook = {"kind": "webhook", "url": "http://127.0.0.1:9/turn"}  # never reached here
            default = host.register("w-default", **hook)
            assert default["accept_challenges"] == "host"
            host.register("w-host", accept_challenges="host", **hook)
            host.register("w-registered", accept_challenges="registered", **hook)
            host.register("w-none", accept_challenges="none", **hook)

            for name in ("w-default", "w-host", "w-none"):
                refused = challenge(url, alice, name)
                assert refused.status_code == 403, refused.text
                problem = refused.json()
                assert problem["field"] == "opponents[0]"
                assert problem["rule"].startswith("accept_challenges: ")
                assert name in problem["detail"]
            assert challenge(url, alice, "w-registered").json()["status"] == "started"

            for pair in (("w-default", "w-registered"), ("w-host", "alice")):
                assert challenge(url, ADMIN_KEY, *pair).status_code == 201, pair
            refused = challenge(url, ADMIN_KEY, "w-registered", "w-none")
            assert refused.status_code == 403, refused.text
            assert (refused.json()["field"], refused.json()["rule"]) == (
                "opponents[1]",
                "accept_challenges: none",
            )
            wrong = host.http.post(
                "/v1/bots",
                json={
                    "name": "x",
                    "game": "autobus",
                    "kind": "external",
                    "accept_challenges": "none",
                },
            )
            assert wrong.status_code == 422, wrong.text
            assert wrong.json()["field"] == "accept_challenges"


def test_a_registration_stored_before_accept_challenges_decodes_as_host() -> None:
    # The payload of a webhook bot's BotRegistered as written before the field existed.
    written = {
        "type": "BotRegistered",
        "name": "old",
        "version": "1",
        "game": "autobus",
        "strategy": "",
        "description": "",
        "registered_at": "2026-01-01T00:00:00+00:00",
        "kind": "webhook",
        "url": "https://bots.example/turn",
    }
    recorded = RecordedEvent(
        registry.STREAM, registry.KIND, 1, "BotRegistered", msgspec.msgpack.encode(written)
    )
    event = registry.CODEC.decode(recorded)
    assert isinstance(event, registry.BotRegistered)
    assert event.accept_challenges == "host"
