"""Shithead bots: legal and reproducible choices, the heuristic's habits, the Monte Carlo search."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import pytest

from shared.bots.generic import RandomBot
from shared.bots.shithead import (
    HeuristicBot,
    MonteCarloBot,
    determinize,
    heuristic_action,
    policy,
)
from shared.catalog import get_game
from shared.games.base import Bot
from shared.games.cards import standard_deck
from shared.games.shithead.decide import deal, decide
from shared.games.shithead.evolve import evolve
from shared.games.shithead.legal import legal_actions
from shared.games.shithead.messages import PickUp, PlayCards, PlayFaceDown, PlayFromDeck
from shared.games.shithead.rules import PRESETS, ShitheadRuleset
from shared.games.shithead.state import ShitheadState, is_over, to_move
from shared.games.shithead.state import result as sh_result
from shared.games.shithead.view import ShitheadView
from shared.games.shithead.view import view as sh_view
from shared.messages.common import Action

CLASSIC = PRESETS["classic"]
HEURISTIC = HeuristicBot()
SMALL_MC = MonteCarloBot(determinizations=3, steps=150)


def table(
    hands: Sequence[Sequence[str]],
    *,
    face_up: Sequence[Sequence[str]] | None = None,
    face_down: Sequence[Sequence[str]] | None = None,
    deck: Sequence[str] = (),
    pile: Sequence[str] = (),
    ruleset: ShitheadRuleset = CLASSIC,
    **rules: Any,
) -> ShitheadState:
    """Returns a play-phase state with seat 0 to move; the cards not given are burnt."""
    players = len(hands)
    state = ShitheadState(
        ruleset=msgspec.structs.replace(ruleset, **rules),
        hands=tuple(tuple(h) for h in hands),
        face_up=tuple(tuple(u) for u in (face_up or [[]] * players)),
        face_down=tuple(tuple(d) for d in (face_down or [[]] * players)),
        deck=tuple(deck),
        pile=tuple(pile),
        phase="play",
        ready=(True,) * players,
    )
    placed = Counter([*deck, *pile])
    for zone in (state.hands, state.face_up, state.face_down):
        placed.update(card for cards in zone for card in cards)
    return msgspec.structs.replace(state, burnt=tuple(Counter(standard_deck()) - placed))


def heuristic_choice(state: ShitheadState, seat: int = 0) -> Action:
    """Returns what the heuristic bot does for `seat` in `state`."""
    return HEURISTIC.choose(sh_view(state, seat), legal_actions(state, seat), "seed")


def advance(state: ShitheadState, seat: int, action: Action) -> ShitheadState:
    """Returns the state after `seat` takes `action`."""
    for event in decide(state, seat, action):
        state = evolve(state, event)
    return state


def random_states(preset: str, players: int, games: int = 2) -> Iterator[ShitheadState]:
    """Yields every eleventh state of seeded random games (two decks where one is too few)."""
    chooser = RandomBot()
    rules = PRESETS[preset]
    if (rules.face_down + rules.face_up + rules.hand) * players > rules.total_cards():
        rules = msgspec.structs.replace(rules, decks=2, jokers=2)
    for game in range(games):
        state = evolve(None, deal(rules, players, f"{preset}:{players}:{game}"))
        step = 0
        while not is_over(state):
            seat = to_move(state)[0]
            if step % 11 == 0:
                yield state
            action = chooser.choose(None, legal_actions(state, seat), f"{game}:{step}")
            state = advance(state, seat, action)
            step += 1


CASES = [(preset, players) for preset in PRESETS for players in range(2, 6)]


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_both_bots_choose_a_legal_action_in_random_states(preset: str, players: int) -> None:
    for index, state in enumerate(random_states(preset, players)):
        seat = to_move(state)[0]
        legal = legal_actions(state, seat)
        view = sh_view(state, seat)
        assert HEURISTIC.choose(view, legal, "s") in legal
        if index % 3 == 0:
            assert SMALL_MC.choose(view, legal, f"s{index}") in legal


def test_both_bots_are_registered_for_shithead() -> None:
    bots = get_game("shithead").bots
    assert isinstance(bots["heuristic"], HeuristicBot)
    assert isinstance(bots["mc"], MonteCarloBot)


def test_the_same_seed_gives_the_same_choice() -> None:
    states = [s for s in random_states("classic", 3) if s.phase == "play"][:6]
    bot = MonteCarloBot(determinizations=6, steps=400)
    for state in states:
        seat = to_move(state)[0]
        view, legal = sh_view(state, seat), legal_actions(state, seat)
        assert bot.choose(view, legal, "x") == bot.choose(view, legal, "x")
        assert HEURISTIC.choose(view, legal, "a") == HEURISTIC.choose(view, legal, "b")


def test_the_heuristic_swaps_specials_and_high_cards_face_up() -> None:
    state = msgspec.structs.replace(
        table([["2S", "AH", "TD"], ["4C", "5C", "6C"]], face_up=[["3S", "KD", "4H"], ["7C"] * 3]),
        phase="swap",
        ready=(False, False),
    )
    while not state.ready[0]:
        state = advance(state, 0, heuristic_choice(state))
    assert sorted(state.face_up[0]) == ["2S", "AH", "TD"]
    assert sorted(state.hands[0]) == ["3S", "4H", "KD"]


def test_the_heuristic_plays_all_copies_of_the_lowest_playable_rank() -> None:
    state = table([["4H", "7S", "9C", "7D", "KC", "2S"], ["3C"]], pile=["5D"])
    assert heuristic_choice(state) == PlayCards(cards=["7D", "7S"])


def test_the_heuristic_keeps_resets_and_burns_while_a_plain_card_goes() -> None:
    pile = ["4C", "5C", "6C", "7C", "8C", "JD"]
    state = table([["2S", "TD", "QH"], ["3C"]], pile=pile)
    assert heuristic_choice(state) == PlayCards(cards=["QH"])


def test_the_heuristic_resets_a_small_pile_and_burns_a_big_one() -> None:
    hands = [["2S", "TD", "5H"], ["3C"]]
    assert heuristic_choice(table(hands, pile=["AD"])) == PlayCards(cards=["2S"])
    big = ["4C", "5C", "6C", "7C", "8C", "AD"]
    assert heuristic_choice(table(hands, pile=big)) == PlayCards(cards=["TD"])


def test_the_heuristic_prefers_completing_four_of_a_kind() -> None:
    state = table([["5H", "2S"], ["3C"]], pile=["2C", "2D", "2H"])
    assert heuristic_choice(state) == PlayCards(cards=["2S"])


def test_the_heuristic_turns_the_first_face_down_card() -> None:
    state = table([[], ["3C"]], face_down=[["9S", "4D"], ["5C"]], pile=["KD"])
    assert heuristic_choice(state) == PlayFaceDown(index=0)


def test_the_heuristic_gambles_instead_of_picking_up_where_the_rules_allow() -> None:
    holland = PRESETS["holland-kocsma"]
    state = table([["3S"], ["3C"]], deck=["9H"], pile=["KD"], ruleset=holland)
    assert heuristic_choice(state) == PlayFromDeck()
    assert heuristic_choice(msgspec.structs.replace(state, deck=())) == PickUp()


def test_the_heuristic_never_picks_up_by_choice() -> None:
    state = table([["3S", "QS"], ["3C"]], pile=["JD"], voluntary_pickup=True)
    assert heuristic_action(state.ruleset, state.pile, legal_actions(state, 0)) == (
        PlayCards(cards=["QS"])
    )


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_a_determinization_agrees_with_everything_the_view_shows(preset: str, players: int) -> None:
    rng = random.Random(7)
    for state in random_states(preset, players, games=1):
        seat = to_move(state)[0]
        view = sh_view(state, seat)
        world = determinize(view, rng)
        assert sh_view(world, seat) == view
        for other, cards in enumerate(view.known):
            assert Counter(cards) <= Counter(world.hands[other])
        everything = [*world.deck, *world.pile, *world.burnt]
        for zone in (world.hands, world.face_up, world.face_down):
            everything.extend(card for cards in zone for card in cards)
        rules = view.ruleset
        assert Counter(everything) == Counter(
            standard_deck(rules.decks, rules.jokers * rules.decks)
        )


def test_the_monte_carlo_bot_finds_the_winning_block() -> None:
    # The lowest card lets the opponent's last card (a king) go out; the ace blocks it,
    # the opponent picks up, and the three then goes out.
    state = table([["3C", "AS"], []], face_up=[[], ["KD"]], pile=["3D"])
    assert heuristic_choice(state) == PlayCards(cards=["3C"])
    bot = MonteCarloBot(determinizations=4, steps=500)
    assert bot.choose(sh_view(state, 0), legal_actions(state, 0), "s") == (PlayCards(cards=["AS"]))


def test_the_monte_carlo_bot_goes_out_rather_than_picking_up() -> None:
    state = table(
        [["9S"], ["4C", "6D"]], face_down=[[], ["8H", "QS"]], pile=["5D"], voluntary_pickup=True
    )
    legal = legal_actions(state, 0)
    assert PickUp() in legal
    assert SMALL_MC.choose(sh_view(state, 0), legal, "s") == PlayCards(cards=["9S"])


def test_the_heuristic_beats_random_in_most_of_a_short_match() -> None:
    spec = get_game("shithead")
    wins = 0
    for game in range(20):
        bots: list[Bot[ShitheadView]] = (
            [HEURISTIC, RandomBot()] if game % 2 == 0 else [RandomBot(), HEURISTIC]
        )
        state = evolve(None, deal(CLASSIC, 2, game))
        step = 0
        while not is_over(state):
            seat = to_move(state)[0]
            legal = legal_actions(state, seat)
            state = advance(
                state, seat, bots[seat].choose(spec.view(state, seat), legal, str(step))
            )
            step += 1
        result = sh_result(state)
        assert result is not None
        wins += result.places[game % 2] == 1
    assert wins >= 15


def test_every_seat_knows_the_cards_an_opponent_picked_up_until_they_are_played() -> None:
    state = table([["4C", "9S"], ["5D", "6H"]], pile=["KD", "QS"], deck=["2C", "3C", "7C"])
    state = msgspec.structs.replace(state, known=((), ()))
    state = advance(state, 0, PickUp())
    assert sh_view(state, 1).known == [["KD", "QS"], []]
    assert sh_view(state, 1).hand_sizes[0] == 4
    state = advance(state, 1, PlayCards(cards=["5D"]))
    assert sh_view(state, 0).known == [["KD", "QS"], []], "drawn cards stay unknown"
    state = advance(state, 0, PlayCards(cards=["KD"]))
    assert sh_view(state, 1).known == [["QS"], []]


def test_a_determinized_world_deals_an_opponent_the_cards_it_is_known_to_hold() -> None:
    state = table([["4C"], ["9S", "KD", "QS"]], pile=["3D"], deck=["2C", "7C"])
    state = msgspec.structs.replace(state, known=((), ("KD", "QS")))
    view = sh_view(state, 0)
    for seed in range(20):
        world = determinize(view, random.Random(seed))
        assert Counter(world.hands[1]) >= Counter(["KD", "QS"])
        assert len(world.hands[1]) == 3


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_rollout_policy_chooses_what_the_heuristic_chooses(preset: str) -> None:
    """`policy` finds the heuristic's choice without listing the legal actions (the rollouts'
    hot path): over random and heuristic play of every preset, both always agree."""
    spec = get_game("shithead")
    compared = 0
    for seed in range(25):
        players = 2 + seed % 3
        state = spec.fold([spec.deal(PRESETS[preset], players, seed)])
        rng = random.Random(seed)
        for _ in range(400):
            if spec.is_over(state):
                break
            seat = spec.to_move(state)[0]
            legal = spec.legal_actions(state, seat)
            if state.phase == "play":
                expected = heuristic_action(state.ruleset, state.pile, legal)
                assert policy(state) == expected, (seed, state)
                compared += 1
            action = (
                rng.choice(legal)
                if rng.random() < 0.5
                else HEURISTIC.choose(spec.view(state, seat), legal, "")
            )
            state, _ = spec.apply(state, seat, action)
    assert compared > 1000
