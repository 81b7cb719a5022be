"""`cardarena_queue_depth` read from the broker itself, on a real Redis and a real RabbitMQ:
the tasks waiting on the queue (LLEN of kombu's lists, or RabbitMQ's own message count), and
no metric, but a scrape that still answers, when the broker does not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from prometheus_client import CollectorRegistry, generate_latest

from services.bootstrap.game import build_game_metrics
from services.ops.metrics import queue_depth
from services.settings import GameSettings, WorkerSettings, as_kind, load_settings
from services.workers.broker import waiting_tasks
from services.workers.celery_app import create_celery
from services.workers.dispatch import CeleryDispatcher
from shared.ports.views.memory import InMemoryTournamentViews
from shared.store.memory import InMemoryEventStore
from tests.support.stack import free_port

DEPTH = "cardarena_queue_depth"


@pytest.fixture(params=["redis", "amqp"])
def broker(
    request: pytest.FixtureRequest, redis_url: str, redis_client: redis.Redis, namespace: str
) -> Iterator[str]:
    """Returns the URL of a broker of this test's own: the real Redis (its queue under the
    test's namespace) or a RabbitMQ virtual host of its own."""
    if request.param == "amqp":
        yield request.getfixturevalue("amqp_url")
        return
    yield redis_url
    redis_client.delete(f"_kombu.binding.{namespace}bots")  # kombu's, outside the namespace


def game_settings(broker_url: str, redis_url: str, namespace: str) -> GameSettings:
    """Returns the game service's settings with bot turns on Celery over `broker_url`."""
    env = {
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "CELERY_BROKER_URL": broker_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
    }
    return load_settings(env, GameSettings)


def test_the_queue_depth_counts_the_tasks_waiting_on_the_broker(
    broker: str, redis_url: str, namespace: str
) -> None:
    settings = game_settings(broker, redis_url, namespace)
    metrics = build_game_metrics(settings, InMemoryTournamentViews(InMemoryEventStore()))
    labels = {"queue": settings.queue}
    assert metrics.registry.get_sample_value(DEPTH, labels) == 0, "no queue yet: none waits"

    app = create_celery(as_kind(settings, WorkerSettings))
    dispatcher = CeleryDispatcher(app, settings.queue)
    for game_id in ("g1", "g2", "g3"):
        dispatcher.dispatch(game_id)
    assert metrics.registry.get_sample_value(DEPTH, labels) == 3, "no worker took them"
    app.close()


@pytest.mark.parametrize("scheme", ["redis", "amqp"])
def test_a_broker_that_does_not_answer_leaves_out_the_queue_depth_and_the_scrape_answers(
    scheme: str,
) -> None:
    nowhere = f"{scheme}://127.0.0.1:{free_port()}/0"
    settings = load_settings({"CELERY_BROKER_URL": nowhere}, WorkerSettings)
    registry = CollectorRegistry()
    registry.register(queue_depth(settings.queue, waiting_tasks(settings)))
    with pytest.raises((OSError, redis.ConnectionError)):  # what the collector swallows
        waiting_tasks(settings)()
    assert DEPTH not in generate_latest(registry).decode()
