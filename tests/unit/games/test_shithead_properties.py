"""Shithead properties over seeded random games, every preset, 2 to 6 players: a few deals in
every run, thousands in the slow sweep (`-m slow`, run by CI)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence

import msgspec
import pytest

from shared.games import shithead as sh
from shared.games.cards import standard_deck
from shared.games.shithead.decide import deal, decide
from shared.games.shithead.evolve import evolve
from shared.games.shithead.legal import legal_actions
from shared.games.shithead.messages import Ready
from shared.games.shithead.state import ShitheadState, is_over, to_move
from shared.games.shithead.view import view as sh_view
from shared.messages.common import Event
from tests.support.leaks import cards_in
from tests.support.shithead import known_to, publicly_taken, ruleset_for

SWEEPS = [
    pytest.param(range(4), id="4-seeds"),
    pytest.param(range(60), id="60-seeds", marks=pytest.mark.slow),
]
"""The deals of each case: a few in every run, the whole sweep where slow tests run (CI)."""


def cards_on_table(state: ShitheadState) -> list[str]:
    """Returns every card of the state, wherever it lies, sorted."""
    zones = (*state.hands, *state.face_up, *state.face_down, state.deck, state.pile, state.burnt)
    return sorted(itertools.chain.from_iterable(zones))


def known_is_held_and_was_shown(
    known: Sequence[str], hand: Sequence[str], shown: Counter[str]
) -> bool:
    """Returns whether the cards publicly known of a hand (`known`) are in it and were shown
    going in (`shown`): `Counter(known) <= Counter(hand) & shown`, without building the
    intersection."""
    if not known:
        return True
    return all(n <= hand.count(card) and n <= shown[card] for card, n in Counter(known).items())


def play_random_game(preset: str, players: int, seed: int) -> tuple[ShitheadState, list[Event]]:
    """Plays a seeded random game, checking the invariants after every event and decision."""
    rules = ruleset_for(preset, players)
    started = deal(rules, players, seed)
    state = evolve(None, started)
    log: list[Event] = [started]
    full = sorted(standard_deck(rules.decks, rules.jokers * rules.decks))
    total = len(full)
    assert cards_on_table(state) == full
    rng = random.Random(seed)
    taken: list[Counter[str]] = [Counter() for _ in range(players)]
    while not is_over(state):
        waiting = to_move(state)
        assert waiting, "a running game always waits for someone"
        seat = rng.choice(waiting)
        legal = legal_actions(state, seat)
        assert legal, f"seat {seat} to move has a legal action"
        ready = [a for a in legal if isinstance(a, Ready)]
        action = ready[0] if ready and rng.random() < 0.5 else rng.choice(legal)
        if state.moves % 7 == 0:
            observer = rng.randrange(players)
            view = msgspec.to_builtins(sh_view(state, observer))
            assert cards_in(view) <= known_to(state, observer, taken)
        played = sh.SPEC.apply(state, seat, action)
        decided = decide(state, seat, action)
        for event in decided:
            before, state = state, evolve(state, event)
            log.append(event)
            publicly_taken(taken, event)
            for s, cards in enumerate(state.known):
                # A seat whose hand and known cards stay as they were still passes: what
                # was shown of each hand (`taken`) only grows.
                if cards != before.known[s] or state.hands[s] != before.hands[s]:
                    assert known_is_held_and_was_shown(cards, state.hands[s], taken[s]), s
            zones = (*state.hands, *state.face_up, *state.face_down)
            on_table = len(state.deck) + len(state.pile) + len(state.burnt)
            assert sum(map(len, zones)) + on_table == total
        assert cards_on_table(state) == full
        assert played == (state, decided), "play folds its events as evolve does"
    return state, log


@pytest.mark.parametrize("seeds", SWEEPS)
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("preset", ["classic", "holland-kocsma", "swedish"])
def test_random_games_conserve_cards_always_offer_a_move_end_and_refold(
    preset: str, players: int, seeds: range
) -> None:
    statuses: Counter[str] = Counter()
    for seed in seeds:
        state, log = play_random_game(preset, players, seed)
        assert state.result is not None
        assert sorted(state.result.places)[0] == 1
        assert state.moves <= state.ruleset.max_moves
        assert sh.SPEC.fold(log) == state
        statuses[state.result.status] += 1
    assert statuses["finished"] > len(seeds) // 2
