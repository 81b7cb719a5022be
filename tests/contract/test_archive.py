"""The EventArchive contract, run against the in-memory twin and the PostgreSQL archive."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import psycopg
import pytest

from services.ops.migrate import migrate
from services.projection.archive import PostgresEventArchive
from shared.messages.envelope import NewEvent, RecordedEvent
from shared.ports.archive import EventArchive, InMemoryEventArchive, StoreArchive, game_log
from shared.ports.views.fold import to_datetime
from shared.store.memory import InMemoryEventStore

GAME = "g-1"
OTHER_GAME = "g-2"

_INSERT = (
    "INSERT INTO events (game_id, version, kind, type, data, schema, recorded_at, feed_position)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (game_id, version) DO NOTHING"
)
"""Archives an event as the projector does (the feed position matters not here)."""


@dataclass(frozen=True)
class Backend:
    """An archive and a way to archive events in it."""

    archive: EventArchive
    add: Callable[[Iterable[RecordedEvent]], None]


def _postgres_backend(database_url: str) -> Backend:
    migrate(database_url)

    def add(events: Iterable[RecordedEvent]) -> None:
        rows = [
            (
                e.game_id,
                e.version,
                e.kind,
                e.type,
                e.data,
                e.schema,
                to_datetime(e.recorded_at),
                "0-1",
            )
            for e in events
        ]
        with psycopg.connect(database_url, autocommit=True) as conn, conn.cursor() as cur:
            cur.executemany(_INSERT, rows)

    return Backend(PostgresEventArchive(database_url), add)


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Returns each implementation in turn."""
    if request.param == "memory":
        archive = InMemoryEventArchive()
        return Backend(archive, archive.add)
    database_url: str = request.getfixturevalue("database_url")
    return _postgres_backend(database_url)


def recorded(version: int, game_id: str = GAME, data: bytes = b"") -> RecordedEvent:
    """Returns an event of `game_id` at `version`, recorded at a whole millisecond."""
    return RecordedEvent(
        game_id,
        "beggar",
        version,
        "CardPlayed",
        data or f"{game_id}:{version}".encode(),
        recorded_at=1_767_225_600_000 + version,
    )


def test_an_unknown_game_reads_empty_and_holds_nothing(backend: Backend) -> None:
    assert backend.archive.read("nobody") == []
    assert backend.archive.holds("nobody", 1) is False


def test_events_read_back_whole_in_version_order_whatever_order_they_came_in(
    backend: Backend,
) -> None:
    events = [recorded(v) for v in (1, 2, 3)]
    backend.add([events[2], events[0]])
    backend.add([events[1], recorded(1, OTHER_GAME)])

    assert backend.archive.read(GAME) == events
    assert backend.archive.read(OTHER_GAME) == [recorded(1, OTHER_GAME)]


def test_binary_payloads_and_the_envelope_round_trip_unchanged(backend: Backend) -> None:
    event = RecordedEvent(GAME, "shithead", 1, "GameCreated", bytes(range(256)), 1, 1234567)
    backend.add([event])

    assert backend.archive.read(GAME) == [event]


def test_a_version_archived_twice_keeps_its_first_copy(backend: Backend) -> None:
    backend.add([recorded(1, data=b"first")])
    backend.add([recorded(1, data=b"second")])

    assert [e.data for e in backend.archive.read(GAME)] == [b"first"]


def test_holds_only_when_every_version_up_to_it_is_archived(backend: Backend) -> None:
    backend.add([recorded(1), recorded(2), recorded(4)])

    assert backend.archive.holds(GAME, 1) is True
    assert backend.archive.holds(GAME, 2) is True
    assert backend.archive.holds(GAME, 3) is False
    assert backend.archive.holds(GAME, 4) is False
    backend.add([recorded(3)])
    assert backend.archive.holds(GAME, 4) is True
    assert backend.archive.holds(GAME, 5) is False
    assert backend.archive.holds(OTHER_GAME, 1) is False


def test_the_store_archive_is_the_stores_streams() -> None:
    store = InMemoryEventStore()
    archive = StoreArchive(store)
    store.append(GAME, "beggar", 0, [NewEvent("A", b"a"), NewEvent("B", b"b")])

    assert archive.read(GAME) == store.read(GAME)
    assert archive.holds(GAME, 2) is True
    assert archive.holds(GAME, 3) is False
    assert archive.read(OTHER_GAME) == []


def test_a_game_log_comes_from_the_store_while_it_holds_the_stream_then_from_the_archive(
    backend: Backend,
) -> None:
    store = InMemoryEventStore()
    store.append(GAME, "beggar", 0, [NewEvent("A", b"live")])
    backend.add([recorded(1, data=b"archived")])

    assert [e.data for e in game_log(store, backend.archive, GAME)] == [b"live"]
    store.drop(GAME)
    assert [e.data for e in game_log(store, backend.archive, GAME)] == [b"archived"]
    assert game_log(store, backend.archive, OTHER_GAME) == []
