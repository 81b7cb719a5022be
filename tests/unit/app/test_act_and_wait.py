"""An action that answers the seat's next turn (`POST .../actions?wait=`): one request a move.

Runs the embedded default (in-memory store) through Litestar's test client, with the world of
the streams tests: the external bots alice and bob and two-seat Shithead games.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from services.game.http.waiters import StreamConfig
from shared.app.loading import load
from tests.support.api import bearer
from tests.support.streams import ALICE, BOB, SHORT, World, opened


@pytest.fixture
def world() -> Iterator[World]:
    """Returns the service with alice and bob registered."""
    with opened(SHORT) as built:
        yield built


def _single_mover(world: World, game_id: str) -> int:
    """Plays on until exactly one seat is to move and its move hands the turn to the other
    seat (its first legal action leaves it not due); returns that seat."""
    while True:
        loaded = load(world.store, game_id)
        to_move = loaded.spec.to_move(loaded.state)
        if len(to_move) == 1:
            seat = int(to_move[0])
            action = loaded.spec.legal_actions(loaded.state, seat)[0]
            events = loaded.spec.decide(loaded.state, seat, action)
            state = loaded.state
            for event in events:
                state = loaded.spec.evolve(state, event)
            if seat not in loaded.spec.to_move(state) and not loaded.spec.is_over(state):
                return seat
        world.play(game_id, moves=1)


def _move_of(world: World, game_id: str, seat: int) -> dict[str, Any]:
    """Returns the body of `seat`'s first legal action at the game's version."""
    loaded = load(world.store, game_id)
    action = loaded.spec.legal_actions(loaded.state, seat)[0]
    body = {"seat": seat, "action": msgspec.to_builtins(action)}
    return {**body, "expected_version": loaded.version}


def _token(world: World, seat: int) -> dict[str, str]:
    return bearer(world.tokens["alice" if seat == 0 else "bob"])


def _post(world: World, game_id: str, body: dict[str, Any], seat: int, **params: Any) -> Any:
    headers = {**_token(world, seat), "Idempotency-Key": params.pop("key", uuid.uuid4().hex)}
    return world.client.post(
        f"/v1/games/{game_id}/actions", json=body, params=params, headers=headers
    )


def _move_until_due(world: World, game_id: str, seat: int) -> threading.Thread:
    """Starts a thread that, after a pause, plays the other seat until `seat` is due."""

    def run() -> None:
        time.sleep(0.3)
        while seat not in (loaded := load(world.store, game_id)).spec.to_move(loaded.state):
            world.play(game_id, moves=1)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_action_with_wait_answers_the_seats_next_turn_once_the_other_seat_moved(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    seat = _single_mover(world, game_id)
    body = _move_of(world, game_id, seat)
    mover = _move_until_due(world, game_id, seat)

    answer = _post(world, game_id, body, seat, wait=30)
    mover.join()

    assert answer.status_code == 200, answer.text
    accepted = answer.json()
    turn = accepted.pop("turn")
    assert accepted["first_version"] == body["expected_version"] + 1
    assert turn["version"] > accepted["version"], "the other seat's moves are in the turn"
    assert seat in turn["to_move"]
    assert turn["legal_actions"]
    view = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": seat}, headers=_token(world, seat)
    )
    assert turn == view.json()


def test_without_wait_the_answer_is_unchanged_and_with_wait_0_it_is_the_view_at_once(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    seat = _single_mover(world, game_id)
    plain = _post(world, game_id, _move_of(world, game_id, seat), seat)
    assert plain.status_code == 200, plain.text
    assert set(plain.json()) == {"game_id", "version", "first_version", "replayed"}

    other = 1 - seat
    while other not in (loaded := load(world.store, game_id)).spec.to_move(loaded.state):
        world.play(game_id, moves=1)
    now = _post(world, game_id, _move_of(world, game_id, other), other, wait=0)
    assert now.status_code == 200, now.text
    view = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": other}, headers=_token(world, other)
    )
    assert now.json()["turn"] == view.json()
    assert now.json()["turn"]["version"] == now.json()["version"]


def test_a_wait_that_runs_out_answers_the_view_as_it_stands(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    seat = _single_mover(world, game_id)
    answer = _post(world, game_id, _move_of(world, game_id, seat), seat, wait=1)
    assert answer.status_code == 200, answer.text
    turn = answer.json()["turn"]
    assert (turn["version"], turn["legal_actions"]) == (answer.json()["version"], [])


def test_a_retry_with_wait_replays_the_action_and_answers_the_turn(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    seat = _single_mover(world, game_id)
    body, key = _move_of(world, game_id, seat), uuid.uuid4().hex
    first = _post(world, game_id, body, seat, key=key)
    assert first.status_code == 200, first.text
    version = world.store.version(game_id)

    again = _post(world, game_id, body, seat, key=key, wait=0)

    assert again.status_code == 200, again.text
    assert {**again.json(), "turn": None} == {**first.json(), "replayed": True, "turn": None}
    assert again.json()["turn"]["version"] == version
    assert world.store.version(game_id) == version


def test_a_bad_wait_or_a_conflict_is_refused_and_changes_nothing(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    seat = _single_mover(world, game_id)
    body = _move_of(world, game_id, seat)
    version = world.store.version(game_id)

    for wait in (61, -1, "soon"):
        refused = _post(world, game_id, body, seat, wait=wait)
        assert (refused.status_code, refused.json()["field"]) == (400, "wait"), refused.text
    stale = _post(world, game_id, {**body, "expected_version": version - 1}, seat, wait=30)
    assert stale.status_code == 409, stale.text
    other = _post(world, game_id, {**body, "seat": 1 - seat}, seat, wait=30)
    assert other.status_code == 403, other.text
    assert world.store.version(game_id) == version


@pytest.mark.parametrize("other_wait", [None, 1])
def test_waits_hold_no_thread_that_actions_need(other_wait: int | None) -> None:
    """With the single waiter place held by one action's wait, the other seat's actions
    still go through (in the app's pool, also when they ask to wait: they never queue for a
    place), and their move ends that wait."""
    with opened(StreamConfig(keepalive_s=0.05, lifetime_s=0.6, waiters=1)) as world:
        game_id = world.game(ALICE, BOB)
        seat = _single_mover(world, game_id)
        other = 1 - seat
        answers: list[Any] = []
        waiting = threading.Thread(
            target=lambda: answers.append(
                _post(world, game_id, _move_of(world, game_id, seat), seat, wait=30)
            )
        )
        waiting.start()
        deadline = time.monotonic() + 30
        while world.store.version(game_id) == 0 or (
            other not in (loaded := load(world.store, game_id)).spec.to_move(loaded.state)
        ):
            assert time.monotonic() < deadline, "the first action never landed"
            time.sleep(0.01)
        started = time.monotonic()
        while seat not in (loaded := load(world.store, game_id)).spec.to_move(loaded.state):
            params = {} if other_wait is None else {"wait": other_wait}
            moved = _post(world, game_id, _move_of(world, game_id, other), other, **params)
            assert moved.status_code == 200, moved.text
        waiting.join(timeout=30)
        assert not waiting.is_alive()
        assert answers[0].status_code == 200, answers[0].text
        assert seat in answers[0].json()["turn"]["to_move"]
        assert time.monotonic() - started < 25  # the wait ended by the move, not its 30 s
