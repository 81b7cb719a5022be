"""The platform's loops are bounded, on the in-memory store and on Redis: one whose appends
make no progress stops after `MAX_IDLE_TRIES`, reports the stall (counted in
`cardarena_platform_stalls`) and leaves the game to reconciliation.

No client can make such a loop any more (its keys live in `client:<caller>:...`): each test
plants the record that would, under a platform key, with the store's own append (a record
of the old key space, or a bug).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

import httpx
import pytest
import redis

from services.ops.metrics import WorkerMetrics
from services.workers.webhooks import play_webhook_turn
from shared.app import stalls
from shared.app.bot_turns import next_bot_seat, play_bot_turns
from shared.app.deadlines import enforce_deadline, watch_of
from shared.app.games import create_game
from shared.app.loading import appendable, load
from shared.app.registry import register
from shared.app.tournaments import reconcile_games
from shared.messages.codec import encode_all
from shared.messages.common import Clock, Event, Seat
from shared.messages.envelope import NewEvent
from shared.model.log_replay import replay
from shared.model.registry import BotSpec
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore

FAR_FUTURE = 10**15
Batch = tuple[int, Sequence[NewEvent], str | None]
CLOCK = Clock(move_seconds=60, bank_seconds=0)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest) -> EventStore:
    """Returns each store in turn (the Redis one under this test's namespace)."""
    if request.param == "memory":
        return InMemoryEventStore()
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    return RedisEventStore(client, namespace)


@pytest.fixture
def metrics() -> Iterator[WorkerMetrics]:
    """Returns worker metrics that count this process's stalls while the test runs."""
    counted = WorkerMetrics()
    unsubscribe = stalls.subscribe(counted.count_stall)
    yield counted
    unsubscribe()


def stalled(metrics: WorkerMetrics, loop: str) -> float:
    """Returns how many stalls of `loop` the metrics counted."""
    value = metrics.registry.get_sample_value("cardarena_platform_stalls_total", {"loop": loop})
    return value or 0.0


def plant(store: EventStore, game_id: str, key: Callable[[int], str]) -> int:
    """Plays seat 0's first legal actions until one hands the turn to seat 1, and appends
    that one with the raw key `key(version after it)`; returns that version."""
    while True:
        loaded = load(store, game_id)
        spec, state = loaded.spec, loaded.state
        assert spec.to_move(state) == [0], "seat 0 is not alone to move"
        action = spec.legal_actions(state, 0)[0]
        events = appendable(loaded, spec.decide(state, 0, action))
        after = loaded.version + len(events)
        for event in events:
            state = spec.evolve(state, event)
        handed = spec.to_move(state) == [1]
        raw = key(after) if handed else None
        store.append(game_id, spec.name, loaded.version, encode_all(events), raw)
        if handed:
            return after


def test_a_bot_loop_answered_replayed_without_progress_stops_counts_and_is_reconciled(
    store: EventStore, metrics: WorkerMetrics, monkeypatch: pytest.MonkeyPatch
) -> None:
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=2).game_id
    play_bot_turns(store, game_id)
    version = plant(store, game_id, lambda after: f"bot:{after}")
    assert next_bot_seat(load(store, game_id)) == 1
    rounds: list[int] = []
    batches = store.append_batches

    def counted(*args: object, **kwargs: object) -> object:
        rounds.append(1)
        return batches(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "append_batches", counted)
    assert play_bot_turns(store, game_id) == 0
    assert len(rounds) == stalls.MAX_IDLE_TRIES
    assert store.version(game_id) == version
    assert stalled(metrics, "bot_turns") == 1
    # Reconciliation sees a bot's move left waiting and sends the game on.
    sent: list[str] = []
    assert reconcile_games(store, [game_id], 0, FAR_FUTURE, sent.append) == 1
    assert sent == [game_id]


def test_a_deadline_answered_replayed_without_progress_stops_and_counts(
    store: EventStore, metrics: WorkerMetrics
) -> None:
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "autobus", seats=seats, seed=3, clock=CLOCK).game_id
    version = plant(store, game_id, lambda after: f"timeout:{after}")
    watch = watch_of(load(store, game_id))
    assert watch is not None
    assert watch.turn_version == version
    check = enforce_deadline(store, game_id, version, FAR_FUTURE)
    assert check.status == "stalled"
    assert store.version(game_id) == version
    assert stalled(metrics, "deadline") == 1


def test_a_webhook_turn_answered_replayed_without_progress_stops_and_counts(
    store: EventStore, metrics: WorkerMetrics
) -> None:
    spec = BotSpec(name="hook", game="autobus", kind="webhook", url="http://127.0.0.1:9/turn")
    register(store, spec, allow_private_urls=True)
    seats = [Seat(kind="external"), Seat(kind="webhook", name="hook", version="1")]
    game_id = create_game(store, "autobus", seats=seats, seed=4, clock=CLOCK).game_id
    version = plant(store, game_id, lambda after: f"webhook:{after}:1")
    calls: list[int] = []

    def legal(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        turn = json.loads(request.content)
        return httpx.Response(200, json={"action": turn["legal_actions"][0]})

    with httpx.Client(transport=httpx.MockTransport(legal)) as http:
        status = play_webhook_turn(store, game_id, version, 1, client=http, allow_private=True)
    assert status == "stalled"
    assert len(calls) == stalls.MAX_IDLE_TRIES
    assert store.version(game_id) == version
    assert stalled(metrics, "webhook") == 1


def client_move(store: EventStore, game_id: str, seat: int) -> None:
    """Appends `seat`'s first legal action on the game as it stands, as the API would."""
    loaded = load(store, game_id)
    spec, state = loaded.spec, loaded.state
    events = appendable(loaded, spec.decide(state, seat, spec.legal_actions(state, seat)[0]))
    store.append(game_id, spec.name, loaded.version, encode_all(events))


def test_a_client_move_landing_while_the_platform_decides_costs_the_bots_a_retry_not_a_stale_move(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shithead's swap waits for every seat at once, so a client's move can land between the
    platform deciding a run of bot moves and appending it. Every bot move in the log must
    then be the one decided on the game as it stands: the log equals that of a twin game
    where the client's move simply came first."""
    seats = [Seat(kind="external"), Seat(kind="bot", bot="heuristic"), Seat(kind="bot")]
    game_id = create_game(store, "shithead", seats=seats, seed=5).game_id
    opening = [NewEvent(e.type, e.data) for e in store.read(game_id)]
    twin = InMemoryEventStore()
    twin.append(game_id, "shithead", 0, opening)
    client_move(twin, game_id, 0)
    play_bot_turns(twin, game_id)
    chains: list[int] = []
    append_batches = store.append_batches

    def raced(stream: str, kind: str, batches: Sequence[Batch]) -> list[object]:
        if not chains:
            client_move(store, game_id, 0)  # lands first, at the chain's first version
        chains.append(len(batches))
        return append_batches(stream, kind, batches)  # type: ignore[return-value]

    monkeypatch.setattr(store, "append_batches", raced)
    play_bot_turns(store, game_id)

    assert chains[0] >= 2, "the race needs a chain of two moves or more"
    log = [(e.type, e.data) for e in store.read(game_id)]
    assert log == [(e.type, e.data) for e in twin.read(game_id)]
    assert next_bot_seat(load(store, game_id)) is None
    monkeypatch.undo()
    while not (loaded := load(store, game_id)).spec.is_over(loaded.state):  # play it out
        client_move(store, game_id, 0)
        play_bot_turns(store, game_id)
    report = replay(game_id, decoded(store, game_id))
    assert report.ok, report.reason


def decoded(store: EventStore, game_id: str) -> list[Event]:
    """Returns the decoded log of `game_id`."""
    return list(load(store, game_id).spec.codec.decode_all(store.read(game_id)))
