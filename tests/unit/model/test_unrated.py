"""Why a game is not rated: one code per reason, the first of `UNRATED_REASONS` when several
hold, and a rated flag that is null only while nothing rules the game out yet."""

from __future__ import annotations

from typing import Any

from shared.messages.common import Seat
from shared.model.unrated import UNRATED_REASONS, rated_flag, unrated_reason

ALICE = Seat(kind="external", name="alice", version="1")
BOB = Seat(kind="external", name="bob", version="1")
PLAIN = Seat(bot="random")


def code(game: str, seats: list[Seat], **kwargs: Any) -> str | None:
    """Returns the code `unrated_reason` gives, None when the game is rated."""
    found = unrated_reason(game, seats, **kwargs)
    return None if found is None else found.code


def test_each_reason_has_its_code() -> None:
    assert code("shithead", [ALICE, BOB]) is None
    assert code("shithead", [ALICE, BOB], forked=True) == "forked"
    assert code("beggar", [ALICE, BOB]) == "no_decisions"
    assert code("shithead", [ALICE, BOB], abort_reason="host") == "aborted"
    assert code("shithead", [ALICE, BOB], abort_reason="stale") == "aborted"
    assert code("shithead", [ALICE, BOB], abort_reason="tournament_cancelled") == (
        "tournament_cancelled"
    )
    assert code("shithead", [ALICE, BOB], cancelled_unrecorded=True) == "tournament_cancelled"
    assert code("shithead", [ALICE, PLAIN]) == "unrated_seat"
    assert code("shithead", [ALICE, ALICE]) == "same_version"
    assert code("no-such-game", [ALICE, BOB]) == "no_decisions"


def test_the_first_reason_of_the_list_wins() -> None:
    assert code("beggar", [ALICE, ALICE], forked=True, abort_reason="host") == "forked"
    assert code("beggar", [ALICE, ALICE], abort_reason="host") == "no_decisions"
    assert code("shithead", [ALICE, ALICE], abort_reason="host") == "aborted"
    assert code("shithead", [PLAIN, ALICE, ALICE]) == "unrated_seat"
    assert list(UNRATED_REASONS).index("aborted") < list(UNRATED_REASONS).index("same_version")


def test_messages_name_what_is_at_fault() -> None:
    same = unrated_reason("shithead", [ALICE, BOB, ALICE])
    assert same is not None
    assert "alice@1" in same.message
    assert "seats 0 and 2" in same.message
    aborted = unrated_reason("shithead", [ALICE, BOB], abort_reason="stale")
    assert aborted is not None
    assert "stale" in aborted.message


def test_rated_is_null_only_while_nothing_rules_the_game_out() -> None:
    same = unrated_reason("shithead", [ALICE, ALICE])
    assert rated_flag(same, over=False) is False
    assert rated_flag(None, over=False) is None
    assert rated_flag(None, over=True) is True
