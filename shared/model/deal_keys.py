"""Deal keys: what the platform deals its games from, so that nobody can compute a deal.

An engine deals from a seed's text alone (`shared.games.cards.shuffled`), by a shuffle
anyone can run: a seed that can be guessed (a host's `7`, a tournament's public seed) gives
away every card. So the platform never deals from what a host gives. It deals every game
from a deal key, 64 lowercase hex digits (256 bits):

- no seed given: 32 fresh random bytes (`fresh`);
- a host's seed `s`: HMAC-SHA256 keyed with the deployment's deal secret over the UTF-8
  bytes `cardarena:deal:v1:<kind>:<s>` (`derive`), where `<kind>` is `game` for a game
  created through `POST /v1/games` and `tournament` for a tournament's game, whose `s` is
  the seed its schedule gave it (`shared.model.tournaments.formats.game_seed`).

The deal key is the seed a game commits to and reveals at its end (`shared.model.deals`), so a
finished game still verifies offline from its own log. The deal secret never leaves the
platform: it is the deployment's `CARDARENA_DEAL_SECRET`, else 32 random bytes drawn once
per deployment (kept in Redis under the namespace, `shared.store.redis_deal_secret`) or per
process (the in-memory store). The same seed on the same deployment so deals the same
cards, and a seed tried on another deployment, or guessed, deals nothing anyone can compute.
"""

from __future__ import annotations

import abc
import hashlib
import hmac
import secrets
import threading
import weakref
from typing import Literal, overload

from shared.model.deals import seed_text
from shared.store.port import EventStore

Kind = Literal["game", "tournament"]
"""What a host's seed seeds: a game of its own, or a tournament's game."""

DOMAIN = "cardarena:deal:v1"
"""The prefix of every derivation's message, so a deal key is used for nothing else."""


def fresh() -> str:
    """Returns a deal key of 32 fresh random bytes, as 64 lowercase hex digits."""
    return secrets.token_hex(32)


def derive(secret: bytes, kind: Kind, seed: int | str) -> str:
    """Returns the deal key of a host's `seed` under a deployment's `secret`: hex
    HMAC-SHA256(secret, `cardarena:deal:v1:<kind>:<seed text>`)."""
    message = f"{DOMAIN}:{kind}:{seed_text(seed)}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


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
