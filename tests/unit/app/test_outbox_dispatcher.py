"""OutboxDispatcher: what an unreachable broker refuses waits in the outbox, requests still
answer, and the sender sends it all once the broker is back (the twins of the broker and the
outbox here; tests/reliability/test_broker_outage.py stops a real broker)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher, OutboxDispatcher
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import DispatchUnavailable, InMemoryOutbox, OutboxEntry, Pending
from shared.store.memory import InMemoryEventStore
from shared.store.port import StoreUnavailable
from tests.support.stack import wait_for

WAIT_S = 30.0
"""A bounded wait: it fails only on a hang."""


class Broker(BotTurnDispatcher):
    """A broker's dispatcher twin: records what it took; refuses everything while down."""

    def __init__(self, then: BotTurnDispatcher | None = None) -> None:
        self.down = False
        self.tries = 0
        self.games: list[str] = []
        self.tournaments: list[tuple[Any, str]] = []
        self._then = then
        self._lock = threading.Lock()

    def _take(self) -> None:
        with self._lock:
            self.tries += 1
            if self.down:
                raise DispatchUnavailable("broker: down")

    def dispatch(self, game_id: str) -> None:
        self._take()
        self.games.append(game_id)
        if self._then is not None:
            self._then.dispatch(game_id)

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        self._take()
        self.tournaments.append((definition, tournament_id))
        if self._then is not None:
            self._then.start_tournament(definition, tournament_id)


class DownOutbox(InMemoryOutbox):
    """An outbox whose store is unavailable for `put` while `down`."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True

    def put(self, pending: Pending) -> OutboxEntry:
        if self.down:
            raise StoreUnavailable("redis: down")
        return super().put(pending)


@pytest.fixture
def broker() -> Broker:
    """Returns a broker twin that is up."""
    return Broker()


@pytest.fixture
def outbox() -> InMemoryOutbox:
    """Returns an empty outbox."""
    return InMemoryOutbox()


@pytest.fixture
def dispatcher(broker: Broker, outbox: InMemoryOutbox) -> Iterator[OutboxDispatcher]:
    """Returns the dispatcher over the twins, its sender started with short waits."""
    made = OutboxDispatcher(broker, outbox, first_retry_s=0.01, max_retry_s=0.05, poll_s=0.05)
    made.start()
    yield made
    made.close()


def definition() -> TournamentDefinition:
    """Returns a small Beggar-my-neighbour round robin."""
    return TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner"), Entrant(bot="random")],
        table_size=2,
        seed="9",
    )


def test_while_the_broker_is_up_work_goes_straight_to_it(
    dispatcher: OutboxDispatcher, broker: Broker, outbox: InMemoryOutbox
) -> None:
    dispatcher.dispatch("g1")
    dispatcher.start_tournament(definition(), "t1")
    assert broker.games == ["g1"]
    assert broker.tournaments == [(definition(), "t1")]
    assert outbox.entries() == []
    assert not dispatcher.broker_down


def test_work_the_broker_refuses_is_kept_and_sent_once_it_is_back(
    dispatcher: OutboxDispatcher, broker: Broker, outbox: InMemoryOutbox
) -> None:
    broker.down = True
    dispatcher.dispatch("g1")  # answers: no DispatchUnavailable reaches the request
    dispatcher.dispatch("g1")
    dispatcher.start_tournament(definition(), "t1")
    assert dispatcher.broker_down
    kept = {entry.pending.key for entry in outbox.entries()}
    assert kept == {"game:g1", "tournament:t1"}, "one record per game"
    assert broker.games == []

    broker.down = False
    wait_for(lambda: not outbox.entries() and not dispatcher.broker_down, WAIT_S, "the send")
    assert broker.games == ["g1"]
    assert broker.tournaments == [(definition(), "t1")], "the definition comes back whole"


def test_while_the_broker_is_down_a_request_does_not_wait_for_it(
    dispatcher: OutboxDispatcher, broker: Broker, outbox: InMemoryOutbox
) -> None:
    dispatcher.close()  # no sender: only the requests could try the broker now
    broker.down = True
    dispatcher.dispatch("g0")
    before = broker.tries
    for index in range(50):
        dispatcher.dispatch(f"g{index}")
    assert broker.tries == before, "a request tried the broker it knows is down"
    assert len(outbox.entries()) == 50


def test_work_kept_in_memory_when_the_outbox_is_unavailable_too_is_sent(broker: Broker) -> None:
    outbox = DownOutbox()
    dispatcher = OutboxDispatcher(broker, outbox, first_retry_s=0.01, max_retry_s=0.05)
    dispatcher.start()
    try:
        broker.down = True
        dispatcher.dispatch("g1")
        assert outbox.entries() == []
        broker.down = False
        wait_for(lambda: broker.games == ["g1"], WAIT_S, "the send from memory")
    finally:
        dispatcher.close()


def test_records_another_process_left_are_sent(
    dispatcher: OutboxDispatcher, broker: Broker, outbox: InMemoryOutbox
) -> None:
    outbox.put(Pending("game", "from-a-worker"))
    wait_for(lambda: broker.games == ["from-a-worker"], WAIT_S, "the poll of the outbox")
    assert outbox.entries() == []


def test_a_game_of_bots_created_while_the_broker_is_down_plays_once_it_is_back() -> None:
    store = InMemoryEventStore()
    broker = Broker(then=InProcessDispatcher(store))
    dispatcher = OutboxDispatcher(broker, InMemoryOutbox(), first_retry_s=0.01, max_retry_s=0.05)
    dispatcher.start()
    broker.down = True
    try:
        with TestClient(app=create_app(store, dispatcher)) as client:
            created = client.post("/v1/games", json={"game": "beggar", "players": 2, "seed": 3})
            assert created.status_code == 201, created.text
            game_id = created.json()["game_id"]
            assert created.json()["status"] == "playing", "no bot played yet"
            broker.down = False
            wait_for(
                lambda: load(store, game_id).spec.is_over(load(store, game_id).state),
                WAIT_S,
                "the game to be played",
            )
    finally:
        dispatcher.close()


def test_a_worker_keeps_a_task_it_cannot_send_as_the_games_bot_turns() -> None:
    from kombu.exceptions import OperationalError  # noqa: PLC0415 - Celery's own tests only

    from services.settings import WorkerSettings  # noqa: PLC0415
    from services.workers.celery_app import create_celery  # noqa: PLC0415
    from services.workers.tasks import Worker  # noqa: PLC0415

    outbox = InMemoryOutbox()
    settings = WorkerSettings()
    worker = Worker(
        create_celery(settings),
        settings,
        store=InMemoryEventStore,
        outbox=lambda: outbox,
        views=lambda: pytest.fail("no views"),
        slots=lambda: pytest.fail("no slots"),
    )

    def unreachable() -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:1. Connection refused.")

    worker.send_or_keep("g1", unreachable)
    worker.send_or_keep("g1", unreachable)
    assert [entry.pending for entry in outbox.entries()] == [Pending("game", "g1")]
    worker.send_or_keep("g2", lambda: None)
    assert len(outbox.entries()) == 1, "a task sent is not kept"
