"""Sends to a RabbitMQ broker that is gone fail, so that their work waits in the outbox,
instead of returning as if sent: a broker that refuses connections, and one that goes
silent with the connections open (a partition, a failover), where an AMQP publish is a
socket write that nothing refuses. Real RabbitMQ, on a virtual host of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from services.settings import WorkerSettings, load_settings
from services.workers.broker import waiting_tasks
from services.workers.celery_app import create_celery
from services.workers.dispatch import CeleryDispatcher
from shared.ports.outbox import DispatchUnavailable
from tests.support.faults import SilentProxy
from tests.support.stack import free_port

QUEUE = "sends"


def settings_of(url: str) -> WorkerSettings:
    """Returns settings whose bot turns go to `QUEUE` at the broker `url`."""
    return load_settings({"CELERY_BROKER_URL": url, "CARDARENA_QUEUE": QUEUE}, WorkerSettings)


@pytest.fixture
def silent(amqp_url: str) -> Iterator[tuple[SilentProxy, str]]:
    """Returns a proxy to the test's virtual host, which the test makes silent, and the URL
    of the virtual host through it."""
    parts = urlsplit(amqp_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 5672
    with SilentProxy((host, port)) as proxy:
        through = f"{parts.scheme}://{parts.username}:{parts.password}@127.0.0.1:{proxy.port}"
        yield proxy, f"{through}{parts.path}"


def test_a_send_to_a_silent_rabbitmq_fails_and_every_send_that_returned_is_queued(
    silent: tuple[SilentProxy, str], amqp_url: str
) -> None:
    proxy, url = silent
    settings = settings_of(url)
    app = create_celery(settings)
    dispatcher = CeleryDispatcher(app, QUEUE)
    dispatcher.dispatch("before")
    proxy.hold()
    refused = 0
    for game_id in ("held-1", "held-2"):
        try:
            dispatcher.dispatch(game_id)
        except DispatchUnavailable:
            refused += 1
    proxy.release()
    dispatcher.dispatch("after")
    app.close()
    queued = waiting_tasks(settings_of(amqp_url))()
    assert refused == 2, "a send to the silent broker returned: its task is lost"
    assert queued == 2, "a send that returned is not on the queue"


def test_a_send_to_a_rabbitmq_that_refuses_connections_fails() -> None:
    settings = settings_of(f"amqp://guest:guest@127.0.0.1:{free_port()}//")
    app = create_celery(settings)
    with pytest.raises(DispatchUnavailable):
        CeleryDispatcher(app, QUEUE).dispatch("g1")
    app.close()
