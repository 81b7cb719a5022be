"""Shithead, rule by rule, on constructed tables."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shared.errors import InvalidRuleset
from shared.games.cards import HIDDEN
from shared.games.shithead.decide import deal
from shared.games.shithead.legal import legal_actions
from shared.games.shithead.messages import (
    CardsDrawn,
    CardsPlayed,
    DeckCardTurned,
    FaceDownRevealed,
    GameStarted,
    PickUp,
    PileBurned,
    PilePickedUp,
    PlayerOut,
    PlayFaceDown,
    PlayFromDeck,
    PlayStarted,
    Ready,
    Swap,
)
from shared.games.shithead.rules import PRESETS, validate
from shared.games.shithead.state import to_move, zone_of
from shared.games.shithead.view import redact
from shared.games.shithead.view import view as sh_view
from shared.messages.common import GameFinished
from tests.support.shithead import (
    CLASSIC,
    all_ready,
    apply,
    kinds,
    play,
    refused,
    swap_phase,
    table,
)

HOLLAND = PRESETS["holland-kocsma"]


# Equal or higher, multiples --------------------------------------------------------------


def test_a_card_must_be_equal_to_or_higher_than_the_top_of_the_pile() -> None:
    state = table([["6C", "7D", "9S"], ["3C"]], pile=["7H"])
    assert refused(state, 0, play("6C")) == "must_be_equal_or_higher"
    assert legal_actions(state, 0) == [play("7D"), play("9S")]
    after, events = apply(state, 0, play("7D"))
    assert kinds(events) == ["CardsPlayed", "TurnPassed"]
    assert after.pile == ("7H", "7D")
    assert after.turn == 1


def test_a_play_holds_cards_of_one_rank_only() -> None:
    state = table([["7D", "8D", "3C"], ["3S"]])
    assert refused(state, 0, play("7D", "8D")) == "one_rank"


@pytest.mark.parametrize(
    ("multiples", "count", "allowed"),
    [
        ("any", 2, True),
        ("single", 2, False),
        ("single", 1, True),
        ("three_or_more", 2, False),
        ("three_or_more", 3, True),
        ("three_or_more", 1, True),
    ],
)
def test_the_multiples_rule_limits_how_many_cards_of_a_rank_go_together(
    multiples: str, count: int, allowed: bool
) -> None:
    state = table([["9C", "9D", "9H", "4S"], ["3S"]], multiples=multiples)
    action = play(*["9C", "9D", "9H"][:count])
    if allowed:
        assert action in legal_actions(state, 0)
        apply(state, 0, action)
    else:
        assert action not in legal_actions(state, 0)
        assert refused(state, 0, action) == "multiples"


def test_a_card_not_held_is_refused() -> None:
    state = table([["9C"], ["3S"]])
    assert refused(state, 0, play("9D")) == "card_not_held"
    assert refused(state, 0, play("9C", "9C")) == "card_not_held"


def test_only_the_seat_whose_turn_it_is_may_play() -> None:
    state = table([["9C"], ["9D"]])
    assert refused(state, 1, play("9D")) == "not_your_turn"
    assert legal_actions(state, 1) == []


# Specials --------------------------------------------------------------------------------


def test_a_two_goes_on_anything_and_anything_may_follow_it() -> None:
    state = table([["2C", "4H"], ["3D", "5S"]], pile=["KH"])
    after, _ = apply(state, 0, play("2C"))
    after, _ = apply(after, 1, play("3D"))
    assert after.pile == ("KH", "2C", "3D")


def test_ten_burns_the_pile_and_the_same_player_plays_again() -> None:
    state = table([["TC", "4H", "5H"], ["3D"]], pile=["KH", "QS"])
    after, events = apply(state, 0, play("TC"))
    assert kinds(events) == ["CardsPlayed", "PileBurned"]
    assert events[1] == PileBurned(seat=0, reason="burn_rank", count=3)
    assert after.pile == ()
    assert after.burnt == ("KH", "QS", "TC")
    assert after.turn == 0
    after, _ = apply(after, 0, play("4H"))
    assert after.turn == 1


def test_ten_not_on_faces_refuses_a_ten_on_a_face_card() -> None:
    state = table([["TC", "KD"], ["3D"]], pile=["QH"], ten_not_on_faces=True)
    assert refused(state, 0, play("TC")) == "burn_not_on_faces"
    assert play("TC") in legal_actions(table([["TC"], ["3D"]], pile=["9H"]), 0)


def test_four_of_a_kind_in_one_play_burns_and_the_player_plays_again() -> None:
    state = table([["7C", "7D", "7H", "7S", "3C"], ["3D"]], pile=["5H"])
    after, events = apply(state, 0, play("7C", "7D", "7H", "7S"))
    assert events[-1] == PileBurned(seat=0, reason="run", count=5)
    assert after.turn == 0
    assert after.pile == ()


def test_four_of_a_kind_across_turns_burns_and_the_completer_plays_again() -> None:
    state = table([["7H", "9C"], ["7S", "8C"]], pile=["7C", "7D"])
    after, _ = apply(state, 0, play("7H"))
    assert after.turn == 1
    after, events = apply(after, 1, play("7S"))
    assert kinds(events) == ["CardsPlayed", "PileBurned"]
    assert after.turn == 1
    assert len(after.burnt) == 4


def test_no_run_burns_when_burn_run_is_off() -> None:
    state = table([["7H", "9C"], ["7S"]], pile=["7C", "7D", "7S"], burn_run=None)
    _, events = apply(state, 0, play("7H"))
    assert kinds(events) == ["CardsPlayed", "TurnPassed"]


def test_the_lower_card_goes_on_anything_and_the_next_must_be_equal_or_lower() -> None:
    state = table([["5C", "9D"], ["6D", "4D", "2C", "TC", "5S"]], pile=["KH"], lower="5")
    after, _ = apply(state, 0, play("5C"))
    assert refused(after, 1, play("6D")) == "must_be_equal_or_lower"
    for allowed in ("4D", "5S", "2C", "TC"):
        apply(after, 1, play(allowed))


def test_the_lower_card_follows_the_normal_rule_when_the_toggle_is_off() -> None:
    state = table([["5C", "9D"], ["4D"]], pile=["KH"], lower="5", lower_on_anything=False)
    assert refused(state, 0, play("5C")) == "must_be_equal_or_higher"
    on_a_three = table(
        [["5C", "KC"], ["6D", "4D"]], pile=["3H"], lower="5", lower_on_anything=False
    )
    after, _ = apply(on_a_three, 0, play("5C"))
    assert refused(after, 1, play("6D")) == "must_be_equal_or_lower"


def test_the_transparent_card_lets_the_next_card_compare_with_the_card_under_it() -> None:
    state = table([["8C", "KC"], ["6D", "4D"]], pile=["5H"], transparent="8")
    after, _ = apply(state, 0, play("8C"))
    apply(after, 1, play("6D"))
    assert refused(after, 1, play("4D")) == "must_be_equal_or_higher"


def test_a_joker_is_wild_and_can_reverse_the_direction() -> None:
    state = table([["X1", "4C"], ["3D"], ["3H"]], pile=["AH"], jokers=2, joker_reverses=True)
    after, events = apply(state, 0, play("X1"))
    assert kinds(events) == ["CardsPlayed", "DirectionReversed", "TurnPassed"]
    assert (after.direction, after.turn) == (-1, 2)
    apply(after, 2, play("3H"))


# Drawing, picking up, gambling -----------------------------------------------------------


def test_a_player_draws_back_up_to_the_hand_size_after_playing_from_the_hand() -> None:
    state = table([["9C", "9D", "4H"], ["3D"]], deck=["KC", "2D", "5S"])
    after, events = apply(state, 0, play("9C", "9D"))
    assert events[1] == CardsDrawn(seat=0, cards=["KC", "2D"])
    assert after.hands[0] == ("4H", "KC", "2D")
    assert after.deck == ("5S",)


def test_a_player_who_cannot_play_must_pick_up_the_pile() -> None:
    state = table([["3C", "4C"], ["5D"]], pile=["9H", "KH"])
    assert legal_actions(state, 0) == [PickUp()]
    after, events = apply(state, 0, PickUp())
    assert events[0] == PilePickedUp(seat=0, cards=["9H", "KH"], reason="no_play")
    assert sorted(after.hands[0]) == ["3C", "4C", "9H", "KH"]
    assert after.pile == ()
    assert after.turn == 1


def test_picking_up_by_choice_needs_voluntary_pickup() -> None:
    state = table([["KC"], ["5D"]], pile=["9H"])
    assert refused(state, 0, PickUp()) == "must_play"
    assert refused(table([["KC"], ["5D"]]), 0, PickUp()) == "empty_pile"
    voluntary = table([["KC"], ["5D"]], pile=["9H"], voluntary_pickup=True)
    _, events = apply(voluntary, 0, PickUp())
    assert events[0] == PilePickedUp(seat=0, cards=["9H"], reason="chosen")


def test_the_gamble_plays_a_playable_deck_card_and_play_goes_on() -> None:
    state = table([["3C"], ["5D"]], pile=["KH"], deck=["AS", "4D"], gamble_from_deck=True)
    assert PlayFromDeck() in legal_actions(state, 0)
    after, events = apply(state, 0, PlayFromDeck())
    assert events[0] == DeckCardTurned(seat=0, card="AS", playable=True, blind=False)
    assert after.pile == ("KH", "AS")
    assert after.turn == 1


def test_the_gamble_with_an_unplayable_card_picks_up_the_pile_and_that_card() -> None:
    state = table([["3C"], ["5D"]], pile=["KH"], deck=["4D", "AS"], gamble_from_deck=True)
    after, events = apply(state, 0, PlayFromDeck())
    assert kinds(events) == ["DeckCardTurned", "PilePickedUp", "TurnPassed"]
    assert events[1] == PilePickedUp(seat=0, cards=["KH", "4D"], reason="failed_gamble")
    assert sorted(after.hands[0]) == ["3C", "4D", "KH"]
    assert after.deck == ("AS",)


def test_the_gamble_is_only_for_a_player_who_cannot_play_unless_blind_play_is_on() -> None:
    able = table([["KC"], ["5D"]], pile=["9H"], deck=["4D"], gamble_from_deck=True)
    assert refused(able, 0, PlayFromDeck()) == "deck_play_not_allowed"
    blind = msgspec.structs.replace(able, ruleset=HOLLAND)
    _, events = apply(blind, 0, PlayFromDeck())
    assert events[0] == DeckCardTurned(seat=0, card="4D", playable=False, blind=True)


# Face-up and face-down -------------------------------------------------------------------


def test_face_up_cards_are_refused_while_the_hand_has_cards() -> None:
    state = table([["3C"], ["5D"]], face_up=[["9H"], []], deck=[])
    assert refused(state, 0, play("9H")) == "face_up_too_early"


def test_face_up_cards_are_refused_while_the_deck_has_cards() -> None:
    state = table([[], ["5D"]], face_up=[["9H"], ["4C"]], deck=["KC"])
    assert refused(state, 0, play("9H")) == "face_up_too_early"


def test_face_up_cards_are_played_once_the_hand_and_deck_are_empty() -> None:
    state = table([[], ["5D"]], face_up=[["9H", "9C"], ["4C"]], face_down=[["3S"], ["3D"]])
    assert legal_actions(state, 0) == [play("9C"), play("9C", "9H")]
    after, events = apply(state, 0, play("9H"))
    assert events[0] == CardsPlayed(seat=0, cards=["9H"], source="face_up")
    assert after.face_up[0] == ("9C",)


def test_face_down_cards_are_turned_one_at_a_time_and_played_when_they_may_be() -> None:
    state = table([[], ["5D"]], face_down=[["KS", "3C"], ["4D"]], pile=["9H"])
    assert legal_actions(state, 0) == [PlayFaceDown(index=0), PlayFaceDown(index=1)]
    assert refused(state, 0, play("KS")) == "face_down_blind"
    after, events = apply(state, 0, PlayFaceDown(index=0))
    assert events[0] == FaceDownRevealed(seat=0, index=0, card="KS", playable=True)
    assert after.pile == ("9H", "KS")
    assert after.face_down[0] == ("3C",)


def test_a_failed_face_down_card_is_picked_up_with_the_pile_and_the_hand_comes_first_again() -> (
    None
):
    state = table([[], ["5D"]], face_down=[["3C", "KD"], ["4D"]], pile=["9H"])
    after, events = apply(state, 0, PlayFaceDown(index=0))
    assert kinds(events) == ["FaceDownRevealed", "PilePickedUp", "TurnPassed"]
    assert events[1] == PilePickedUp(seat=0, cards=["9H", "3C"], reason="failed_reveal")
    assert after.hands[0] == ("9H", "3C")
    assert after.face_down[0] == ("KD",)
    back = msgspec.structs.replace(after, turn=0)
    assert zone_of(back, 0) == "hand"
    assert refused(back, 0, PlayFaceDown(index=0)) == "face_down_too_early"


# Start -----------------------------------------------------------------------------------


def test_the_holder_of_the_lowest_plain_card_starts_and_must_play_it() -> None:
    state = swap_phase([["9C", "2D"], ["4H", "TS"], ["3S", "KD"]], [["5C"], ["6C"], ["7C"]])
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=2, rule="lowest_card", rank="3", zone="hand")
    assert after.turn == 2
    assert legal_actions(after, 2) == [play("3S")]
    assert refused(after, 2, play("KD")) == "opening_card"
    assert refused(after, 2, PickUp()) == "opening_card"


def test_twos_and_tens_do_not_count_as_low_and_ties_go_to_the_earliest_seat() -> None:
    state = swap_phase([["2C", "TD", "4S"], ["2S", "4H"]], [["9C"], ["9D"]])
    _, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=0, rule="lowest_card", rank="4", zone="hand")


def test_the_lowest_card_face_up_is_played_from_the_face_up_cards() -> None:
    state = swap_phase([["9C"], ["8H"]], [["3D"], ["KD"]])
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=0, rule="lowest_card", rank="3", zone="face_up")
    after, played = apply(after, 0, play("3D"))
    assert played[0] == CardsPlayed(seat=0, cards=["3D"], source="face_up")
    assert after.opening is None


def test_the_first_seat_rule_lets_seat_zero_play_anything() -> None:
    state = swap_phase([["9C"], ["3H"]], [["5D"], ["4D"]], start="first_seat")
    after, events = all_ready(state)
    assert events[-1] == PlayStarted(seat=0, rule="first_seat")
    assert play("9C") in legal_actions(after, 0)


def test_swaps_exchange_hand_and_face_up_cards_until_ready() -> None:
    state = swap_phase([["9C", "3D"], ["3H"]], [["AD"], ["4D"]])
    after, _ = apply(state, 0, Swap(hand_card="3D", face_up_card="AD"))
    assert sorted(after.hands[0]) == ["9C", "AD"]
    assert after.face_up[0] == ("3D",)
    assert refused(after, 0, Swap(hand_card="3D", face_up_card="AD")) == "card_not_held"
    assert refused(after, 0, play("9C")) == "swap_phase"
    after, _ = apply(after, 0, Ready())
    assert refused(after, 0, Swap(hand_card="9C", face_up_card="3D")) == "already_ready"
    assert to_move(after) == [1]


# End -------------------------------------------------------------------------------------


def test_three_players_finish_in_the_order_they_go_out_and_the_last_is_the_shithead() -> None:
    state = table([["9C"], ["9D", "4C"], ["KD", "KH"]], pile=["5H"])
    state, events = apply(state, 0, play("9C"))
    assert PlayerOut(seat=0, place=1) in events
    assert state.turn == 1
    state, _ = apply(state, 1, play("9D"))
    state, _ = apply(state, 2, play("KD"))
    state, _ = apply(state, 1, PickUp())
    state, _ = apply(state, 2, play("KH"))
    assert state.result is not None
    assert state.result.places == [1, 3, 2]
    assert state.result.status == "finished"


def test_four_players_finish_in_order_and_the_turn_skips_those_out() -> None:
    state = table([["9C"], ["9D"], ["9H"], ["3C", "3D"]], pile=["5H"])
    state, _ = apply(state, 0, play("9C"))
    state, _ = apply(state, 1, play("9D"))
    state, events = apply(state, 2, play("9H"))
    assert isinstance(events[-1], GameFinished)
    assert events[-1].result.places == [1, 2, 3, 4]
    assert to_move(state) == []


def test_the_first_player_out_ends_the_game_when_the_end_rule_says_so() -> None:
    state = table([["9C"], ["9D", "4C"], ["KD"]], pile=["5H"], end="stop_at_first_out")
    state, events = apply(state, 0, play("9C"))
    assert isinstance(events[-1], GameFinished)
    assert events[-1].result.places == [1, 3, 2]


def test_the_move_cap_ends_the_game_ranking_by_cards_left() -> None:
    state = table([["9C", "9D", "4C"], ["KD"], ["3S", "3H"]], max_moves=1)
    state, events = apply(state, 0, play("9C"))
    assert isinstance(events[-1], GameFinished)
    result = events[-1].result
    assert (result.status, result.reason) == ("capped", "the move cap was reached")
    assert result.places == [2, 1, 2]
    assert legal_actions(state, state.turn) == []
    assert refused(state, 1, play("KD")) == "game_over"


# Rulesets --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "players", "field"),
    [
        ({}, 6, "decks"),
        ({}, 11, "players"),
        ({"reset": "T"}, 2, "burn"),
        ({"lower": "2"}, 2, "lower"),
        ({"transparent": "Z"}, 2, "transparent"),
        ({"jokers": 1}, 2, "jokers"),
        ({"joker_reverses": True}, 2, "joker_reverses"),
        ({"burn": None, "ten_not_on_faces": True}, 2, "ten_not_on_faces"),
        ({"burn_run": 5}, 2, "burn_run"),
        ({"hand": 0}, 2, "hand"),
        ({"max_moves": 0}, 2, "max_moves"),
    ],
)
def test_a_ruleset_that_cannot_be_played_is_refused_naming_the_field(
    changes: dict[str, Any], players: int, field: str
) -> None:
    with pytest.raises(InvalidRuleset) as caught:
        validate(msgspec.structs.replace(CLASSIC, **changes), players)
    assert caught.value.field == field


def test_more_decks_admit_more_players() -> None:
    validate(msgspec.structs.replace(CLASSIC, decks=2), 10)
    validate(msgspec.structs.replace(HOLLAND, decks=2), 8)


def test_the_presets_are_classic_and_holland_kocsma_as_written() -> None:
    assert (CLASSIC.face_down, CLASSIC.face_up, CLASSIC.hand) == (3, 3, 3)
    assert (HOLLAND.face_down, HOLLAND.face_up, HOLLAND.hand) == (4, 4, 4)
    assert HOLLAND.lower == "5"
    assert HOLLAND.gamble_from_deck
    assert HOLLAND.voluntary_pickup
    assert HOLLAND.blind_deck_play
    assert (CLASSIC.reset, CLASSIC.burn, CLASSIC.burn_run) == ("2", "T", 4)


# Hidden information ----------------------------------------------------------------------


def test_the_view_shows_the_own_hand_and_only_counts_of_hidden_cards() -> None:
    state = table(
        [["9C", "4H"], ["KD"]],
        face_up=[["5S"], ["6S"]],
        face_down=[["AC"], ["AD", "AH"]],
        deck=["QC", "QD"],
        pile=["3H"],
    )
    view = sh_view(state, 0)
    assert view.hand == ["9C", "4H"]
    assert view.face_up == [["5S"], ["6S"]]
    assert (view.hand_sizes, view.face_down_sizes, view.deck_size) == ([2, 1], [1, 2], 2)
    text = msgspec.json.encode(view).decode()
    for secret in ("KD", "AC", "AD", "AH", "QC", "QD"):
        assert secret not in text


def test_redacted_events_hide_other_hands_face_down_cards_the_deck_and_others_draws() -> None:
    started = deal(CLASSIC, 3, seed=4)
    mine = redact(started, 1)
    assert isinstance(mine, GameStarted)
    assert mine.hands[1] == started.hands[1]
    assert mine.hands[0] == [HIDDEN] * 3
    assert all(card == HIDDEN for cards in mine.face_down for card in cards)
    assert set(mine.deck) == {HIDDEN}
    assert mine.face_up == started.face_up
    spectator = redact(started, None)
    assert isinstance(spectator, GameStarted)
    assert all(card == HIDDEN for cards in spectator.hands for card in cards)
    drawn = CardsDrawn(seat=0, cards=["KC"])
    assert redact(drawn, 0) == drawn
    assert redact(drawn, 2) == CardsDrawn(seat=0, cards=[HIDDEN])
