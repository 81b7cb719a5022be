"""A tournament's public stream (`streamTournament`) in the embedded default: the events of a
tournament's life in order, resuming with Last-Event-ID, the spectators' cap and rate limit, and
the problems of a bad request.

Litestar's test client returns a response once its stream has ended: a stream of a finished
tournament ends with `tournament_finished`; one of a running tournament after the short
`StreamConfig.lifetime_s`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import STATE_KEY, StreamConfig, Streams
from services.game.streams.tournament_feed import EVENTS
from services.settings import Settings
from shared.app.bot_turns import play_bot_turns
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import (
    after_game,
    cancel_tournament,
    create_tournament,
    load_tournament,
    run_in_process,
    start_game,
)
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import Entrant, TournamentDefinition, pending
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, KEY, Client
from tests.support.streams import LONG, SHORT, Sse, parse

SWISS = TournamentDefinition(
    game="autobus",
    format="swiss",
    rounds=2,
    entrants=[
        Entrant(bot="heuristic", version="1"),
        Entrant(bot="random", version="1"),
        Entrant(bot="random", version="2"),
        Entrant(bot="random", version="2", name="twin"),
    ],
    table_size=2,
    seed="11",
)
"""Two rounds of two games; random@2 entered twice, so a game between them is not rated."""


class Service:
    """The embedded service over an in-memory store, its streams configured by a test."""

    def __init__(self, config: StreamConfig, **settings: Any) -> None:
        self.store = InMemoryEventStore()
        access = Access.embedded(self.store, Settings(admin_key=KEY, rate_limit=0, **settings))
        app = create_app(self.store, InProcessDispatcher(self.store), access=access)
        self.streams = Streams(config)
        app.state[STATE_KEY] = self.streams
        self.client: Client = TestClient(app)

    def get(self, tournament_id: str, last: str | None = None, **headers: str) -> Any:
        """Returns the answer to `GET /v1/tournaments/{id}/stream`."""
        if last is not None:
            headers["Last-Event-ID"] = last
        return self.client.get(f"/v1/tournaments/{tournament_id}/stream", headers=headers)

    def stream(self, tournament_id: str, last: str | None = None) -> list[Sse]:
        """Returns the events of one whole anonymous stream of the tournament."""
        answer = self.get(tournament_id, last)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/event-stream")
        events, _ = parse(answer.text)
        return events


@contextlib.contextmanager
def served(config: StreamConfig, **settings: Any) -> Iterator[Service]:
    """Yields the service, its client open."""
    service = Service(config, **settings)
    with service.client:
        yield service


@pytest.fixture
def service() -> Iterator[Service]:
    """Returns the service with streams that end soon by themselves."""
    with served(SHORT) as built:
        yield built


def key(event: Sse) -> tuple[int, int]:
    """Returns what orders an event's id `V-i`."""
    version, index = event.id.split("-")
    return int(version), int(index)


def test_a_finished_tournament_streams_its_rounds_games_and_end_in_order(
    service: Service,
) -> None:
    state = run_in_process(service.store, SWISS, "t-swiss")
    events = service.stream("t-swiss")
    names = [e.event for e in events]
    assert set(names) <= set(EVENTS)
    assert names == [
        "round_started",
        "game_started",
        "game_started",
        "game_finished",
        "game_finished",
        "round_started",
        "game_started",
        "game_started",
        "game_finished",
        "game_finished",
        "standings",
        "tournament_finished",
    ], "a catch-up sends only its last standings"
    assert [key(e) for e in events] == sorted(key(e) for e in events)
    assert len({e.id for e in events}) == len(events)
    started = [e.data["game"]["game_id"] for e in events if e.event == "game_started"]
    scheduled = [game_id_for(g.key) for rnd in state.rounds for g in rnd.games]
    assert started == scheduled
    finished = {e.data["game_id"]: e.data for e in events if e.event == "game_finished"}
    records = {record.game_id: record for record in state.records}
    assert set(finished) == set(records)
    for game_id, data in finished.items():
        assert data["places"] == records[game_id].places
        assert data["status"] == records[game_id].status
        same = {SWISS.entrants[e].bot + "@" + SWISS.entrants[e].version for e in data["entrants"]}
        if len(same) == 1:
            assert (data["rated"], data["unrated"]["code"]) == (False, "same_version")
        else:
            assert (data["rated"], data["unrated"]) == (True, None)
    standings = events[-2].data
    api = service.client.get("/v1/tournaments/t-swiss/standings").json()
    assert standings["standings"] == api["standings"]
    assert standings["status"] == "finished"
    end = events[-1].data
    assert (end["winner"], end["tournament_id"]) == (state.winner, "t-swiss")
    assert end["winner_label"] == SWISS.entrants[state.winner or 0].label


def test_last_event_id_resumes_after_that_message_with_nothing_twice(service: Service) -> None:
    run_in_process(service.store, SWISS, "t-swiss")
    whole = service.stream("t-swiss")
    for cut in range(len(whole) - 1):
        resumed = service.stream("t-swiss", last=whole[cut].id)
        assert [e.id for e in resumed if e.event != "standings"] == [
            e.id for e in whole[cut + 1 :] if e.event != "standings"
        ]
        assert resumed[-1].event == "tournament_finished"
        if cut < len(whole) - 2:
            assert resumed[-2].data == whole[-2].data, "the standings as they are now"
        else:
            assert [e.event for e in resumed] == ["tournament_finished"]
    assert service.stream("t-swiss", last=whole[-1].id) == []
    version = whole[-1].id.split("-")[0]
    assert service.stream("t-swiss", last=version) == [], "`V` alone: after all of version V"


def test_a_live_tournament_is_followed_and_a_reconnect_gets_what_it_missed() -> None:
    with served(SHORT) as service:
        store = service.store
        create_tournament(store, SWISS, "t-live")
        first = service.stream("t-live")  # ends with the short lifetime
        assert [e.event for e in first] == [
            "standings",
            "round_started",
            "game_started",
            "game_started",
        ]
        state, _ = load_tournament(store, "t-live")
        for game in pending(state):
            play_bot_turns(store, start_game(store, "t-live", state, game))
        for game in pending(state):
            after_game(store, game_id_for(game.key), lambda _game_id: None)
        resumed = service.stream("t-live", last=first[-1].id)
        names = [e.event for e in resumed]
        assert names == [
            "game_finished",
            "game_finished",
            "standings",
            "round_started",
            "game_started",
            "game_started",
        ]
        assert min(key(e) for e in resumed) > key(first[-1])
        assert [line["games"] for line in resumed[2].data["standings"]] == [1, 1, 1, 1]


def test_a_live_stream_sends_each_event_as_it_is_appended() -> None:
    with served(LONG) as service:
        store = service.store
        create_tournament(store, SWISS, "t-live")
        thread = _run_when_streaming(service, lambda: run_in_process(store, SWISS, "t-live"))
        events = service.stream("t-live")
        thread.join()
    assert events[-1].event == "tournament_finished"
    assert [e.event for e in events].count("game_finished") == 4
    assert [key(e) for e in events] == sorted(key(e) for e in events)


def _run_when_streaming(service: Service, then: Callable[[], object]) -> threading.Thread:
    """Starts a thread running `then` once a stream is open."""

    def run() -> None:
        deadline = time.monotonic() + 60
        while service.streams.open == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        then()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_cancelled_tournament_ends_with_tournament_cancelled_naming_its_unrecorded_games(
    service: Service,
) -> None:
    store = service.store
    create_tournament(store, SWISS, "t-cancel")
    state, _ = load_tournament(store, "t-cancel")
    start_game(store, "t-cancel", state, pending(state)[0])
    cancel_tournament(store, "t-cancel", "host went home")
    events = service.stream("t-cancel")
    assert [e.event for e in events][-2:] == ["standings", "tournament_cancelled"]
    end = events[-1].data
    assert end["reason"] == "host went home"
    assert end["unrecorded"] == [game_id_for(g.key) for g in state.rounds[0].games]
    assert events[-2].data["status"] == "cancelled"


def test_an_unknown_tournament_is_404_and_a_malformed_last_event_id_400_naming_it(
    service: Service,
) -> None:
    missing = service.get("nope")
    assert missing.status_code == 404
    assert missing.json()["tournament_id"] == "nope"
    assert service.streams.spectating == 0, "a refused stream gives its place back"
    run_in_process(service.store, SWISS, "t-swiss")
    for bad in ("x", "1-2-3", "-1", "1.5", "9" * 13):
        answer = service.get("t-swiss", last=bad)
        assert answer.status_code == 400, (bad, answer.text)
        assert answer.json()["field"] == "Last-Event-ID"
    game = create_tournament(service.store, SWISS, "t-other")
    assert service.get(game, last="1-0").status_code == 200


def test_anonymous_streams_take_the_spectators_places_and_a_token_does_not() -> None:
    with served(StreamConfig(keepalive_s=0.05, lifetime_s=0.3, spectators=1)) as service:
        run_in_process(service.store, SWISS, "t-swiss")
        held = service.streams.admit_spectator()  # the one place, taken
        busy = service.get("t-swiss")
        assert busy.status_code == 503
        assert busy.json()["type"].endswith(":streams-busy")
        assert int(busy.headers["Retry-After"]) >= 1
        with_key = service.get("t-swiss", **ADMIN)
        assert with_key.status_code == 200, "a credential is no anonymous spectator"
        held.release()
        assert service.get("t-swiss").status_code == 200
        assert service.streams.spectating == 0, "the stream gave its place back"


def test_anonymous_streams_are_rate_limited_per_address() -> None:
    with served(SHORT, spectator_rate_limit=2) as service:
        run_in_process(service.store, SWISS, "t-swiss")
        assert service.get("t-swiss").status_code == 200
        assert service.get("t-swiss").status_code == 200
        limited = service.get("t-swiss")
        assert limited.status_code == 429
        assert "Retry-After" in limited.headers
        assert service.get("t-swiss", **ADMIN).status_code == 200


def test_a_duplicate_deal_s_tables_are_told_together_once_its_last_table_is_recorded(
    service: Service,
) -> None:
    duplicate = TournamentDefinition(
        game="autobus",
        format="duplicate",
        entrants=[Entrant(bot="random", version=str(v)) for v in range(4)],
        table_size=2,
        seed="12",
    )
    state = run_in_process(service.store, duplicate, "t-dup")
    events = service.stream("t-dup")
    deals = {game_id_for(g.key): g.deal for rnd in state.rounds for g in rnd.games if g.deal}
    told: dict[str, set[str]] = {}
    for event in events:
        if event.event == "game_finished":
            told.setdefault(deals[event.data["game_id"]], set()).add(event.id.split("-")[0])
    assert told
    assert all(len(versions) == 1 for versions in told.values()), told
    assert len([e for e in events if e.event == "game_finished"]) == len(state.records)


def test_every_event_of_every_kind_of_stream_validates_against_the_document(
    service: Service,
) -> None:
    duplicate = TournamentDefinition(
        game="autobus",
        format="duplicate",
        entrants=[Entrant(bot="random", version=str(v)) for v in range(4)],
        table_size=2,
        seed="12",
    )
    run_in_process(service.store, SWISS, "t-swiss")
    run_in_process(service.store, duplicate, "t-dup")
    create_tournament(service.store, SWISS, "t-cancel")
    cancel_tournament(service.store, "t-cancel", "host went home")
    create_tournament(service.store, SWISS, "t-live")
    document = service.client.get("/schema/openapi.json").json()
    paths = document["paths"]["/v1/tournaments/{tournament_id}/stream"]
    schema = paths["get"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    seen: set[str] = set()
    for tournament_id in ("t-swiss", "t-dup", "t-cancel", "t-live"):
        for event in service.stream(tournament_id):
            message = {"event": event.event, "id": event.id, "data": event.data}
            errors = [error.message for error in validator.iter_errors(message)]
            assert errors == [], (tournament_id, event.event, event.data)
            seen.add(event.event)
    assert seen == set(EVENTS), "every event the stream sends was checked"
