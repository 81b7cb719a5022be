"""The deal secret port: the deployment's secret that deal keys are derived with
(`shared.model.deal_keys.derive`), attached to a store object for the games it creates.

Twins: `GivenDealSecret` (the deployment's `CARDARENA_DEAL_SECRET`) and `ProcessDealSecret`
(32 random bytes per process, the in-memory store's); the Redis adapter
`shared.store.redis_deal_secret` draws one per deployment.
"""

from __future__ import annotations

import abc
import secrets
import threading
import weakref
from typing import overload

from shared.model.deal_keys import Kind, derive
from shared.store.port import EventStore


class DealSecret(abc.ABC):
    """Where a deployment's deal secret comes from: the same bytes for every process of it."""

    @abc.abstractmethod
    def get(self) -> bytes:
        """Returns the deal secret (at least 16 bytes); the same on every call."""


class GivenDealSecret(DealSecret):
    """The secret an operator set (`CARDARENA_DEAL_SECRET`): its UTF-8 bytes."""

    def __init__(self, text: str) -> None:
        self._secret = text.encode()

    def get(self) -> bytes:
        return self._secret


class ProcessDealSecret(DealSecret):
    """The in-memory twin: 32 random bytes drawn once for this object."""

    def __init__(self) -> None:
        self._secret = secrets.token_bytes(32)

    def get(self) -> bytes:
        return self._secret


_secrets: weakref.WeakKeyDictionary[EventStore, DealSecret] = weakref.WeakKeyDictionary()


_secrets_lock = threading.Lock()


def attach(store: EventStore, secret: DealSecret) -> None:
    """Makes `secret` the deal secret of the games created in `store` (the wiring does)."""
    with _secrets_lock:
        _secrets[store] = secret


def secret_of(store: EventStore) -> bytes:
    """Returns the deal secret of `store`: the one attached, else one drawn for it here."""
    with _secrets_lock:
        source = _secrets.get(store)
        if source is None:
            source = _secrets[store] = ProcessDealSecret()
    return source.get()


@overload
def deal_key(store: EventStore, kind: Kind, seed: None) -> None: ...


@overload
def deal_key(store: EventStore, kind: Kind, seed: int | str) -> str: ...


def deal_key(store: EventStore, kind: Kind, seed: int | str | None) -> str | None:
    """Returns the deal key of a host's `seed` for a game created in `store`; None (no
    seed: the game draws a fresh key) stays None."""
    return None if seed is None else derive(secret_of(store), kind, seed)
