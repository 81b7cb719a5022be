"""Shithead rules read from the original texts (docs/rules/shithead.md): seed 000 (Hungarian,
holland kocsma) and seed 004 (Swedish), each rule a scenario named after it."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shared.errors import InvalidRuleset
from shared.games.cards import HIDDEN
from shared.games.shithead.legal import default_action, legal_actions
from shared.games.shithead.messages import (
    CardsDrawn,
    CardStacked,
    DeckCardTurned,
    DirectionReversed,
    PickUp,
    PileBurned,
    PilePickedUp,
    PlayerOut,
    PlayFaceDown,
    PlayFromDeck,
    PlayStarted,
    Ready,
    SeatsSkipped,
    Stack,
    Swap,
    TurnPassed,
)
from shared.games.shithead.rules import PRESETS, validate
from shared.games.shithead.view import redact
from shared.messages.common import GameFinished
from tests.support.shithead import all_ready, apply, kinds, play, refused, swap_phase, table

CLASSIC = PRESETS["classic"]
HOLLAND = PRESETS["holland-kocsma"]
SWEDISH = PRESETS["swedish"]
DOWN = [["AC"], ["AD"]]
"""Face-down cards for two seats: under holland-kocsma a seat without any is out."""


# Seed 000, the deck play (lecsapás) -------------------------------------------------------


@pytest.mark.parametrize(
    ("pile", "turned", "reason"),
    [(["KH"], "TS", "burn_rank"), (["7C", "7D", "7H"], "7S", "run")],
    ids=["a-ten", "the-fourth-of-a-kind"],
)
def test_lecsapas_a_deck_card_that_burns_does_not_pick_up_and_the_opponent_plays_next(
    pile: list[str], turned: str, reason: str
) -> None:
    state = table([["3C"], ["5D"]], pile=pile, deck=[turned, "4D"], face_down=DOWN, ruleset=HOLLAND)
    after, events = apply(state, 0, PlayFromDeck())
    assert events[0] == DeckCardTurned(seat=0, card=turned, playable=True, blind=False)
    assert events[1] == PileBurned(seat=0, reason=reason, count=len(pile) + 1)  # type: ignore[arg-type]
    assert events[-1] == TurnPassed(seat=1)
    assert (after.turn, after.pile, after.hands[0]) == (1, (), ("3C",))


def test_lecsapas_a_blind_deck_card_that_burns_passes_the_turn_as_well() -> None:
    state = table([["KC"], ["5D"]], pile=["9H"], deck=["TS"], face_down=DOWN, ruleset=HOLLAND)
    after, events = apply(state, 0, PlayFromDeck())
    assert events[0] == DeckCardTurned(seat=0, card="TS", playable=True, blind=True)
    assert kinds(events) == ["DeckCardTurned", "PileBurned", "TurnPassed"]
    assert after.turn == 1


def test_deck_burn_plays_again_is_the_other_reading_the_burner_goes_again() -> None:
    state = table(
        [["3C"], ["5D"]],
        pile=["KH"],
        deck=["TS"],
        face_down=DOWN,
        ruleset=HOLLAND,
        deck_burn_plays_again=True,
    )
    after, events = apply(state, 0, PlayFromDeck())
    assert kinds(events) == ["DeckCardTurned", "PileBurned"]
    assert after.turn == 0


def test_lecsapas_is_an_option_beside_the_pickup_that_a_player_with_no_play_owes() -> None:
    state = table([["3C"], ["5D"]], pile=["KH"], deck=["4D"], gamble_from_deck=True)
    legal = legal_actions(state, 0)
    assert PlayFromDeck() in legal
    assert PickUp() in legal
    assert default_action(state, 0) == PickUp()
    _, events = apply(state, 0, PickUp())
    assert events[0] == PilePickedUp(seat=0, cards=["KH"], reason="no_play")


def test_a_burn_from_the_hand_or_face_down_still_gives_the_burner_another_turn() -> None:
    from_hand = table([["TC", "4H"], ["3D"]], pile=["KH"], face_down=DOWN, ruleset=HOLLAND)
    assert apply(from_hand, 0, play("TC"))[0].turn == 0
    blind = table([[], ["3D"]], face_down=[["TC", "4H"], ["5S"]], pile=["KH"], ruleset=HOLLAND)
    assert apply(blind, 0, PlayFaceDown(index=0))[0].turn == 0


# Seed 004, "10 not on court cards" --------------------------------------------------------


@pytest.mark.parametrize("court", ["JH", "QH", "KH"])
def test_ten_not_on_court_cards_refuses_a_ten_on_a_jack_queen_or_king(court: str) -> None:
    state = table([["TC"], ["3D"]], pile=[court], ten_not_on_faces=True)
    assert refused(state, 0, play("TC")) == "burn_not_on_faces"
    assert play("TC") not in legal_actions(state, 0)


def test_ten_not_on_court_cards_lets_a_ten_go_on_an_ace_which_is_no_court_card() -> None:
    state = table([["TC", "4H"], ["3D"]], pile=["AH"], ten_not_on_faces=True)
    assert play("TC") in legal_actions(state, 0)
    after, events = apply(state, 0, play("TC"))
    assert events[-1] == PileBurned(seat=0, reason="burn_rank", count=2)
    assert after.turn == 0


# Seed 004, who starts -----------------------------------------------------------------------


def test_swedish_start_a_face_up_three_leads_before_a_three_in_a_hand() -> None:
    state = swap_phase([["3C", "9D"], ["KC"], ["QC"]], [["7D"], ["8D"], ["3S"]], ruleset=SWEDISH)
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=2, rule="face_up_first", rank="3", zone="face_up")
    assert legal_actions(after, 2) == [play("3S")]
    assert refused(after, 2, play("QC")) == "opening_card"


def test_swedish_start_without_a_face_up_three_the_first_three_in_a_hand_leads() -> None:
    state = swap_phase([["KD"], ["3C", "9D"], ["3H"]], [["7D"], ["8D"], ["4S"]], ruleset=SWEDISH)
    _, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=1, rule="face_up_first", rank="3", zone="hand")


def test_swedish_start_without_a_three_the_fours_decide_face_up_first() -> None:
    state = swap_phase([["4C", "9D"], ["KC"]], [["7D"], ["4S"]], ruleset=SWEDISH)
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=1, rule="face_up_first", rank="4", zone="face_up")
    _, played = apply(after, 1, play("4S"))
    assert played[0].source == "face_up"  # type: ignore[attr-defined]


def test_the_classic_start_prefers_the_hand_and_the_earliest_seat_where_swedish_does_not() -> None:
    hands, face_up = [["3C", "9D"], ["KC"]], [["7D"], ["3S"]]
    _, events = all_ready(swap_phase(hands, face_up))
    assert events[-1] == PlayStarted(seat=0, rule="lowest_card", rank="3", zone="hand")
    _, events = all_ready(swap_phase(hands, face_up, ruleset=SWEDISH))
    assert events[-1] == PlayStarted(seat=1, rule="face_up_first", rank="3", zone="face_up")


# Seed 004, stacking equal face-up cards during the swap ------------------------------------


def test_stacking_puts_a_hand_card_onto_a_face_up_card_of_its_rank_and_draws_one_back() -> None:
    state = swap_phase([["9C", "4D", "KH"], ["5C"]], [["9H", "3S"], ["6D"]], ruleset=SWEDISH)
    state = msgspec.structs.replace(state, deck=("QD", "8S"))
    assert Stack(hand_card="9C") in legal_actions(state, 0)
    after, events = apply(state, 0, Stack(hand_card="9C"))
    assert events == [CardStacked(seat=0, card="9C"), CardsDrawn(seat=0, cards=["QD"])]
    assert after.face_up[0] == ("9H", "3S", "9C")
    assert sorted(after.hands[0]) == ["4D", "KH", "QD"]
    assert after.deck == ("8S",)
    assert redact(events[1], 1) == CardsDrawn(seat=0, cards=[HIDDEN])


def test_stacked_face_up_cards_are_played_together_once_their_turn_comes() -> None:
    state = table([[], ["5D"]], face_up=[["9H", "9C", "3S"], ["6D"]], pile=["7C"], ruleset=SWEDISH)
    after, events = apply(state, 0, play("9H", "9C"))
    assert events[0].source == "face_up"  # type: ignore[attr-defined]
    assert after.face_up[0] == ("3S",)


def test_stacking_needs_the_ruleset_a_held_card_and_a_face_up_card_of_its_rank() -> None:
    hands, face_up = [["9C", "4D"], ["5C"]], [["9H"], ["6D"]]
    classic = swap_phase(hands, face_up)
    assert not any(isinstance(a, Stack) for a in legal_actions(classic, 0))
    assert refused(classic, 0, Stack(hand_card="9C")) == "stack_not_allowed"
    swedish = swap_phase(hands, face_up, ruleset=SWEDISH)
    assert refused(swedish, 0, Stack(hand_card="4D")) == "stack_needs_rank"
    assert refused(swedish, 0, Stack(hand_card="9S")) == "card_not_held"
    ready, _ = apply(swedish, 0, Ready())
    assert refused(ready, 0, Stack(hand_card="9C")) == "already_ready"


def test_a_stacked_face_up_card_stays_face_up() -> None:
    state = swap_phase([["9C", "4D"], ["5C"]], [["9H", "3S"], ["6D"]], ruleset=SWEDISH)
    after, _ = apply(state, 0, Stack(hand_card="9C"))
    swaps = [a for a in legal_actions(after, 0) if isinstance(a, Swap)]
    assert swaps == [Swap(hand_card="4D", face_up_card="3S")]
    assert refused(after, 0, Swap(hand_card="4D", face_up_card="9C")) == "stacked_card"
    assert refused(after, 0, Swap(hand_card="4D", face_up_card="9H")) == "stacked_card"
    classic = swap_phase([["4D"], ["5C"]], [["9H", "9C"], ["6D"]])
    apply(classic, 0, Swap(hand_card="4D", face_up_card="9C"))


def test_stacking_with_an_empty_deck_draws_nothing() -> None:
    state = swap_phase([["9C", "4D"], ["5C"]], [["9H"], ["6D"]], ruleset=SWEDISH)
    _, events = apply(state, 0, Stack(hand_card="9C"))
    assert events == [CardStacked(seat=0, card="9C")]


# Seed 004, skipping and reversing by a rank -------------------------------------------------


def test_a_skip_card_skips_the_next_player() -> None:
    state = table([["8C", "KC"], ["9D"], ["9H"]], pile=["5H"], ruleset=SWEDISH)
    after, events = apply(state, 0, play("8C"))
    assert kinds(events) == ["CardsPlayed", "SeatsSkipped", "TurnPassed"]
    assert events[1] == SeatsSkipped(seats=[1])
    assert after.turn == 2


def test_each_skip_card_skips_one_more_and_the_count_goes_round_the_table() -> None:
    three = table([["8C", "8D", "KC"], ["9D"], ["9H"]], pile=["5H"], ruleset=SWEDISH)
    after, events = apply(three, 0, play("8C", "8D"))
    assert events[1] == SeatsSkipped(seats=[1, 2])
    assert after.turn == 0
    two = table([["8C", "KC"], ["9D"]], pile=["5H"], ruleset=SWEDISH)
    assert apply(two, 0, play("8C"))[0].turn == 0


def test_a_skip_passes_over_seats_that_are_out() -> None:
    state = table([["8C", "KC"], [], ["9D"], ["9H"]], pile=["5H"], ruleset=SWEDISH)
    state = msgspec.structs.replace(state, out=(1,))
    after, events = apply(state, 0, play("8C"))
    assert events[1] == SeatsSkipped(seats=[2])
    assert after.turn == 3


def test_a_skip_card_that_burns_gives_the_burner_another_turn_and_skips_nobody() -> None:
    state = table([["8C", "KC"], ["9D"], ["9H"]], pile=["8D", "8H", "8S"], ruleset=SWEDISH)
    after, events = apply(state, 0, play("8C"))
    assert kinds(events) == ["CardsPlayed", "PileBurned"]
    assert after.turn == 0


def test_a_reverse_card_reverses_the_direction_of_play() -> None:
    state = table([["JC", "KC"], ["QD"], ["QH"]], pile=["5H"], ruleset=SWEDISH)
    after, events = apply(state, 0, play("JC"))
    assert kinds(events) == ["CardsPlayed", "DirectionReversed", "TurnPassed"]
    assert (after.direction, after.turn) == (-1, 2)
    after, _ = apply(after, 2, play("QH"))
    assert after.turn == 1


def test_two_reverse_cards_played_together_leave_the_direction_as_it_was() -> None:
    state = table([["JC", "JD", "KC"], ["QD"], ["QH"]], pile=["5H"], ruleset=SWEDISH)
    after, events = apply(state, 0, play("JC", "JD"))
    assert events[1:3] == [DirectionReversed(direction=-1), DirectionReversed(direction=1)]
    assert (after.direction, after.turn) == (1, 1)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"skip": "T"}, "skip"),
        ({"reverse": "8"}, "reverse"),
        ({"reverse": "Z"}, "reverse"),
        ({"goes_out": "face_down_gone", "face_down": 0}, "goes_out"),
    ],
)
def test_a_swedish_or_literal_ruleset_that_contradicts_itself_is_refused_naming_the_field(
    changes: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRuleset) as caught:
        validate(msgspec.structs.replace(SWEDISH, **changes), 3)
    assert caught.value.field == field


# Seed 000, the winner ---------------------------------------------------------------------


def test_the_first_player_whose_face_down_cards_are_all_played_wins() -> None:
    for ruleset in (CLASSIC, HOLLAND):
        state = table([[], ["5D", "6D"], ["7D"]], face_down=[["KS"], ["4C"], ["4H"]], pile=["9H"])
        state = msgspec.structs.replace(state, ruleset=ruleset)
        after, events = apply(state, 0, PlayFaceDown(index=0))
        assert PlayerOut(seat=0, place=1) in events
        assert after.out == (0,)


def test_face_down_gone_a_last_face_down_card_that_cannot_be_played_still_wins() -> None:
    state = table(
        [[], ["5D", "6D"], ["7D"]], face_down=[["3S"], ["4C"], ["4H"]], pile=["9H"], ruleset=HOLLAND
    )
    after, events = apply(state, 0, PlayFaceDown(index=0))
    assert kinds(events) == ["FaceDownRevealed", "PilePickedUp", "PlayerOut", "TurnPassed"]
    assert events[1] == PilePickedUp(seat=0, cards=["9H", "3S"], reason="failed_reveal")
    assert events[2] == PlayerOut(seat=0, place=1)
    assert (after.out, after.turn, after.hands[0]) == ((0,), 1, ("9H", "3S"))
    assert legal_actions(after, 0) == []


def test_face_down_gone_ends_a_two_player_game_with_the_winner_holding_the_pile() -> None:
    state = table([[], ["5D"]], face_down=[["3S"], ["4C"]], pile=["9H"], ruleset=HOLLAND)
    _, events = apply(state, 0, PlayFaceDown(index=0))
    assert isinstance(events[-1], GameFinished)
    assert events[-1].result.places == [1, 2]
    assert events[-1].result.scores == [2, 2]


def test_no_cards_a_last_face_down_card_that_cannot_be_played_is_taken_up_and_play_goes_on() -> (
    None
):
    state = table([[], ["5D", "6D"]], face_down=[["3S"], ["4C"]], pile=["9H"])
    after, events = apply(state, 0, PlayFaceDown(index=0))
    assert kinds(events) == ["FaceDownRevealed", "PilePickedUp", "TurnPassed"]
    assert after.out == ()
    assert after.hands[0] == ("9H", "3S")


# What the pages left open -----------------------------------------------------------------


def test_holland_kocsma_can_open_with_the_lowering_five() -> None:
    state = swap_phase([["5C", "9D"], ["6C", "7H"]], [["KD"], ["8D"]], ruleset=HOLLAND)
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=0, rule="lowest_card", rank="5", zone="hand")
    after, _ = apply(after, 0, play("5C"))
    assert refused(after, 1, play("6C")) == "must_be_equal_or_lower"


def test_lower_is_not_strict_an_equal_card_goes_on_the_lower_card() -> None:
    state = table([["5C", "KD"], ["5D", "6D"]], pile=["9H"], face_down=DOWN, ruleset=HOLLAND)
    after, _ = apply(state, 0, play("5C"))
    assert play("5D") in legal_actions(after, 1)
    assert play("6D") not in legal_actions(after, 1)


def test_the_transparent_card_itself_follows_the_normal_rule() -> None:
    state = table([["8C", "KC"], ["3D"]], pile=["9H"], transparent="8")
    assert refused(state, 0, play("8C")) == "must_be_equal_or_higher"
    on_a_seven = table([["8C", "KC"], ["3D"]], pile=["7H"], transparent="8")
    assert play("8C") in legal_actions(on_a_seven, 0)


def test_no_bluff_is_possible_during_the_opening_play() -> None:
    state = swap_phase([["3C", "9D"], ["6C", "7H"]], [["KD"], ["8D"]], ruleset=HOLLAND)
    state = msgspec.structs.replace(state, deck=("4S",), pile=())
    after, _ = all_ready(state)
    assert legal_actions(after, 0) == [play("3C")]
    assert refused(after, 0, PlayFromDeck()) == "opening_card"
    assert refused(after, 0, PickUp()) == "opening_card"


def test_the_presets_hold_the_original_texts() -> None:
    assert HOLLAND.goes_out == "face_down_gone"
    assert not HOLLAND.deck_burn_again
    assert CLASSIC.out_when_face_down_gone is False
    swedish = (SWEDISH.start, SWEDISH.stacking, SWEDISH.skip_rank, SWEDISH.reverse_rank)
    assert swedish == ("face_up_first", True, "8", "J")
    assert (SWEDISH.face_down, SWEDISH.face_up, SWEDISH.hand) == (3, 3, 3)
    assert (SWEDISH.reset, SWEDISH.burn, SWEDISH.burn_run, SWEDISH.end) == (
        "2",
        "T",
        4,
        "play_to_last",
    )
