"""Bot notes on real Redis and PostgreSQL: a note goes into the Redis stream with its move,
through the projection into the archive, and out of the archive once the stream is dropped,
to the host only; the projection takes a log with notes like any other."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import redis
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.ops.migrate import migrate
from services.projection.archive import PostgresEventArchive
from services.projection.projector import Projector
from services.projection.queries import get_game_row
from services.projection.retention import Retention
from services.settings import Settings
from shared.app.games import act, create_game
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.messages.common import NoteTaken, Resign, Seat
from shared.store.redis_store import RedisEventStore
from tests.support.api import ADMIN, KEY

NOTE = "stack-secret:\tthe archive keeps me"


@pytest.fixture
def db(database_url: str) -> str:
    """Returns the URL of this test's database, migrated."""
    migrate(database_url)
    return database_url


def test_a_note_survives_the_archive_and_is_served_from_it_to_the_host_only(
    db: str, redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace)
    seats = [Seat(kind="external"), Seat(kind="external")]
    game_id = create_game(store, "shithead", seats=seats, seed=4).game_id
    loaded = load(store, game_id)
    action = loaded.spec.legal_actions(loaded.state, 0)[0]
    act(store, game_id, seat=0, action=action, expected_version=loaded.version, note=NOTE)
    act(store, game_id, seat=1, action=Resign(), expected_version=store.version(game_id))
    stored = loaded.spec.codec.decode_all(store.read(game_id))
    assert NoteTaken(seat=0, text=NOTE) in stored

    consumer = RedisEventStore(redis_client, namespace).consumer("projection", "p1")
    with Projector(db, consumer) as runner:
        while runner.run_once(200):
            pass
    row = get_game_row(db, game_id)
    assert row is not None
    assert row["status"] == "finished"
    archive = PostgresEventArchive(db)
    far = datetime.now().astimezone() + timedelta(days=3650)
    assert Retention(db, store, archive, 3600).sweep(far) == [game_id]
    assert store.read(game_id) == []

    access = Access.embedded(store, Settings(admin_key=KEY))
    app = create_app(store, InProcessDispatcher(store), archive=archive, access=access)
    with TestClient(app) as client:
        for headers, text in ((ADMIN, NOTE), ({}, "")):
            page = client.get(f"/v1/games/{game_id}/events", headers=headers)
            assert page.status_code == 200, page.text
            notes = [e["data"] for e in page.json()["events"] if e["type"] == "NoteTaken"]
            assert notes == [{"type": "NoteTaken", "seat": 0, "text": text}]
            exported = client.get(f"/v1/games/{game_id}/export", headers=headers)
            assert exported.status_code == 200, exported.text
            assert ("stack-secret" in exported.text) is bool(text)
