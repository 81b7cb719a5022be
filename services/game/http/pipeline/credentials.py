"""Credentials that end: a bot token's streams and long polls stop once it is rotated or revoked.

A stream or long poll made with a bot token takes a `Hold` of the app's `TokenWatch` for as
long as it runs. The watch follows the registry's stream (`shared.model.registry.STREAM`) in one
thread of its own while any hold is open: when the registry no longer holds a held token
live (revoked, or replaced by a rotation), it cancels that hold's waits at once, and they
raise `CredentialEnded` (a 401 for a long poll; a stream just ends). Each hold also looks
the token up again before every message it lets out (`checked`), so that nothing is sent
after a revocation, not even in the moment before the watch notices it. The admin key and
anonymous callers hold nothing: nothing revokes them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from services.game.http.pipeline.auth import Caller, Unauthorized
from shared.app.registry import RegistryIndex
from shared.model.registry import STREAM
from shared.store.port import EventStore

T = TypeVar("T")

_log = logging.getLogger(__name__)


class CredentialEnded(Unauthorized):
    """The bot token of a stream or long poll was rotated or revoked while it ran."""

    def __init__(self, token_id: str) -> None:
        super().__init__(
            f"the bot token {token_id} was rotated or revoked; nothing more is sent on it",
            invalid_token=True,
        )


class Hold:
    """One stream's or long poll's use of a bot token (none: a credential nothing revokes)."""

    def __init__(self, registry: RegistryIndex | None = None, token_id: str | None = None) -> None:
        self.token_id = token_id
        self._registry = registry
        self.ended = False
        self._loop: anyio.lowlevel.EventLoopToken | None = None
        self._scopes: set[anyio.CancelScope] = set()

    def check(self) -> None:
        """Raises CredentialEnded unless the token is still live (a registry look-up: blocks)."""
        if self.token_id is None or self._registry is None:
            return
        if self.ended or not self._registry.live(self.token_id):
            self.ended = True
            raise CredentialEnded(self.token_id)

    def live(self) -> bool:
        """Returns whether the token is still live (a registry look-up: blocks)."""
        try:
            self.check()
        except CredentialEnded:
            return False
        return True

    async def wait(self, call: Callable[[], Awaitable[T]]) -> T:
        """Returns `await call()`; raises CredentialEnded, cancelling it, once the token ends."""
        if self.token_id is None:
            return await call()
        # The loop first, then `ended`: the watch sets `ended` first, then reads the loop.
        self._loop = self._loop or anyio.lowlevel.current_token()
        if self.ended:
            raise CredentialEnded(self.token_id)
        with anyio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                return await call()
            finally:
                self._scopes.discard(scope)
        raise CredentialEnded(self.token_id)  # reached only when the watch cancelled it

    def end(self) -> None:
        """Marks the hold ended and cancels its waits in their event loop (from any thread)."""
        self.ended = True
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError, anyio.RunFinishedError):
            anyio.from_thread.run_sync(self._cancel, token=loop)

    def _cancel(self) -> None:
        """Cancels the hold's waits (in its event loop)."""
        for scope in list(self._scopes):
            scope.cancel()


def checked(hold: Hold, function: Callable[..., T], *args: Any) -> T:
    """Returns `function(*args)` once `hold`'s token is known to be live after it (blocks)."""
    result = function(*args)
    hold.check()
    return result


class TokenWatch:
    """Ends the holds of tokens that the registry stops holding live, from one thread that
    waits on the registry's stream while any hold is open (each wait at most `poll_s`)."""

    def __init__(self, store: EventStore, registry: RegistryIndex, poll_s: float) -> None:
        self._store = store
        self._registry = registry
        self._poll_ms = max(1, int(poll_s * 1000))
        self._lock = threading.Lock()
        self._holds: set[Hold] = set()
        self._thread: threading.Thread | None = None

    def take(self, caller: Caller) -> Hold:
        """Returns the hold of `caller`'s bot token, watched until `give` (none is watched
        for the admin key or anyone)."""
        if caller.token_id is None:
            return Hold()
        hold = Hold(self._registry, caller.token_id)
        with self._lock:
            self._holds.add(hold)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="token-watch", daemon=True)
                self._thread.start()
        return hold

    def give(self, hold: Hold) -> None:
        """Stops watching `hold` (again: nothing)."""
        with self._lock:
            self._holds.discard(hold)

    @contextlib.contextmanager
    def hold(self, caller: Caller) -> Iterator[Hold]:
        """Yields the hold of `caller`'s bot token while the block runs (see `take`)."""
        hold = self.take(caller)
        try:
            yield hold
        finally:
            self.give(hold)

    def _watch(self) -> None:
        """Waits on the registry and ends dead holds until no hold is left."""
        while True:
            with self._lock:
                if not self._holds:
                    self._thread = None
                    return
            try:
                self._registry.fold(self._store.wait(STREAM, self._registry.version, self._poll_ms))
                self._end_dead()
            except Exception:  # a store outage must not end the watch: look again later
                _log.exception("the token watch could not read the registry")
                time.sleep(self._poll_ms / 1000)

    def _end_dead(self) -> None:
        """Ends every hold whose token the registry no longer holds live (the registry's
        events just waited for folded in)."""
        with self._lock:
            holds = [hold for hold in self._holds if not hold.ended]
        for hold in holds:
            if hold.token_id is not None and not self._registry.live(hold.token_id, look=False):
                hold.end()
