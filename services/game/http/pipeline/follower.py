"""A process's bot registry without a read per token check: `RegistryFollower`.

See `shared.ports.leases` for the read leases it holds, and `shared.app.registry.settle`
for the wait of a change to the registry.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import threading
import time

from shared.app.registry import RegistryIndex, settle
from shared.model.registry import STREAM
from shared.ports.leases import ReadLeases
from shared.store.port import EventStore

_log = logging.getLogger(__name__)


class RegistryFollower:
    """Keeps this process's registry index current without a read per look-up: one thread
    waits on the registry's stream (XREAD BLOCK, at most a quarter of the lease each time),
    folds what comes, renews this process's read lease (`shared.ports.leases`) with the
    version folded, and lets the index trust its fold for a little less than the lease
    lasts, timed from before the read. A change to the registry waits for every live lease
    to show it (`shared.app.registry.settle`), so a rotation or revocation through any
    process stops the token here before it is acknowledged. When the store cannot be read,
    the lease and the trust run out, and look-ups read the registry again, as without one.
    """

    def __init__(
        self,
        store: EventStore,
        registry: RegistryIndex,
        leases: ReadLeases,
        lease_ms: int,
        holder: str | None = None,
    ) -> None:
        self._store = store
        self._registry = registry
        self._leases = leases
        self._lease_ms = lease_ms
        self.holder = holder or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Starts following (again: nothing)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._follow, name="registry-follower", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Stops following and gives the lease up, so that no change waits for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self._lease_ms / 1000)
        self._registry.trust(0.0)
        with contextlib.suppress(Exception):
            self._leases.release(self.holder)

    def settle(self) -> list[str]:
        """Waits until every live lease shows the registry's version now (at most twice the
        lease); returns the holders still behind."""
        return settle(self._store, self._leases, 2 * self._lease_ms)

    def _follow(self) -> None:
        block_ms = max(1, self._lease_ms // 4)
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.step(block_ms, started)
            except Exception:  # a store outage must not end the follower: the lease runs out
                _log.exception("the registry follower could not read the registry")
                self._stop.wait(block_ms / 1000)

    def step(self, block_ms: int, started: float) -> None:
        """Waits up to `block_ms` for the registry's new events, folds them, renews the
        lease and trusts the fold until `started` (before the read) plus 90% of the lease."""
        self._registry.fold(self._store.wait(STREAM, self._registry.version, block_ms))
        self._leases.renew(self.holder, self._registry.version, self._lease_ms)
        if not self._stop.is_set():
            self._registry.trust(started + 0.9 * self._lease_ms / 1000)
