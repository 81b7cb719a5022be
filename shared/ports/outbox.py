"""Follow-up work that the broker could not take, kept until it can: the outbox.

A request appends to the event log, then hands the work that follows to the broker: a
game's bot turns (whose task also watches the game's clock, calls its webhooks and lets its
tournament go on), or a tournament's start. When the broker is unreachable the send raises
`DispatchUnavailable`; `OutboxDispatcher` then records the work in the outbox (kept in the
event store's Redis, which just took the append) and the request answers at once. A sender
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

from shared.model.tournaments.model import TournamentDefinition
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import StoreError

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


class OutboxDispatcher(BotTurnDispatcher):
    """Sends through `inner` (the broker's dispatcher); what the broker cannot take is kept
    in `outbox` and sent again by a thread of its own (`start`, `close`).

    After a failed send, and until the sender gets a record through, the broker counts as
    down: work goes to the outbox at once, so requests answer without waiting for the
    broker. A record the outbox cannot take either (its Redis down too) is kept in this
    process's memory, and sent the same way. The sender retries after `first_retry_s`,
    doubling up to `max_retry_s`; while the broker is up it looks at the outbox every
    `poll_s` (for the workers' records, and those a stopped process left).
    """

    def __init__(
        self,
        inner: BotTurnDispatcher,
        outbox: Outbox,
        *,
        first_retry_s: float = 0.1,
        max_retry_s: float = 2.0,
        poll_s: float = 1.0,
    ) -> None:
        self._inner = inner
        self._outbox = outbox
        self._first_retry_s = first_retry_s
        self._max_retry_s = max_retry_s
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._unsaved: dict[str, Pending] = {}
        self._down = threading.Event()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def broker_down(self) -> bool:
        """Returns whether the last send failed and no record got through since."""
        return self._down.is_set()

    def dispatch(self, game_id: str) -> None:
        self._send(Pending("game", game_id))

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        self._send(Pending("tournament", tournament_id, msgspec.to_builtins(definition)))

    def _send(self, pending: Pending) -> None:
        """Sends `pending`, or keeps it (the broker is down)."""
        if not self._down.is_set():
            try:
                self._deliver(pending)
            except DispatchUnavailable as error:
                log.warning("broker unavailable: work kept in the outbox", error=str(error))
                self._down.set()
                self._wake.set()
            else:
                return
        self._keep(pending)

    def _deliver(self, pending: Pending) -> None:
        """Hands `pending` to the inner dispatcher; raises DispatchUnavailable."""
        if pending.kind == "game":
            self._inner.dispatch(pending.target)
            return
        definition = msgspec.convert(pending.definition, TournamentDefinition)
        self._inner.start_tournament(definition, pending.target)

    def _keep(self, pending: Pending) -> None:
        """Records `pending` in the outbox, else in this process's memory."""
        try:
            self._outbox.put(pending)
        except StoreError as error:
            log.warning("outbox unavailable: work kept in memory", error=str(error))
            with self._lock:
                self._unsaved[pending.key] = pending
            self._wake.set()

    def flush(self) -> bool:
        """Sends every kept record once (up to a batch of the outbox's); returns whether
        all got through, with nothing left (False: the broker or the outbox failed, or
        more records wait)."""
        with self._lock:
            unsaved = list(self._unsaved.values())
        for pending in unsaved:
            self._deliver(pending)
            with self._lock:
                if self._unsaved.get(pending.key) is pending:
                    del self._unsaved[pending.key]
        entries = self._outbox.entries(BATCH)
        for entry in entries:
            self._deliver(entry.pending)
            self._outbox.done(entry)
        return len(entries) < BATCH

    def start(self) -> None:
        """Starts the sender thread (a daemon: it holds nothing a stop would lose)."""
        self._thread = threading.Thread(target=self._run, name="outbox-sender", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops the sender thread; records left stay in the outbox."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        """Flushes after each wait: short, growing ones while flushes fail, else `poll_s`."""
        delay, failing = self._first_retry_s, False
        while not self._stop.is_set():
            self._wake.wait(delay if failing or self._down.is_set() else self._poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                drained = self.flush()
            except DispatchUnavailable as error:
                self._down.set()
                log.debug("outbox not sent yet: broker", error=str(error), retry_s=delay)
            except StoreError as error:
                log.warning("outbox not sent yet: store", error=str(error), retry_s=delay)
            except Exception:  # a bug: the sender must go on
                log.exception("outbox not sent yet", retry_s=delay)
            else:
                if self._down.is_set():
                    log.info("broker available again: the outbox was sent")
                self._down.clear()
                delay, failing = self._first_retry_s, False
                if not drained:
                    self._wake.set()
                continue
            if failing:
                delay = min(delay * 2, self._max_retry_s)
            failing = True
