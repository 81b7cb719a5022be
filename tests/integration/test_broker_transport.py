"""The workers' Redis transport (`services.workers.transport`) on a real Redis: a task that ends
after its channel closed (the broker lost) acknowledges or rejects its message without
crashing the worker."""

from __future__ import annotations

from typing import Any

import pytest
from kombu import Connection
from kombu.transport import redis as kombu_redis

from services.workers.transport import Transport


def test_an_ack_or_a_reject_on_a_closed_channel_does_nothing(redis_url: str) -> None:
    with Connection(redis_url, transport=Transport) as connection:
        channel: Any = connection.channel()
        channel.close()
        assert channel.connection is None
        channel.basic_ack("a-tag-of-a-task-that-ended-after-the-close")
        channel.basic_reject("another-tag", requeue=True)
        # kombu's own channel crashes here (the worker died of it: "Unrecoverable error").
        with pytest.raises(AttributeError):
            kombu_redis.Channel.basic_ack(channel, "a-tag-of-a-task-that-ended-after-the-close")
