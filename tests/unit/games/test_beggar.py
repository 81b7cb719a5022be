"""Beggar-my-neighbour: the rules page's table, the choices it leaves open, random deals."""

from __future__ import annotations

from collections import Counter

import pytest

from shared.catalog import get_game
from shared.errors import IllegalAction, InvalidRuleset
from shared.games import beggar
from shared.games.cards import standard_deck
from shared.messages.common import Event, GameFinished, Result

SPEC = get_game("beggar")


def play_out(started: beggar.GameStarted) -> tuple[beggar.BeggarState, list[Event]]:
    """Plays a deal to its end through decide and evolve; returns the state and the events."""
    state = SPEC.evolve(None, started)
    log: list[Event] = [started]
    while not SPEC.is_over(state):
        (seat,) = SPEC.to_move(state)
        (action,) = SPEC.legal_actions(state, seat)
        for event in SPEC.decide(state, seat, action):
            state = SPEC.evolve(state, event)
            log.append(event)
    return state, log


def play_fixed(*packs: str, max_cards: int = 100_000) -> Result:
    """Returns the result of a fixed deal in the rules page's notation."""
    ruleset = beggar.BeggarRuleset(max_cards=max_cards)
    state, _ = play_out(beggar.fixed_deal([beggar.parse_deal(p) for p in packs], ruleset))
    assert state.result is not None
    return state.result


TABLE = [
    ("2", "3", 2, 1, "finished"),
    ("2A78Q", "3456K9J", 12, 1, "finished"),
    ("J24", "3JA", 12, 4, "finished"),
    ("J23", "4J5", 8, 3, "loop"),
    ("23J6", "K5J7", 16, 4, "loop"),
    ("-" * 26, "----------AAAAKKKKQQQQJJJJ", 40, 4, "finished"),
    ("-A-A-K-K-Q-Q-J-J----------", "----------J-J-Q-Q-K-K-A-A-", 151, 21, "finished"),
    ("2A", "34567", 7, 1, "finished"),
]


@pytest.mark.parametrize(("a", "b", "cards", "tricks", "status"), TABLE)
def test_the_rules_page_table_counts_cards_tricks_and_status(
    a: str, b: str, cards: int, tricks: int, status: str
) -> None:
    result = play_fixed(a, b)
    assert (result.detail["cards"], result.detail["tricks"], result.status) == (
        cards,
        tricks,
        status,
    )


def test_the_player_who_runs_out_loses_and_the_other_collects() -> None:
    result = play_fixed("2", "3")
    assert result.places == [2, 1]


def test_a_collection_that_empties_the_opponent_ends_the_game_at_once() -> None:
    result = play_fixed("2A", "34567")
    assert result.places == [1, 2]
    assert result.detail == {"cards": 7, "tricks": 1}


def test_a_paid_pay_card_stops_the_payment_and_passes_the_debt_on() -> None:
    started = beggar.fixed_deal([list("2A78Q"), list("3456K9J")])
    state = SPEC.evolve(None, started)
    trick = SPEC.decide(state, 0, beggar.PlayTrick())[0]
    assert isinstance(trick, beggar.TrickPlayed)
    assert trick.cards == list("23A456K78Q9J")
    assert trick.seats == [0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1]


def test_the_collector_puts_the_pile_under_the_pack_first_card_nearest_the_top() -> None:
    started = beggar.fixed_deal([list("J5"), list("39")])
    state = SPEC.evolve(None, started)
    for event in SPEC.decide(state, 0, beggar.PlayTrick()):
        state = SPEC.evolve(state, event)
    assert state.packs == (("5", "J", "3"), ("9",))
    assert state.leader == 0


def test_a_loop_ranks_by_cards_held_and_ties_share_the_place() -> None:
    result = play_fixed("23J6", "K5J7")
    assert result.status == "loop"
    assert result.scores == [4, 4]
    assert result.places == [1, 1]


def test_the_card_cap_ends_the_game_as_capped_with_the_most_cards_first() -> None:
    result = play_fixed("-A-A-K-K-Q-Q-J-J----------", "----------J-J-Q-Q-K-K-A-A-", max_cards=50)
    assert result.status == "capped"
    assert result.detail["cards"] == 50
    assert result.scores is not None
    expected = [1, 2] if result.scores[0] > result.scores[1] else [2, 1]
    assert result.places == expected


def test_a_trick_cut_by_the_cap_leaves_its_cards_on_the_pile() -> None:
    started = beggar.fixed_deal([list("2A9"), list("345")], beggar.BeggarRuleset(max_cards=4))
    state, log = play_out(started)
    trick = log[1]
    assert isinstance(trick, beggar.TrickPlayed)
    assert trick.collector is None
    assert state.pile == ("2", "3", "A", "4")
    assert state.result is not None
    assert state.result.status == "capped"


def test_with_three_players_a_player_who_runs_out_while_paying_hands_the_debt_on() -> None:
    started = beggar.fixed_deal([list("K99"), list("2"), list("345")])
    state = SPEC.evolve(None, started)
    trick = SPEC.decide(state, 0, beggar.PlayTrick())[0]
    assert isinstance(trick, beggar.TrickPlayed)
    assert trick.cards == ["K", "2", "3", "4"]
    assert trick.seats == [0, 1, 2, 2]
    assert trick.eliminated == [1]
    assert trick.collector == 0


def test_a_finished_four_player_game_ranks_the_others_in_reverse_order_of_going_out() -> None:
    finished = []
    for seed in range(20):
        state, _ = play_out(beggar.deal(beggar.BeggarRuleset(), 4, seed=seed))
        assert state.result is not None
        if state.result.status == "finished" and len(state.out) == 3:
            finished.append(state)
    assert finished, "some four-player deal among the first 20 seeds finishes"
    for state in finished:
        assert state.result is not None
        places = state.result.places
        assert [places[seat] for seat in reversed(state.out)] == [2, 3, 4]
        assert places.count(1) == 1


def test_players_emptied_by_the_final_collection_share_a_place() -> None:
    result = play_fixed("5", "J", "6")
    assert result.status == "finished"
    assert result.places == [2, 1, 2]


def test_players_who_run_out_one_after_the_other_take_places_in_reverse_order() -> None:
    result = play_fixed("A", "2", "3")
    assert result.places == [1, 3, 2]


def test_only_the_leader_may_play_the_trick() -> None:
    state = SPEC.evolve(None, beggar.fixed_deal([list("23"), list("45")]))
    with pytest.raises(IllegalAction) as caught:
        SPEC.decide(state, 1, beggar.PlayTrick())
    assert caught.value.rule == "not_your_turn"
    assert SPEC.legal_actions(state, 1) == []


def test_a_finished_game_refuses_every_action() -> None:
    state, _ = play_out(beggar.fixed_deal([list("2"), list("3")]))
    with pytest.raises(IllegalAction) as caught:
        SPEC.decide(state, state.leader, beggar.PlayTrick())
    assert caught.value.rule == "game_over"
    assert SPEC.to_move(state) == []


@pytest.mark.parametrize("players", [1, 5])
def test_a_table_of_other_than_two_to_four_players_is_refused(players: int) -> None:
    with pytest.raises(InvalidRuleset) as caught:
        beggar.deal(beggar.BeggarRuleset(), players, seed=1)
    assert caught.value.field == "players"


def test_a_ruleset_without_cards_to_turn_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidRuleset) as caught:
        beggar.deal(beggar.BeggarRuleset(max_cards=0), 2, seed=1)
    assert caught.value.field == "max_cards"


@pytest.mark.parametrize("text", ["2x", "A B", "1"])
def test_a_malformed_deal_string_names_the_bad_character(text: str) -> None:
    with pytest.raises(ValueError, match="position"):
        beggar.parse_deal(text)


def test_ten_is_read_as_one_numeral() -> None:
    assert beggar.parse_deal("10J") == ["T", "J"]


def test_the_deal_gives_cards_in_turn_starting_with_seat_zero() -> None:
    started = beggar.deal(beggar.BeggarRuleset(), 3, seed="s")
    assert [len(p) for p in started.packs] == [18, 17, 17]
    assert Counter(c for p in started.packs for c in p) == Counter(standard_deck())


def test_the_same_seed_deals_the_same_cards_and_another_seed_does_not() -> None:
    first = beggar.deal(beggar.BeggarRuleset(), 2, seed=42)
    assert beggar.deal(beggar.BeggarRuleset(), 2, seed=42) == first
    assert beggar.deal(beggar.BeggarRuleset(), 2, seed=43) != first


def test_every_seat_sees_the_same_public_view_of_face_down_packs() -> None:
    state = SPEC.evolve(None, beggar.deal(beggar.BeggarRuleset(), 3, seed=5))
    view = SPEC.view(state, 1)
    assert view.pack_sizes == [18, 17, 17]
    assert view.status == "playing"
    assert not hasattr(view, "packs")


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(40))
def test_random_deals_conserve_cards_and_always_end(players: int, seed: int) -> None:
    started = beggar.deal(beggar.BeggarRuleset(), players, seed=seed)
    state = SPEC.evolve(None, started)
    moves = 0
    while not SPEC.is_over(state):
        (seat,) = SPEC.to_move(state)
        assert SPEC.legal_actions(state, seat) == [beggar.PlayTrick()]
        played = SPEC.apply(state, seat, beggar.PlayTrick())
        decided = SPEC.decide(state, seat, beggar.PlayTrick())
        for event in decided:
            state = SPEC.evolve(state, event)
        assert played == (state, decided), "play folds its events as evolve does"
        held = [c for pack in state.packs for c in pack] + list(state.pile)
        assert Counter(held) == Counter(standard_deck())
        moves += 1
        assert moves <= 100_000
    assert state.result is not None
    assert state.result.status in {"finished", "loop", "capped"}
    assert sorted(state.result.places)[0] == 1
    assert state.result.detail["tricks"] == state.tricks


def test_folding_the_log_again_gives_the_same_state() -> None:
    state, log = play_out(beggar.deal(beggar.BeggarRuleset(), 4, seed=11))
    assert SPEC.fold(log) == state
    assert isinstance(log[-1], GameFinished)


def test_a_loop_found_when_the_cap_is_reached_reports_the_loop() -> None:
    result = play_fixed("J23", "4J5", max_cards=8)
    assert (result.status, result.detail["cards"]) == ("loop", 8)


def test_reaching_the_cap_with_a_collection_ends_the_game_without_an_empty_trick() -> None:
    started = beggar.fixed_deal([list("J23"), list("4J5")], beggar.BeggarRuleset(max_cards=5))
    state, log = play_out(started)
    assert state.result is not None
    assert (state.result.status, state.cards, state.tricks) == ("capped", 5, 2)
    assert all(isinstance(e, beggar.TrickPlayed) and e.cards for e in log[1:-1])


def test_a_running_game_hides_the_order_of_the_face_down_packs() -> None:
    started = beggar.deal(beggar.BeggarRuleset(), 2, seed=3)
    hidden = SPEC.redact(started, 0)
    assert isinstance(hidden, beggar.GameStarted)
    assert [len(p) for p in hidden.packs] == [26, 26]
    assert {card for pack in hidden.packs for card in pack} == {"??"}
