"""Autobus's evolve: the state after each event, one handler per event type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from shared.games.autobus.messages import (
    CardDiscarded,
    CardPlayed,
    CardsDrawn,
    CardUnderTheBus,
    GameStarted,
    MainTopRevealed,
    SequenceCompleted,
    StockReshuffled,
    TurnEnded,
    TurnPassed,
)
from shared.games.autobus.state import AutobusState
from shared.games.cards import Card
from shared.messages.common import ClockEvent, Event, GameFinished

T = TypeVar("T")


def _put(items: tuple[T, ...], index: int, item: T) -> tuple[T, ...]:
    """Returns `items` with the entry at `index` replaced by `item`."""
    changed = list(items)
    changed[index] = item
    return tuple(changed)


def _less(cards: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    """Returns `cards` less one copy of `card` (which must be there)."""
    left = list(cards)
    left.remove(card)
    return tuple(left)


def _start(event: GameStarted) -> AutobusState:
    """Returns the state right after the deal."""
    slots = event.ruleset.slots
    return AutobusState(
        ruleset=event.ruleset,
        mains=tuple(tuple(m) for m in event.mains),
        hands=tuple(tuple(h) for h in event.hands),
        slots=tuple(((),) * slots for _ in range(event.players)),
        slot_ranks=tuple((None,) * slots for _ in range(event.players)),
        draw=tuple(event.draw),
        shuffle_seed=event.shuffle_seed,
    )


Slots = tuple[tuple[tuple[Card, ...], ...], ...]
"""Each seat's slots, each a pile bottom first (`AutobusState.slots`)."""
SlotRanks = tuple[tuple[int | None, ...], ...]
"""The rank of each seat's slots (`AutobusState.slot_ranks`)."""


def _slots_after(
    state: AutobusState, seat: int, slot: int, cards: tuple[Card, ...], rank: int | None
) -> tuple[Slots, SlotRanks]:
    """Returns the slots and slot ranks with `seat`'s `slot` holding `cards` of `rank`."""
    slots = _put(state.slots, seat, _put(state.slots[seat], slot, cards))
    ranks = state.slot_ranks
    rank = rank if cards else None
    if ranks[seat][slot] != rank:
        ranks = _put(ranks, seat, _put(ranks[seat], slot, rank))
    return slots, ranks


def _set_slot(
    state: AutobusState, seat: int, slot: int, cards: tuple[Card, ...], rank: int | None
) -> AutobusState:
    """Returns `state` with `seat`'s `slot` holding `cards` of `rank`."""
    slots, ranks = _slots_after(state, seat, slot, cards, rank)
    return msgspec.structs.replace(state, slots=slots, slot_ranks=ranks)


def fold_played(state: AutobusState, e: CardPlayed) -> AutobusState:
    """Moves the card from its source onto its sequence (a new one when opened)."""
    if e.opened:
        sequences = (*state.sequences, (e.card,))
    else:
        sequences = _put(state.sequences, e.sequence, (*state.sequences[e.sequence], e.card))
    if e.source == "hand":
        hands = _put(state.hands, e.seat, _less(state.hands[e.seat], e.card))
        return msgspec.structs.replace(
            state, hands=hands, sequences=sequences, played_this_turn=True
        )
    if e.source == "main":
        mains = _put(state.mains, e.seat, state.mains[e.seat][1:])
        return msgspec.structs.replace(
            state, mains=mains, sequences=sequences, played_this_turn=True
        )
    assert e.slot is not None
    cards = state.slots[e.seat][e.slot][:-1]
    slots, ranks = _slots_after(state, e.seat, e.slot, cards, state.slot_ranks[e.seat][e.slot])
    return msgspec.structs.replace(
        state, slots=slots, slot_ranks=ranks, sequences=sequences, played_this_turn=True
    )


def fold_completed(state: AutobusState, e: SequenceCompleted) -> AutobusState:
    """Moves the completed sequence to the completed stock; later sequences move up."""
    sequences = state.sequences[: e.sequence] + state.sequences[e.sequence + 1 :]
    return msgspec.structs.replace(
        state, sequences=sequences, completed=state.completed + tuple(e.cards)
    )


def fold_drawn(state: AutobusState, e: CardsDrawn) -> AutobusState:
    """Moves the cards drawn from the top of the draw pile to the seat's hand."""
    hand = state.hands[e.seat] + tuple(e.cards)
    return msgspec.structs.replace(
        state, hands=_put(state.hands, e.seat, hand), draw=state.draw[len(e.cards) :]
    )


def fold_reshuffled(state: AutobusState, e: StockReshuffled) -> AutobusState:
    """Puts the reshuffled completed stock under the draw pile."""
    return msgspec.structs.replace(
        state, draw=state.draw + tuple(e.cards), completed=(), reshuffles=e.number
    )


def fold_discarded(state: AutobusState, e: CardDiscarded) -> AutobusState:
    """Moves the card from the hand onto the slot, which takes the event's rank."""
    seat, slot = e.seat, e.slot
    cards = (*state.slots[seat][slot], e.card)
    slots, ranks = _slots_after(state, seat, slot, cards, e.rank)
    hands = _put(state.hands, seat, _less(state.hands[seat], e.card))
    return msgspec.structs.replace(state, hands=hands, slots=slots, slot_ranks=ranks)


def fold_under_the_bus(state: AutobusState, e: CardUnderTheBus) -> AutobusState:
    """Moves the card from the hand under the seat's main pile."""
    return msgspec.structs.replace(
        state,
        hands=_put(state.hands, e.seat, _less(state.hands[e.seat], e.card)),
        mains=_put(state.mains, e.seat, (*state.mains[e.seat], e.card)),
    )


def fold_turn_passed(state: AutobusState, e: TurnPassed) -> AutobusState:
    """Gives the turn to the event's seat, counting the turn and a quiet one."""
    quiet = not state.played_this_turn and not state.draw and not state.completed
    return msgspec.structs.replace(
        state,
        turn=e.seat,
        turns=state.turns + 1,
        played_this_turn=False,
        quiet_turns=state.quiet_turns + 1 if quiet else 0,
    )


def fold_finished(state: AutobusState, e: GameFinished) -> AutobusState:
    """Records the result."""
    return msgspec.structs.replace(state, result=e.result)


def _unchanged(state: AutobusState, _event: Any) -> AutobusState:
    """Returns `state`: the event changes nothing of the table."""
    return state


HANDLERS: dict[type[Event], Callable[[AutobusState, Any], AutobusState]] = {
    CardPlayed: fold_played,
    SequenceCompleted: fold_completed,
    CardsDrawn: fold_drawn,
    StockReshuffled: fold_reshuffled,
    CardDiscarded: fold_discarded,
    CardUnderTheBus: fold_under_the_bus,
    TurnPassed: fold_turn_passed,
    GameFinished: fold_finished,
    MainTopRevealed: _unchanged,
    TurnEnded: _unchanged,
}
"""The state change of each of the game's own event types, by exact type."""


def evolve(state: AutobusState | None, event: Event) -> AutobusState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    handler = HANDLERS.get(type(event))
    if handler is not None and state is not None:
        return handler(state, event)
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    if isinstance(event, GameFinished):
        return fold_finished(state, event)
    if isinstance(event, ClockEvent):
        return state
    raise TypeError(f"not an Autobus event: {type(event).__name__}")
