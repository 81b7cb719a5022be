"""kombu's Redis transport, with a worker that survives losing the broker while it holds tasks.

A worker that loses its Redis broker while it holds tasks unacknowledged (a running task,
late acks; a deadline task waiting for its time) crashed in kombu 5.7 ("Unrecoverable
error: AttributeError ... 'hostname'"): Celery collects the lost connection, which drops
the transport's client, then closes it, and the channel's close restores the held messages
through that client. The worker stopped, and its messages waited in the broker's unacked
hash for another worker's sweep after the visibility timeout (300 s by default): a
deadline that late, with no worker left to enforce it.

Here a channel closed without its client, or whose restore fails because the broker does
not answer (a close that comes while the broker is down), keeps the delivery tags it held
instead of losing them, and this process puts those messages back on their queues as soon
as a channel of it reaches the broker again: when one opens (the worker reconnecting) and
before each of its polls (`restore_by_tag`, a transaction that does nothing for a message
already restored). Celery drops a lost connection's held tasks itself, so each runs once
more; tasks are idempotent (moves are version-checked).

A task that was running when its channel closed still acknowledges (or rejects) its message
through that channel once it ends; kombu then reaches for the channel's connection, which the
close dropped, and the worker crashed again ("Unrecoverable error: AttributeError ... 'client'").
Here an acknowledgement or rejection on a closed channel does nothing: its message went back
to its queue (or is kept for that) with the close, and runs once more.
"""

from __future__ import annotations

import threading
from typing import Any, cast

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
        """Closes the channel, restoring the messages it holds; keeps their tags when its
        client is gone or the broker does not answer."""
        connection, qos = self.connection, self._qos
        if not self.closed and qos is not None and connection is not None:
            qos = cast(Any, qos)
            if not connection.client:
                _keep_held(qos)
            elif qos.restore_at_shutdown and self.do_restore:
                qos._flush()  # drops the tags acknowledged meanwhile, as kombu's restore does
                try:
                    qos.restore_unacked()  # what kombu's close does; clears what it held
                except connection.connection_errors:
                    _keep_held(qos)
        super().close()

    def basic_ack(self, delivery_tag: Any, multiple: bool = False) -> None:
        """Acknowledges a message; nothing on a closed channel (see the module)."""
        if self.connection is None:
            return
        super().basic_ack(delivery_tag, multiple=multiple)

    def basic_reject(self, delivery_tag: Any, requeue: bool = False) -> None:
        """Rejects a message; nothing on a closed channel (see the module)."""
        if self.connection is None:
            return
        super().basic_reject(delivery_tag, requeue=requeue)

    def _brpop_start(self, timeout: Any = None) -> Any:
        """Restores the messages closed channels kept (if any) before each poll."""
        if _held:
            self._restore_held()
        return super()._brpop_start(timeout)  # type: ignore[misc]  # not in kombu's stubs

    def _restore_held(self) -> None:
        """Puts the messages of the tags a closed channel kept back on their queues."""
        with _held_lock:
            tags = list(_held)
        qos: Any = self.qos
        for tag in tags:
            try:
                qos.restore_by_tag(tag)
            except self.connection.connection_errors:
                return  # the broker does not answer yet: the next poll tries again
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
