"""Hospodský autobus bots: a rule-based heuristic that works its main pile down first.

`HeuristicBot` reads only the seat's view and the legal actions, and always returns one of
the legal actions. In order of preference it:
1. plays the main pile's top whenever it fits a sequence;
2. plays the first card of the cheapest chain of hand and slot cards after which the main
   top fits (fewest jokers spent, then fewest cards), so jokers go only where they let
   the main top go on;
3. plays plain hand and slot cards (progress toward the main top first, then hand cards),
   unless the play lets an opponent reach a main top from the slots it shows;
4. ends the turn with a discard: never a joker when a plain card fits, onto a slot of the
   card's rank (not over a joker) before an empty slot, the last empty slot last, and a
   rank held twice or soon needed first;
5. when no plain card fits a slot, first plays what could still avoid it (hand cards,
   slot cards that empty their slot or let a hand card go on), then goes under the bus
   with a rank held twice or soon needed.
Soon-needed ranks go to slots and under the bus because they come off again soonest: in
head-to-head runs of this bot that beat keeping them in hand.
The choice depends on (view, legal) alone, so it is the same for every seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from shared.games.autobus.messages import Discard, EndTurn, PlayToSequence, Source, UnderTheBus
from shared.games.autobus.rules import RANKS, VALUE, value
from shared.games.autobus.view import AutobusView
from shared.games.base import Bot
from shared.games.cards import JOKER, Card, is_joker
from shared.messages.common import Action

KING = 13


@dataclass(frozen=True)
class Step:
    """Where the next card of a chain comes from: the hand (by rank character) or a slot."""

    source: Source
    rank: str | None = None
    slot: int | None = None


@dataclass(frozen=True)
class Chain:
    """A way to make a sequence (None: a new one) need the main top: its cost and first step."""

    jokers: int
    cards: int
    sequence: int | None
    first: Step


# Reading the table ---------------------------------------------------------------------


def needs(view: AutobusView) -> list[int]:
    """Returns the rank each open sequence needs next, by sequence index."""
    return [len(cards) + 1 for cards in view.sequences]


def main_value(view: AutobusView, seat: int) -> int | None:
    """Returns the rank of `seat`'s main top, None for a joker or an empty main pile."""
    top = view.main_tops[seat]
    return None if not top or is_joker(top) else value(top)


def distance(view: AutobusView, rank: int) -> int:
    """Returns how many plays it takes, at least, before some sequence needs `rank`."""
    return min([rank - 1] + [rank - need for need in needs(view) if need <= rank])


def reaches(view: AutobusView, seat: int, need: int) -> bool:
    """Returns whether `seat` reaches its main top from its slots when a sequence needs `need`."""
    top = main_value(view, seat)
    if top is None or top == 1 or need > top:
        return False
    ranks = zip(view.slot_ranks[seat], view.slots[seat], strict=True)
    held = {rank for rank, cards in ranks if cards}
    return all(rank in held for rank in range(need, top))


def helps_opponent(view: AutobusView, need: int) -> bool:
    """Returns whether a sequence needing `need` (none past K) lets an opponent reach a main top."""
    if need > KING:
        return False
    seats = range(len(view.main_tops))
    return any(reaches(view, seat, need) for seat in seats if seat != view.seat)


# Chains that free the main top ---------------------------------------------------------


class Stock:
    """The hand and slot cards still free while a chain is planned."""

    def __init__(self, view: AutobusView) -> None:
        self.hand = Counter(card[0] for card in view.hand)
        self.slots = [list(cards) for cards in view.slots[view.seat]]
        self.ranks = view.slot_ranks[view.seat]

    def take(self, rank: int) -> tuple[Step, bool] | None:
        """Takes a card for `rank` (hand, slot of the rank, joker); returns it and if a joker."""
        char = RANKS[rank - 1]
        if self.hand[char]:
            self.hand[char] -= 1
            return Step("hand", rank=char), False
        for slot, cards in enumerate(self.slots):
            if cards and self.ranks[slot] == rank:
                return Step("slot", slot=slot), is_joker(cards.pop())
        if self.hand[JOKER]:
            self.hand[JOKER] -= 1
            return Step("hand", rank=JOKER), True
        for slot, cards in enumerate(self.slots):
            if cards and is_joker(cards[-1]):
                cards.pop()
                return Step("slot", slot=slot), True
        return None


def chain(view: AutobusView, sequence: int | None, start: int, goal: int) -> Chain | None:
    """Returns the chain playing ranks `start` .. `goal - 1` onto `sequence`, None if cards lack."""
    stock = Stock(view)
    steps: list[Step] = []
    jokers = 0
    for rank in range(start, goal):
        taken = stock.take(rank)
        if taken is None:
            return None
        steps.append(taken[0])
        jokers += taken[1]
    return Chain(jokers, len(steps), sequence, steps[0])


def best_chain(view: AutobusView) -> Chain | None:
    """Returns the cheapest chain after which the main top fits a sequence, if there is one."""
    goal = main_value(view, view.seat)
    if goal is None:
        return None
    targets: list[tuple[int | None, int]] = [
        (index, need) for index, need in enumerate(needs(view)) if need < goal
    ]
    targets.append((None, 1))
    chains = [chain(view, index, start, goal) for index, start in targets if start < goal]
    found = [c for c in chains if c is not None]
    return min(found, key=lambda c: (c.jokers, c.cards), default=None)


def chain_play(view: AutobusView, legal: Sequence[Action]) -> Action | None:
    """Returns the first play of the cheapest chain that frees the main top, if there is one."""
    found = best_chain(view)
    return None if found is None else find_play(legal, found.first, found.sequence)


def find_play(legal: Sequence[Action], step: Step, sequence: int | None) -> Action | None:
    """Returns the legal play that takes `step` onto `sequence`, if it is listed."""
    for action in legal:
        if not isinstance(action, PlayToSequence) or action.sequence != sequence:
            continue
        if action.source != step.source or action.slot != step.slot:
            continue
        if step.source != "hand" or (action.card is not None and action.card[0] == step.rank):
            return action
    return None


# Playing ---------------------------------------------------------------------------------


def played_card(view: AutobusView, play: PlayToSequence) -> Card:
    """Returns the card a legal play takes."""
    if play.source == "hand":
        assert play.card is not None
        return play.card
    if play.source == "main":
        return view.main_tops[view.seat]
    assert play.slot is not None
    return view.slots[view.seat][play.slot][-1]


def target_need(view: AutobusView, play: PlayToSequence) -> int:
    """Returns the rank the play's sequence needs before the play (1 for a new one)."""
    return 1 if play.sequence is None else len(view.sequences[play.sequence]) + 1


def plays(legal: Sequence[Action], source: Source) -> list[PlayToSequence]:
    """Returns the legal plays from `source`."""
    return [a for a in legal if isinstance(a, PlayToSequence) and a.source == source]


def main_play(view: AutobusView, legal: Sequence[Action]) -> PlayToSequence | None:
    """Returns the best main-top play: helping no opponent, then onto the longest sequence."""
    held = {VALUE[card[0]] for card in view.hand if not is_joker(card)}

    def score(play: PlayToSequence) -> tuple[bool, bool, int]:
        after = target_need(view, play) + 1
        return not helps_opponent(view, after), after in held, after

    return max(plays(legal, "main"), key=score, default=None)


def free_play(view: AutobusView, legal: Sequence[Action]) -> PlayToSequence | None:
    """Returns a plain hand or slot card to play that helps no opponent, main-top progress first."""
    goal = main_value(view, view.seat) or 0
    options = [
        play
        for play in [*plays(legal, "hand"), *plays(legal, "slot")]
        if not is_joker(played_card(view, play))
        and not helps_opponent(view, target_need(view, play) + 1)
    ]
    return max(
        options, key=lambda p: (target_need(view, p) < goal, p.source == "hand"), default=None
    )


def slot_size(view: AutobusView, play: PlayToSequence) -> int:
    """Returns how many cards the slot a play takes from holds."""
    assert play.slot is not None
    return len(view.slots[view.seat][play.slot])


def rescue_play(view: AutobusView, legal: Sequence[Action]) -> PlayToSequence | None:
    """Returns a play that may avoid the bus: a hand card, a slot card that empties or unblocks."""
    held = {VALUE[card[0]] for card in view.hand if not is_joker(card)}
    options: list[tuple[int, bool, PlayToSequence]] = []
    for play in plays(legal, "hand"):
        options.append((2, not helps_opponent(view, target_need(view, play) + 1), play))
    for play in plays(legal, "slot"):
        after = target_need(view, play) + 1
        if slot_size(view, play) == 1 or after in held:
            plain = not is_joker(played_card(view, play))
            options.append((1, plain, play))
    return max(options, key=lambda option: option[:2], default=(0, False, None))[2]


# Ending the turn -------------------------------------------------------------------------


def discard_score(view: AutobusView, action: Discard) -> tuple[bool, int, bool, int]:
    """Returns how good a discard is: keep jokers, stack on a rank, spare empty slots, near rank."""
    seat = view.seat
    cards = view.slots[seat][action.slot]
    empties = sum(not slot for slot in view.slots[seat])
    if cards:
        place = 4 if is_joker(cards[-1]) and not is_joker(action.card) else 10
    else:
        place = 6 if empties > 1 else 2
    rank = action.joker_rank or view.slot_ranks[seat][action.slot] or value(action.card)
    twin = sum(card[0] == action.card[0] for card in view.hand) > 1
    return not is_joker(action.card), place, twin, -distance(view, rank)


def bus_score(view: AutobusView, action: UnderTheBus) -> tuple[bool, int]:
    """Returns how good a card is to put under the bus: a rank held twice, then soon needed."""
    twin = sum(card[0] == action.card[0] for card in view.hand) > 1
    return twin, -distance(view, value(action.card))


def turn_end(view: AutobusView, legal: Sequence[Action]) -> Action | None:
    """Returns the best discard, else the best card to put under the bus."""
    discards = [a for a in legal if isinstance(a, Discard)]
    if discards:
        return max(discards, key=lambda a: discard_score(view, a))
    buses = [a for a in legal if isinstance(a, UnderTheBus)]
    return max(buses, key=lambda a: bus_score(view, a), default=None)


class HeuristicBot(Bot[AutobusView]):
    """Main top first, chains that free it, jokers kept for it, discards that keep slots useful."""

    name = "heuristic"

    def choose(self, view: AutobusView, legal: Sequence[Action], seed: str) -> Action:
        """Returns one of `legal`, the same for the same (view, legal) whatever `seed`."""
        assert isinstance(view, AutobusView)
        if len(legal) == 1:
            return legal[0]
        return self.pick(view, legal) or legal[0]

    def pick(self, view: AutobusView, legal: Sequence[Action]) -> Action | None:
        """Returns the preferred legal action, None only when `legal` offers nothing known."""
        action = main_play(view, legal) or chain_play(view, legal) or free_play(view, legal)
        if action is not None:
            return action
        ended = [a for a in legal if isinstance(a, EndTurn)]
        if ended:
            return ended[0]
        if not any(isinstance(a, Discard) for a in legal):
            action = rescue_play(view, legal)
        return action or turn_end(view, legal)
