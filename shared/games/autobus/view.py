"""What one seat may know: its view of the table, and each event as it may see it."""

from __future__ import annotations

import msgspec

from shared.games.autobus.messages import (
    AutobusAction,
    CardDiscarded,
    CardPlayed,
    CardsDrawn,
    CardUnderTheBus,
    Discard,
    EndTurn,
    GameStarted,
    PlayToSequence,
    StockReshuffled,
    TurnEnded,
    UnderTheBus,
)
from shared.games.autobus.rules import AutobusRuleset, RankNumber
from shared.games.autobus.state import AutobusState
from shared.games.cards import HIDDEN, Card, is_joker
from shared.messages.common import Event, Result


class AutobusView(msgspec.Struct, frozen=True):
    """What one seat may know: its hand, and everything public on the table."""

    seat: int
    """The seat this view is of."""
    ruleset: AutobusRuleset
    """The game's ruleset."""
    turn: int
    """The seat to move."""
    hand: list[Card]
    """The seat's own hand."""
    main_tops: list[str]
    """Each seat's main pile top, a card code (face up); "" for an empty pile."""
    main_sizes: list[int]
    """The cards in each seat's main pile."""
    slots: list[list[list[Card]]]
    """Each seat's discard slots, each a pile bottom first (all face up)."""
    slot_ranks: list[list[RankNumber | None]]
    """The rank of each seat's slots; null for an empty slot."""
    sequences: list[list[Card]]
    """The open sequences, each bottom (ace) first."""
    hand_sizes: list[int]
    """The cards in each seat's hand."""
    draw_size: int
    """The cards in the draw pile."""
    completed_size: int
    """The cards of completed sequences waiting to be reshuffled."""
    turns: int
    """Turns played so far."""
    played_this_turn: bool
    """Whether the seat to move played onto a sequence this turn."""
    result: Result | None
    """The result once the game is over; else null."""


def view(state: AutobusState, seat: int) -> AutobusView:
    """Returns exactly what `seat` may know (docs/rules/hospodsky-autobus.md, its last section)."""
    return AutobusView(
        seat=seat,
        ruleset=state.ruleset,
        turn=state.turn,
        hand=list(state.hands[seat]),
        main_tops=[main[0] if main else "" for main in state.mains],
        main_sizes=[len(main) for main in state.mains],
        slots=[[list(cards) for cards in seat_slots] for seat_slots in state.slots],
        slot_ranks=[list(ranks) for ranks in state.slot_ranks],
        sequences=[list(cards) for cards in state.sequences],
        hand_sizes=[len(hand) for hand in state.hands],
        draw_size=len(state.draw),
        completed_size=len(state.completed),
        turns=state.turns,
        played_this_turn=state.played_this_turn,
        result=state.result,
    )


class AutobusTable(msgspec.Struct, frozen=True):
    """What anyone may know of a running game, a spectator's table: everything public (the
    main piles' tops, the slots, the sequences) and counts of the hands and piles."""

    ruleset: AutobusRuleset
    """The game's ruleset."""
    turn: int
    """The seat to move."""
    main_tops: list[str]
    """Each seat's main pile top, a card code (face up); "" for an empty pile."""
    main_sizes: list[int]
    """The cards in each seat's main pile."""
    slots: list[list[list[Card]]]
    """Each seat's discard slots, each a pile bottom first (all face up)."""
    slot_ranks: list[list[RankNumber | None]]
    """The rank of each seat's slots; null for an empty slot."""
    sequences: list[list[Card]]
    """The open sequences, each bottom (ace) first."""
    hand_sizes: list[int]
    """The cards in each seat's hand."""
    draw_size: int
    """The cards in the draw pile."""
    completed_size: int
    """The cards of completed sequences waiting to be reshuffled."""
    turns: int
    """Turns played so far."""
    played_this_turn: bool
    """Whether the seat to move played onto a sequence this turn."""
    result: Result | None
    """The result once the game is over; else null."""


def table(state: AutobusState) -> AutobusTable:
    """Returns what anyone may know of the game: a seat's view without its own hand."""
    return AutobusTable(
        ruleset=state.ruleset,
        turn=state.turn,
        main_tops=[main[0] if main else "" for main in state.mains],
        main_sizes=[len(main) for main in state.mains],
        slots=[[list(cards) for cards in seat_slots] for seat_slots in state.slots],
        slot_ranks=[list(ranks) for ranks in state.slot_ranks],
        sequences=[list(cards) for cards in state.sequences],
        hand_sizes=[len(hand) for hand in state.hands],
        draw_size=len(state.draw),
        completed_size=len(state.completed),
        turns=state.turns,
        played_this_turn=state.played_this_turn,
        result=state.result,
    )


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it while the game runs."""
    if isinstance(event, GameStarted):
        return msgspec.structs.replace(
            event,
            mains=[[main[0]] + [HIDDEN] * (len(main) - 1) for main in event.mains],
            hands=[h if s == seat else [HIDDEN] * len(h) for s, h in enumerate(event.hands)],
            draw=[HIDDEN] * len(event.draw),
            shuffle_seed="",
        )
    if isinstance(event, CardsDrawn) and event.seat != seat:
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    if isinstance(event, CardUnderTheBus) and event.seat != seat:
        # It goes face down under its owner's main pile: nobody else sees it (rules page,
        # "Hidden information"); the platform checked that it fits no slot.
        return msgspec.structs.replace(event, card=HIDDEN)
    if isinstance(event, StockReshuffled):
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    return event


def action_of(event: Event) -> tuple[int, AutobusAction] | None:
    """Returns the seat and the action whose decision begins with `event`, None for an event
    that follows within a decision."""
    match event:
        case CardPlayed(seat=seat, source=source, card=card, sequence=index, opened=opened):
            named = card if source == "hand" else None
            sequence = None if opened else index
            return seat, PlayToSequence(
                source=source, card=named, slot=event.slot, sequence=sequence
            )
        case CardDiscarded(seat=seat, card=card, slot=slot, rank=rank):
            named_rank = rank if is_joker(card) else None
            return seat, Discard(card=card, slot=slot, joker_rank=named_rank)
        case CardUnderTheBus(seat=seat, card=card):
            return seat, UnderTheBus(card=card)
        case TurnEnded(seat=seat):
            return seat, EndTurn()
    return None
