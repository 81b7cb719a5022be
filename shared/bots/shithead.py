"""Shithead bots: a rule-based heuristic player and a determinized Monte Carlo searcher.

Both read only the seat's view and its legal actions. The Monte Carlo bot deals the
unseen cards at random in a way the view allows, plays every candidate out with the
heuristic policy for every seat (`policy`: the heuristic's choice found from the engine's
precomputed tables) through the engine's own play (`decide`, folded once), and keeps the
candidate with the best mean outcome.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

from shared.games.base import Bot
from shared.games.cards import JOKER, Card, rank_of, standard_deck
from shared.games.shithead.decide import play as play_action
from shared.games.shithead.legal import legal_actions
from shared.games.shithead.messages import (
    PickUp,
    PlayCards,
    PlayFaceDown,
    PlayFromDeck,
    Ready,
    Swap,
    Zone,
)
from shared.games.shithead.rules import ORDER, ShitheadRuleset
from shared.games.shithead.state import ShitheadState, cards_left
from shared.games.shithead.tables import ALPHABET, tables
from shared.games.shithead.view import ShitheadView
from shared.messages.common import Action

BIG_PILE = 6
"""From this many cards on, a burn goes before a reset when no plain card can be played."""


# Heuristic policy ----------------------------------------------------------------------


def strength(rules: ShitheadRuleset, rank: str) -> int:
    """Returns how valuable `rank` is to hold: plain by order, then lower, reset, burn, joker."""
    if rank == JOKER:
        return 17
    if rank == rules.burn:
        return 16
    if rank == rules.reset:
        return 15
    if rank == rules.lower and rules.lower_on_anything:
        return 14
    return ORDER[rank]


def specials(rules: ShitheadRuleset) -> tuple[str | None, ...]:
    """Returns the ranks that go on anything by themselves: reset, burn and joker (a rank the
    ruleset leaves out is None)."""
    return (rules.reset, rules.burn, JOKER)


def is_special(rules: ShitheadRuleset, rank: str) -> bool:
    """Returns whether `rank` goes on anything by itself: reset, burn or joker."""
    return rank in specials(rules)


def special_preference(rules: ShitheadRuleset, pile_size: int) -> list[str | None]:
    """Returns the order in which the heuristic spends its specials on a pile of
    `pile_size` cards: a reset on a small pile, a burn on a big one."""
    if pile_size >= BIG_PILE:
        return [rules.burn, rules.reset, JOKER]
    return [rules.reset, JOKER, rules.burn]


def completes_run(rules: ShitheadRuleset, pile: Sequence[Card], cards: Sequence[Card]) -> bool:
    """Returns whether playing `cards` on `pile` leaves `burn_run` cards of one rank on top."""
    run = rules.burn_run
    if run is None or len(pile) + len(cards) < run:
        return False
    top = [*pile[max(0, len(pile) - run) :], *cards][-run:]
    return len({rank_of(card) for card in top}) == 1


def heuristic_action(
    rules: ShitheadRuleset, pile: Sequence[Card], legal: Sequence[Action]
) -> Action:
    """Returns the heuristic's choice among `legal` (any phase) given the pile."""
    if any(isinstance(action, Ready) for action in legal):
        return _swap_choice(rules, legal)
    plays = [action for action in legal if isinstance(action, PlayCards)]
    if plays:
        return _play_choice(rules, pile, plays)
    for kind in (PlayFaceDown, PlayFromDeck):
        for action in legal:
            if isinstance(action, kind):
                return action
    return legal[0]


def _swap_choice(rules: ShitheadRuleset, legal: Sequence[Action]) -> Action:
    """Returns the swap moving the strongest hand card up for the weakest face-up one, or Ready."""
    best: Action = Ready()
    best_gain = 0
    for action in legal:
        if isinstance(action, Swap):
            gain = strength(rules, rank_of(action.hand_card)) - strength(
                rules, rank_of(action.face_up_card)
            )
            if gain > best_gain:
                best, best_gain = action, gain
    return best


def _play_choice(rules: ShitheadRuleset, pile: Sequence[Card], plays: list[PlayCards]) -> Action:
    """Returns a run-completing play, else the lowest plain rank (all copies), else a special."""
    most: dict[str, PlayCards] = {}
    fewest: dict[str, PlayCards] = {}
    for play in plays:
        rank = rank_of(play.cards[0])
        if rank not in most or len(play.cards) > len(most[rank].cards):
            most[rank] = play
        if rank not in fewest or len(play.cards) < len(fewest[rank].cards):
            fewest[rank] = play
    completing = [rank for rank, play in most.items() if completes_run(rules, pile, play.cards)]
    if completing:
        return most[min(completing, key=lambda rank: strength(rules, rank))]
    plain = [rank for rank in most if not is_special(rules, rank)]
    if plain:
        return most[min(plain, key=lambda rank: strength(rules, rank))]
    return fewest[_special_rank(rules, pile, list(fewest))]


def _special_rank(rules: ShitheadRuleset, pile: Sequence[Card], ranks: list[str]) -> str:
    """Returns which special to spend: a reset on a small pile, a burn on a big one."""
    return next(rank for rank in special_preference(rules, len(pile)) if rank in ranks)


class HeuristicBot(Bot[ShitheadView]):
    """Swaps strong cards face up, sheds the lowest plain rank, keeps specials for need."""

    name = "heuristic"

    def choose(self, view: ShitheadView, legal: Sequence[Action], seed: str) -> Action:
        """Returns the heuristic's choice; the same view and legal actions give the same one."""
        assert isinstance(view, ShitheadView)
        return heuristic_action(view.ruleset, view.pile, legal)


# Determinization -----------------------------------------------------------------------


def unseen_cards(view: ShitheadView) -> list[Card]:
    """Returns the cards `view` does not show: the full deck less hand, face-up, pile, burnt.

    Cards known to be in other hands are among them; `determinize` deals those first.
    """
    rules = view.ruleset
    pool = Counter(standard_deck(rules.decks, rules.jokers * rules.decks))
    pool -= Counter(view.hand)
    for cards in view.face_up:
        pool -= Counter(cards)
    pool -= Counter(view.pile)
    pool -= Counter(view.burnt)
    return sorted(pool.elements())


def determinize(view: ShitheadView, rng: random.Random) -> ShitheadState:
    """Returns a full state the view allows, the unseen cards dealt at random by `rng`."""
    return Dealer(view).deal(rng)


class Dealer:
    """Deals the cards a view does not show at random, as many times as asked: what the view
    fixes is worked out once."""

    def __init__(self, view: ShitheadView) -> None:
        players = len(view.hand_sizes)
        known = [() if s == view.seat else tuple(cards) for s, cards in enumerate(view.known)]
        known = known or [()] * players
        self.pool = list(
            (Counter(unseen_cards(view)) - Counter(c for cards in known for c in cards)).elements()
        )
        hidden_hands = [
            0 if s == view.seat else n - len(known[s]) for s, n in enumerate(view.hand_sizes)
        ]
        self.sizes = [*hidden_hands, *view.face_down_sizes, view.deck_size]
        if sum(self.sizes) != len(self.pool):
            raise ValueError(
                f"the view hides {sum(self.sizes)} cards but {len(self.pool)} are unseen"
            )
        self.view = view
        self.players = players
        self.known = known
        self.hand = tuple(view.hand)
        self.face_up = tuple(tuple(cards) for cards in view.face_up)
        self.pile = tuple(view.pile)
        self.burnt = tuple(view.burnt)
        self.ready = tuple(view.ready)
        self.out = tuple(view.out)
        self.public = tuple(tuple(cards) for cards in view.known)

    def deal(self, rng: random.Random) -> ShitheadState:
        """Returns a full state the view allows, the unseen cards dealt at random by `rng`."""
        view, players, known = self.view, self.players, self.known
        pool = self.pool.copy()
        rng.shuffle(pool)
        parts: list[tuple[Card, ...]] = []
        at = 0
        for size in self.sizes:
            parts.append(tuple(pool[at : at + size]))
            at += size
        hands = [known[s] + parts[s] for s in range(players)]
        hands[view.seat] = self.hand
        return ShitheadState(
            ruleset=view.ruleset,
            hands=tuple(hands),
            face_up=self.face_up,
            face_down=tuple(parts[players : 2 * players]),
            deck=parts[-1],
            pile=self.pile,
            burnt=self.burnt,
            phase=view.phase,
            ready=self.ready,
            turn=view.turn,
            direction=view.direction,
            opening=_opening(view, hands[view.turn]),
            moves=view.moves,
            out=self.out,
            known=self.public,
        )


def _opening(view: ShitheadView, hand: Sequence[Card]) -> tuple[str, Zone] | None:
    """Returns the opening obligation: the rank, from the hand when it holds one, else face up."""
    if view.opening is None:
        return None
    in_hand = any(rank_of(card) == view.opening for card in hand)
    return view.opening, "hand" if in_hand else "face_up"


# Fast policy ---------------------------------------------------------------------------


class _Lookups:
    """The heuristic's per-ruleset values, read on every rollout decision."""

    def __init__(self, rules: ShitheadRuleset) -> None:
        self.rules = rules
        self.found = tables(rules)
        self.strength = {rank: strength(rules, rank) for rank in ALPHABET}
        self.special = frozenset(r for r in specials(rules) if r is not None)
        self.run = rules.burn_run
        self.least = self.found.multiple_from
        self.small = [r for r in special_preference(rules, 0) if r is not None]
        self.big = [r for r in special_preference(rules, BIG_PILE) if r is not None]
        self.deck_play = rules.blind_deck_play or rules.gamble_from_deck


_LOOKUPS: dict[int, _Lookups] = {}


def _lookups(rules: ShitheadRuleset) -> _Lookups:
    """Returns the lookups of `rules` (cached by identity, holding the ruleset)."""
    found = _LOOKUPS.get(id(rules))
    if found is None or found.rules is not rules:
        if len(_LOOKUPS) >= 16:
            _LOOKUPS.clear()
        found = _LOOKUPS[id(rules)] = _Lookups(rules)
    return found


def policy(state: ShitheadState) -> Action:
    """Returns `heuristic_action` for the seat to move, without listing its legal actions
    (the rollouts' policy: the same choice, found from the precomputed tables)."""
    rules, seat, pile = state.ruleset, state.turn, state.pile
    cards = state.hands[seat]
    if state.phase != "play" or state.opening is not None or (not cards and state.deck):
        return heuristic_action(rules, pile, legal_actions(state, seat))
    if not cards:
        cards = state.face_up[seat]
        if not cards:
            if state.face_down[seat]:
                return PlayFaceDown(index=0)
            return heuristic_action(rules, pile, legal_actions(state, seat))
    found = _lookups(rules)
    ok = found.found.playable[found.found.top(pile)]
    groups: dict[str, list[Card]] = {}
    for card in cards:
        if ok[card]:
            group = groups.get(card[0])
            if group is None:
                groups[card[0]] = [card]
            else:
                group.append(card)
    if not groups:
        if state.deck and found.deck_play:
            return PlayFromDeck()
        if pile:
            return PickUp()
        return heuristic_action(rules, pile, legal_actions(state, seat))
    least, value, run = found.least, found.strength, found.run
    best: str | None = None
    if run is not None:
        size = len(pile)
        for rank, group in groups.items():
            count = len(group) if len(group) >= least else 1
            need = run - count
            if (
                need <= 0 or (size >= need and all(c[0] == rank for c in pile[size - need :]))
            ) and (best is None or value[rank] < value[best]):
                best = rank
    if best is None:
        for rank in groups:
            if rank not in found.special and (best is None or value[rank] < value[best]):
                best = rank
        if best is None:
            order = found.big if len(pile) >= BIG_PILE else found.small
            rank = next(r for r in order if r in groups)
            return PlayCards(cards=[min(groups[rank])])
    group = groups[best]
    return PlayCards(cards=sorted(group) if len(group) >= least else [min(group)])


# Monte Carlo ---------------------------------------------------------------------------


def burden(state: ShitheadState, seat: int) -> float:
    """Returns how far `seat` is from going out: its cards, face-down ones counting more."""
    return cards_left(state, seat)


def evaluate(state: ShitheadState, seat: int, scale: float) -> float:
    """Returns `seat`'s expected share of the places, 1 for first and 0 for last."""
    players = state.players
    if state.result is not None:
        return (players - state.result.places[seat]) / (players - 1)
    if seat in state.out:
        return (players - 1 - state.out.index(seat)) / (players - 1)
    return _card_share(state, seat, scale)


def _card_share(state: ShitheadState, seat: int, scale: float) -> float:
    """Returns the share of opponents `seat` leads on cards left, smoothed by `scale`."""
    mine = burden(state, seat)
    behind = 0.0
    others = [other for other in range(state.players) if other != seat]
    for other in others:
        behind += 1 / (1 + math.exp((mine - burden(state, other)) / scale))
    return behind / len(others)


def candidates(view: ShitheadView, legal: Sequence[Action]) -> list[Action]:
    """Returns the choices worth comparing, the heuristic's first.

    A plain rank is played with all its copies, a special one alone, and face-down cards
    are alike to a seat that cannot see them.
    """
    rules = view.ruleset
    first = heuristic_action(rules, view.pile, legal)
    kept: dict[object, Action] = {}
    for action in legal:
        if isinstance(action, PlayCards):
            rank = rank_of(action.cards[0])
            held = kept.get(rank)
            if held is None or _better_count(rules, rank, action, held):
                kept[rank] = action
        elif not isinstance(action, PlayFaceDown) or action.index == 0:
            kept[type(action)] = action
    return [first, *(action for action in kept.values() if action != first)]


def _better_count(rules: ShitheadRuleset, rank: str, play: PlayCards, held: Action) -> bool:
    """Returns whether `play` beats `held` as the one play of `rank` to try."""
    assert isinstance(held, PlayCards)
    if is_special(rules, rank):
        return len(play.cards) < len(held.cards)
    return len(play.cards) > len(held.cards)


class MonteCarloBot(Bot[ShitheadView]):
    """Determinized Monte Carlo: samples the hidden cards, plays every candidate out.

    Each sampled deal is played out once per candidate (common random numbers), for at
    most `depth` decisions by the heuristic (`policy`), then scored by place, or by cards
    left when cut (`scale` sets how sharply a card's difference counts). A decision samples
    up to `determinizations` deals while fewer than `steps` decisions have been simulated,
    and stops early when `patience` deals have not told the candidates apart. The swap
    phase follows the heuristic.
    """

    name = "mc"

    def __init__(
        self,
        determinizations: int = 64,
        steps: int = 3000,
        patience: int = 4,
        depth: int = 200,
        scale: float = 3.0,
        margin: float = 0.0,
    ) -> None:
        self.determinizations = determinizations
        self.margin = margin
        self.steps = steps
        self.patience = patience
        self.depth = depth
        self.scale = scale

    def choose(self, view: ShitheadView, legal: Sequence[Action], seed: str) -> Action:
        """Returns the candidate with the best mean rollout; reproducible from `seed`."""
        assert isinstance(view, ShitheadView)
        options = candidates(view, legal)
        if len(options) == 1 or view.phase != "play":
            return options[0]
        rng = random.Random(seed)
        dealer = Dealer(view)
        totals = [0.0] * len(options)
        spent = 0
        for sample in range(1, self.determinizations + 1):
            world = dealer.deal(rng)
            for index, action in enumerate(options):
                score, used = self.rollout(_play(world, view.seat, action), view.seat)
                totals[index] += score
                spent += used
            if spent >= self.steps or (sample >= self.patience and len(set(totals)) == 1):
                break
        best = max(range(len(options)), key=totals.__getitem__)
        if totals[best] - totals[0] <= self.margin * sample:
            return options[0]
        return options[best]

    def rollout(self, state: ShitheadState, seat: int) -> tuple[float, int]:
        """Returns `seat`'s score after the heuristic plays every seat, and the decisions taken."""
        for step in range(self.depth):
            if state.result is not None:
                return evaluate(state, seat, self.scale), step
            state = _play(state, state.turn, policy(state))
        return evaluate(state, seat, self.scale), self.depth


def _play(state: ShitheadState, seat: int, action: Action) -> ShitheadState:
    """Returns the state after `seat` takes `action` (the engine's play: decide and fold)."""
    return play_action(state, seat, action)[0]
