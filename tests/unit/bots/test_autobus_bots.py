"""Hospodský autobus heuristic bot: legal and reproducible choices, and its preferences."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence

import pytest

from shared.bots.autobus import HeuristicBot
from shared.catalog import get_game
from shared.games.autobus.decide import deal, decide
from shared.games.autobus.evolve import _set_slot, evolve
from shared.games.autobus.legal import legal_actions
from shared.games.autobus.messages import AutobusAction, Discard, PlayToSequence, UnderTheBus
from shared.games.autobus.rules import AutobusRuleset, value
from shared.games.autobus.state import AutobusState, is_over
from shared.games.autobus.view import AutobusView
from shared.games.autobus.view import view as ab_view
from shared.games.base import Bot
from shared.games.cards import is_joker
from shared.messages.common import Action

BOT = HeuristicBot()


def table(
    hands: Sequence[Sequence[str]],
    mains: Sequence[Sequence[str]],
    *,
    sequences: Sequence[Sequence[str]] = (),
    slots: Mapping[int, Sequence[str]] | None = None,
    draw: Sequence[str] = ("4H", "4S", "4C", "4D"),
) -> AutobusState:
    """Returns seat 0's turn on a constructed table; `slots` maps seat 0's slots to cards."""
    players = len(hands)
    state = AutobusState(
        ruleset=AutobusRuleset(),
        mains=tuple(tuple(main) for main in mains),
        hands=tuple(tuple(hand) for hand in hands),
        slots=tuple(((),) * 4 for _ in range(players)),
        slot_ranks=tuple((None,) * 4 for _ in range(players)),
        draw=tuple(draw),
        shuffle_seed="s",
        sequences=tuple(tuple(cards) for cards in sequences),
    )
    for slot, cards in (slots or {}).items():
        rank = next(value(card) for card in cards if not is_joker(card))
        state = _set_slot(state, 0, slot, tuple(cards), rank)
    return state


def choose(state: AutobusState, seed: str = "s") -> Action:
    """Returns the heuristic's choice for the seat to move, checking that it is legal."""
    legal = legal_actions(state, state.turn)
    action = BOT.choose(ab_view(state, state.turn), legal, seed)
    assert action in legal
    return action


def apply(state: AutobusState, action: Action) -> AutobusState:
    """Returns the state after the seat to move takes `action`."""
    for event in decide(state, state.turn, action):
        state = evolve(state, event)
    return state


def random_states(players: int, seed: int) -> Iterator[tuple[AutobusState, list[AutobusAction]]]:
    """Yields every decision of a seeded game where random and heuristic choices alternate."""
    state = evolve(None, deal(AutobusRuleset(max_turns=150), players, seed))
    rng = random.Random(seed)
    while not is_over(state):
        legal = legal_actions(state, state.turn)
        yield state, legal
        action: Action
        if rng.random() < 0.5:
            action = rng.choice(legal)
        else:
            action = BOT.choose(ab_view(state, state.turn), legal, "s")
        state = apply(state, action)


def check_choice(state: AutobusState, legal: list[AutobusAction], seed: str) -> None:
    """Checks one choice: legal, reproducible, main top first, under the bus only when forced."""
    view = ab_view(state, state.turn)
    action = BOT.choose(view, legal, seed)
    assert action in legal
    assert HeuristicBot().choose(view, list(legal), seed) == action
    if any(isinstance(a, PlayToSequence) and a.source == "main" for a in legal):
        assert isinstance(action, PlayToSequence)
        assert action.source == "main"
    if isinstance(action, UnderTheBus):
        assert not any(isinstance(a, Discard) for a in legal)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_choice_in_random_games_is_legal_reproducible_and_main_first(players: int) -> None:
    for seed in range(6):
        for number, (state, legal) in enumerate(random_states(players, seed)):
            check_choice(state, legal, f"{seed}:{number}")


def test_the_choice_does_not_depend_on_the_seed() -> None:
    state = table([["2C", "9D", "KH", "5S"], ["3C"]], [["7S", "8S"], ["6D"]], sequences=[["AH"]])
    legal = legal_actions(state, 0)
    choices = {BOT.choose(ab_view(state, 0), legal, str(seed)) for seed in range(20)}
    assert len(choices) == 1


def test_the_heuristic_is_registered_for_autobus() -> None:
    bot = get_game("autobus").bots["heuristic"]
    assert isinstance(bot, HeuristicBot)
    assert bot.name == "heuristic"


def test_plays_the_main_top_when_it_can() -> None:
    state = table(
        [["AC", "5D", "9H", "2S"], ["3C"]],
        [["5S", "8S"], ["KD"]],
        sequences=[["AH", "2H", "3H", "4H"]],
    )
    assert choose(state) == PlayToSequence(source="main", sequence=0)


def test_prefers_the_chain_that_frees_the_main_top_over_other_progress() -> None:
    state = table(
        [["2C", "6D", "KH", "QS"], ["3C"]],
        [["7S", "8S"], ["KD"]],
        sequences=[["AH", "2H", "3H", "4H"], ["AD"]],
        slots={0: ["5C"]},
    )
    assert choose(state) == PlayToSequence(source="slot", slot=0, sequence=0)
    state = apply(state, choose(state))
    assert choose(state) == PlayToSequence(source="hand", card="6D", sequence=0)
    state = apply(state, choose(state))
    assert choose(state) == PlayToSequence(source="main", sequence=0)


def test_keeps_a_joker_when_the_main_top_cannot_use_it() -> None:
    state = table(
        [["X1", "4D", "KH", "QS"], ["3C"]], [["9S", "8S"], ["KD"]], sequences=[["AH", "2H"]]
    )
    while state.turn == 0:
        action = choose(state)
        assert getattr(action, "card", None) != "X1"
        state = apply(state, action)
    assert "X1" in state.hands[0]


def test_spends_a_joker_when_it_lets_the_main_top_go_on() -> None:
    state = table([["X1", "3D", "KH", "QS"], ["3C"]], [["4S", "8S"], ["KD"]], sequences=[["AH"]])
    assert choose(state) == PlayToSequence(source="hand", card="X1", sequence=0)


def test_does_not_make_a_sequence_need_an_opponents_main_top() -> None:
    state = table(
        [["5D", "AC", "KH", "QS"], ["3C"]],
        [["KS", "8S"], ["6D", "7D"]],
        sequences=[["AH", "2H", "3H", "4H"]],
    )
    assert choose(state) == PlayToSequence(source="hand", card="AC", sequence=None)


def test_discards_onto_a_slot_of_the_same_rank_rather_than_an_empty_one() -> None:
    state = table([["7S", "9H", "QD", "4C"], ["3C"]], [["5S", "8S"], ["KD"]], slots={0: ["7D"]})
    assert choose(state) == Discard(card="7S", slot=0)


def test_goes_under_the_bus_only_when_no_card_fits_a_slot() -> None:
    slots = {0: ["7D"], 1: ["8D"], 2: ["9D"], 3: ["TD"]}
    hands = [["2C", "3D", "QS", "7C"], ["3C"]]
    fits = table(hands, [["5S", "8S"], ["KD"]], slots=slots)
    assert choose(fits) == Discard(card="7C", slot=0)
    forced = table([["2C", "3D", "QS", "QH"], ["3C"]], [["5S", "8S"], ["KD"]], slots=slots)
    assert choose(forced) == UnderTheBus(card="QH")


def play_match(bots: Sequence[Bot[AutobusView]], seed: int) -> list[int]:
    """Returns the places of a seeded two-player classic game between `bots`."""
    state = evolve(None, deal(AutobusRuleset(), 2, seed))
    decision = 0
    while not is_over(state):
        legal = legal_actions(state, state.turn)
        view = ab_view(state, state.turn)
        state = apply(state, bots[state.turn].choose(view, legal, f"{seed}:{decision}"))
        decision += 1
    assert state.result is not None
    return state.result.places


def test_the_heuristic_beats_random_in_most_two_player_games() -> None:
    spec = get_game("autobus")
    heuristic, rand = spec.bots["heuristic"], spec.bots["random"]
    wins = 0
    for seed in range(30):
        mine = seed % 2
        places = play_match([heuristic, rand] if mine == 0 else [rand, heuristic], seed)
        wins += places[mine] == 1 and places[1 - mine] > 1
    assert wins >= 24
