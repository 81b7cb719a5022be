"""Streams in the embedded default: a game's server-sent events (snapshot, events, turns,
resume, redaction), a bot's events and its long poll, and who may read them.

Litestar's test client returns a response once its stream has ended, so these streams end
by themselves: at the game's finish, or after a short `StreamConfig.lifetime_s`. One test
serves the app with uvicorn to see a client that disconnects mid-stream end its generator.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn

from services.game.http.waiters import StreamConfig
from shared.app.loading import load
from tests.support.api import ADMIN, bearer, problem
from tests.support.browsing import served
from tests.support.streams import ALICE, BOB, LONG, SHORT, Sse, World, opened, parse


@pytest.fixture
def world() -> Iterator[World]:
    """Returns the service with alice and bob registered and short-lived streams."""
    with opened(SHORT) as built:
        yield built


@pytest.fixture
def long_world() -> Iterator[World]:
    """Returns the service with alice and bob registered and streams that end with games."""
    with opened(LONG) as built:
        yield built


def versions(events: list[Sse]) -> list[int]:
    """Returns the versions of the stored events (type `event`) among `events`."""
    return [e.data["version"] for e in events if e.event == "event"]


def test_a_seat_stream_starts_with_the_seats_view_and_its_turn(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    view = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": 0}, headers=bearer(world.tokens["alice"])
    ).json()

    events, comments = world.stream(game_id, world.tokens["alice"], seat=0)

    snapshot, turn = events[0], events[1]
    assert (snapshot.event, snapshot.id, snapshot.data) == ("snapshot", str(view["version"]), view)
    assert (turn.event, turn.id) == ("your_turn", str(view["version"]))
    assert turn.data["legal_actions"] == view["legal_actions"] != []
    assert len(events) == 2
    assert comments >= 1


def test_a_stream_sends_every_event_with_its_version_as_id_and_ends_with_the_game(
    long_world: World,
) -> None:
    world = long_world
    game_id = world.game(ALICE, BOB)
    start = world.store.version(game_id)
    player = world.when_streaming(lambda: world.play(game_id))

    events, _ = world.stream(game_id, world.tokens["bob"], seat=1)

    player.join()
    final = world.store.version(game_id)
    assert events[0].event == "snapshot"
    assert versions(events) == list(range(start + 1, final + 1))
    assert all(e.id == str(e.data["version"]) for e in events if e.event == "event")
    assert events[-1].event == "event"
    assert events[-1].data["type"] == "GameFinished"
    turns = [e for e in events if e.event == "your_turn"]
    assert turns
    assert all(t.data["seat"] == 1 and t.data["legal_actions"] for t in turns)
    assert all(t.id == str(t.data["version"]) for t in turns)


def test_last_event_id_resumes_after_that_version_without_gaps_or_repeats(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    token = world.tokens["alice"]
    first, _ = world.stream(game_id, token, seat=0)
    last_id = first[-1].id
    world.play(game_id, moves=6)

    resumed, _ = world.stream(game_id, token, seat=0, last=last_id)

    assert [e.event for e in resumed if e.event == "snapshot"] == []
    now = world.store.version(game_id)
    assert versions(resumed) == list(range(int(last_id) + 1, now + 1))
    page = world.client.get(
        f"/v1/games/{game_id}/events",
        params={"seat": 0, "after": last_id},
        headers=bearer(token),
    ).json()
    assert [e.data for e in resumed if e.event == "event"] == page["events"]


def test_no_hidden_card_of_another_seat_reaches_a_seats_stream(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    loaded = load(world.store, game_id)
    bobs_hand: list[str] = list(loaded.spec.view(loaded.state, 1).hand)
    raw = world.store.read(game_id)
    assert any(card.encode() in raw[1].data for card in bobs_hand)

    events, _ = world.stream(game_id, world.tokens["alice"], seat=0, last=0)

    text = json.dumps([e.data for e in events])
    assert versions(events)[:2] == [1, 2]
    assert "??" in text
    assert not [card for card in bobs_hand if f'"{card}"' in text]


def test_a_spectator_stream_starts_with_the_public_game_and_redacts_every_hand(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    world.play(game_id, moves=4)
    public = world.client.get(f"/v1/games/{game_id}").json()
    log = world.client.get(f"/v1/games/{game_id}/events").json()

    events, _ = world.stream(game_id, None)
    replayed, _ = world.stream(game_id, None, last=0)

    assert [(e.event, e.data) for e in events] == [("snapshot", public)]
    assert [e.data for e in replayed] == log["events"]
    assert "your_turn" not in {e.event for e in replayed}


def test_seat_streams_follow_the_seats_access_rules(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    url = f"/v1/games/{game_id}/stream"
    alice = bearer(world.tokens["alice"])

    assert world.client.get(url, params={"seat": 1}, headers=alice).status_code == 403
    assert world.client.get(url, params={"seat": 1}).status_code == 401
    assert world.client.get(url, params={"seat": 5}, headers=alice).json()["field"] == "seat"
    ahead = world.client.get(url, params={"seat": 0}, headers={**alice, "Last-Event-ID": "99"})
    assert (ahead.status_code, ahead.json()["field"]) == (422, "Last-Event-ID")
    malformed = world.client.get(url, headers={"Last-Event-ID": "x"})
    assert (malformed.status_code, malformed.json()["field"]) == (400, "Last-Event-ID")
    missing = world.client.get("/v1/games/nope/stream")
    assert (missing.status_code, missing.json()["game_id"]) == (404, "nope")
    assert world.store.version(game_id) == 2


def test_a_bots_endpoints_need_its_bot_token(world: World) -> None:
    for url in ("/v1/bots/me/events", "/v1/bots/me/turns"):
        anonymous = world.client.get(url)
        assert anonymous.status_code == 401, url
        assert anonymous.headers["www-authenticate"].startswith("Bearer")
        assert world.client.get(url, headers=ADMIN).status_code == 403, url
        assert world.client.get(url, headers=bearer("cab_x.nope")).status_code == 401, url
    too_long = world.client.get(
        "/v1/bots/me/turns", params={"wait": 61}, headers=bearer(world.tokens["alice"])
    )
    assert (too_long.status_code, too_long.json()["field"]) == (400, "wait")


def test_a_bots_event_stream_resyncs_the_games_waiting_for_it(world: World) -> None:
    waiting = world.game(ALICE, BOB)
    second = world.game(BOB, ALICE)
    others = world.game(BOB, BOB)
    world.play(second, moves=1)
    response = world.client.get("/v1/bots/me/events", headers=bearer(world.tokens["alice"]))

    events, comments = parse(response.text)

    turns = {(e.data["game_id"], e.data["seat"]): e for e in events if e.event == "your_turn"}
    assert set(turns) == {(waiting, 0), (second, 1)}
    assert {e.event for e in events} == {"your_turn"}
    view = world.client.get(
        f"/v1/games/{waiting}/view", params={"seat": 0}, headers=bearer(world.tokens["alice"])
    ).json()
    turn = turns[(waiting, 0)].data
    assert (turn["version"], turn["legal_actions"]) == (view["version"], view["legal_actions"])
    assert others not in {game for game, _ in turns}
    assert comments >= 1


def test_a_bots_event_stream_tells_of_games_starting_waiting_and_finishing() -> None:
    # Read as a client reads it, line by line over a served app: the game is played on only
    # once the stream told alice of her turn, and the read stops at the game's end, so nothing
    # depends on how fast this machine is.
    world = World(StreamConfig(keepalive_s=0.05, lifetime_s=120))
    with served(world.app, "bot-events") as base, httpx.Client(base_url=base, timeout=60) as http:
        for name in ("alice", "bob"):
            body = {"name": name, "game": "shithead", "kind": "external"}
            registered = http.post("/v1/bots", json=body, headers=ADMIN)
            assert registered.status_code == 201, registered.text
            world.tokens[name] = registered.json()["token"]
        alice = bearer(world.tokens["alice"])
        told = threading.Event()
        created: list[str] = []

        def host() -> None:
            with httpx.Client(base_url=base, timeout=60) as own:
                body = {"game": "shithead", "seats": [ALICE, BOB], "seed": 5}
                created.append(own.post("/v1/games", json=body, headers=ADMIN).json()["game_id"])
            if told.wait(60):
                world.play(created[0])

        player = world.when_streaming(host)
        events = _until_finished(http, alice, told)
        player.join()
        kinds = [e.event for e in events if e.data["game_id"] == created[0]]
        assert kinds[0] == "game_started"
        assert "your_turn" in kinds
        assert kinds[-1] == "game_finished"
        assert events[-1].data["result"]["places"]
        replayed = _until_finished(http, {**alice, "Last-Event-ID": "0"}, threading.Event())
        assert [e.event for e in replayed] == ["game_started", "game_finished"]


def _until_finished(
    http: httpx.Client, headers: dict[str, str], told: threading.Event
) -> list[Sse]:
    """Reads the bot's event stream until its first `game_finished` event; sets `told` at its
    first `your_turn`; returns the events read."""
    lines: list[str] = []
    with http.stream("GET", "/v1/bots/me/events", headers=headers) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            lines.append(line)
            if line == "event: your_turn":
                told.set()
            if line == "" and "event: game_finished" in lines:
                break
    events, _ = parse("\n".join(lines))
    return events


def test_the_long_poll_answers_the_waiting_games_at_once(world: World) -> None:
    game_id = world.game(BOB, ALICE)
    world.play(game_id, moves=1)
    alice = bearer(world.tokens["alice"])

    body = world.client.get("/v1/bots/me/turns", params={"wait": 60}, headers=alice).json()

    (turn,) = body["turns"]
    view = world.client.get(f"/v1/games/{game_id}/view", params={"seat": 1}, headers=alice).json()
    assert (turn["game_id"], turn["seat"], turn["version"]) == (game_id, 1, view["version"])
    assert turn["legal_actions"] == view["legal_actions"]


def test_the_long_poll_waits_for_a_turn_or_answers_an_empty_list(world: World) -> None:
    alice = bearer(world.tokens["alice"])
    assert world.client.get("/v1/bots/me/turns", headers=alice).json() == {"turns": []}
    assert world.client.get("/v1/bots/me/turns", params={"wait": 1}, headers=alice).json() == {
        "turns": []
    }
    created: list[str] = []

    def host() -> None:
        time.sleep(0.3)
        created.append(world.game(ALICE, BOB))

    thread = threading.Thread(target=host)
    thread.start()
    body = world.client.get("/v1/bots/me/turns", params={"wait": 60}, headers=alice).json()
    thread.join()

    assert [(t["game_id"], t["seat"]) for t in body["turns"]] == [(created[0], 0)]


def _free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_client_that_disconnects_ends_its_stream() -> None:
    world = World(StreamConfig(keepalive_s=0.05, lifetime_s=120))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(world.app, port=port, log_level="warning"))
    serving = threading.Thread(target=server.run)
    serving.start()
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        with httpx.Client(base_url=base, timeout=30) as http:
            created = http.post(
                "/v1/bots",
                json={"name": "carol", "game": "shithead", "kind": "external"},
                headers=ADMIN,
            )
            token = created.json()["token"]
            body = {"game": "shithead", "seats": [{"kind": "external", "bot": "carol"}, {}]}
            game_id = http.post("/v1/games", json=body, headers=ADMIN).json()["game_id"]
            url = f"/v1/games/{game_id}/stream"
            with http.stream("GET", url, params={"seat": 0}, headers=bearer(token)) as response:
                lines = response.iter_lines()
                assert (
                    next(line for line in lines if line.startswith("event:")) == "event: snapshot"
                )
                assert world.streams.open == 1
        deadline = time.monotonic() + 30
        while world.streams.open and time.monotonic() < deadline:
            time.sleep(0.02)
        assert world.streams.open == 0
    finally:
        server.should_exit = True
        serving.join(timeout=30)


def _single_mover(world: World, game_id: str) -> int:
    """Plays on until exactly one seat is to move; returns it."""
    while True:
        loaded = load(world.store, game_id)
        to_move = loaded.spec.to_move(loaded.state)
        if len(to_move) == 1:
            return int(to_move[0])
        world.play(game_id, moves=1)


def test_a_seats_turn_answers_at_once_when_the_game_waits_for_the_seat(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    mover = _single_mover(world, game_id)
    token = bearer(world.tokens["alice" if mover == 0 else "bob"])
    view = world.client.get(f"/v1/games/{game_id}/view", params={"seat": mover}, headers=token)

    started = time.monotonic()
    turn = world.client.get(
        f"/v1/games/{game_id}/turn", params={"seat": mover, "wait": 30}, headers=token
    )

    assert turn.status_code == 200, turn.text
    assert turn.json() == view.json()
    assert turn.json()["legal_actions"] != []
    assert time.monotonic() - started < 25  # it did not wait out its 30 s


def test_a_seats_turn_waits_for_the_other_seats_move_and_answers_the_new_view(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    mover = _single_mover(world, game_id)
    waiter = 1 - mover
    token = bearer(world.tokens["alice" if waiter == 0 else "bob"])
    before = load(world.store, game_id).version

    def move_until_the_waiter_is_due() -> None:
        time.sleep(0.3)
        while waiter not in (loaded := load(world.store, game_id)).spec.to_move(loaded.state):
            world.play(game_id, moves=1)

    mover_thread = threading.Thread(target=move_until_the_waiter_is_due)
    mover_thread.start()
    turn = world.client.get(
        f"/v1/games/{game_id}/turn", params={"seat": waiter, "wait": 30}, headers=token
    )
    mover_thread.join()

    assert turn.status_code == 200, turn.text
    body = turn.json()
    assert body["version"] > before
    assert waiter in body["to_move"]
    assert body["legal_actions"] != []
    view = world.client.get(f"/v1/games/{game_id}/view", params={"seat": waiter}, headers=token)
    assert body == view.json()


def test_a_seats_turn_answers_the_view_as_it_stands_when_the_wait_runs_out(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    mover = _single_mover(world, game_id)
    waiter = 1 - mover
    token = bearer(world.tokens["alice" if waiter == 0 else "bob"])
    version = load(world.store, game_id).version

    turn = world.client.get(
        f"/v1/games/{game_id}/turn", params={"seat": waiter, "wait": 1}, headers=token
    )

    assert turn.status_code == 200, turn.text
    assert (turn.json()["version"], turn.json()["legal_actions"]) == (version, [])


def test_a_finished_games_turn_answers_at_once_with_its_end(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    world.play(game_id)
    turn = world.client.get(
        f"/v1/games/{game_id}/turn",
        params={"seat": 0, "wait": 30},
        headers=bearer(world.tokens["alice"]),
    )
    assert turn.status_code == 200, turn.text
    assert turn.json()["status"] != "playing"
    assert turn.json()["legal_actions"] == []


def test_a_seats_turn_follows_the_seats_access_rules(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    url = f"/v1/games/{game_id}/turn"
    alice = bearer(world.tokens["alice"])
    version = world.store.version(game_id)

    assert world.client.get(url, params={"seat": 1}, headers=alice).status_code == 403
    assert world.client.get(url, params={"seat": 1}).status_code == 401
    assert world.client.get(url, params={"seat": 5}, headers=alice).json()["field"] == "seat"
    too_long = world.client.get(url, params={"seat": 0, "wait": 61}, headers=alice)
    assert (too_long.status_code, too_long.json()["field"]) == (400, "wait")
    no_seat = world.client.get(url, headers=alice)
    assert (no_seat.status_code, no_seat.json()["field"]) == (400, "seat")
    missing = world.client.get("/v1/games/nope/turn", params={"seat": 0}, headers=ADMIN)
    assert (missing.status_code, missing.json()["game_id"]) == (404, "nope")
    assert world.store.version(game_id) == version


def test_a_token_holds_at_most_its_cap_of_streams_and_long_polls() -> None:
    world = World(StreamConfig(keepalive_s=0.05, lifetime_s=120, per_token=3))
    world.register("alice")
    world.register("bob")
    game_id = world.game(ALICE, BOB)
    alice, bob = bearer(world.tokens["alice"]), bearer(world.tokens["bob"])
    with (
        served(world.app, "token-streams") as base,
        httpx.Client(base_url=base, timeout=30) as http,
        contextlib.ExitStack() as held,
    ):
        opened_streams = [
            held.enter_context(http.stream("GET", path, headers=alice))
            for path in (
                f"/v1/games/{game_id}/stream?seat=0",
                f"/v1/games/{game_id}/stream",
                "/v1/bots/me/events",
            )
        ]
        assert [r.status_code for r in opened_streams] == [200, 200, 200]
        for path in (
            "/v1/bots/me/events",
            f"/v1/games/{game_id}/stream?seat=0",
            f"/v1/games/{game_id}/turn?seat=0&wait=0",
            "/v1/bots/me/turns?wait=0",
        ):
            refused = http.get(path, headers=alice)
            assert problem(refused, 429, "too-many-streams")["limit"] == 3, path
            assert refused.headers["retry-after"] == "1"
        assert http.get("/v1/bots/me/turns?wait=0", headers=bob).status_code == 200
        view = http.get(f"/v1/games/{game_id}/view?seat=0", headers=alice).json()
        move = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
        moved = http.post(f"/v1/games/{game_id}/actions?wait=0", json=move, headers=alice)
        assert moved.status_code == 200, "a move at the cap lands, and its wait is not counted"
        opened_streams[2].close()
        deadline = time.monotonic() + 30
        while (again := http.get("/v1/bots/me/turns?wait=0", headers=alice)).status_code == 429:
            assert time.monotonic() < deadline, "a closed stream never gave its place back"
            time.sleep(0.05)
        assert again.status_code == 200
