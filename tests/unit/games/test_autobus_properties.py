"""Hospodský autobus properties over seeded random games, 2 to 4 players: a few deals in every
run, thousands in the slow sweep (`-m slow`, run by CI)."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import msgspec
import pytest

from shared.games import autobus as ab
from shared.games.autobus.decide import deal, decide
from shared.games.autobus.evolve import evolve
from shared.games.autobus.legal import can_play_to_sequence, legal_actions
from shared.games.autobus.messages import PlayToSequence
from shared.games.autobus.rules import AutobusRuleset
from shared.games.autobus.state import AutobusState, is_over, to_move
from shared.games.autobus.view import view as ab_view
from shared.games.cards import standard_deck
from shared.messages.common import Event
from tests.support.autobus import known_to
from tests.support.leaks import cards_in

SWEEPS = [
    pytest.param(range(12), id="12-seeds"),
    pytest.param(range(200), id="200-seeds", marks=pytest.mark.slow),
]
"""The deals of each case: a few in every run, the whole sweep where slow tests run (CI)."""
FULL = sorted(standard_deck(2, 4))


def cards_on_table(state: AutobusState) -> list[str]:
    """Returns every card of the state, wherever it lies, sorted."""
    slots = [cards for seat_slots in state.slots for cards in seat_slots]
    zones = (*state.mains, *state.hands, *slots, *state.sequences, state.completed, state.draw)
    return sorted(itertools.chain.from_iterable(zones))


def play_random_game(players: int, seed: int) -> tuple[AutobusState, list[Event]]:
    """Plays a seeded random game, checking the invariants after every event."""
    started = deal(AutobusRuleset(), players, seed)
    state = evolve(None, started)
    log: list[Event] = [started]
    rng = random.Random(seed)
    while not is_over(state):
        (seat,) = to_move(state)
        legal = legal_actions(state, seat)
        assert legal, f"seat {seat} to move has a legal action"
        plays = [a for a in legal if isinstance(a, PlayToSequence)]
        action = rng.choice(plays if plays and rng.random() < 0.7 else legal)
        if state.turns % 5 == 0:
            observer = rng.randrange(players)
            view = msgspec.to_builtins(ab_view(state, observer))
            assert cards_in(view) <= known_to(state, observer)
        played = ab.SPEC.apply(state, seat, action)
        decided = decide(state, seat, action)
        for event in decided:
            state = evolve(state, event)
            log.append(event)
            assert cards_on_table(state) == FULL
        assert played == (state, decided), "play folds its events as evolve does"
    return state, log


@pytest.mark.parametrize("seeds", SWEEPS)
@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_conserve_all_108_cards_always_offer_a_move_end_and_refold(
    players: int, seeds: range
) -> None:
    statuses: Counter[str] = Counter()
    for seed in seeds:
        state, log = play_random_game(players, seed)
        assert state.result is not None
        assert min(state.result.places) == 1
        assert state.turns <= state.ruleset.max_turns
        assert ab.SPEC.fold(log) == state
        if state.result.reason == "no_move_possible":
            assert not state.draw
            assert not state.completed
            assert not any(can_play_to_sequence(state, seat) for seat in range(players))
        statuses[state.result.reason] += 1
    assert statuses["main_pile_emptied"] > 0
