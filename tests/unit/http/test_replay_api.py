"""Replays and forks through the API, in the embedded default: every version of seeded games
of each kind against the live run's states, access while a game runs, errors, games read
from the archive after their stream left the store, and what-if forks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.games import act, create_game
from shared.app.loading import load
from shared.catalog import game_names, get_game
from shared.messages.codec import encode, to_json
from shared.messages.common import ClockEvent, GameCreated, Seat
from shared.messages.envelope import NewEvent
from shared.model import log_replay
from shared.ports.archive import InMemoryEventArchive
from shared.sdk.client import StreamEvent, parse_sse
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, Client, admin_client, app_client, problem


@dataclass
class LiveRun:
    """A game played through the use cases, with its state after every version from 2 on."""

    game_id: str
    states: dict[int, Any] = field(default_factory=dict)
    """The state after each version, evolved event by event as the game was played."""
    loaded: dict[int, Any] = field(default_factory=dict)
    """The platform's own state (`load`) after each move, keyed by the move's last version."""
    running: list[int] = field(default_factory=list)
    """The versions at which the game waited for a seat."""


def play_live(store: InMemoryEventStore, game: str, players: int, seed: int) -> LiveRun:
    """Plays a seeded game to its end, external seats moved by the random bot (Beggar by its
    platform-played turners), recording the states of the live run."""
    spec = get_game(game)
    seats = [Seat(kind="external")] * players if spec.has_decisions else None
    game_id = create_game(
        store, game, seats=seats, players=None if seats else players, seed=seed
    ).game_id
    run = LiveRun(game_id)
    state: Any = None

    def record() -> None:
        nonlocal state
        for item in store.read(game_id, after=max(run.states, default=1)):
            event = spec.codec.decode(item)
            if item.version == 1 or isinstance(event, GameCreated | ClockEvent):
                continue
            state = spec.evolve(state, event)
            run.states[item.version] = state
        loaded = load(store, game_id)
        run.loaded[loaded.version] = loaded.state

    record()
    for move in range(5000):
        loaded = load(store, game_id)
        if spec.is_over(loaded.state):
            return run
        if not spec.has_decisions:
            play_bot_turns(store, game_id, max_moves=1)
        else:
            run.running.append(loaded.version)
            seat = spec.to_move(loaded.state)[0]
            legal = spec.legal_actions(loaded.state, seat)
            action = spec.bots["random"].choose(spec.view(loaded.state, seat), legal, f"{move}")
            act(
                store,
                game_id,
                seat=seat,
                action=msgspec.to_builtins(action),
                expected_version=loaded.version,
            )
        record()
    pytest.fail(f"{game} game {game_id} did not end")


def replay(client: Client, game_id: str, **params: Any) -> dict[str, Any]:
    """Returns the 200 body of a replay."""
    response = client.get(f"/v1/games/{game_id}/replay", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def builtins(value: Any) -> Any:
    """Returns `value` as the API's JSON gives it back."""
    return msgspec.json.decode(msgspec.json.encode(value))


def finished_game(client: Client, game: str = "shithead", seed: int = 3) -> dict[str, Any]:
    """Creates a game of built-in bots, played to its end at once; returns its body."""
    created = client.post("/v1/games", json={"game": game, "players": 2, "seed": seed})
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    assert body["status"] != "playing"
    return body


LIVE_SEEDS = {"shithead": 4, "autobus": 3, "beggar": 3}
"""The deal of each game's live run, a short one: its every version is replayed."""


def test_every_game_has_a_live_run() -> None:
    assert sorted(LIVE_SEEDS) == game_names()


@pytest.mark.parametrize("game", sorted(LIVE_SEEDS))
def test_a_replay_at_every_version_equals_the_state_of_the_live_run(
    store: InMemoryEventStore, client: Client, game: str
) -> None:
    spec = get_game(game)
    seed = LIVE_SEEDS[game]
    run = play_live(store, game, 2, seed)
    last = max(run.states)
    assert run.loaded[last] == run.states[last]

    for version in range(1, last + 1):
        body = replay(client, run.game_id, version=version)
        over = version > 1 and spec.is_over(run.states[version])
        assert (body["version"], body["last_version"], body["finished"]) == (version, last, True)
        assert body["over"] is over, version
        assert (body["result"] is not None) is over
        assert [item["version"] for item in body["events"]] == list(range(1, version + 1))
        if version == 1:
            assert (body["state"], body["view"], body["result"]) == (None, None, None)
            continue
        state = run.states[version]
        assert body["state"] == builtins(state), version
        if version in run.loaded:
            assert run.loaded[version] == state
        result = spec.result(state) if spec.is_over(state) else None
        assert body["result"] == builtins(result)
        seat = version % 2
        seen = replay(client, run.game_id, version=version, seat=seat)
        assert seen["view"] == builtins(spec.view(state, seat))
        assert seen["state"] is None


def test_a_finished_games_replay_is_public_and_its_events_are_whole(
    store: InMemoryEventStore,
) -> None:
    with admin_client(store) as client:
        created = client.post(
            "/v1/games", json={"game": "shithead", "players": 2, "seed": 5}, headers=ADMIN
        ).json()
        game_id, last = created["game_id"], created["version"]

        body = replay(client, game_id)
        as_seat = replay(client, game_id, seat=1, version=last)

    stored = [to_json(e) for e in get_game("shithead").codec.decode_all(store.read(game_id))]
    assert [item["data"] for item in body["events"]] == builtins(stored)
    assert as_seat["events"] == body["events"]
    assert (body["version"], body["over"], body["finished"], body["seat"]) == (
        last,
        True,
        True,
        None,
    )
    assert (body["game"], body["seats"], body["ruleset"]) == (
        "shithead",
        created["seats"],
        created["ruleset"],
    )
    assert body["result"] == created["result"]
    assert body["state"] is not None
    assert body["view"] is None
    assert (as_seat["seat"], as_seat["state"]) == (1, None)
    assert as_seat["view"] is not None


def move_end(store: InMemoryEventStore, game_id: str, at_least: int) -> int:
    """Returns the first version from `at_least` on at which a move of the game ends: a
    version a fork may start from (the original's bots are seeded at random)."""
    log = store.read(game_id)
    ends = log_replay.step_ends(get_game(log[0].kind).codec.decode_all(log))
    return min(end for end in ends if end >= at_least)


def running_copy(store: InMemoryEventStore, game_id: str, version: int, seats: list[Seat]) -> str:
    """Returns a new game holding the first `version` events of `game_id` with `seats`: a
    game that runs (unless it is over at `version`)."""
    log = store.read(game_id, limit=version)
    created = get_game(log[0].kind).codec.decode(log[0])
    assert isinstance(created, GameCreated)
    head = encode(msgspec.structs.replace(created, seats=seats))
    copy_id = f"{game_id}-at-{version}"
    events = [head, *(NewEvent(item.type, item.data) for item in log[1:])]
    store.append(copy_id, log[0].kind, 0, events)
    return copy_id


def test_a_running_game_is_replayed_as_a_seat_its_view_and_redacted_events(
    store: InMemoryEventStore, client: Client
) -> None:
    spec = get_game("shithead")
    game_id = finished_game(client, seed=6)["game_id"]
    running = running_copy(store, game_id, 40, [Seat(kind="external")] * 2)
    assert not spec.is_over(load(store, running).state)

    for seat in (0, 1):
        body = replay(client, running, seat=seat)
        view = client.get(f"/v1/games/{running}/view", params={"seat": seat}).json()
        events = client.get(f"/v1/games/{running}/events", params={"seat": seat}).json()
        assert (body["over"], body["finished"], body["version"]) == (False, False, 40)
        assert body["state"] is None
        assert body["view"] == view["view"]
        assert body["events"] == events["events"]
        assert body["result"] is None
        earlier = replay(client, running, seat=seat, version=20)
        assert earlier["view"] == builtins(spec.view(spec.fold(decoded(store, running)[:20]), seat))
        assert earlier["events"] == events["events"][:20]
    assert body["events"][0]["data"]["bot_seed"] == ""


def decoded(store: InMemoryEventStore, game_id: str) -> list[Any]:
    """Returns the decoded events of `game_id`."""
    log = store.read(game_id)
    return get_game(log[0].kind).codec.decode_all(log)


def test_a_running_game_refuses_a_full_replay_with_a_reason(
    store: InMemoryEventStore, client: Client
) -> None:
    game_id = finished_game(client, seed=6)["game_id"]
    running = running_copy(store, game_id, 40, [Seat(kind="external")] * 2)

    refused = problem(client.get(f"/v1/games/{running}/replay"), 403)
    early = problem(client.get(f"/v1/games/{running}/replay", params={"version": 2}), 403)

    assert refused["rule"] == early["rule"] == "game_running"
    assert "running" in refused["detail"]
    assert "?seat=" in refused["detail"]


def test_a_running_games_seat_needs_its_own_credentials(store: InMemoryEventStore) -> None:
    with admin_client(store) as client:
        tokens = {}
        for name in ("alice", "bob"):
            spec = {"name": name, "game": "shithead", "kind": "external"}
            registered = client.post("/v1/bots", json=spec, headers=ADMIN)
            tokens[name] = {"Authorization": f"Bearer {registered.json()['token']}"}
        created = client.post(
            "/v1/games", json={"game": "shithead", "players": 2, "seed": 6}, headers=ADMIN
        )
        game_id = created.json()["game_id"]
        seats = [Seat(kind="external", name=n, version="1") for n in ("alice", "bob")]
        running = running_copy(store, game_id, 40, seats)
        url = f"/v1/games/{running}/replay"

        own = client.get(url, params={"seat": 0}, headers=tokens["alice"])
        theirs = client.get(url, params={"seat": 1}, headers=tokens["alice"])
        nobody = client.get(url, params={"seat": 0})
        wrong = client.get(url, params={"seat": 0}, headers={"Authorization": "Bearer nope"})
        host = client.get(url, params={"seat": 1}, headers=ADMIN)
        full = client.get(url, headers=ADMIN)
        finished = client.get(f"/v1/games/{game_id}/replay")

    assert own.status_code == 200, own.text
    assert own.json()["view"]["hand"]
    assert "alice@1" in problem(theirs, 403)["detail"]
    assert problem(nobody, 401)["type"].endswith("unauthorized")
    assert problem(wrong, 401)["type"].endswith("unauthorized")
    assert host.status_code == 200
    assert problem(full, 403)["rule"] == "game_running"
    assert finished.status_code == 200


@pytest.mark.parametrize("version", [0, -1, 10_000])
def test_a_version_out_of_range_is_a_422_naming_version(client: Client, version: int) -> None:
    game_id = finished_game(client)["game_id"]

    body = problem(client.get(f"/v1/games/{game_id}/replay", params={"version": version}), 422)

    assert body["field"] == "version"


def test_bad_parameters_and_unknown_games_are_problems(client: Client) -> None:
    game_id = finished_game(client)["game_id"]
    url = f"/v1/games/{game_id}/replay"

    assert problem(client.get(url, params={"seat": 2}), 422)["field"] == "seat"
    assert problem(client.get(url, params={"version": "x"}), 400)["field"] == "version"
    assert problem(client.get(url, params={"seat": -1}), 400)["field"] == "seat"
    unknown = problem(client.get("/v1/games/nobody/replay"), 404)
    assert unknown["game_id"] == "nobody"
    assert problem(client.post("/v1/games/nobody/fork", params={"version": 2}), 404)


def test_a_game_whose_stream_left_the_store_reads_and_replays_from_the_archive(
    store: InMemoryEventStore,
) -> None:
    archive = InMemoryEventArchive()
    with app_client(store, archive=archive) as client:
        created = finished_game(client, "autobus", seed=8)
        game_id = created["game_id"]
        before = {
            path: client.get(f"/v1/games/{game_id}{path}", params=params).json()
            for path, params in [
                ("", {}),
                ("/view", {"seat": 1}),
                ("/events", {"after": 3, "limit": 5}),
                ("/replay", {"version": 30}),
            ]
        }
        archive.add(store.read(game_id))
        assert store.drop(game_id)

        after = {
            path: client.get(f"/v1/games/{game_id}{path}", params=params).json()
            for path, params in [
                ("", {}),
                ("/view", {"seat": 1}),
                ("/events", {"after": 3, "limit": 5}),
                ("/replay", {"version": 30}),
            ]
        }
    assert after == before
    assert [item["version"] for item in after["/events"]["events"]] == [4, 5, 6, 7, 8]


def sse_events(text: str) -> list[StreamEvent]:
    """Returns every event of a server-sent event body."""
    return list(parse_sse(iter([*text.splitlines(), ""])))


def test_the_stream_of_a_game_whose_stream_left_the_store_comes_from_the_archive(
    store: InMemoryEventStore,
) -> None:
    archive = InMemoryEventArchive()
    with app_client(store, archive=archive) as client:
        game_id = finished_game(client, "autobus", seed=8)["game_id"]
        url = f"/v1/games/{game_id}/stream"
        before = [client.get(url).text, client.get(url, headers={"Last-Event-ID": "3"}).text]
        archive.add(store.read(game_id))
        assert store.drop(game_id)

        after = [client.get(url).text, client.get(url, headers={"Last-Event-ID": "3"}).text]
        version = client.get(f"/v1/games/{game_id}").json()["version"]

    assert after == before
    snapshot, resumed = (sse_events(text) for text in after)
    assert [event.event for event in snapshot] == ["snapshot"]
    assert [int(event.id or "") for event in resumed] == list(range(4, version + 1))


def test_a_fork_starts_from_the_originals_state_at_the_version_and_plays_to_its_end(
    store: InMemoryEventStore, client: Client
) -> None:
    spec = get_game("shithead")
    original = finished_game(client, seed=9)
    game_id = original["game_id"]
    seats = [{"bot": "heuristic"}, {"bot": "random"}]
    at = move_end(store, game_id, 25)

    forked = client.post(f"/v1/games/{game_id}/fork", params={"version": at}, json={"seats": seats})

    assert forked.status_code == 201, forked.text
    fork = forked.json()
    assert forked.headers["location"] == f"/v1/games/{fork['game_id']}"
    assert fork["game_id"] != game_id
    assert fork["status"] != "playing"  # over: finished, or capped (its bots' seed is random)
    assert [seat["bot"] for seat in fork["seats"]] == ["heuristic", "random"]
    assert fork["ruleset"] == original["ruleset"]
    events = decoded(store, fork["game_id"])
    created = events[0]
    assert isinstance(created, GameCreated)
    assert (created.forked_from, created.fork_version) == (game_id, at)
    assert store.read(fork["game_id"], after=1, limit=at - 1) == [
        msgspec.structs.replace(item, game_id=fork["game_id"], recorded_at=copy.recorded_at)
        for item, copy in zip(
            store.read(game_id, after=1, limit=at - 1),
            store.read(fork["game_id"], after=1, limit=at - 1),
            strict=True,
        )
    ]
    assert spec.fold(events[:at]) == spec.fold(decoded(store, game_id)[:at])
    at_fork = replay(client, fork["game_id"], version=at)
    assert at_fork["state"] == replay(client, game_id, version=at)["state"]


def test_a_fork_keeps_the_original_seats_by_default_and_waits_for_an_external_seat(
    store: InMemoryEventStore, client: Client
) -> None:
    game_id = finished_game(client, seed=9)["game_id"]
    at = move_end(store, game_id, 10)

    same = client.post(f"/v1/games/{game_id}/fork", params={"version": at})
    external = client.post(
        f"/v1/games/{game_id}/fork",
        params={"version": at},
        json={"seats": [{"kind": "external"}, {"bot": "random"}]},
    )

    assert same.status_code == 201, same.text
    assert same.json()["seats"] == client.get(f"/v1/games/{game_id}").json()["seats"]
    assert same.json()["status"] != "playing"  # finished, or capped (random bot seed)
    waiting = external.json()
    assert (external.status_code, waiting["status"]) == (201, "playing")
    assert waiting["to_move"] == [0]
    assert waiting["version"] >= at


def test_a_fork_needs_a_finished_game_and_a_version_that_leaves_a_game_to_play(
    store: InMemoryEventStore, client: Client
) -> None:
    original = finished_game(client, seed=9)
    game_id, last = original["game_id"], original["version"]
    running = running_copy(store, game_id, 40, [Seat(kind="external")] * 2)
    url = f"/v1/games/{game_id}/fork"
    before = len(store.read_feed(count=100_000))

    started = next(item.version for item in store.read(game_id) if item.type == "PlayStarted")
    inside = started - 1  # the last seat's PlayerReady: play has not started, nobody moves

    for version in (0, 1, inside, last, last + 1):
        refused = problem(client.post(url, params={"version": version}), 422)
        assert refused["field"] == "version", version
    assert "inside a move" in problem(client.post(url, params={"version": inside}), 422)["detail"]
    at = move_end(store, game_id, 5)
    too_many = client.post(url, params={"version": at}, json={"seats": [{}, {}, {}]})
    assert problem(too_many, 422)["field"] == "seats"
    unknown_bot = client.post(url, params={"version": at}, json={"seats": [{"bot": "zz"}, {}]})
    assert problem(unknown_bot, 422)["field"] == "seats[0].bot"
    assert problem(client.post(url), 400)["field"] == "version"
    running_fork = client.post(f"/v1/games/{running}/fork", params={"version": 5})
    assert problem(running_fork, 403)["rule"] == "game_running"
    assert len(store.read_feed(count=100_000)) == before


def test_a_fork_is_a_hosting_operation_and_a_retry_with_its_key_returns_the_first_fork(
    store: InMemoryEventStore,
) -> None:
    with admin_client(store) as client:
        created = client.post(
            "/v1/games", json={"game": "beggar", "players": 3, "seed": 2}, headers=ADMIN
        ).json()
        url = f"/v1/games/{created['game_id']}/fork"
        key = {"Idempotency-Key": "fork-1", **ADMIN}

        anonymous = client.post(url, params={"version": 5})
        first = client.post(url, params={"version": 5}, headers=key)
        again = client.post(url, params={"version": 5}, headers=key)
        other = client.post(url, params={"version": 6}, headers=key)

    assert problem(anonymous, 401)["type"].endswith("unauthorized")
    assert first.status_code == 201, first.text
    assert again.status_code == 200
    assert again.json() == first.json()
    assert problem(other, 422)["field"] == "Idempotency-Key"


def test_a_fork_of_a_rated_game_is_never_rated(store: InMemoryEventStore, client: Client) -> None:
    seats = [Seat(kind="bot", bot="random", name=name, version="1") for name in ("ann", "ben")]
    game_id = create_game(store, "shithead", seats=seats, seed=4).game_id
    play_bot_turns(store, game_id)
    rated = client.get("/v1/leaderboards/shithead").json()

    forked = client.post(f"/v1/games/{game_id}/fork", params={"version": 30})

    assert forked.json()["status"] != "playing"
    assert [entry["games"] for entry in rated["entries"]] == [1, 1]
    assert client.get("/v1/leaderboards/shithead").json() == rated
