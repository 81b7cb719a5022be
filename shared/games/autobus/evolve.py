"""Autobus's evolve: the state after each event, one `match` over the event union."""

from __future__ import annotations

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
from shared.games.cards import Card, replace_at, without
from shared.messages.common import ClockEvent, Event, GameFinished


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


def _set_slot(
    state: AutobusState, seat: int, slot: int, cards: tuple[Card, ...], rank: int | None
) -> AutobusState:
    """Returns `state` with `seat`'s `slot` holding `cards` of `rank`."""
    seat_slots = list(state.slots[seat])
    seat_slots[slot] = cards
    seat_ranks = list(state.slot_ranks[seat])
    seat_ranks[slot] = rank if cards else None
    return msgspec.structs.replace(
        state,
        slots=(*state.slots[:seat], tuple(seat_slots), *state.slots[seat + 1 :]),
        slot_ranks=(*state.slot_ranks[:seat], tuple(seat_ranks), *state.slot_ranks[seat + 1 :]),
    )


def _played(state: AutobusState, e: CardPlayed) -> AutobusState:
    if e.source == "hand":
        state = msgspec.structs.replace(
            state, hands=replace_at(state.hands, e.seat, without(state.hands[e.seat], [e.card]))
        )
    elif e.source == "main":
        state = msgspec.structs.replace(
            state, mains=replace_at(state.mains, e.seat, state.mains[e.seat][1:])
        )
    else:
        assert e.slot is not None
        cards = state.slots[e.seat][e.slot][:-1]
        state = _set_slot(state, e.seat, e.slot, cards, state.slot_ranks[e.seat][e.slot])
    sequences = list(state.sequences)
    if e.opened:
        sequences.append((e.card,))
    else:
        sequences[e.sequence] += (e.card,)
    return msgspec.structs.replace(state, sequences=tuple(sequences), played_this_turn=True)


def _completed(state: AutobusState, e: SequenceCompleted) -> AutobusState:
    sequences = state.sequences[: e.sequence] + state.sequences[e.sequence + 1 :]
    return msgspec.structs.replace(
        state, sequences=sequences, completed=state.completed + tuple(e.cards)
    )


def _drawn(state: AutobusState, e: CardsDrawn) -> AutobusState:
    hand = state.hands[e.seat] + tuple(e.cards)
    return msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, hand), draw=state.draw[len(e.cards) :]
    )


def _reshuffled(state: AutobusState, e: StockReshuffled) -> AutobusState:
    return msgspec.structs.replace(
        state, draw=state.draw + tuple(e.cards), completed=(), reshuffles=e.number
    )


def _discarded(state: AutobusState, e: CardDiscarded) -> AutobusState:
    state = msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, without(state.hands[e.seat], [e.card]))
    )
    return _set_slot(state, e.seat, e.slot, (*state.slots[e.seat][e.slot], e.card), e.rank)


def _under_the_bus(state: AutobusState, e: CardUnderTheBus) -> AutobusState:
    hand = without(state.hands[e.seat], [e.card])
    main = (*state.mains[e.seat], e.card)
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        mains=replace_at(state.mains, e.seat, main),
    )


def _turn_passed(state: AutobusState, e: TurnPassed) -> AutobusState:
    quiet = not state.played_this_turn and not state.draw and not state.completed
    return msgspec.structs.replace(
        state,
        turn=e.seat,
        turns=state.turns + 1,
        played_this_turn=False,
        quiet_turns=state.quiet_turns + 1 if quiet else 0,
    )


def evolve(state: AutobusState | None, event: Event) -> AutobusState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    match event:
        case CardPlayed():
            return _played(state, event)
        case SequenceCompleted():
            return _completed(state, event)
        case CardsDrawn():
            return _drawn(state, event)
        case StockReshuffled():
            return _reshuffled(state, event)
        case CardDiscarded():
            return _discarded(state, event)
        case CardUnderTheBus():
            return _under_the_bus(state, event)
        case TurnPassed():
            return _turn_passed(state, event)
        case GameFinished(result=result):
            return msgspec.structs.replace(state, result=result)
        case MainTopRevealed() | TurnEnded() | ClockEvent():
            return state
    raise TypeError(f"not an Autobus event: {type(event).__name__}")
