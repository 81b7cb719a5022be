"""Follow-up work that the broker could not take, kept until it can: the outbox.

A request appends to the event log, then hands the work that follows to the broker: a
game's bot turns (whose task also watches the game's clock, calls its webhooks and lets its
tournament go on), or a tournament's start. When the broker is unreachable the send raises
`DispatchUnavailable`; `shared.app.runtime.OutboxDispatcher` then records the work in the
outbox (kept in the event store's Redis, which just took the append) and the request
answers at once. A sender
thread sends the outbox's records again with a short backoff, and drops each once the
broker took it: the bots play on as soon as the broker is back, with no reconciliation
period. The workers record their own unsent work (a tournament's next games, a deadline, a
webhook call) in the same outbox, for the game service's sender to send.

Records are keyed by their game or tournament, so a game's repeated failures keep one
record; sending one twice is harmless (bot turns append by expected version and key, a
tournament's start records nothing twice). The port has an in-memory twin and a Redis
adapter (`shared.store.redis_outbox`), with one contract.
"""

from __future__ import annotations

import abc
import threading
import uuid
from typing import Any, Literal

import msgspec
import structlog

log = structlog.get_logger(__name__)

BATCH = 100
"""The most records one pass of the sender reads at a time."""


class DispatchUnavailable(Exception):
    """The broker could not be reached: the work was not sent (it may be sent again)."""


class Pending(msgspec.Struct, frozen=True):
    """Work to send: a game's bot turns (`game`), or a tournament's start (`tournament`,
    with its definition as JSON-like builtins)."""

    kind: Literal["game", "tournament"]
    target: str
    definition: dict[str, Any] | None = None

    @property
    def key(self) -> str:
        """Returns what the outbox keys the work by: its kind and its game or tournament."""
        return f"{self.kind}:{self.target}"


class OutboxEntry(msgspec.Struct, frozen=True):
    """A record of the outbox: the work, and a token telling it from a later record of it."""

    pending: Pending
    token: str


class Outbox(abc.ABC):
    """Work the broker did not take, keyed by its game or tournament (`Pending.key`)."""

    @abc.abstractmethod
    def put(self, pending: Pending) -> OutboxEntry:
        """Records `pending`, replacing any record of the same key; returns the record."""

    @abc.abstractmethod
    def entries(self, limit: int = BATCH) -> list[OutboxEntry]:
        """Returns up to `limit` records, in no particular order."""

    @abc.abstractmethod
    def done(self, entry: OutboxEntry) -> bool:
        """Drops `entry` unless a later record of its key replaced it; returns whether it did."""

    @abc.abstractmethod
    def size(self) -> int:
        """Returns how many records the outbox holds."""


def new_entry(pending: Pending) -> OutboxEntry:
    """Returns a record of `pending` with a fresh token."""
    return OutboxEntry(pending, uuid.uuid4().hex)


class InMemoryOutbox(Outbox):
    """The outbox in this process: the twin of the Redis adapter. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, OutboxEntry] = {}

    def put(self, pending: Pending) -> OutboxEntry:
        entry = new_entry(pending)
        with self._lock:
            self._entries[pending.key] = entry
        return entry

    def entries(self, limit: int = BATCH) -> list[OutboxEntry]:
        with self._lock:
            return list(self._entries.values())[:limit]

    def done(self, entry: OutboxEntry) -> bool:
        with self._lock:
            if self._entries.get(entry.pending.key) != entry:
                return False
            del self._entries[entry.pending.key]
            return True

    def size(self) -> int:
        with self._lock:
            return len(self._entries)
