"""A bot's event stream over the stack's bot index: a Redis store of 16 partitions, a real
projector into PostgreSQL, `ProjectedBotIndex`. On connect it resyncs the games waiting for the
bot (read from the views); `Last-Event-ID` replays the starts and finishes after any id it
sent, with no gap and no repeat across partitions."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import StreamConfig
from services.ops.migrate import migrate
from services.projection.bot_index import ProjectedBotIndex
from services.projection.projector import Projector
from services.projection.queries import checkpoint
from services.settings import Settings
from shared.app.games import act
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.store.port import position_key
from shared.store.redis_store import RedisEventStore
from tests.support.api import ADMIN, KEY, bearer
from tests.support.streams import RULES, Sse, parse

ALICE = {"kind": "external", "bot": "alice"}
BOB = {"kind": "external", "bot": "bob"}


@pytest.fixture
def stack(
    redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[tuple[TestClient[Litestar], RedisEventStore, Projector, str]]:
    """Returns a client of the service over Redis with the stack's bot index, its store, a
    projector of its feed and the database URL."""
    migrate(database_url)
    store = RedisEventStore(redis_client, namespace)
    access = Access.embedded(store, Settings(admin_key=KEY, rate_limit=0))
    app = create_app(
        store,
        InProcessDispatcher(store),
        access=access,
        streams=StreamConfig(keepalive_s=0.05, lifetime_s=0.5),
        bot_index=ProjectedBotIndex(store, database_url),
    )
    consumer = store.consumer("projection", "p1")
    with Projector(database_url, consumer) as projector, TestClient(app) as client:
        yield client, store, projector, database_url


def project_all(projector: Projector, store: RedisEventStore, url: str) -> None:
    """Projects until the checkpoint is at the feed's last entry."""
    last = max(position_key(store.partition_position(p)) for p in range(store.partitions))
    for _ in range(1000):
        time.sleep(0.002)
        projector.run_once(500)
        done = checkpoint(url)
        if done is not None and position_key(done) >= last:
            return
    raise AssertionError(f"the projection did not reach {last}")


def play_out(store: RedisEventStore, game_id: str) -> None:
    """Plays the first legal action of the due seat until the game is over."""
    while True:
        loaded = load(store, game_id)
        if loaded.spec.is_over(loaded.state):
            return
        seat = loaded.spec.to_move(loaded.state)[0]
        action = loaded.spec.legal_actions(loaded.state, seat)[0]
        act(store, game_id, seat=seat, action=action, expected_version=loaded.version)


def test_a_bot_stream_resyncs_from_the_views_and_resumes_from_any_id_without_gap_or_repeat(
    stack: tuple[TestClient[Litestar], RedisEventStore, Projector, str],
) -> None:
    client, store, projector, url = stack
    tokens: dict[str, str] = {}
    for name in ("alice", "bob"):
        bot = {"name": name, "game": "shithead", "kind": "external"}
        tokens[name] = client.post("/v1/bots", json=bot, headers=ADMIN).json()["token"]
    games: list[str] = []
    for seats in ([ALICE, BOB], [BOB, ALICE], [ALICE, BOB], [BOB, BOB]):
        game = {"game": "shithead", "ruleset": RULES, "seats": seats, "seed": 5}
        created = client.post("/v1/games", json=game, headers=ADMIN)
        assert created.status_code == 201, created.text
        games.append(created.json()["game_id"])
    play_out(store, games[0])
    play_out(store, games[1])
    project_all(projector, store, url)
    alice = bearer(tokens["alice"])

    resync, _ = parse(client.get("/v1/bots/me/events", headers=alice).text)
    replayed, _ = parse(
        client.get("/v1/bots/me/events", headers={**alice, "Last-Event-ID": "0"}).text
    )

    assert {e.data["game_id"] for e in resync if e.event == "your_turn"} == {games[2]}
    news = [e for e in replayed if e.event in {"game_started", "game_finished"}]
    assert sorted((e.event, e.data["game_id"]) for e in news) == sorted(
        [("game_started", g) for g in games[:3]] + [("game_finished", g) for g in games[:2]]
    )
    for at, message in enumerate(news):
        assert resumed(client, alice, message) == [
            (e.event, e.data["game_id"]) for e in news[at + 1 :]
        ]


def resumed(
    client: TestClient[Litestar], auth: dict[str, str], after: Sse
) -> list[tuple[str, str]]:
    """Returns the starts and finishes a stream resumed after `after` replays."""
    response = client.get("/v1/bots/me/events", headers={**auth, "Last-Event-ID": after.id})
    events, _ = parse(response.text)
    return [
        (e.event, e.data["game_id"]) for e in events if e.event in {"game_started", "game_finished"}
    ]
