"""A tournament's public stream on real Redis: a `cardarena serve game` process followed over
HTTP with disconnects and `Last-Event-ID`, and the service in this process over a standalone
Redis and a Redis Cluster, a live tournament streamed as its events are appended."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import STATE_KEY, StreamConfig, Streams
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import create_tournament, run_in_process
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.redis_store import RedisEventStore
from tests.support.api import ADMIN, KEY
from tests.support.served import sse
from tests.support.stores import CLUSTER, redis_backend
from tests.support.streams import parse

ENTRANTS = [
    {"bot": "heuristic", "version": "1"},
    {"bot": "random", "version": "1"},
    {"bot": "random", "version": "2"},
    {"bot": "random", "version": "2", "name": "twin"},
]


def _key(event_id: str) -> tuple[int, int]:
    version, index = event_id.split("-")
    return int(version), int(index)


def test_a_follower_that_disconnects_resumes_with_last_event_id_and_misses_nothing(
    service: str,
) -> None:
    body = {
        "game": "autobus",
        "format": "swiss",
        "rounds": 3,
        "entrants": ENTRANTS,
        "table_size": 2,
        "seed": "21",
    }
    with httpx.Client(base_url=service, timeout=60) as http:
        created = http.post("/v1/tournaments", json=body, headers=ADMIN)
        assert created.status_code in (200, 201), created.text
        tournament_id = created.json()["tournament_id"]
        url = f"/v1/tournaments/{tournament_id}/stream"
        whole: list[tuple[str, str, Any]] = []
        deadline = time.monotonic() + 120
        while not whole or whole[-1][0] != "tournament_finished":
            assert time.monotonic() < deadline, "the tournament did not finish in time"
            with http.stream("GET", url) as response:
                assert response.status_code == 200
                whole = list(sse(response.iter_lines()))
        pieces: list[tuple[str, str, Any]] = []
        last: str | None = None
        for _ in range(len(whole) + 1):
            headers = {"Last-Event-ID": last} if last else {}
            with http.stream("GET", url, headers=headers) as response:
                assert response.status_code == 200
                got = next(sse(response.iter_lines()), None)  # one message, then hang up
            if got is None:
                break
            pieces.append(got)
            last = got[1]
        bad = http.get(url, headers={"Last-Event-ID": "not-an-id"})
        assert (bad.status_code, bad.json()["field"]) == (400, "Last-Event-ID")
        assert http.get("/v1/tournaments/nope/stream").status_code == 404
        standings = http.get(f"/v1/tournaments/{tournament_id}/standings").json()
    assert pieces[-1][0] == "tournament_finished"
    ids = [event_id for _, event_id, _ in pieces]
    assert len(set(ids)) == len(ids), "nothing twice"
    assert [_key(i) for i in ids] == sorted(_key(i) for i in ids)
    told = [(e, i) for e, i, _ in pieces if e != "standings"]
    assert told == [(e, i) for e, i, _ in whole if e != "standings"], "nothing missed"
    assert [e for e, _, _ in whole].count("game_finished") == 6
    final = next(data for e, _, data in reversed(pieces) if e == "standings")
    assert final["standings"] == standings["standings"]


@pytest.fixture(params=["redis", CLUSTER])
def redis_store(request: pytest.FixtureRequest) -> RedisEventStore:
    """Returns an event store on the standalone Redis, then on the module's Redis Cluster."""
    client, namespace = redis_backend(request)
    return RedisEventStore(client, namespace)


def test_a_live_tournament_streams_from_redis_as_its_events_are_appended(
    redis_store: RedisEventStore,
) -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=[
            Entrant(bot=e["bot"], version=e["version"], name=e.get("name", "")) for e in ENTRANTS
        ],
        table_size=2,
        seed="22",
    )
    access = Access.embedded(redis_store, Settings(admin_key=KEY, rate_limit=0))
    app = create_app(redis_store, InProcessDispatcher(redis_store), access=access)
    streams = Streams(StreamConfig(keepalive_s=0.1, lifetime_s=120))
    app.state[STATE_KEY] = streams
    create_tournament(redis_store, definition, "t-redis")

    def play() -> None:
        deadline = time.monotonic() + 60
        while streams.open == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        run_in_process(redis_store, definition, "t-redis")

    player = threading.Thread(target=play)
    with TestClient(app) as client:
        player.start()
        answer = client.get("/v1/tournaments/t-redis/stream")
        player.join()
        again = client.get("/v1/tournaments/t-redis/stream")
    events, _ = parse(answer.text)
    assert events[-1].event == "tournament_finished"
    assert [e.event for e in events].count("game_finished") == 6
    assert [_key(e.id) for e in events] == sorted(_key(e.id) for e in events)
    replayed, _ = parse(again.text)
    ids = [e.id for e in events if e.event != "standings"]
    assert [e.id for e in replayed if e.event != "standings"] == ids
