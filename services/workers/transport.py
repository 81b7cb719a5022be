"""kombu's Redis transport, with a worker that survives losing the broker while it holds tasks.

A worker that loses its Redis broker while it holds tasks unacknowledged (a running task,
late acks; a deadline task waiting for its time) crashed in kombu 5.7 ("Unrecoverable
error: AttributeError ... 'hostname'"): Celery collects the lost connection, which drops
the transport's client, then closes it, and the channel's close restores the held messages
through that client. The worker stopped, and its messages waited in the broker's unacked
hash for another worker's sweep after the visibility timeout (300 s by default): a
deadline that late, with no worker left to enforce it.

Here a channel closed without its client keeps the delivery tags it held instead of
restoring them, and the next channel this process opens (when the worker reconnects)
puts those messages back on their queues at once (`restore_by_tag`, a transaction that
does nothing for a message a sweep restored meanwhile). Celery drops a lost connection's
held tasks itself, so each runs once more; tasks are idempotent (moves are version-checked).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from kombu.transport import redis as kombu_redis

_held: set[str] = set()
"""The delivery tags this process's closed channels held and could not restore."""
_held_lock = threading.Lock()


class Channel(kombu_redis.Channel):
    """kombu's Redis channel; see the module for what it adds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._restore_held()

    def close(self) -> None:
        """Closes the channel, keeping the tags it holds when its client is gone."""
        connection, qos = self.connection, self._qos
        if not self.closed and qos is not None and connection is not None and not connection.client:
            _keep_held(qos)
        super().close()

    def _restore_held(self) -> None:
        """Puts the messages of the tags a closed channel kept back on their queues."""
        with _held_lock:
            tags = list(_held)
        qos: Any = self.qos
        for tag in tags:
            with contextlib.suppress(*self.connection.connection_errors):
                qos.restore_by_tag(tag)
                with _held_lock:
                    _held.discard(tag)


def _keep_held(qos: Any) -> None:
    """Moves the tags `qos` holds unacknowledged to `_held`, so its close restores none."""
    qos._flush()  # drops the tags acknowledged meanwhile, as kombu's restore does first
    with _held_lock:
        _held.update(qos._delivered)
    qos._delivered.clear()


class Transport(kombu_redis.Transport):
    """kombu's Redis transport with the channel above."""

    Channel = Channel


def held() -> set[str]:
    """Returns the delivery tags kept for restoring (for tests)."""
    with _held_lock:
        return set(_held)
