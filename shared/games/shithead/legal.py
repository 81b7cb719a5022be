"""What a seat may do: its legal actions in a stable order, and whether it has a card play."""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import IllegalAction
from shared.games.cards import Card, rank_of
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
from shared.games.shithead.state import ShitheadState, cards_in
from shared.games.shithead.tables import CARD_ORDER, Tables, tables


def _plays(
    found: Tables, cards: Sequence[Card], pile: Sequence[Card], only: str | None = None
) -> list[ShitheadAction]:
    """Returns the legal plays of `cards` on `pile` (of rank `only` if set): one per playable
    rank and allowed count, ranks low to high (jokers last), each the first cards of its rank
    in code order."""
    ok = found.playable[found.top(pile)]
    playable = [card for card in cards if ok[card]]
    if only is not None:
        playable = [card for card in playable if card[0] == only]
    playable.sort(key=CARD_ORDER.__getitem__)
    least = found.multiple_from
    plays: list[ShitheadAction] = []
    rank = ""
    run: list[Card] = []
    for card in playable:
        if card[0] != rank:
            rank = card[0]
            run = [card]
            plays.append(PlayCards(cards=run))
        else:
            run = [*run, card]
            if len(run) >= least:
                plays.append(PlayCards(cards=run))
    return plays


def can_play(state: ShitheadState, seat: int) -> bool:
    """Returns whether `seat` has a card play from its hand or face-up cards."""
    found = tables(state.ruleset)
    ok = found.playable[found.top(state.pile)]
    opening = state.opening
    if opening is not None:
        only, zone = opening
        return any(ok[card] for card in cards_in(state, seat, zone) if card[0] == only)
    cards = state.hands[seat]
    if not cards:
        if state.deck:
            return False
        cards = state.face_up[seat]
    return any(map(ok.__getitem__, cards))


def legal_actions(state: ShitheadState, seat: int) -> list[ShitheadAction]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act).

    Swapping: Ready, the swaps, the stacks. Playing, for the seat whose turn it is: its card
    plays (the opening card only, when it leads), or its face-down turns; then a deck play and
    a pickup where the ruleset and the table allow."""
    if state.phase != "play":
        if state.phase == "swap" and not state.ready[seat]:
            return _swap_actions(state, seat)
        return []
    if seat != state.turn:
        return []
    found, pile = tables(state.ruleset), state.pile
    if state.opening is not None:
        only, zone = state.opening
        return _plays(found, cards_in(state, seat, zone), pile, only)
    hand, deck = state.hands[seat], state.deck
    actions: list[ShitheadAction]
    if hand:
        actions = _plays(found, hand, pile)
    elif deck:
        actions = []
    elif state.face_up[seat]:
        actions = _plays(found, state.face_up[seat], pile)
    else:
        actions = [PlayFaceDown(index=i) for i in range(len(state.face_down[seat]))]
    able = bool(actions)
    rules = state.ruleset
    if deck and (rules.blind_deck_play or (rules.gamble_from_deck and not able)):
        actions.append(PlayFromDeck())
    if pile and (not able or rules.voluntary_pickup):
        actions.append(PickUp())
    return actions


def _swap_actions(state: ShitheadState, seat: int) -> list[ShitheadAction]:
    """Returns the swap-phase actions of an unready seat: Ready, its swaps, its stacks."""
    lowest = {card[0]: card for card in sorted(state.hands[seat], reverse=True)}
    free = [up for up in state.face_up[seat] if not stacked(state, seat, up)]
    pairs = {(low, up) for rank, low in lowest.items() for up in free if up[0] != rank}
    swaps = [Swap(hand_card=h, face_up_card=u) for h, u in sorted(pairs)]
    return [Ready(), *swaps, *_stacks(state, seat)]


def stacked(state: ShitheadState, seat: int, card: Card) -> bool:
    """Returns whether face-up `card` lies on a stack that stays face up: where the ruleset
    stacks, face-up cards of one rank form a stack, and none of them goes back to the hand."""
    if not state.ruleset.stacking:
        return False
    return sum(up[0] == card[0] for up in state.face_up[seat]) > 1


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
