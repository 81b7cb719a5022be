"""`cardarena connect` against the real stack: the same bot programs that play locally play
online through the bot API, a failing one resigns with its reason, and a dropped connection
is survived."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from shared.catalog import get_game
from shared.messages.common import DefaultActionPlayed, SeatResigned
from shared.sdk.client import Client
from tests.support.local_bots import PYTHON_EXAMPLE, javascript_example, program
from tests.support.stack import ADMIN_KEY, ROOT, Stack
from tests.support.tcp_relay import TcpRelay

RULES = {"max_moves": 300}
"""Classic Shithead with a move cap, so that a game ends in bounded time."""
ENDED = {"finished", "capped"}
"""How a game of these tests may end: played out, or at the move cap of `RULES`."""
SEAT_DECISIONS = {"CardsSwapped", "PlayerReady", "CardsPlayed", "FaceDownRevealed", "PilePickedUp"}
"""Shithead events that record a seat's own decision."""
GARBAGE = program("writes_garbage")


@pytest.fixture
def host(secured_stack: Stack) -> Iterator[Client]:
    """Returns a client with the admin key."""
    with Client(secured_stack.base_url, token=ADMIN_KEY) as client:
        yield client


def bot_with_games(host: Client, name: str, games: int) -> tuple[str, list[str]]:
    """Registers the external bot `name` and creates `games` games of it (seat 0) against the
    heuristic bot; returns its token and the games' ids."""
    token = host.register_bot(name, game="shithead", kind="external").token
    assert token
    seats = [{"kind": "external", "bot": name}, {"bot": "heuristic"}]
    return token, [host.create_game("shithead", seats, ruleset=RULES) for _ in range(games)]


def connect(server: str, token: str, bot: str, games: int) -> subprocess.Popen[str]:
    """Starts `cardarena connect` for `games` games in a process of its own."""
    command = [sys.executable, "-m", "services.cli.main", "connect", "--server", server]
    command += ["--bot", bot, "--games", str(games), "--wait", "2"]
    env = {**os.environ, "CARDARENA_TOKEN": token}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen[str], seconds: float = 300) -> str:
    """Returns what `process` printed once it exited 0 within `seconds`."""
    out, _ = process.communicate(timeout=seconds)
    assert process.returncode == 0, out
    return out


def events(stack: Stack, game_id: str) -> list[Any]:
    """Returns the decoded events of a game."""
    return list(get_game("shithead").codec.decode_all(stack.store.read(game_id)))


def seat_decisions(stack: Stack, game_id: str, seat: int) -> int:
    """Returns how many of `seat`'s own decisions the game's log holds."""
    logged = events(stack, game_id)
    return sum(type(e).__name__ in SEAT_DECISIONS and e.seat == seat for e in logged)


@pytest.mark.parametrize("language", ["python", "javascript"])
def test_an_example_program_plays_a_game_online_as_it_plays_locally(
    secured_stack: Stack, host: Client, language: str
) -> None:
    bot = PYTHON_EXAMPLE if language == "python" else javascript_example()
    token, (game_id,) = bot_with_games(host, f"local-{language}", 1)

    out = finished(connect(secured_stack.base_url, token, bot, 1))

    status = host.game(game_id)["status"]
    assert status in ENDED  # a deal may run into the move cap
    assert seat_decisions(secured_stack, game_id, 0) > 0
    forced = [e for e in events(secured_stack, game_id) if isinstance(e, DefaultActionPlayed)]
    assert not [e for e in forced if e.seat == 0]  # every move of seat 0 was the program's
    assert f"game {game_id}: {status}" in out
    assert "1 games ended" in out


def test_a_program_that_writes_garbage_resigns_each_game_and_connect_goes_on(
    secured_stack: Stack, host: Client
) -> None:
    token, game_ids = bot_with_games(host, "garbled", 2)

    out = finished(connect(secured_stack.base_url, token, GARBAGE, 2))

    for game_id in game_ids:
        resigned = [e for e in events(secured_stack, game_id) if isinstance(e, SeatResigned)]
        assert [e.seat for e in resigned] == [0]
        assert host.game(game_id)["status"] == "finished"
        line = f"forfeit: game {game_id}, seat 0: malformed_output: not JSON: "
        assert line + "'I play the ace of spades'" in out
    assert "2 games ended" in out


def test_connect_survives_a_dropped_connection_and_plays_the_game_out(
    secured_stack: Stack, host: Client
) -> None:
    token, (game_id,) = bot_with_games(host, "reconnecting", 1)
    port = int(secured_stack.base_url.rsplit(":", 1)[1])
    with TcpRelay(("127.0.0.1", port)) as relay:
        process = connect(relay.url, token, program("plays_slowly"), 1)  # still playing when cut
        deadline = time.monotonic() + 120
        while seat_decisions(secured_stack, game_id, 0) < 2:  # playing through the relay
            assert time.monotonic() < deadline, "the program made no move through the relay"
            time.sleep(0.1)
        relay.cut()
        time.sleep(3)  # its requests fail: refused, or cut in the middle
        relay.restore()
        out = finished(process)

    assert "connection lost" in out
    assert host.game(game_id)["status"] in ENDED
    assert not [e for e in events(secured_stack, game_id) if isinstance(e, SeatResigned)]
    assert "1 games ended" in out
