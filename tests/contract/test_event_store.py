"""The EventStore and FeedConsumer contract, run against the in-memory twin and Redis."""

from __future__ import annotations

import functools
import multiprocessing
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

import pytest
import redis

from shared.messages.envelope import SCHEMA_VERSION, NewEvent
from shared.store.port import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    FeedEntry,
    IdempotencyKeyReused,
    StoreError,
    own_position,
)
from shared.store.redis_store import RedisEventStore
from tests.support.stores import GAME, KIND, ConsumerFactory, events

OTHER_GAME = "g-2"


def payloads(store: EventStore, game_id: str = GAME) -> list[str]:
    """Returns the payloads of the stream of `game_id`, in order."""
    return [recorded.data.decode() for recorded in store.read(game_id)]


def feed_payloads(store: EventStore, game_id: str = GAME) -> list[str]:
    """Returns the payloads of `game_id`'s entries in the whole feed, in feed order."""
    return [
        entry.event.data.decode()
        for entry in store.read_feed(count=10_000)
        if entry.event.game_id == game_id
    ]


def positions(entries: list[FeedEntry]) -> list[str]:
    """Returns the positions of `entries` in their partition."""
    return [own_position(entry) for entry in entries]


def test_appends_get_gapless_versions_from_one(store: EventStore) -> None:
    assert store.append(GAME, KIND, 0, events("a")) == AppendResult(1, 1)
    assert store.append(GAME, KIND, 1, events("b", "c", "d")) == AppendResult(2, 4)
    assert store.append(GAME, KIND, 4, events("e")) == AppendResult(5, 5)

    assert [recorded.version for recorded in store.read(GAME)] == [1, 2, 3, 4, 5]
    assert payloads(store) == ["a", "b", "c", "d", "e"]
    assert store.version(GAME) == 5


def test_an_unknown_game_is_at_version_zero_and_reads_empty(store: EventStore) -> None:
    assert store.version("nobody") == 0
    assert store.read("nobody") == []


def test_read_returns_the_events_after_a_version_up_to_a_limit(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("1", "2", "3", "4", "5"))

    assert [e.version for e in store.read(GAME, after=2)] == [3, 4, 5]
    assert [e.version for e in store.read(GAME, after=1, limit=2)] == [2, 3]
    assert [e.version for e in store.read(GAME, limit=10)] == [1, 2, 3, 4, 5]
    assert store.read(GAME, after=5) == []


def test_a_dropped_stream_reads_empty_and_the_feed_and_other_games_keep_their_events(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a", "b"))
    store.append(OTHER_GAME, KIND, 0, events("other"))

    assert store.drop(GAME) is True

    assert store.read(GAME) == []
    assert store.wait(GAME, 0, 0) == []
    assert payloads(store, OTHER_GAME) == ["other"]
    assert feed_payloads(store) == ["a", "b"]
    assert feed_payloads(store, OTHER_GAME) == ["other"]
    assert store.drop(GAME) is False
    assert store.drop("nobody") is False


def test_a_dropped_game_keeps_its_version_so_its_id_is_never_reused(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a", "b"), idempotency_key="create")
    store.drop(GAME)

    assert store.version(GAME) == 2
    with pytest.raises(ConcurrencyConflict) as raised:
        store.append(GAME, KIND, 0, events("again"))
    assert raised.value.actual == 2
    assert store.append(GAME, KIND, 2, events("c")) == AppendResult(3, 3)
    assert [(e.version, e.data) for e in store.read(GAME)] == [(3, b"c")]
    assert [e.version for e in store.read(GAME, after=2)] == [3]
    assert store.read(GAME, after=3) == []


def test_recorded_events_carry_game_kind_type_schema_and_store_time(store: EventStore) -> None:
    before = int(time.time() * 1000)
    store.append(GAME, KIND, 0, [NewEvent("GameStarted", b"{}")])
    after = int(time.time() * 1000)

    (recorded,) = store.read(GAME)
    assert (recorded.game_id, recorded.kind, recorded.type) == (GAME, KIND, "GameStarted")
    assert recorded.schema == SCHEMA_VERSION
    assert before - 1000 <= recorded.recorded_at <= after + 1000


def test_binary_payloads_round_trip_unchanged(store: EventStore) -> None:
    payload = bytes(range(256)) + b"\x00\r\n \xff"
    store.append(GAME, KIND, 0, [NewEvent("Blob", payload)])

    assert store.read(GAME)[0].data == payload
    assert store.read_feed()[0].event.data == payload


def test_a_stale_expected_version_raises_a_conflict_and_writes_nothing(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a", "b"))

    with pytest.raises(ConcurrencyConflict) as raised:
        store.append(GAME, KIND, 1, events("late"))

    assert (raised.value.game_id, raised.value.expected, raised.value.actual) == (GAME, 1, 2)
    assert payloads(store) == ["a", "b"]
    assert feed_payloads(store) == ["a", "b"]
    assert store.version(GAME) == 2


def test_an_expected_version_ahead_of_the_stream_is_a_conflict(store: EventStore) -> None:
    with pytest.raises(ConcurrencyConflict) as raised:
        store.append(GAME, KIND, 3, events("early"))

    assert raised.value.actual == 0
    assert store.read(GAME) == []
    assert store.read_feed() == []


def test_a_repeated_idempotency_key_returns_the_first_result_and_writes_nothing(
    store: EventStore,
) -> None:
    first = store.append(GAME, KIND, 0, events("a", "b"), idempotency_key="k", fingerprint="f")

    again = store.append(GAME, KIND, 0, events("a", "b"), idempotency_key="k", fingerprint="f")

    assert first == AppendResult(1, 2)
    assert again == AppendResult(1, 2, replayed=True)
    assert payloads(store) == ["a", "b"]
    assert feed_payloads(store) == ["a", "b"]


def test_a_repeated_key_replays_after_someone_else_moved_the_stream(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("mine"), idempotency_key="k")
    store.append(GAME, KIND, 1, events("theirs"))

    again = store.append(GAME, KIND, 0, events("mine"), idempotency_key="k")

    assert again == AppendResult(1, 1, replayed=True)
    assert payloads(store) == ["mine", "theirs"]


def test_a_conflicted_append_does_not_consume_its_key(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("theirs"))
    with pytest.raises(ConcurrencyConflict):
        store.append(GAME, KIND, 0, events("mine"), idempotency_key="k")

    retried = store.append(GAME, KIND, 1, events("mine"), idempotency_key="k")

    assert retried == AppendResult(2, 2)
    assert payloads(store) == ["theirs", "mine"]


def test_a_reused_key_with_a_different_fingerprint_raises_and_writes_nothing(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a"), idempotency_key="k", fingerprint="play 7")

    with pytest.raises(IdempotencyKeyReused) as raised:
        store.append(GAME, KIND, 1, events("b"), idempotency_key="k", fingerprint="play 9")

    assert (raised.value.game_id, raised.value.key) == (GAME, "k")
    assert payloads(store) == ["a"]
    assert feed_payloads(store) == ["a"]


def test_an_empty_fingerprint_on_either_side_replays_the_key(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"), idempotency_key="k", fingerprint="")
    store.append(GAME, KIND, 1, events("b"), idempotency_key="j", fingerprint="play 9")

    assert store.append(GAME, KIND, 0, events("a"), idempotency_key="k", fingerprint="x").replayed
    assert store.append(GAME, KIND, 1, events("b"), idempotency_key="j").replayed
    assert payloads(store) == ["a", "b"]


def test_idempotency_keys_are_per_game(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"), idempotency_key="k", fingerprint="f")

    other = store.append(OTHER_GAME, KIND, 0, events("x"), idempotency_key="k", fingerprint="g")

    assert other == AppendResult(1, 1)
    assert payloads(store, OTHER_GAME) == ["x"]


def test_recall_returns_the_first_result_of_a_known_key_and_none_otherwise(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a", "b"), idempotency_key="k", fingerprint="f")

    assert store.recall(GAME, "k", "f") == AppendResult(1, 2, replayed=True)
    assert store.recall(GAME, "k") == AppendResult(1, 2, replayed=True)
    assert store.recall(GAME, "unknown") is None
    assert store.recall(OTHER_GAME, "k") is None
    with pytest.raises(IdempotencyKeyReused):
        store.recall(GAME, "k", "another")


def test_an_empty_append_is_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="at least one event"):
        store.append(GAME, KIND, 0, [])
    with pytest.raises(ValueError, match="at least one event"):
        store.append_batches(GAME, KIND, [(0, [], None)])

    assert store.version(GAME) == 0
    assert store.read_feed() == []


def test_every_append_reaches_the_feed_in_order_with_game_id_and_kind(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a1", "a2"))
    store.append(OTHER_GAME, "shithead", 0, events("b1"))
    store.append(GAME, KIND, 2, events("a3"))

    feed = [
        (e.event.game_id, e.event.kind, e.event.version, e.event.data.decode())
        for e in store.read_feed()
    ]

    assert [item for item in feed if item[0] == GAME] == [
        (GAME, KIND, 1, "a1"),
        (GAME, KIND, 2, "a2"),
        (GAME, KIND, 3, "a3"),
    ]
    assert [item for item in feed if item[0] == OTHER_GAME] == [(OTHER_GAME, "shithead", 1, "b1")]
    if store.partition_of(GAME) == store.partition_of(OTHER_GAME):
        assert [item[3] for item in feed] == ["a1", "a2", "b1", "a3"]  # one partition: as appended


def test_read_feed_pages_through_every_entry_once(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("1", "2", "3", "4", "5"))
    store.append(OTHER_GAME, KIND, 0, events("6", "7"))

    pages: list[list[FeedEntry]] = []
    after = "0"
    while page := store.read_feed(after, count=3):
        pages.append(page)
        after = page[-1].position

    assert [len(page) for page in pages] == [3, 3, 1]
    taken = [e.event for page in pages for e in page]
    assert [e.data.decode() for e in taken if e.game_id == GAME] == list("12345")
    assert [e.data.decode() for e in taken if e.game_id == OTHER_GAME] == list("67")
    assert len({e.position for page in pages for e in page}) == 7
    assert store.read_feed(after) == []


AppendBatches = Callable[
    [str, str, Sequence[tuple[int, Sequence[NewEvent], str | None]]],
    list[AppendResult | StoreError],
]


@pytest.fixture(params=["adapter", "port default"])
def append_batches(request: pytest.FixtureRequest, store: EventStore) -> AppendBatches:
    """Returns the store's own `append_batches`, then the port's default one (a batch at a
    time through `append`) over the same store: both keep the chain."""
    if request.param == "adapter":
        return store.append_batches
    return functools.partial(EventStore.append_batches, store)


def test_append_batches_write_a_chain_of_batches_each_after_the_one_before(
    store: EventStore, append_batches: AppendBatches
) -> None:
    results = append_batches(
        GAME, KIND, [(0, events("a"), None), (1, events("b", "c"), "k"), (3, events("d"), None)]
    )

    assert results == [AppendResult(1, 1), AppendResult(2, 3), AppendResult(4, 4)]
    assert payloads(store) == ["a", "b", "c", "d"]
    assert feed_payloads(store) == ["a", "b", "c", "d"]
    assert store.recall(GAME, "k") == AppendResult(2, 3, replayed=True)


def test_a_chain_whose_first_batch_conflicts_writes_none_of_the_batches_after_it(
    store: EventStore, append_batches: AppendBatches
) -> None:
    """The attack: the platform decides two moves at version 1; a client's move lands at 1
    first. The second move, decided after the first, must not land at 2 because the version
    happens to match: it was decided on a game that never existed."""
    store.append(GAME, KIND, 0, events("a"))
    store.append(GAME, KIND, 1, events("client"))

    results = append_batches(
        GAME, KIND, [(1, events("bot 1"), "bot:1"), (2, events("bot 2"), "bot:2")]
    )

    assert [type(result) for result in results] == [ConcurrencyConflict, ConcurrencyConflict]
    assert [result.actual for result in results if isinstance(result, ConcurrencyConflict)] == [
        2,
        2,
    ]
    assert payloads(store) == ["a", "client"]
    assert feed_payloads(store) == ["a", "client"]
    assert store.recall(GAME, "bot:1") is None
    assert store.recall(GAME, "bot:2") is None


def test_a_replayed_batch_ends_the_chain_and_a_failed_one_ends_it_too(
    store: EventStore, append_batches: AppendBatches
) -> None:
    """A key names a move's version, not its content: what a second runner decided after its
    replayed move is not written (it may follow a different move than the one recorded)."""
    store.append(GAME, KIND, 0, events("a"), idempotency_key="bot:0")

    replayed = append_batches(
        GAME, KIND, [(0, events("a'"), "bot:0"), (1, events("b"), "bot:1"), (2, events("c"), None)]
    )
    stale = append_batches(GAME, KIND, [(0, events("x"), None), (1, events("y"), None)])

    assert replayed[0] == AppendResult(1, 1, replayed=True)
    assert [type(result) for result in replayed[1:]] == [ConcurrencyConflict] * 2
    assert [type(result) for result in stale] == [ConcurrencyConflict] * 2
    assert payloads(store) == ["a"]
    assert store.recall(GAME, "bot:1") is None
    # The next run, decided on the game as it is, goes on from its version.
    assert append_batches(GAME, KIND, [(1, events("b"), "bot:1")]) == [AppendResult(2, 2)]
    assert payloads(store) == ["a", "b"]


def test_append_batches_and_append_share_their_idempotency_records(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"), idempotency_key="first")

    results = store.append_batches(GAME, KIND, [(1, events("b"), "second"), (2, events("c"), None)])
    replayed = store.append_batches(GAME, KIND, [(0, events("a"), "first")])

    assert results == [AppendResult(2, 2), AppendResult(3, 3)]
    assert replayed == [AppendResult(1, 1, replayed=True)]
    assert store.recall(GAME, "second") == AppendResult(2, 2, replayed=True)
    again = store.append(GAME, KIND, 1, events("b"), idempotency_key="second")
    assert again == AppendResult(2, 2, replayed=True)
    assert payloads(store) == ["a", "b", "c"]
    assert feed_payloads(store) == ["a", "b", "c"]


def test_concurrent_appends_from_eight_threads_have_one_winner_per_version(
    store: EventStore,
) -> None:
    racers, rounds = 8, 30
    barrier = threading.Barrier(racers)

    def race(seat: int) -> list[int]:
        won = []
        for round_ in range(rounds):
            barrier.wait(timeout=60)
            try:
                store.append(GAME, KIND, round_, events(f"{seat}:{round_}"))
            except ConcurrencyConflict:
                continue
            won.append(round_ + 1)
        return won

    with ThreadPoolExecutor(racers) as pool:
        wins = dict(enumerate(pool.map(race, range(racers))))

    assert_one_winner_per_version(store, wins, rounds)


def assert_one_winner_per_version(
    store: EventStore, wins: dict[int, list[int]], rounds: int
) -> None:
    """Asserts that each version 1..rounds was won once and holds its winner's event."""
    winner = {version: seat for seat, won in wins.items() for version in won}
    assert sorted(version for won in wins.values() for version in won) == list(range(1, rounds + 1))
    recorded = store.read(GAME)
    assert [e.version for e in recorded] == list(range(1, rounds + 1))
    assert payloads(store) == [f"{winner[v]}:{v - 1}" for v in range(1, rounds + 1)]
    assert feed_payloads(store) == payloads(store)


def race_in_process(
    url: str,
    namespace: str,
    seat: int,
    rounds: int,
    *,
    barrier: Barrier,
    results: Queue[tuple[int, list[int]]],
) -> None:
    """Races `rounds` appends from a process of its own; puts the versions it won."""
    client = redis.Redis.from_url(url)
    store = RedisEventStore(client, namespace)
    won = []
    try:
        for round_ in range(rounds):
            barrier.wait(timeout=60)
            try:
                store.append(GAME, KIND, round_, events(f"{seat}:{round_}"))
            except ConcurrencyConflict:
                continue
            won.append(round_ + 1)
    finally:
        results.put((seat, won))
        client.close()


@pytest.mark.integration
def test_appends_from_several_processes_have_one_winner_per_version(
    redis_url: str, redis_client: redis.Redis, namespace: str
) -> None:
    racers, rounds = 4, 60
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(racers)
    results: Queue[tuple[int, list[int]]] = context.Queue()
    processes = [
        context.Process(
            target=race_in_process,
            args=(redis_url, namespace, seat, rounds),
            kwargs={"barrier": barrier, "results": results},
        )
        for seat in range(racers)
    ]
    for process in processes:
        process.start()
    wins = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=60)

    assert [process.exitcode for process in processes] == [0] * racers
    assert_one_winner_per_version(RedisEventStore(redis_client, namespace), wins, rounds)


def test_two_consumers_of_a_group_split_the_entries_without_overlap(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"0123456789"))
    first, second = make_consumer("projection", "a"), make_consumer("projection", "b")

    taken_first = first.read(count=4)
    taken_second = second.read(count=100)

    assert len(taken_first) == 4
    assert len(taken_second) == 6
    assert not set(positions(taken_first)) & set(positions(taken_second))
    assert positions(taken_first) + positions(taken_second) == positions(store.read_feed())


def test_an_unacked_entry_is_redelivered_to_the_same_consumer(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abcde"))
    first, second = make_consumer("projection", "a"), make_consumer("projection", "b")

    taken = first.read(count=3)
    again = first.read(count=3)

    assert again == taken
    assert [e.event.data for e in second.read()] == [b"d", b"e"]


def test_a_read_returns_pending_entries_before_new_ones(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events("a", "b"))
    consumer = make_consumer("projection", "a")
    consumer.read(count=1)

    assert [e.event.data for e in consumer.read(count=10)] == [b"a", b"b"]


def test_read_more_never_hands_out_an_entry_of_the_objects_own_earlier_reads(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abc"))
    consumer = make_consumer("projection", "a")

    first = consumer.read_more(count=2)
    second = consumer.read_more(count=10)

    assert [e.event.data for e in first] == [b"a", b"b"]
    assert [e.event.data for e in second] == [b"c"]
    assert consumer.read_more() == []  # none acked, and still none again
    assert positions(consumer.read()) == positions(first + second)  # `read` hands them again


def test_read_more_of_a_restarted_member_pages_through_its_leftovers_before_new_entries(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abc"))
    make_consumer("projection", "a").read_more(count=3)
    store.append(GAME, KIND, 3, events(*"de"))
    restarted = make_consumer("projection", "a")

    pages = [restarted.read_more(count=2) for _ in range(4)]

    assert [[e.event.data for e in page] for page in pages] == [
        [b"a", b"b"],
        [b"c", b"d"],
        [b"e"],
        [],
    ]


def test_acked_entries_are_not_redelivered(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abc"))
    first, second = make_consumer("projection", "a"), make_consumer("projection", "b")
    first.ack(positions(first.read()))

    assert first.read() == []
    assert second.read() == []
    store.append(GAME, KIND, 3, events("d"))
    assert [e.event.data for e in first.read()] == [b"d"]


def test_a_new_group_starts_from_the_beginning_of_the_feed(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abc"))
    early = make_consumer("projection", "a")
    early.ack(positions(early.read()))

    late = make_consumer("archive", "a").read()

    assert positions(late) == positions(store.read_feed())
    assert [e.event for e in late] == [e.event for e in store.read_feed()]


def test_a_blocking_read_returns_an_entry_appended_while_it_waits(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    consumer = make_consumer("projection", "a")
    assert consumer.read() == []
    timer = threading.Timer(0.2, lambda: store.append(GAME, KIND, 0, events("late")))
    timer.start()
    started = time.monotonic()

    taken = consumer.read(block_ms=5000)

    timer.join()
    assert [e.event.data for e in taken] == [b"late"]
    assert time.monotonic() - started < 4


def test_a_blocking_read_of_a_quiet_feed_returns_nothing_after_the_wait(
    make_consumer: ConsumerFactory,
) -> None:
    consumer = make_consumer("projection", "a")
    started = time.monotonic()

    assert consumer.read(block_ms=150) == []
    assert time.monotonic() - started >= 0.1


def test_an_idle_pending_entry_of_a_dead_consumer_is_claimed_by_another(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abc"))
    dead = make_consumer("projection", "dead")
    survivor = make_consumer("projection", "survivor", claim_idle_ms=100)
    held = dead.read(count=2)

    assert [e.event.data for e in survivor.read()] == [b"c"]
    time.sleep(0.25)
    taken = survivor.read()

    assert sorted(positions(taken)) == sorted(positions(store.read_feed()))
    assert set(positions(held)) <= set(positions(taken))
    survivor.ack(positions(taken))
    assert survivor.read() == []


def test_a_dead_consumers_backlog_is_claimed_across_successive_reads(
    store: EventStore, make_consumer: ConsumerFactory
) -> None:
    store.append(GAME, KIND, 0, events(*"abcde"))
    make_consumer("projection", "dead").read()
    survivor = make_consumer("projection", "survivor", claim_idle_ms=50)
    time.sleep(0.15)

    claimed: list[str] = []
    while taken := survivor.read(count=2):
        assert len(taken) <= 2
        claimed += positions(taken)
        survivor.ack(positions(taken))

    assert claimed == positions(store.read_feed())


def _append_later(store: EventStore, game_id: str, expected: int, label: str) -> threading.Thread:
    """Starts a thread appending `label` to `game_id` once the caller had time to wait."""

    def append() -> None:
        time.sleep(0.2)
        store.append(game_id, KIND, expected, events(label))

    thread = threading.Thread(target=append)
    thread.start()
    return thread


def test_wait_returns_the_events_already_after_the_version_at_once(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a", "b", "c"))

    assert [e.version for e in store.wait(GAME, 1, 10_000)] == [2, 3]
    assert [e.version for e in store.wait(GAME, 0, 10_000, limit=2)] == [1, 2]


def test_wait_returns_an_event_appended_while_it_waits(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"))
    appender = _append_later(store, GAME, 1, "late")

    waited = store.wait(GAME, 1, 8000)

    appender.join()
    assert [(e.version, e.data) for e in waited] == [(2, b"late")]


def test_wait_ignores_other_games_and_returns_nothing_after_the_timeout(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a"))
    appender = _append_later(store, OTHER_GAME, 0, "elsewhere")

    assert store.wait(GAME, 1, 600) == []
    appender.join()
    assert store.wait(GAME, 1, 0) == []
    assert [e.data for e in store.wait(OTHER_GAME, 0, 0)] == [b"elsewhere"]


def test_feed_position_is_where_later_entries_start(store: EventStore) -> None:
    assert store.read_feed(store.feed_position()) == []
    store.append(GAME, KIND, 0, events("a", "b"))
    position = store.feed_position()
    assert position == store.read_feed(count=10)[-1].position
    assert store.read_feed(position) == []

    store.append(OTHER_GAME, KIND, 0, events("c"))

    assert [e.event.data for e in store.read_feed(position)] == [b"c"]


def test_wait_feed_returns_entries_already_after_the_position_at_once(
    store: EventStore,
) -> None:
    store.append(GAME, KIND, 0, events("a", "b", "c"))
    first = store.read_feed(count=1)[0].position

    assert [e.event.data for e in store.wait_feed("0", 10_000, count=2)] == [b"a", b"b"]
    assert [e.event.data for e in store.wait_feed(first, 10_000)] == [b"b", b"c"]


def test_wait_feed_returns_an_entry_appended_while_it_waits(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"))
    position = store.feed_position()
    appender = _append_later(store, OTHER_GAME, 0, "late")

    waited = store.wait_feed(position, 8000)

    appender.join()
    assert [(e.event.game_id, e.event.data) for e in waited] == [(OTHER_GAME, b"late")]
    assert waited[0].position == store.feed_position()


def test_wait_feed_of_a_quiet_feed_returns_nothing_after_the_timeout(store: EventStore) -> None:
    store.append(GAME, KIND, 0, events("a"))

    assert store.wait_feed(store.feed_position(), 300) == []
    assert store.wait_feed(store.feed_position(), 0) == []


def test_the_ports_polling_waits_serve_a_store_without_its_own(store: EventStore) -> None:
    class Plain(EventStore):
        """Delegates everything but the waits, so that the port's defaults run."""

        append = store.append
        recall = store.recall
        read = store.read
        version = store.version
        drop = store.drop
        read_partition = store.read_partition
        partition_position = store.partition_position
        feed_clock = store.feed_clock
        trim_feed = store.trim_feed
        feed_trimmed = store.feed_trimmed

        @property
        def partitions(self) -> int:
            return store.partitions

    plain = Plain()
    store.append(GAME, KIND, 0, events("a"))
    appender = _append_later(store, GAME, 1, "late")

    assert [e.data for e in plain.wait(GAME, 1, 8000)] == [b"late"]
    appender.join()
    assert [e.event.data for e in plain.wait_feed("0", 0)] == [b"a", b"late"]
    assert plain.feed_position() == store.feed_position()
    assert plain.wait_feed(plain.feed_position(), 100) == []
