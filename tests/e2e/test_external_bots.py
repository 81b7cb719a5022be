"""Third-party bots over real HTTP: tokens, the Python client, a curl bot, refusals, retries."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TypeVar

import httpx
import pytest

from shared.sdk.client import ApiError, Client
from tests.support.results import assert_shithead_places
from tests.support.stack import (
    ADMIN_KEY,
    ROOT,
    Stack,
    first_legal,
    play_until_over,
    register_bot,
)

SEAT_DECISIONS = {"CardsSwapped", "PlayerReady", "CardsPlayed", "FaceDownRevealed", "PilePickedUp"}
"""Shithead events that record a seat's own decision."""
T = TypeVar("T")
RULES = {"max_moves": 400}
"""Classic Shithead with a move cap, so that a game of weak bots ends in bounded time."""


def external_game(url: str, names: Sequence[str], seed: int) -> tuple[str, list[str]]:
    """Registers an external bot per name and creates a Shithead game seating them in that
    order; returns the game's id and the bots' tokens."""
    with Client(url, token=ADMIN_KEY) as host:
        tokens = [register_bot(host, name) for name in names]
        seats = [{"kind": "external", "bot": name, "version": "1"} for name in names]
        return host.create_game("shithead", seats, ruleset=RULES, seed=seed), tokens


def each_seat(clients: Sequence[Client], play: Callable[[Client, int], T]) -> dict[int, T]:
    """Runs `play(client, seat)` for every seat at once (seat i by `clients[i]`) until all
    are done; returns what each seat's play returned."""
    results: dict[int, T] = {}
    threads = [
        threading.Thread(target=lambda c=c, s=s: results.__setitem__(s, play(c, s)))
        for s, c in enumerate(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    return results


def test_two_token_bots_and_two_built_in_bots_finish_a_shithead_game(
    secured_stack: Stack,
) -> None:
    url = secured_stack.base_url
    with Client(url, token=ADMIN_KEY) as host:
        alice, bob = register_bot(host, "alice"), register_bot(host, "bob")
        seats = [
            {"kind": "external", "bot": "alice", "version": "1"},
            {"kind": "bot", "bot": "heuristic"},
            {"kind": "external", "bot": "bob", "version": "1"},
            {"kind": "bot", "bot": "random"},
        ]
        game_id = host.create_game("shithead", seats, ruleset=RULES, seed=11)
    with Client(url, token=alice) as a, Client(url, token=bob) as b:
        # A bot may neither read nor act for another bot's seat, and nothing changes.
        version = secured_stack.store.version(game_id)
        with pytest.raises(ApiError) as refused:
            a.view(game_id, 2)
        assert refused.value.status == 403
        with pytest.raises(ApiError) as refused:
            a.act(game_id, 2, first_legal, view=b.view(game_id, 2))
        assert refused.value.status == 403
        assert secured_stack.store.version(game_id) == version
        with httpx.Client(base_url=url) as anonymous:
            assert anonymous.get(f"/v1/games/{game_id}/view", params={"seat": 0}).status_code == 401
        each_seat((a, b), lambda client, _: play_until_over(client, game_id))
        game = a.game(game_id)
    assert game["status"] in {"finished", "capped"}
    assert_shithead_places(game["result"])  # a capped game may tie places


def test_a_retried_post_with_the_same_idempotency_key_appends_once(secured_stack: Stack) -> None:
    url = secured_stack.base_url
    with Client(url, token=ADMIN_KEY) as host:
        token = register_bot(host, "carol")
        seats = [
            {"kind": "external", "bot": "carol", "version": "1"},
            {"kind": "bot", "bot": "random"},
        ]
        game_id = host.create_game("shithead", seats, ruleset=RULES, seed=3)
    with Client(url, token=token) as carol:
        (turn,) = carol.turns(wait=30)
        body = {"seat": 0, "action": turn.legal_actions[0], "expected_version": turn.version}
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}
        with httpx.Client(base_url=url) as http:
            # The first attempt's answer is lost (the client gave up waiting); the retry
            # with the same key must get the original result, not a second move.
            with pytest.raises(httpx.TimeoutException):
                http.post(f"/v1/games/{game_id}/actions", json=body, headers=headers, timeout=1e-4)
            retried = http.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)
            again = http.post(f"/v1/games/{game_id}/actions", json=body, headers=headers)
    assert retried.status_code in (200, 201), retried.text
    # Whether the timed-out attempt reached the server or not, the later ones answer alike.
    assert again.json()["replayed"] is True
    assert {**again.json(), "replayed": None} == {**retried.json(), "replayed": None}
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as http:
        log = http.get(f"/v1/games/{game_id}/events", params={"seat": 0}).json()["events"]
    decisions = [e for e in log if e["type"] in SEAT_DECISIONS and e["data"].get("seat") == 0]
    assert len(decisions) == 1, "one logical move, three POSTs, one decision appended"


@pytest.mark.parametrize("example", ["python", "curl"])
def test_the_example_bots_play_a_real_game_to_its_end(secured_stack: Stack, example: str) -> None:
    if example == "curl" and not (shutil.which("curl") and shutil.which("jq")):
        pytest.skip("the curl example needs curl and jq")
    url = secured_stack.base_url
    name = f"example-{example}"
    with Client(url, token=ADMIN_KEY) as host:
        token = register_bot(host, name)
        seats = [
            {"kind": "external", "bot": name, "version": "1"},
            {"kind": "bot", "bot": "heuristic"},
        ]
        game_id = host.create_game("shithead", seats, ruleset=RULES, seed=8)
    env = {**os.environ, "CARDARENA_URL": url, "CARDARENA_TOKEN": token}
    command = (
        [sys.executable, "examples/python_bot.py", "--games", "1", "--wait", "5"]
        if example == "python"
        else ["bash", "examples/curl_bot.sh", "1"]
    )
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, timeout=600, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    assert b"1 games finished" in done.stdout
    with Client(url) as public:
        game = public.game(game_id)
    assert game["status"] in {"finished", "capped"}


def test_a_bot_challenges_another_that_accepts_from_the_example_and_they_play_it_out(
    secured_stack: Stack,
) -> None:
    url = secured_stack.base_url
    with Client(url, token=ADMIN_KEY) as host:
        dora, eve = register_bot(host, "dora"), register_bot(host, "eve")
    env = {**os.environ, "CARDARENA_URL": url, "CARDARENA_TOKEN": eve, "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "examples/python_bot.py",
        "--games",
        "1",
        "--wait",
        "2",
        "--accept-challenges",
    ]
    with Client(url, token=dora) as d:
        challenge = d.challenge("shithead", [("eve", "1")], ruleset=RULES)
        assert (challenge["status"], challenge["pending"]) == ("open", ["eve@1"])
        example = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 120
            while d.get_challenge(challenge["challenge_id"])["status"] != "started":
                assert time.monotonic() < deadline, "the example bot never accepted"
                time.sleep(0.1)
            play_until_over(d, challenge["game_id"], wait=2)
            out, _ = example.communicate(timeout=600)
        finally:
            example.kill()
    assert example.returncode == 0
    assert b"1 games finished" in out
    with Client(url) as public:
        game = public.game(challenge["game_id"])
    assert game["status"] in {"finished", "capped"}
    assert [seat["name"] for seat in game["seats"]] == ["dora", "eve"]


def play_by_long_poll(client: Client, game_id: str, seat: int) -> int:
    """Plays `seat` with the long poll of its turn alone; returns how many turns it waited."""
    waited = 0
    while True:
        view = client.wait_turn(game_id, seat, wait=10)
        waited += 1
        if view.status != "playing":
            return waited
        if view.legal_actions:
            client.act(game_id, seat, first_legal, view=view)


def test_two_token_bots_play_a_game_out_with_the_long_poll_of_their_turns(
    secured_stack: Stack,
) -> None:
    url = secured_stack.base_url
    game_id, (dora, eric) = external_game(url, ("dora", "eric"), seed=21)
    with Client(url, token=dora) as d, Client(url, token=eric) as e:
        waited = each_seat((d, e), lambda client, seat: play_by_long_poll(client, game_id, seat))
        game = d.game(game_id)
    assert game["status"] in {"finished", "capped"}
    assert_shithead_places(game["result"])  # a capped game may tie places
    # About one answer per turn (no busy polling): far fewer than the game's events.
    assert waited[0] + waited[1] <= game["version"] + 4


class CountingTransport(httpx.HTTPTransport):
    """An HTTP transport that counts the requests it sends and the 409s it gets."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0
        self.conflicts = 0
        self.moves = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        response = super().handle_request(request)
        self.conflicts += response.status_code == 409
        self.moves += request.method == "POST" and response.status_code == 200
        return response


def test_two_token_bots_play_a_game_out_with_one_request_a_move(secured_stack: Stack) -> None:
    """`Client.play`: each action's answer carries the seat's next turn (`wait`)."""
    url = secured_stack.base_url
    game_id, tokens = external_game(url, ("fay", "gus"), seed=22)
    transports = [CountingTransport(), CountingTransport()]
    clients = [
        Client(url, token=token, transport=transport)
        for token, transport in zip(tokens, transports, strict=True)
    ]
    with clients[0], clients[1]:
        last = each_seat(clients, lambda client, seat: client.play(game_id, seat, first_legal, 10))
        game = clients[0].game(game_id)
        events = clients[0]._call("GET", f"/v1/games/{game_id}/events")["events"]
    assert game["status"] in {"finished", "capped"}
    assert {last[0].status, last[1].status} == {game["status"]}
    moves = transports[0].moves + transports[1].moves
    assert moves >= sum(event["type"] in SEAT_DECISIONS for event in events) // 2
    sent = transports[0].sent + transports[1].sent - 2  # the two reads above
    conflicts = transports[0].conflicts + transports[1].conflicts
    # One request a move; besides, each seat's first wait, and for each 409 (both seats may
    # act at once while cards are swapped) its view read again and the move posted again.
    assert sent <= moves + 2 + 2 * conflicts, (moves, sent, conflicts)
