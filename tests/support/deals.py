"""The tests' given deal secret: every deal a test draws is the same on every run.

A game dealt from a host's seed is dealt from a key derived with the deployment's deal secret
(`shared.model.deal_keys`); a store with none attached draws 32 random bytes for itself
(`shared.ports.deal_secret.ProcessDealSecret`), a Redis deployment one per namespace. So a
seeded game in a test deals other cards on every run unless the secret is given; a game or
tournament without a seed is dealt from a fresh random key (`deal_keys.fresh`). `pin` gives
`SECRET` to every store a test builds, in-process and in the processes it starts, and makes
the n-th fresh key a test draws in-process the same on every run (`FreshKeys`); a test that
wants a random secret or random keys asks for the `random_deal_secret` fixture
(tests/conftest.py) and prints what it drew when it fails.
"""

from __future__ import annotations

import hashlib
import itertools
from typing import TypeVar

import pytest

from services.bootstrap import stores
from shared.model import deal_keys
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret, ProcessDealSecret
from shared.store.port import EventStore
from shared.store.redis_deal_secret import RedisDealSecret

RANDOM_FRESH = deal_keys.fresh
"""The product's `deal_keys.fresh` (32 random bytes), before `pin` replaces it."""

SECRET = "cardarena tests: the given deal secret, the same on every run"
"""The deal secret of every test's deployment (at least 32 characters, as settings demand)."""

ENVIRONMENT = {"CARDARENA_DEAL_SECRET": SECRET}
"""What a test's processes (a stack, a worker) take the secret from."""

S = TypeVar("S", bound=EventStore)


class FreshKeys:
    """Stands in for `deal_keys.fresh`: the n-th key drawn since `start(test)` is the SHA-256
    of the test's id and n, 64 hex digits as a fresh key is; another test draws others."""

    def __init__(self) -> None:
        self.start("")

    def start(self, test: str) -> None:
        """Draws the keys of `test` from its first on."""
        self._test = test
        self._drawn = itertools.count()

    def __call__(self) -> str:
        return hashlib.sha256(f"{self._test}:{next(self._drawn)}".encode()).hexdigest()


FRESH = FreshKeys()
"""The fresh keys of the test that runs (tests/conftest.py starts it for each test)."""


def given() -> GivenDealSecret:
    """Returns `SECRET` as the deal secret an operator sets."""
    return GivenDealSecret(SECRET)


def attached(store: S) -> S:
    """Returns `store`, its games dealt with `SECRET` (as the tests' processes deal theirs)."""
    deal_secret.attach(store, given())
    return store


def pin(patch: pytest.MonkeyPatch) -> None:
    """Makes `SECRET` the deal secret of every store built while `patch` holds: one with none
    attached (`deal_secret.secret_of`), one the wiring builds without a configured secret
    (`services.bootstrap.stores.build_store`, in memory or on Redis), and every process
    started with the environment (`CARDARENA_DEAL_SECRET`); and the fresh keys of a game or
    tournament without a seed, in-process, `FRESH`."""
    patch.setattr(deal_secret, "ProcessDealSecret", given)
    patch.setattr(stores, "ProcessDealSecret", given)
    patch.setattr(stores, "RedisDealSecret", lambda *_: given())
    patch.setattr(deal_keys, "fresh", FRESH)
    for name, value in ENVIRONMENT.items():
        patch.setenv(name, value)


def unpin(patch: pytest.MonkeyPatch) -> None:
    """Undoes `pin` while `patch` holds: stores draw random secrets and games without a seed
    random keys, as in production."""
    patch.setattr(deal_secret, "ProcessDealSecret", ProcessDealSecret)
    patch.setattr(stores, "ProcessDealSecret", ProcessDealSecret)
    patch.setattr(stores, "RedisDealSecret", RedisDealSecret)
    patch.setattr(deal_keys, "fresh", RANDOM_FRESH)
    for name in ENVIRONMENT:
        patch.delenv(name, raising=False)
