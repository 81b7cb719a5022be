"""The registry index's trust (look-ups that read nothing while a follower's lease lasts)
and `settle`, the wait of a change to the registry for every live read lease."""

from __future__ import annotations

from shared.app.registry import RegistryIndex, register, register_bot, revoke_token, settle
from shared.model.registry import STREAM, BotSpec
from shared.ports.leases import InMemoryReadLeases
from shared.store.memory import InMemoryEventStore


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_trusted_index_answers_from_its_fold_and_reads_again_once_the_trust_ends() -> None:
    store = InMemoryEventStore()
    clock = Clock()
    registration = register(store, BotSpec(name="alice", game="autobus", kind="external"))
    assert registration.credentials is not None
    token = registration.credentials.token
    index = RegistryIndex(store, clock)
    assert index.bot_of_token(token) is not None
    index.trust(clock.now + 5)
    assert index.trusted
    revoke_token(store, "alice", "1")
    assert index.bot_of_token(token) is not None, "trusted: the look-up read nothing"
    clock.now += 5
    assert not index.trusted
    assert index.bot_of_token(token) is None, "the trust ended: it read the revocation"


def test_settle_waits_for_every_live_lease_behind_the_registry() -> None:
    store = InMemoryEventStore()
    register_bot(store, BotSpec(name="alice", game="autobus", kind="external"))
    assert settle(store, None, 1000) == [], "no leases: nothing to wait for"
    leases = InMemoryReadLeases()
    version = store.version(STREAM)
    leases.renew("current", version, 60_000)
    leases.renew("behind", version - 1, 60_000)
    assert settle(store, leases, 50) == ["behind"], "it gave up waiting, naming who is behind"
    leases.renew("behind", version, 60_000)
    assert settle(store, leases, 50) == []
