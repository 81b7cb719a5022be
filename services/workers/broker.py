"""What the Celery broker holds, read from the broker itself: the tasks waiting on a queue.

Over Redis, kombu keeps a queue as a list (and one more list per priority, named with its
separator); over RabbitMQ, the broker counts a queue's ready messages and says how many in
its answer to a passive declare, which creates nothing. Either count leaves out the tasks a
worker holds unacknowledged. A queue that does not exist yet holds nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import amqp
import kombu
import redis

from services.settings import CommonSettings

READ_TIMEOUT_S = 2.0
"""How long a count waits for the broker to connect, or to answer, before it fails."""
_PRIORITY_SEP = "\x06\x16"
"""kombu's separator between a Redis queue's name and a priority's number."""


def waiting_tasks(settings: CommonSettings) -> Callable[[], int]:
    """Returns a function counting the tasks waiting on the settings' queue at their broker;
    it raises what the broker's client raises when the broker does not answer. Builds no
    connection until it is called."""
    if settings.broker_is_amqp:
        return _amqp_count(settings.celery_broker, settings.queue)
    return _redis_count(settings.celery_broker, settings.queue)


def _redis_count(url: str, queue: str) -> Callable[[], int]:
    """Returns the LLEN of kombu's list of `queue`, with its priority lists, at `url`."""
    client = redis.Redis.from_url(
        url, socket_timeout=READ_TIMEOUT_S, socket_connect_timeout=READ_TIMEOUT_S
    )
    names = [queue, *(f"{queue}{_PRIORITY_SEP}{p}" for p in range(1, 10))]

    def count() -> int:
        with client.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.llen(name)
            return sum(int(n) for n in pipe.execute())

    return count


def _amqp_count(url: str, queue: str) -> Callable[[], int]:
    """Returns RabbitMQ's count of the ready messages of `queue` at `url`, on a connection
    of each call's own (a scrape every few seconds needs no connection kept alive)."""
    timeouts = {"read_timeout": READ_TIMEOUT_S, "write_timeout": READ_TIMEOUT_S}

    def count() -> int:
        with kombu.Connection(
            url, connect_timeout=READ_TIMEOUT_S, transport_options=timeouts
        ) as connection:
            connection.connect()
            channel = cast("amqp.Channel", connection.channel())
            try:
                declared = channel.queue_declare(queue, passive=True)
            except amqp.exceptions.NotFound:
                return 0
            assert declared is not None  # a passive declare waits for its answer
            return int(declared[1])

    return count
