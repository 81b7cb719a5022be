"""The accounts' use cases under races: an invite code works once and an account's cap holds
when many registrations run at once, since each appends at the registry version it read."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from shared.app.accounts import create_account, issue_invite, suspend_account
from shared.app.registry import read_registry, register
from shared.errors import InvalidRequest
from shared.model.accounts import AccountExists, RegistrationRefused, TooManyBots
from shared.model.registry import STREAM, BotSpec
from shared.store.memory import InMemoryEventStore


def test_one_invite_code_makes_one_account_however_many_race_for_it() -> None:
    store = InMemoryEventStore()
    code = issue_invite(store)

    def attempt(index: int) -> bool:
        try:
            create_account(store, f"racer{index}", mode="invite", invite=code)
        except InvalidRequest:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(attempt, range(16)))
    assert made.count(True) == 1
    assert len(read_registry(store).book.accounts) == 1


def test_an_account_s_cap_holds_when_its_registrations_race() -> None:
    store = InMemoryEventStore()
    create_account(store, "ada", mode="open")

    def attempt(index: int) -> bool:
        spec = BotSpec(name=f"ada-{index}", game="shithead", kind="external")
        try:
            register(store, spec, account="ada", max_bots=3)
        except TooManyBots:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        made = list(pool.map(attempt, range(12)))
    assert made.count(True) == 3
    assert len(read_registry(store).bots_of("ada")) == 3


def test_one_name_is_one_account_s_and_a_suspended_account_registers_nothing() -> None:
    store = InMemoryEventStore()
    create_account(store, "ada", mode="open")
    with pytest.raises(AccountExists):
        create_account(store, "ada", mode="open")
    with pytest.raises(RegistrationRefused):
        create_account(store, "bea", mode="closed")
    suspend_account(store, "ada", "spam")
    version = store.version(STREAM)
    with pytest.raises(RegistrationRefused):
        register(store, BotSpec(name="ada-1", game="shithead", kind="external"), account="ada")
    assert store.version(STREAM) == version
