"""The projection service against a real PostgreSQL, fed by really played Beggar games."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import psycopg
import pytest
import redis

from services.ops.migrate import MIGRATIONS_DIR, applied, migrate
from services.projection.projector import Projector, project_batch, rebuild
from services.projection.queries import archived_events, checkpoint, get_game_row, list_games
from shared.app import challenges as challenge_app
from shared.app.registry import register
from shared.app.tournaments import run_in_process
from shared.catalog import get_game
from shared.messages.codec import UnknownSchemaVersion, encode, encode_all
from shared.messages.common import GameCreated, Seat
from shared.model import challenges
from shared.model.registry import BotSpec
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.port import EventStore, FeedEntry, own_position, position_key
from shared.store.redis_store import RedisEventStore

SPEC = get_game("beggar")
GAMES = [("g-two", 2, 1), ("g-three", 3, 2), ("g-four", 4, 0), ("g-seven", 2, 7)]
"""Finished games: id, players, seed."""

GROUP = "projection"
"""The consumer group of the projection on the feed."""


class SimulatedCrashError(Exception):
    """The process died between committing a batch and acknowledging it."""


class CrashingConsumer(InMemoryFeedConsumer):
    """A member that dies whenever it is about to acknowledge entries."""

    def ack(self, positions: Sequence[str]) -> None:
        raise SimulatedCrashError


class SchemaTwoConsumer(InMemoryFeedConsumer):
    """A member that sees every feed entry as written with envelope schema 2."""

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        return [
            msgspec.structs.replace(entry, event=msgspec.structs.replace(entry.event, schema=2))
            for entry in super().read(count, block_ms)
        ]


def member(store: InMemoryEventStore, name: str = "p1") -> InMemoryFeedConsumer:
    """Returns member `name` of the projection's consumer group on `store`'s feed."""
    return InMemoryFeedConsumer(store, GROUP, name)


def play_beggar(
    store: EventStore, game_id: str, players: int, seed: int, max_cards: int = 100_000
) -> Any:
    """Plays a game of turner bots to its end, appending its events; returns the last state."""
    ruleset = SPEC.ruleset({"max_cards": max_cards})
    created = GameCreated(
        game="beggar",
        ruleset=msgspec.to_builtins(ruleset),
        seats=[Seat(kind="bot", bot="turner")] * players,
    )
    start = SPEC.deal(ruleset, players, seed)
    version = store.append(game_id, "beggar", 0, [encode(created), encode(start)]).last_version
    state = SPEC.fold([start])
    while seats := SPEC.to_move(state):
        events = SPEC.decide(state, seats[0], SPEC.legal_actions(state, seats[0])[0])
        version = store.append(game_id, "beggar", version, encode_all(events)).last_version
        for event in events:
            state = SPEC.evolve(state, event)
    return state


def start_beggar(store: EventStore, game_id: str) -> None:
    """Creates and deals a two-player game that nobody has played yet."""
    ruleset = SPEC.ruleset("classic")
    created = GameCreated(
        game="beggar", ruleset=msgspec.to_builtins(ruleset), seats=[Seat(bot="turner")] * 2
    )
    store.append(game_id, "beggar", 0, [encode(created), encode(SPEC.deal(ruleset, 2, 5))])


def played_store() -> tuple[InMemoryEventStore, dict[str, Any]]:
    """Returns a store holding every game of GAMES, and each game's final state."""
    store = InMemoryEventStore()
    states = {gid: play_beggar(store, gid, players, seed) for gid, players, seed in GAMES}
    return store, states


def drain(projector: Projector, count: int = 50) -> None:
    """Runs batches until one projects nothing new."""
    while projector.run_once(count):
        pass


def scalar(url: str, query: bytes) -> Any:
    """Returns the single value `query` selects."""
    with psycopg.connect(url) as conn:
        row = conn.execute(query).fetchone()
    assert row is not None
    return row[0]


def feed_size(store: EventStore) -> int:
    """Returns how many entries the store's feed holds."""
    return len(store.read_feed("0", 1_000_000))


@pytest.fixture
def db(database_url: str) -> str:
    """Returns the URL of this test's database, migrated."""
    migrate(database_url)
    return database_url


def test_a_finished_game_shows_its_result_in_the_games_view(db: str) -> None:
    store, states = played_store()
    capped = play_beggar(store, "g-capped", 3, 4, max_cards=40)
    start_beggar(store, "g-running")
    with Projector(db, member(store)) as projector:
        drain(projector)

    for game_id, state in {**states, "g-capped": capped}.items():
        row = get_game_row(db, game_id)
        assert row is not None
        assert row["status"] == state.result.status
        assert row["result"] == msgspec.to_builtins(state.result)
        assert row["version"] == store.version(game_id)
        seat = {"kind": "bot", "bot": "turner", "name": None, "version": ""}
        assert row["seats"] == [seat] * len(state.packs)
        assert row["ruleset"] == msgspec.to_builtins(state.ruleset)
        assert row["finished_at"] >= row["created_at"]
    assert capped.result.status == "capped"
    running = get_game_row(db, "g-running")
    assert running is not None
    assert (running["status"], running["version"], running["result"]) == ("playing", 2, None)
    assert running["finished_at"] is None
    assert get_game_row(db, "g-unknown") is None


def test_the_archive_holds_every_event_exactly_once(db: str) -> None:
    store, _ = played_store()
    with Projector(db, member(store)) as projector:
        drain(projector, count=7)

    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    for game_id, _, _ in GAMES:
        assert archived_events(db, game_id) == store.read(game_id)
    assert checkpoint(db) == f"{feed_size(store)}-0"
    assert checkpoint(db, "other") is None


def test_a_crash_between_commit_and_ack_projects_nothing_twice(db: str) -> None:
    store, _ = played_store()
    crashing = CrashingConsumer(store, GROUP, "p1")
    with Projector(db, crashing) as projector, pytest.raises(SimulatedCrashError):
        projector.run_once(count=9)
    assert scalar(db, b"SELECT count(*) FROM events") == 9
    assert checkpoint(db) == "9-0"

    with Projector(db, member(store, "p1")) as restarted:
        assert restarted.run_once(count=9) == 0
        assert restarted.run_once(count=9) == 9
        drain(restarted)

    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    assert checkpoint(db) == f"{feed_size(store)}-0"
    for game_id, _, _ in GAMES:
        assert archived_events(db, game_id) == store.read(game_id)


def test_a_batch_archives_once_what_it_repeats_and_what_the_archive_holds(db: str) -> None:
    store, _ = played_store()
    first, second, third = store.read_partition(0, "0", 3)
    again = msgspec.structs.replace(first, position="99-0")  # the same event, redelivered
    with psycopg.connect(db, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            assert project_batch(cur, "main", [first, second]) == 2
        with conn.transaction(), conn.cursor() as cur:
            assert project_batch(cur, "main", [second, third, third, again]) == 2
        rows = conn.execute(b"SELECT version, feed_position FROM events ORDER BY version")

        assert rows.fetchall() == [(1, "1-0"), (2, "2-0"), (3, "3-0")]
    assert checkpoint(db) == "3-0"


def fail_next_checkpoint_write(url: str) -> None:
    """Makes the next checkpoint write, the last step of a batch, raise once: a serialization
    failure, a transient fault of the database that fails the batch, not one of its entries
    (which would be set aside as a dead letter)."""
    with psycopg.connect(url) as conn:
        conn.execute(
            b"""
            CREATE SEQUENCE checkpoint_writes;
            CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('checkpoint_writes') = 1 THEN
                    RAISE EXCEPTION 'injected failure' USING ERRCODE = 'serialization_failure';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER fail_once BEFORE INSERT OR UPDATE ON projection_checkpoints
                FOR EACH ROW EXECUTE FUNCTION fail_once();
            """
        )


def test_a_batch_failing_midway_leaves_nothing_and_the_next_run_completes(db: str) -> None:
    store, states = played_store()
    with Projector(db, member(store)) as projector:
        projector.run_once(count=20)
        games_before = list_games(db)
        fail_next_checkpoint_write(db)
        with pytest.raises(psycopg.errors.SerializationFailure, match="injected failure"):
            projector.run_once(count=20)

        assert scalar(db, b"SELECT count(*) FROM events") == 20
        assert checkpoint(db) == "20-0"
        assert list_games(db) == games_before
        drain(projector)

    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    assert {row["game_id"]: row["status"] for row in list_games(db)} == {
        game_id: state.result.status for game_id, state in states.items()
    }


def test_a_dropped_connection_fails_one_batch_and_the_projector_reconnects(db: str) -> None:
    store, _ = played_store()
    with Projector(db, member(store)) as projector:
        projector.run_once(count=10)
        with psycopg.connect(db) as admin:
            admin.execute(
                b"SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                b" WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        with pytest.raises(psycopg.OperationalError):
            projector.run_once(count=10)
        assert checkpoint(db) == "10-0"
        drain(projector)

    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)


def test_run_forever_projects_until_stopped(db: str) -> None:
    store, _ = played_store()
    stop = threading.Event()
    projector = Projector(db, member(store))
    runner = threading.Thread(target=projector.run_forever, args=(stop,), kwargs={"block_ms": 20})
    runner.start()
    try:
        deadline = time.monotonic() + 30
        while checkpoint(db) != f"{feed_size(store)}-0" and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        stop.set()
        runner.join(timeout=10)

    assert not runner.is_alive()
    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)


class TimedReads(InMemoryFeedConsumer):
    """A projection member that notes when each read began and ended and what it took."""

    def __init__(self, store: InMemoryEventStore) -> None:
        super().__init__(store, GROUP, "p1")
        self.reads: list[tuple[float, float, int]] = []

    def read(self, count: int = 100, block_ms: int = 0) -> list[FeedEntry]:
        began = time.monotonic()
        entries = super().read(count, block_ms)
        self.reads.append((began, time.monotonic(), len(entries)))
        return entries


def test_after_a_batch_smaller_than_a_full_one_the_projector_lingers(db: str) -> None:
    store, _ = played_store()
    consumer = TimedReads(store)
    stop = threading.Event()
    projector = Projector(db, consumer)
    linger_s = 0.2
    count = 40 if feed_size(store) % 40 else 41  # the feed ends in a partial batch
    runner = threading.Thread(
        target=projector.run_forever,
        args=(stop,),
        kwargs={"count": count, "block_ms": 20, "linger_s": linger_s},
    )
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while checkpoint(db) != f"{feed_size(store)}-0" and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(3 * linger_s)  # a read after the last batch
    finally:
        stop.set()
        runner.join(timeout=10)

    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    sizes = [read[2] for read in consumer.reads if read[2]]
    assert sizes[:-1] == [count] * (len(sizes) - 1)
    assert 0 < sizes[-1] < count
    partial = [
        (read, after) for read, after in itertools.pairwise(consumer.reads) if read[2] == sizes[-1]
    ]
    (_, ended, _), (began, _, _) = partial[-1]
    assert began - ended >= linger_s * 0.9  # it waited for more before its next read


def test_the_redis_feed_projects_every_event_once(
    db: str, redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace)
    states = {gid: play_beggar(store, gid, players, seed) for gid, players, seed in GAMES}
    feed = store.read_feed("0", 1_000_000)
    consumer = store.consumer(GROUP, "p1")
    with Projector(db, consumer) as projector:
        drain(projector, count=11)

    assert checkpoint(db) == max((own_position(e) for e in feed), key=position_key)
    assert scalar(db, b"SELECT count(*) FROM events") == len(feed)
    for game_id, state in states.items():
        assert archived_events(db, game_id) == store.read(game_id)
        row = get_game_row(db, game_id)
        assert row is not None
        assert row["result"] == msgspec.to_builtins(state.result)


def test_rebuild_from_the_archive_gives_the_live_views(db: str) -> None:
    store, _ = played_store()
    start_beggar(store, "g-running")
    with Projector(db, member(store)) as projector:
        drain(projector, count=13)
    live = list_games(db, limit=100)
    with psycopg.connect(db) as conn:
        conn.execute(b"UPDATE games SET status = 'bogus', version = 0")
        conn.execute(
            b"INSERT INTO games SELECT 'g-ghost', game, ruleset, status, seats,"
            b" version, result, created_at, NULL FROM games LIMIT 1"
        )

    counts = rebuild(db, chunk=16)

    assert (counts.events, counts.games) == (feed_size(store), len(GAMES) + 1)
    assert list_games(db, limit=100) == live
    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)


def test_archived_events_fold_to_the_state_the_store_folds_to(db: str) -> None:
    store, states = played_store()
    with Projector(db, member(store)) as projector:
        drain(projector)

    for game_id, state in states.items():
        archived = SPEC.fold(SPEC.codec.decode_all(archived_events(db, game_id)))
        assert archived == SPEC.fold(SPEC.codec.decode_all(store.read(game_id)))
        assert archived == state


def test_list_games_filters_by_status_and_limits(db: str) -> None:
    store, _ = played_store()
    play_beggar(store, "g-capped", 2, 3, max_cards=30)
    start_beggar(store, "g-running")
    with Projector(db, member(store)) as projector:
        drain(projector)

    assert [row["game_id"] for row in list_games(db, status="playing")] == ["g-running"]
    assert [row["game_id"] for row in list_games(db, status="capped")] == ["g-capped"]
    assert len(list_games(db, status="finished")) == len(GAMES)
    assert len(list_games(db, limit=2)) == 2
    with psycopg.connect(db) as conn:
        assert get_game_row(conn, "g-running") == list_games(conn, status="playing")[0]


def test_an_event_of_an_unknown_schema_version_becomes_a_dead_letter_and_writes_nothing_else(
    db: str,
) -> None:
    store = InMemoryEventStore()
    start_beggar(store, "g-future")
    future = SchemaTwoConsumer(store, GROUP, "p1")
    with Projector(db, future) as projector:
        projector.run_once()

    assert scalar(db, b"SELECT count(*) FROM events") == 0
    assert get_game_row(db, "g-future") is None
    assert scalar(db, b"SELECT count(*) FROM projection_dead_letters") == 2
    errors = scalar(db, b"SELECT string_agg(error, ' | ') FROM projection_dead_letters")
    assert UnknownSchemaVersion.__name__ in str(errors)
    assert checkpoint(db) == store.feed_position()
    assert member(store, "p1").read() == []


def test_migrations_apply_once_in_order(database_url: str, tmp_path: Path) -> None:
    shutil.copy(MIGRATIONS_DIR / "001_init.sql", tmp_path)
    assert applied(database_url) == []

    assert migrate(database_url, tmp_path) == ["001_init.sql"]
    assert migrate(database_url, tmp_path) == []
    (tmp_path / "002_note.sql").write_text("ALTER TABLE games ADD COLUMN note text;")
    assert migrate(database_url, tmp_path) == ["002_note.sql"]
    shipped = sorted(path.name for path in MIGRATIONS_DIR.glob("*.sql"))
    assert migrate(database_url) == [name for name in shipped if name != "001_init.sql"]
    assert migrate(database_url) == []
    assert applied(database_url) == sorted({"002_note.sql", *shipped})


def test_concurrent_migrations_apply_each_file_once(database_url: str) -> None:
    runners = 4
    barrier = threading.Barrier(runners)

    def run(_: int) -> list[str]:
        barrier.wait()
        return migrate(database_url)

    with ThreadPoolExecutor(runners) as pool:
        results = list(pool.map(run, range(runners)))

    shipped = sorted(path.name for path in MIGRATIONS_DIR.glob("*.sql"))
    assert shipped[:2] == ["001_init.sql", "002_tournaments.sql"]
    assert sorted(results) == [[], [], [], shipped]
    assert applied(database_url) == shipped


def test_a_tournament_stream_is_archived_and_its_games_are_projected(db: str) -> None:
    store = InMemoryEventStore()
    definition = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner", name="a"), Entrant(bot="turner", name="b")],
        table_size=2,
        games_per_table=2,
    )
    state = run_in_process(store, definition, "cup")
    with Projector(db, member(store)) as projector:
        drain(projector)
    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    assert archived_events(db, "tournament:cup") == store.read("tournament:cup")
    assert get_game_row(db, "tournament:cup") is None
    for record in state.records:
        row = get_game_row(db, record.game_id)
        assert row is not None
        assert row["status"] == record.status


def test_a_challenge_stream_is_archived_and_its_game_is_projected(db: str) -> None:
    store = InMemoryEventStore()
    bots = [
        register(store, BotSpec(name=n, version="1", game="beggar", strategy="turner")).bot
        for n in ("ann", "ben")
    ]
    now = datetime.now(UTC)
    issued = challenge_app.issue(
        store,
        game="beggar",
        ruleset=None,
        opponents=[challenges.Opponent(bot="ben")],
        bots=bots,
        challenger=bots[0],
        now=now,
    )
    started = challenge_app.start(store, issued.challenge_id, now)
    assert started.status == "started"
    with Projector(db, member(store)) as projector:
        drain(projector)
    stream = challenges.stream_id(issued.challenge_id)
    assert scalar(db, b"SELECT count(*) FROM events") == feed_size(store)
    assert archived_events(db, stream) == store.read(stream)
    assert get_game_row(db, stream) is None
    row = get_game_row(db, started.game_id)
    assert row is not None
    assert [seat["name"] for seat in row["seats"]] == ["ann", "ben"]
