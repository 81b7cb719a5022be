"""What a seat may play: the pile's refusals and the legal actions, in a stable order."""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import IllegalAction
from shared.games.cards import JOKER, Card, rank_of
from shared.games.shithead.messages import (
    PickUp,
    PlayCards,
    PlayFaceDown,
    PlayFromDeck,
    Ready,
    ShitheadAction,
    Stack,
    Swap,
)
from shared.games.shithead.rules import COURT, ORDER, ShitheadRuleset
from shared.games.shithead.state import ShitheadState, cards_in, zone_of


def effective_top(rules: ShitheadRuleset, pile: Sequence[Card]) -> str | None:
    """Returns the rank the next card is compared with (below transparent cards), or None."""
    for card in reversed(pile):
        if rank_of(card) != rules.transparent:
            return rank_of(card)
    return None


def refusal(rules: ShitheadRuleset, pile: Sequence[Card], rank: str) -> str | None:
    """Returns the rule that forbids playing `rank` on `pile`, or None when it may be played."""
    if rank in (rules.reset, JOKER):
        return None
    top = effective_top(rules, pile)
    if rank == rules.burn:
        return "burn_not_on_faces" if rules.ten_not_on_faces and top in COURT else None
    if top is None or top in (rules.reset, JOKER):
        return None
    if rank == rules.lower and rules.lower_on_anything:
        return None
    if top == rules.lower:
        return None if ORDER[rank] <= ORDER[top] else "must_be_equal_or_lower"
    return None if ORDER[rank] >= ORDER[top] else "must_be_equal_or_higher"


def count_allowed(rules: ShitheadRuleset, count: int) -> bool:
    """Returns whether a play of `count` cards of one rank is allowed by `multiples`."""
    if rules.multiples == "single":
        return count == 1
    if rules.multiples == "three_or_more":
        return count == 1 or count >= 3
    return count >= 1


def plays_of(state: ShitheadState, seat: int) -> list[ShitheadAction]:
    """Returns the legal card plays of `seat`: one per playable rank and allowed count."""
    only: str | None = None
    if state.opening is not None:
        only, zone = state.opening
    else:
        found = zone_of(state, seat)
        if found not in ("hand", "face_up"):
            return []
        zone = found
    groups: dict[str, list[Card]] = {}
    for card in sorted(cards_in(state, seat, zone)):
        groups.setdefault(card[0], []).append(card)
    rules, pile = state.ruleset, state.pile
    plays: list[ShitheadAction] = []
    for rank in sorted(groups, key=_rank_key):
        if (only is not None and rank != only) or refusal(rules, pile, rank) is not None:
            continue
        cards = groups[rank]
        plays.extend(
            PlayCards(cards=cards[:count])
            for count in range(1, len(cards) + 1)
            if count_allowed(rules, count)
        )
    return plays


def _rank_key(rank: str) -> int:
    """Orders ranks low to high, jokers last."""
    return ORDER.get(rank, len(ORDER))


def legal_actions(state: ShitheadState, seat: int) -> list[ShitheadAction]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act)."""
    rules = state.ruleset
    if state.phase == "swap":
        if state.ready[seat]:
            return []
        pairs = {
            (min(c for c in state.hands[seat] if rank_of(c) == h), u)
            for h in {rank_of(c) for c in state.hands[seat]}
            for u in state.face_up[seat]
            if rank_of(u) != h and not stacked(state, seat, u)
        }
        swaps = [Swap(hand_card=h, face_up_card=u) for h, u in sorted(pairs)]
        return [Ready(), *swaps, *_stacks(state, seat)]
    if state.phase != "play" or seat != state.turn:
        return []
    plays = plays_of(state, seat)
    actions = list(plays)
    if state.opening is None and zone_of(state, seat) == "face_down":
        actions.extend(PlayFaceDown(index=i) for i in range(len(state.face_down[seat])))
    if (
        state.opening is None
        and state.deck
        and (rules.blind_deck_play or (rules.gamble_from_deck and not plays))
    ):
        actions.append(PlayFromDeck())
    able = bool(plays) or zone_of(state, seat) == "face_down"
    if state.opening is None and state.pile and (not able or rules.voluntary_pickup):
        actions.append(PickUp())
    return actions


def stacked(state: ShitheadState, seat: int, card: Card) -> bool:
    """Returns whether face-up `card` lies on a stack that stays face up: where the ruleset
    stacks, face-up cards of one rank form a stack, and none of them goes back to the hand."""
    if not state.ruleset.stacking:
        return False
    return sum(rank_of(up) == rank_of(card) for up in state.face_up[seat]) > 1


def _stacks(state: ShitheadState, seat: int) -> list[ShitheadAction]:
    """Returns the stacks `seat` may make while swapping: one per hand rank lying face up."""
    if not state.ruleset.stacking:
        return []
    up = {rank_of(card) for card in state.face_up[seat]}
    firsts = {rank_of(c): c for c in sorted(state.hands[seat], reverse=True)}
    return [Stack(hand_card=card) for rank, card in sorted(firsts.items()) if rank in up]


def default_action(state: ShitheadState, seat: int) -> ShitheadAction:
    """Returns what the platform plays for `seat` when it runs out of time (one of its legal
    actions): Ready while swapping; the opening card when it must open; a face-down card turn
    when it plays blind; else a pickup where one is allowed; else its first legal action (a
    play on an empty pile, or a deck card turn when that is all it may do).
    """
    legal = legal_actions(state, seat)
    if not legal:
        raise IllegalAction("not_your_turn", f"seat {seat} has nothing to do")
    for wanted in (Ready, PlayFaceDown, PickUp):
        for action in legal:
            if isinstance(action, wanted):
                return action
    return legal[0]
