"""What a seat may play: where a card fits, and the legal actions in a stable order."""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import IllegalAction
from shared.games.autobus.messages import (
    AutobusAction,
    Discard,
    EndTurn,
    PlayToSequence,
    Source,
    UnderTheBus,
)
from shared.games.autobus.rules import KING, value
from shared.games.autobus.state import AutobusState
from shared.games.cards import Card, is_joker


def fits_sequence(card: Card, sequence: Sequence[Card]) -> bool:
    """Returns whether `card` may go onto `sequence` (a joker takes the rank it needs)."""
    return is_joker(card) or value(card) == len(sequence) + 1


def slot_fits(state: AutobusState, seat: int, slot: int, card: Card) -> bool:
    """Returns whether `card` may be discarded onto `seat`'s `slot`."""
    rank = state.slot_ranks[seat][slot]
    return rank is None or is_joker(card) or value(card) == rank


def fits_no_slot(state: AutobusState, seat: int, card: Card) -> bool:
    """Returns whether `card` fits none of `seat`'s slots (so it may go under the bus)."""
    return not any(slot_fits(state, seat, slot, card) for slot in range(state.ruleset.slots))


def source_card(state: AutobusState, seat: int, action: PlayToSequence) -> Card:
    """Returns the card a play takes, or raises why it cannot take it."""
    if action.source == "hand":
        if action.card is None or action.card not in state.hands[seat]:
            raise IllegalAction("card_not_held", f"{action.card} is not in the hand")
        if action.slot is not None:
            raise IllegalAction("slot_not_allowed", "only a play from a slot names a slot")
        return action.card
    if action.card is not None:
        raise IllegalAction("card_not_allowed", "only a play from the hand names a card")
    if action.source == "main" and action.slot is not None:
        raise IllegalAction("slot_not_allowed", "only a play from a slot names a slot")
    if action.source == "main":
        return state.mains[seat][0]
    slot = action.slot
    if slot is None or not 0 <= slot < state.ruleset.slots:
        raise IllegalAction("no_such_slot", f"slots are 0 to {state.ruleset.slots - 1}")
    if not state.slots[seat][slot]:
        raise IllegalAction("empty_slot", f"slot {slot} is empty")
    return state.slots[seat][slot][-1]


def _plays(state: AutobusState, seat: int) -> list[AutobusAction]:
    """Returns the legal plays onto sequences, one per source rank and target."""
    sources: list[tuple[Source, Card | None, int | None, Card]] = []
    seen: set[str] = set()
    for held in sorted(state.hands[seat]):
        if held[0] not in seen:
            seen.add(held[0])
            sources.append(("hand", held, None, held))
    sources.append(("main", None, None, state.mains[seat][0]))
    for number, cards in enumerate(state.slots[seat]):
        if cards:
            sources.append(("slot", None, number, cards[-1]))
    plays: list[AutobusAction] = []
    for source, card, slot, shown in sources:
        for index, sequence in enumerate(state.sequences):
            if fits_sequence(shown, sequence):
                plays.append(PlayToSequence(source=source, card=card, slot=slot, sequence=index))
        if is_joker(shown) or value(shown) == 1:
            plays.append(PlayToSequence(source=source, card=card, slot=slot, sequence=None))
    return plays


def can_play_to_sequence(state: AutobusState, seat: int) -> bool:
    """Returns whether `seat` holds a card that may go onto a sequence now (from its hand, its
    main-pile top or a slot top, onto an open sequence or as a new one), whoever's turn it is."""
    return bool(_plays(state, seat))


def _turn_enders(state: AutobusState, seat: int) -> list[AutobusAction]:
    """Returns the legal ways to end the turn."""
    hand = state.hands[seat]
    if not hand:
        return [EndTurn()]
    enders: list[AutobusAction] = []
    ranks_done: set[str] = set()
    for card in sorted(hand):
        if card[0] in ranks_done:
            continue
        ranks_done.add(card[0])
        for slot in range(state.ruleset.slots):
            if not slot_fits(state, seat, slot, card):
                continue
            if is_joker(card) and state.slot_ranks[seat][slot] is None:
                ranks = range(1, KING + 1)
                enders.extend(Discard(card=card, slot=slot, joker_rank=r) for r in ranks)
            else:
                enders.append(Discard(card=card, slot=slot))
        if fits_no_slot(state, seat, card):
            enders.append(UnderTheBus(card=card))
    return enders


def legal_actions(state: AutobusState, seat: int) -> list[AutobusAction]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act)."""
    if state.result is not None or seat != state.turn:
        return []
    return [*_plays(state, seat), *_turn_enders(state, seat)]


def default_action(state: AutobusState, seat: int) -> AutobusAction:
    """Returns what the platform plays for `seat` when it runs out of time: the first legal
    discard (cards in code order, slots from 0), else the first card under the bus, else
    EndTurn with an empty hand."""
    if state.result is not None or seat != state.turn:
        raise IllegalAction("not_your_turn", f"seat {seat} has nothing to do")
    enders = _turn_enders(state, seat)
    return next((a for a in enders if isinstance(a, Discard)), enders[0])
