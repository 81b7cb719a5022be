"""Shithead's evolve: the state after each event, one step per event type."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from shared.games.cards import Card, replace_at
from shared.games.shithead.messages import (
    CardsDrawn,
    CardsPlayed,
    CardsSwapped,
    CardStacked,
    DeckCardTurned,
    DirectionReversed,
    FaceDownRevealed,
    GameStarted,
    PileBurned,
    PilePickedUp,
    PlayerOut,
    PlayerReady,
    PlayStarted,
    SeatsSkipped,
    TurnPassed,
)
from shared.games.shithead.state import ZONE_FIELDS, ShitheadState, cards_in, known_less, less
from shared.messages.common import ClockEvent, Event, GameFinished


def _with_known(
    state: ShitheadState, seat: int, added: Sequence[Card] = (), removed: Sequence[Card] = ()
) -> tuple[tuple[Card, ...], ...]:
    """Returns `state.known` after `added` went publicly into `seat`'s hand and `removed` left it.

    A removed card that was not publicly known leaves the known cards as they are.
    """
    known = state.known or ((),) * state.players
    return replace_at(known, seat, (*known_less(known[seat], removed), *added))


def _start(event: GameStarted) -> ShitheadState:
    """Returns the state right after the deal."""
    return ShitheadState(
        ruleset=event.ruleset,
        hands=tuple(tuple(h) for h in event.hands),
        face_up=tuple(tuple(u) for u in event.face_up),
        face_down=tuple(tuple(d) for d in event.face_down),
        deck=tuple(event.deck),
        ready=(False,) * event.players,
        known=((),) * event.players,
    )


def _played(state: ShitheadState, e: CardsPlayed) -> ShitheadState:
    seat, cards = e.seat, e.cards
    pile = state.pile + tuple(cards)
    moves = state.moves + 1
    if e.source == "hand":
        return msgspec.structs.replace(
            state,
            hands=replace_at(state.hands, seat, less(state.hands[seat], cards)),
            pile=pile,
            opening=None,
            moves=moves,
            known=_with_known(state, seat, removed=cards),
        )
    field = ZONE_FIELDS[e.source]
    held = replace_at(getattr(state, field), seat, less(cards_in(state, seat, e.source), cards))
    changes = {field: held}
    return msgspec.structs.replace(state, pile=pile, opening=None, moves=moves, **changes)


def _swapped(state: ShitheadState, e: CardsSwapped) -> ShitheadState:
    hand = (*less(state.hands[e.seat], [e.hand_card]), e.face_up_card)
    face_up = (*less(state.face_up[e.seat], [e.face_up_card]), e.hand_card)
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        face_up=replace_at(state.face_up, e.seat, face_up),
        moves=state.moves + 1,
        known=_with_known(state, e.seat, [e.face_up_card], [e.hand_card]),
    )


def _stacked(state: ShitheadState, e: CardStacked) -> ShitheadState:
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, less(state.hands[e.seat], [e.card])),
        face_up=replace_at(state.face_up, e.seat, (*state.face_up[e.seat], e.card)),
        moves=state.moves + 1,
        known=_with_known(state, e.seat, removed=[e.card]),
    )


def _ready(state: ShitheadState, e: PlayerReady) -> ShitheadState:
    ready = tuple(r or seat == e.seat for seat, r in enumerate(state.ready))
    return msgspec.structs.replace(state, ready=ready, moves=state.moves + 1)


def _play_started(state: ShitheadState, e: PlayStarted) -> ShitheadState:
    opening = (e.rank, e.zone) if e.rank is not None and e.zone is not None else None
    return msgspec.structs.replace(state, phase="play", turn=e.seat, opening=opening)


def _revealed(state: ShitheadState, e: FaceDownRevealed) -> ShitheadState:
    face_down = list(state.face_down[e.seat])
    del face_down[e.index]
    return msgspec.structs.replace(
        state,
        face_down=replace_at(state.face_down, e.seat, tuple(face_down)),
        pile=(*state.pile, e.card),
        moves=state.moves + 1,
    )


def _deck_turned(state: ShitheadState, e: DeckCardTurned) -> ShitheadState:
    return msgspec.structs.replace(
        state, deck=state.deck[1:], pile=(*state.pile, e.card), moves=state.moves + 1
    )


def _drawn(state: ShitheadState, e: CardsDrawn) -> ShitheadState:
    hand = state.hands[e.seat] + tuple(e.cards)
    return msgspec.structs.replace(
        state, hands=replace_at(state.hands, e.seat, hand), deck=state.deck[len(e.cards) :]
    )


def _picked_up(state: ShitheadState, e: PilePickedUp) -> ShitheadState:
    moves = state.moves + (e.reason in ("no_play", "chosen"))
    hand = state.hands[e.seat] + state.pile
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        pile=(),
        moves=moves,
        known=_with_known(state, e.seat, state.pile),
    )


def _reversed(state: ShitheadState, e: DirectionReversed) -> ShitheadState:
    return msgspec.structs.replace(state, direction=e.direction)


def _burned(state: ShitheadState, _e: PileBurned) -> ShitheadState:
    return msgspec.structs.replace(state, burnt=state.burnt + state.pile, pile=())


def _went_out(state: ShitheadState, e: PlayerOut) -> ShitheadState:
    return msgspec.structs.replace(state, out=(*state.out, e.seat))


def _passed(state: ShitheadState, e: TurnPassed) -> ShitheadState:
    return msgspec.structs.replace(state, turn=e.seat)


def _finished(state: ShitheadState, e: GameFinished) -> ShitheadState:
    return msgspec.structs.replace(state, phase="finished", result=e.result)


def _unchanged(state: ShitheadState, _e: Event) -> ShitheadState:
    return state


_STEPS: dict[type[Event], Callable[[ShitheadState, Any], ShitheadState]] = {
    CardsSwapped: _swapped,
    CardStacked: _stacked,
    PlayerReady: _ready,
    PlayStarted: _play_started,
    CardsPlayed: _played,
    FaceDownRevealed: _revealed,
    DeckCardTurned: _deck_turned,
    CardsDrawn: _drawn,
    DirectionReversed: _reversed,
    SeatsSkipped: _unchanged,
    PileBurned: _burned,
    PilePickedUp: _picked_up,
    PlayerOut: _went_out,
    TurnPassed: _passed,
    GameFinished: _finished,
}
"""Each event type's step; a decision's first event also counts the move."""


def evolve(state: ShitheadState | None, event: Event) -> ShitheadState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    step = _STEPS.get(type(event))
    if step is not None:
        return step(state, event)
    if isinstance(event, GameFinished):
        return _finished(state, event)
    if isinstance(event, ClockEvent):
        return state
    raise TypeError(f"not a Shithead event: {type(event).__name__}")
