"""What a seat may play: where a card fits, and the legal actions in a stable order."""

from __future__ import annotations

from collections.abc import Sequence

from shared.errors import IllegalAction
from shared.games.autobus.memo import Memo
from shared.games.autobus.messages import (
    AutobusAction,
    Discard,
    EndTurn,
    PlayToSequence,
    UnderTheBus,
)
from shared.games.autobus.rules import KING, NUMBER, RankNumber
from shared.games.autobus.state import AutobusState
from shared.games.cards import Card


def fits_sequence(card: Card, sequence: Sequence[Card]) -> bool:
    """Returns whether `card` may go onto `sequence` (a joker takes the rank it needs)."""
    number = NUMBER[card]
    return number == 0 or number == len(sequence) + 1


def slot_fits(state: AutobusState, seat: int, slot: int, card: Card) -> bool:
    """Returns whether `card` may be discarded onto `seat`'s `slot`."""
    rank = state.slot_ranks[seat][slot]
    return rank is None or NUMBER[card] in (0, rank)


def fits_no_slot(state: AutobusState, seat: int, card: Card) -> bool:
    """Returns whether `card` fits none of `seat`'s slots (so it may go under the bus)."""
    ranks = state.slot_ranks[seat][: state.ruleset.slots]
    return not ranks or (None not in ranks and NUMBER[card] not in (0, *ranks))


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


Targets = dict[int, tuple[int | None, ...]]
"""Where a card of each rank number that may go onto a sequence goes (0 is a joker): the open
sequences needing it in order, then None (a new sequence) for an ace or a joker."""


def _targets_of(sequences: tuple[tuple[Card, ...], ...]) -> Targets:
    """Returns the targets of each rank number that may go onto one of the open sequences."""
    targets: dict[int, tuple[int | None, ...]] = {}
    for index, cards in enumerate(sequences):
        need = len(cards) + 1
        targets[need] = (*targets.get(need, ()), index)
    targets[0] = (*range(len(sequences)), None)
    targets[1] = (*targets.get(1, ()), None)
    return targets


_TARGETS = Memo(_targets_of, 512)
"""`_targets_of` the open sequences."""


def _targets(state: AutobusState) -> Targets:
    """Returns where a card of each rank number may go in `state`."""
    return _TARGETS[state.sequences]


def _top_plays(state: AutobusState, seat: int, targets: Targets) -> list[AutobusAction]:
    """Returns the legal plays of the main pile's top, then of each slot's top, each onto its
    targets in order."""
    plays: list[AutobusAction] = []
    number = NUMBER[state.mains[seat][0]]
    if number in targets:
        for index in targets[number]:
            plays.append(PlayToSequence(source="main", sequence=index))
    for slot, cards in enumerate(state.slots[seat]):
        if cards:
            number = NUMBER[cards[-1]]
            if number in targets:
                for index in targets[number]:
                    plays.append(PlayToSequence(source="slot", slot=slot, sequence=index))
    return plays


def _can_play(state: AutobusState, seat: int, targets: Targets) -> bool:
    """Returns whether `seat` has a card that may go somewhere of `targets`."""
    for card in state.hands[seat]:
        if NUMBER[card] in targets:
            return True
    if NUMBER[state.mains[seat][0]] in targets:
        return True
    return any(NUMBER[cards[-1]] in targets for cards in state.slots[seat] if cards)


def can_play_to_sequence(state: AutobusState, seat: int) -> bool:
    """Returns whether `seat` holds a card that may go onto a sequence now (from its hand, its
    main-pile top or a slot top, onto an open sequence or as a new one), whoever's turn it is."""
    return _can_play(state, seat, _targets(state))


def anyone_can_play(state: AutobusState) -> bool:
    """Returns whether any seat holds a card that may go onto a sequence now."""
    targets = _targets(state)
    return any(_can_play(state, seat, targets) for seat in range(len(state.hands)))


SlotFits = tuple[tuple[int, ...], ...]
"""The slots a plain card of each rank number (1 ace to 13 king; 0 unused) fits, in order."""


def _slot_fits_of(ranks: tuple[RankNumber | None, ...]) -> SlotFits:
    """Returns the slots a plain card of each rank number fits, given a seat's slot ranks."""
    empty = tuple(slot for slot, rank in enumerate(ranks) if rank is None)
    fits = [empty] * (KING + 1)
    for slot, rank in enumerate(ranks):
        if rank is not None:
            fits[rank] = tuple(sorted((*fits[rank], slot)))
    return tuple(fits)


_SLOT_FITS = Memo(_slot_fits_of, 1024)
"""`_slot_fits_of` a seat's slot ranks."""


def _joker_enders(card: Card, ranks: tuple[RankNumber | None, ...]) -> list[AutobusAction]:
    """Returns the ways to end a turn with a joker: onto every slot, naming each rank on an
    empty one (under the bus only with no slot at all)."""
    enders: list[AutobusAction] = []
    for slot, rank in enumerate(ranks):
        if rank is None:
            enders += [Discard(card=card, slot=slot, joker_rank=r) for r in range(1, KING + 1)]
        else:
            enders.append(Discard(card=card, slot=slot))
    return enders or [UnderTheBus(card=card)]


def _hand_actions(
    state: AutobusState, seat: int, targets: Targets
) -> tuple[list[AutobusAction], list[AutobusAction]]:
    """Returns the legal plays from the hand onto sequences and the legal ways to end the turn,
    for the first card of each rank in code order (suits never matter): a discard onto each
    slot it fits, else under the bus; EndTurn with an empty hand."""
    hand = state.hands[seat]
    if not hand:
        return [], [EndTurn()]
    ranks = state.slot_ranks[seat][: state.ruleset.slots]
    fits = _SLOT_FITS[ranks]
    plays: list[AutobusAction] = []
    enders: list[AutobusAction] = []
    last = ""
    for card in sorted(hand):
        if card[0] == last:
            continue
        last = card[0]
        number = NUMBER[card]
        if number in targets:
            for index in targets[number]:
                plays.append(PlayToSequence(source="hand", card=card, sequence=index))
        if number == 0:
            enders += _joker_enders(card, ranks)
        elif fits[number]:
            for slot in fits[number]:
                enders.append(Discard(card=card, slot=slot))
        else:
            enders.append(UnderTheBus(card=card))
    return plays, enders


def legal_actions(state: AutobusState, seat: int) -> list[AutobusAction]:
    """Returns the legal actions of `seat`, in a stable order (nothing when it may not act):
    plays from the hand, the main pile and the slots, then the ways to end the turn."""
    if state.result is not None or seat != state.turn:
        return []
    targets = _targets(state)
    plays, enders = _hand_actions(state, seat, targets)
    plays += _top_plays(state, seat, targets)
    plays += enders
    return plays


def default_action(state: AutobusState, seat: int) -> AutobusAction:
    """Returns what the platform plays for `seat` when it runs out of time: the first legal
    discard (cards in code order, slots from 0), else the first card under the bus, else
    EndTurn with an empty hand."""
    if state.result is not None or seat != state.turn:
        raise IllegalAction("not_your_turn", f"seat {seat} has nothing to do")
    enders = _hand_actions(state, seat, _targets(state))[1]
    return next((a for a in enders if isinstance(a, Discard)), enders[0])
