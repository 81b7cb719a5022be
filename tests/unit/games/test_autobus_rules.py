"""Hospodský autobus, rule by rule, on constructed tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from shared.errors import InvalidRuleset
from shared.games.autobus.decide import deal
from shared.games.autobus.legal import legal_actions
from shared.games.autobus.messages import (
    CardDiscarded,
    CardPlayed,
    CardsDrawn,
    CardUnderTheBus,
    Discard,
    EndTurn,
    GameStarted,
    MainTopRevealed,
    PlayToSequence,
    StockReshuffled,
    UnderTheBus,
)
from shared.games.autobus.rules import validate
from shared.games.autobus.view import redact
from shared.games.autobus.view import view as ab_view
from shared.games.cards import HIDDEN, shuffled, standard_deck
from shared.messages.common import Event, GameFinished
from tests.support.autobus import RULES, apply, refused, table


def from_hand(card: str, sequence: int | None = None) -> PlayToSequence:
    """Returns a play of a hand card onto a sequence (None: a new one)."""
    return PlayToSequence(source="hand", card=card, sequence=sequence)


def kinds(events: Sequence[Event]) -> list[str]:
    """Returns the event type names."""
    return [type(event).__name__ for event in events]


# Sequences -----------------------------------------------------------------------------------


def test_an_ace_or_a_joker_opens_a_sequence_and_a_two_cannot() -> None:
    state = table([["AS", "X1", "2C", "5D"], ["3C"]])
    assert refused(state, 0, from_hand("2C")) == "opens_with_ace"
    after, events = apply(state, 0, from_hand("AS"))
    assert events == [
        CardPlayed(seat=0, source="hand", card="AS", sequence=0, rank=1, slot=None, opened=True)
    ]
    after, events = apply(after, 0, from_hand("X1"))
    assert events[0] == CardPlayed(
        seat=0, source="hand", card="X1", sequence=1, rank=1, slot=None, opened=True
    )
    assert after.sequences == (("AS",), ("X1",))


def test_a_sequence_rises_by_one_rank() -> None:
    state = table([["2C", "3C", "5D"], ["3S"]], sequences=[["AS"]])
    assert refused(state, 0, from_hand("3C", 0)) == "sequence_needs"
    after, _ = apply(state, 0, from_hand("2C", 0))
    after, _ = apply(after, 0, from_hand("3C", 0))
    assert after.sequences == (("AS", "2C", "3C"),)


def test_a_joker_on_a_sequence_counts_as_the_needed_rank() -> None:
    state = table([["X2", "4C", "5D"], ["3S"]], sequences=[["AS", "2D"]])
    after, events = apply(state, 0, from_hand("X2", 0))
    assert events[0] == CardPlayed(seat=0, source="hand", card="X2", sequence=0, rank=3, slot=None)
    after, _ = apply(after, 0, from_hand("4C", 0))
    assert after.sequences == (("AS", "2D", "X2", "4C"),)
    wrong = PlayToSequence(source="hand", card="X2", sequence=0, joker_rank=5)
    assert refused(state, 0, wrong) == "joker_rank"


def test_completing_a_sequence_at_the_king_moves_it_to_the_completed_stock() -> None:
    run = ["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS"]
    state = table([["KD", "5D"], ["3S"]], sequences=[["AC"], run])
    after, events = apply(state, 0, from_hand("KD", 1))
    assert kinds(events) == ["CardPlayed", "SequenceCompleted"]
    assert after.sequences == (("AC",),)
    assert after.completed == (*run, "KD")


def test_only_the_top_of_a_slot_can_be_played() -> None:
    state = table([["5D"], ["3S"]], slots={(0, 0): (["2C", "2D"], 2)}, sequences=[["AS"]])
    after, events = apply(state, 0, PlayToSequence(source="slot", slot=0, sequence=0))
    assert events[0] == CardPlayed(seat=0, source="slot", card="2D", sequence=0, rank=2, slot=0)
    assert after.slots[0][0] == ("2C",)
    assert after.slot_ranks[0][0] == 2
    assert refused(state, 0, PlayToSequence(source="slot", slot=1, sequence=0)) == ("empty_slot")


def test_a_play_from_the_main_pile_reveals_the_next_card() -> None:
    state = table([["5D"], ["3S"]], mains=[["AH", "7C", "9D"], ["2S"]])
    after, events = apply(state, 0, PlayToSequence(source="main"))
    assert kinds(events) == ["CardPlayed", "MainTopRevealed"]
    assert events[1] == MainTopRevealed(seat=0, card="7C")
    assert after.mains[0] == ("7C", "9D")
    assert ab_view(after, 1).main_tops[0] == "7C"


def test_the_first_to_empty_the_main_pile_wins_at_once() -> None:
    state = table([["5D", "6D"], ["3S"]], mains=[["AH"], ["2S", "3S"]])
    after, events = apply(state, 0, PlayToSequence(source="main"))
    assert isinstance(events[-1], GameFinished)
    result = events[-1].result
    assert (result.status, result.reason, result.places) == (
        "finished",
        "main_pile_emptied",
        [1, 2],
    )
    assert result.scores == [0, -2]
    assert legal_actions(after, 0) == []
    assert refused(after, 1, EndTurn()) == "game_over"


def test_emptying_the_hand_mid_turn_draws_four_more() -> None:
    state = table([["AS"], ["3S"]], draw=["2C", "3D", "4H", "5S", "6C"])
    after, events = apply(state, 0, from_hand("AS"))
    assert kinds(events) == ["CardPlayed", "CardsDrawn"]
    assert events[1] == CardsDrawn(seat=0, cards=["2C", "3D", "4H", "5S"], reason="empty_hand")
    assert after.turn == 0
    assert after.draw == ("6C",)


def test_the_completed_stock_is_reshuffled_into_a_new_draw_pile_when_the_draw_runs_out() -> None:
    stock = ["AC", "2C", "3C", "4C", "5C", "6C"]
    state = table([["AS"], ["3S"]], draw=["KD"], completed=stock)
    after, events = apply(state, 0, from_hand("AS"))
    assert kinds(events) == ["CardPlayed", "CardsDrawn", "StockReshuffled", "CardsDrawn"]
    reshuffled = events[2]
    assert isinstance(reshuffled, StockReshuffled)
    assert sorted(reshuffled.cards) == sorted(stock)
    assert reshuffled.cards == shuffled(stock, "s:1")
    assert len(after.hands[0]) == 4
    assert after.completed == ()
    assert len(after.draw) == 3


# Ending a turn ------------------------------------------------------------------------------


def test_a_matching_or_empty_slot_takes_a_discard_and_a_non_matching_one_refuses_it() -> None:
    state = table(
        [["7C", "7D", "8H"], ["3S"]], slots={(0, 0): (["7S"], 7), (0, 1): (["9S"], 9)}, draw=["2C"]
    )
    assert refused(state, 0, Discard(card="7C", slot=1)) == "slot_rank"
    after, events = apply(state, 0, Discard(card="7C", slot=0))
    assert kinds(events) == ["CardDiscarded", "TurnPassed", "CardsDrawn"]
    assert after.slots[0][0] == ("7S", "7C")
    assert after.turn == 1
    fresh, _ = apply(state, 0, Discard(card="8H", slot=2))
    assert fresh.slot_ranks[0][2] == 8


def test_a_joker_takes_the_slot_rank_or_the_rank_named_for_an_empty_slot() -> None:
    state = table([["X1", "X2", "5D"], ["3S"]], slots={(0, 0): (["7S"], 7)})
    after, events = apply(state, 0, Discard(card="X1", slot=0))
    assert events[0] == CardDiscarded(seat=0, card="X1", slot=0, rank=7)
    assert after.slots[0][0] == ("7S", "X1")
    assert refused(state, 0, Discard(card="X2", slot=1)) == "joker_rank"
    named, events = apply(state, 0, Discard(card="X2", slot=1, joker_rank=12))
    assert named.slot_ranks[0][1] == 12
    assert refused(state, 0, Discard(card="X2", slot=0, joker_rank=12)) == "joker_rank"


def test_under_the_bus_only_when_no_slot_fits_and_the_main_top_stays() -> None:
    full = {
        (0, s): ([r], v) for s, (r, v) in enumerate([("2C", 2), ("3C", 3), ("4C", 4), ("5C", 5)])
    }
    state = table([["9D", "2D"], ["3S"]], mains=[["KH", "QH"], ["2S"]], slots=full)
    assert refused(state, 0, UnderTheBus(card="2D")) == "fits_a_slot"
    after, events = apply(state, 0, UnderTheBus(card="9D"))
    assert kinds(events)[:2] == ["CardUnderTheBus", "TurnPassed"]
    assert after.mains[0] == ("KH", "QH", "9D")
    assert ab_view(after, 1).main_tops[0] == "KH"
    assert ab_view(after, 1).main_sizes[0] == 3
    assert after.slots == state.slots


def test_the_main_pile_top_never_goes_to_a_slot() -> None:
    state = table([["5D"], ["3S"]], mains=[["7H", "8H"], ["2S"]])
    assert refused(state, 0, Discard(card="7H", slot=0)) == "card_not_held"


def test_end_turn_only_with_an_empty_hand() -> None:
    state = table([["5D"], ["3S"]])
    assert refused(state, 0, EndTurn()) == "hand_not_empty"
    empty = table([[], ["3S"]])
    assert legal_actions(empty, 0)[-1] == EndTurn()
    after, events = apply(empty, 0, EndTurn())
    assert kinds(events)[:2] == ["TurnEnded", "TurnPassed"]
    assert after.turn == 1


def test_the_next_player_refills_to_four_at_the_start_of_the_turn() -> None:
    state = table([["5D"], ["3S"]], draw=["2C", "3D", "4H", "5S"])
    after, events = apply(state, 0, Discard(card="5D", slot=0))
    assert events[-1] == CardsDrawn(seat=1, cards=["2C", "3D", "4H"], reason="refill")
    assert len(after.hands[1]) == 4


def test_a_short_draw_pile_gives_what_it_has() -> None:
    state = table([["5D"], ["3S"]], draw=["2C"])
    after, _ = apply(state, 0, Discard(card="5D", slot=0))
    assert after.hands[1] == ("3S", "2C")


def test_only_the_seat_whose_turn_it_is_may_act() -> None:
    state = table([["5D"], ["3S"]])
    assert refused(state, 1, Discard(card="3S", slot=0)) == "not_your_turn"
    assert legal_actions(state, 1) == []


@pytest.mark.parametrize("source", ["hand", "main"])
def test_only_a_play_from_a_slot_names_a_slot(source: str) -> None:
    state = table([["AS"], ["6D"]], mains=[["AH", "9H"], ["KS"]], slots={(0, 1): (["AC"], 1)})
    card = "AS" if source == "hand" else None
    action = PlayToSequence(source=source, card=card, slot=1)  # type: ignore[arg-type]
    assert refused(state, 0, action) == "slot_not_allowed"
    _, events = apply(state, 0, PlayToSequence(source=source, card=card))  # type: ignore[arg-type]
    assert events[0].slot is None  # type: ignore[attr-defined]


# Ending the game ----------------------------------------------------------------------------


def test_a_full_round_without_a_move_nothing_to_draw_and_no_move_possible_is_a_draw() -> None:
    state = table([["5D"], ["6D"]], mains=[["9S", "9H"], ["KS"]])
    state, events = apply(state, 0, Discard(card="5D", slot=0))
    assert not isinstance(events[-1], GameFinished)
    state, events = apply(state, 1, Discard(card="6D", slot=0))
    assert isinstance(events[-1], GameFinished)
    result = events[-1].result
    assert (result.status, result.reason) == ("draw", "no_move_possible")
    assert result.places == [2, 1]


@pytest.mark.parametrize(
    ("hands", "mains", "sequences"),
    [
        ([["5D", "AS"], ["6D"]], [["9S", "9H"], ["KS"]], []),
        ([["5D"], ["6D"]], [["9S", "9H"], ["AS", "KS"]], []),
        ([["5D", "4C"], ["6D"]], [["9S", "9H"], ["KS"]], [["AH", "2H", "3D"]]),
        ([["5D", "X1"], ["6D"]], [["9S", "9H"], ["KS"]], []),
    ],
    ids=["an-ace-in-hand", "an-ace-on-a-main-pile", "a-card-a-sequence-needs", "a-joker"],
)
def test_a_full_round_without_a_move_is_no_draw_while_a_seat_could_play_onto_a_sequence(
    hands: list[list[str]], mains: list[list[str]], sequences: list[list[str]]
) -> None:
    state = table(hands, mains=mains, sequences=sequences)
    state, _ = apply(state, 0, Discard(card="5D", slot=0))
    state, events = apply(state, 1, Discard(card="6D", slot=0))
    assert state.quiet_turns == 2
    assert not any(isinstance(event, GameFinished) for event in events)
    assert state.result is None


def test_a_round_of_seats_that_could_play_but_do_not_is_bounded_by_the_turn_cap() -> None:
    state = table([["5D", "AS", "7C"], ["6D", "8C"]], mains=[["9S", "9H"], ["KS"]], max_turns=4)
    for seat, card, slot in ((0, "5D", 0), (1, "6D", 0), (0, "7C", 1), (1, "8C", 1)):
        state, events = apply(state, seat, Discard(card=card, slot=slot))
    assert isinstance(events[-1], GameFinished)
    assert (events[-1].result.status, events[-1].result.reason) == ("draw", "turn_cap")


def test_a_sequence_play_resets_the_quiet_round() -> None:
    state = table([["5D", "AS"], ["6D"]], mains=[["9S", "9H"], ["KS"]])
    state, _ = apply(state, 0, from_hand("AS"))
    state, events = apply(state, 0, Discard(card="5D", slot=0))
    assert state.quiet_turns == 0
    state, events = apply(state, 1, Discard(card="6D", slot=0))
    assert not isinstance(events[-1], GameFinished)


def test_the_turn_cap_ends_the_game_as_a_draw() -> None:
    state = table([["5D"], ["6D"]], draw=["2C"] * 10, max_turns=1)
    _, events = apply(state, 0, Discard(card="5D", slot=0))
    assert isinstance(events[-1], GameFinished)
    assert (events[-1].result.status, events[-1].result.reason) == ("draw", "turn_cap")


# Rulesets, deal, hidden information ---------------------------------------------------------


def test_the_deal_gives_ten_main_cards_four_in_hand_and_the_rest_to_draw() -> None:
    started = deal(RULES, 4, seed=1)
    assert [len(m) for m in started.mains] == [10] * 4
    assert [len(h) for h in started.hands] == [4] * 4
    assert len(started.draw) == 108 - 56
    cards = [c for z in (*started.mains, *started.hands, started.draw) for c in z]
    assert sorted(cards) == sorted(standard_deck(2, 4))


@pytest.mark.parametrize(
    ("changes", "players", "field"),
    [
        ({}, 5, "players"),
        ({"main_pile": 0}, 2, "main_pile"),
        ({"decks": 1, "main_pile": 30}, 4, "decks"),
    ],
)
def test_a_ruleset_that_cannot_be_played_is_refused_naming_the_field(
    changes: dict[str, Any], players: int, field: str
) -> None:
    with pytest.raises(InvalidRuleset) as caught:
        validate(msgspec.structs.replace(RULES, **changes), players)
    assert caught.value.field == field


def test_the_view_shows_the_own_hand_and_everything_public_but_no_hidden_card() -> None:
    state = table(
        [["5D", "6D"], ["KC"]],
        mains=[["AH", "QS"], ["2S", "JD"]],
        draw=["TC"],
        slots={(1, 0): (["4H"], 4)},
    )
    view = ab_view(state, 0)
    assert view.hand == ["5D", "6D"]
    assert view.main_tops == ["AH", "2S"]
    assert view.slots[1][0] == ["4H"]
    text = msgspec.json.encode(view).decode()
    for secret in ("KC", "QS", "JD", "TC"):
        assert secret not in text


def test_redacted_events_hide_hands_face_down_cards_the_draw_order_and_the_shuffle_seed() -> None:
    started = deal(RULES, 2, seed=5)
    mine = redact(started, 0)
    assert isinstance(mine, GameStarted)
    assert mine.hands[0] == started.hands[0]
    assert mine.hands[1] == [HIDDEN] * 4
    assert [m[0] for m in mine.mains] == [m[0] for m in started.mains]
    assert {c for m in mine.mains for c in m[1:]} == {HIDDEN}
    assert set(mine.draw) == {HIDDEN}
    assert mine.shuffle_seed == ""
    reshuffle = StockReshuffled(cards=["AC", "2C"], number=1)
    assert redact(reshuffle, 0) == StockReshuffled(cards=[HIDDEN] * 2, number=1)
    assert redact(CardsDrawn(seat=1, cards=["AC"], reason="refill"), 0) == CardsDrawn(
        seat=1, cards=[HIDDEN], reason="refill"
    )


def test_a_card_under_the_bus_is_seen_by_its_owner_only() -> None:
    under = CardUnderTheBus(seat=1, card="7H")
    assert redact(under, 1) == under
    assert redact(under, 0) == CardUnderTheBus(seat=1, card=HIDDEN)
    assert redact(under, None) == CardUnderTheBus(seat=1, card=HIDDEN)
