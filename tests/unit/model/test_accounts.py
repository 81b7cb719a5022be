"""The accounts' pure rules: who is one account, names, the book folded from the registry's
events, and what a seat records of its owner."""

from __future__ import annotations

import pytest

from shared.errors import InvalidRequest
from shared.messages.codec import encode
from shared.messages.common import Result, Seat
from shared.model.accounts import (
    HOST,
    AccountBook,
    AccountCreated,
    AccountSuspended,
    InviteIssued,
    check_account_name,
    digest,
    recorded_owner,
    same_account,
    shared_account,
)
from shared.model.registry import BotRegistered, BotTokenIssued, Registry, token_digest
from shared.model.unrated import seats_reason
from shared.ports.views.fold import rated_game


def test_one_account_other_than_the_host_s_is_the_same_account() -> None:
    assert same_account("ada", "ada")
    assert not same_account("ada", "bea")
    assert not same_account(HOST, HOST)
    assert not same_account(None, None)
    assert not same_account("", "")
    assert shared_account(["bea", None, "ada", "bea"]) == (0, 3)
    assert shared_account([HOST, HOST, None, "ada"]) is None


def test_a_host_seat_records_no_account_and_keeps_its_bytes() -> None:
    assert recorded_owner(HOST) is recorded_owner("")
    plain = Seat(kind="external", name="alice", version="1", account=recorded_owner(HOST))
    assert (
        b"account" not in encode(BotRegistered(name="a", version="1", game="g", strategy="")).data
    )
    assert plain == Seat(kind="external", name="alice", version="1")


def test_two_seats_of_one_account_are_unrated_same_account_and_the_fold_skips_them() -> None:
    seats = [
        Seat(kind="external", name="ada-one", version="1", account="ada"),
        Seat(kind="external", name="ada-two", version="1", account="ada"),
    ]
    reason = seats_reason("shithead", seats)
    assert reason is not None
    assert reason.code == "same_account"
    assert "ada" in reason.message
    assert rated_game("shithead", "g", seats, Result("finished", [1, 2]), 0) is None
    others = [seats[0], Seat(kind="external", name="bea-one", version="1", account="bea")]
    assert seats_reason("shithead", others) is None
    assert rated_game("shithead", "g", others, Result("finished", [1, 2]), 0) is not None


@pytest.mark.parametrize("name", ["ab", "Ada", "9ada", "a" * 33, "host", "admin", "me", "ada bot"])
def test_a_name_an_account_may_not_take_is_refused_naming_the_field(name: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_account_name(name)
    assert refused.value.field == "name"


def test_a_strategy_s_name_may_be_reserved_for_accounts() -> None:
    with pytest.raises(InvalidRequest):
        check_account_name("heuristic", {"heuristic"})
    check_account_name("ada-1_b")


def test_the_book_knows_keys_by_digest_and_invites_once() -> None:
    book = AccountBook()
    book.apply(InviteIssued(invite_id="i1", code_hash=digest("cai_i1.s")))
    assert book.invite_of("cai_i1.s") == "i1"
    assert book.invite_of("cai_i1.t") is None
    book.apply(AccountCreated(name="ada", key_id="k1", key_hash=digest("caa_k1.s"), invite_id="i1"))
    assert book.invite_of("cai_i1.s") is None
    found = book.account_of_key("caa_k1.s")
    assert found is not None
    assert found.name == "ada"
    assert book.account_of_key("caa_k1.x") is None
    assert book.account_of_key("cab_k1.s") is None


def test_a_suspension_ends_the_account_s_tokens_and_marks_its_bots_even_later_ones() -> None:
    registry = Registry()
    registry.apply(AccountCreated(name="ada", key_id="k", key_hash="h"))
    registry.apply(
        BotRegistered(
            name="ada-one",
            version="1",
            game="shithead",
            strategy="",
            kind="external",
            account="ada",
        )
    )
    registry.apply(
        BotTokenIssued(
            name="ada-one", version="1", token_id="t", token_hash=token_digest("cab_t.s")
        )
    )
    assert registry.bot_of_token("cab_t.s") is not None
    registry.apply(AccountSuspended(name="ada"))
    assert registry.bot_of_token("cab_t.s") is None
    assert "t" not in registry.tokens
    assert registry.bots["ada-one", "1"].suspended
    registry.apply(
        BotTokenIssued(
            name="ada-one", version="1", token_id="u", token_hash=token_digest("cab_u.s")
        )
    )
    assert registry.bot_of_token("cab_u.s") is None
    registry.apply(
        BotRegistered(
            name="ada-one",
            version="2",
            game="shithead",
            strategy="",
            kind="external",
            account="ada",
        )
    )
    assert registry.bots["ada-one", "2"].suspended
    assert registry.book.suspended("ada")
