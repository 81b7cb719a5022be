"""Each broker gets its own transport options: the visibility timeout and the sweep are
Redis's alone; RabbitMQ gets publisher confirms bounded by the send timeout."""

from __future__ import annotations

from services.settings import WorkerSettings, load_settings
from services.workers.celery_app import PUBLISH_TIMEOUT_S, create_celery

REDIS_ONLY = {"visibility_timeout", "unacked_restore_interval", "unacked_key", "socket_timeout"}


def options_of(broker_url: str) -> tuple[dict[str, object], object]:
    """Returns the transport options and the transport of the Celery app over `broker_url`."""
    settings = load_settings({"CELERY_BROKER_URL": broker_url}, WorkerSettings)
    app = create_celery(settings)
    return dict(app.conf.broker_transport_options), app.conf.broker_transport


def test_a_rabbitmq_broker_confirms_each_send_within_the_send_timeout_and_no_redis_option() -> None:
    options, transport = options_of("amqp://guest:guest@127.0.0.1:5672//")
    assert options == {
        "confirm_publish": True,
        "read_timeout": PUBLISH_TIMEOUT_S,
        "write_timeout": PUBLISH_TIMEOUT_S,
    }
    assert transport is None, "kombu picks its AMQP transport from the URL"


def test_a_redis_broker_keeps_its_redelivery_options_and_its_own_transport() -> None:
    options, transport = options_of("redis://127.0.0.1:6379/0")
    assert set(options) >= REDIS_ONLY
    assert "confirm_publish" not in options
    assert transport == "services.workers.transport:Transport"
