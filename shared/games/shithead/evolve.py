"""Shithead's evolve: the state after each event, one `match` over the event union."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from shared.games.cards import Card, replace_at, without
from shared.games.shithead.messages import (
    DECISIONS,
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
    Zone,
)
from shared.games.shithead.state import ZONE_FIELDS, ShitheadState, cards_in
from shared.messages.common import ClockEvent, Event, GameFinished


def _with_known(
    state: ShitheadState, seat: int, added: Sequence[Card] = (), removed: Sequence[Card] = ()
) -> tuple[tuple[Card, ...], ...]:
    """Returns `state.known` after `added` went publicly into `seat`'s hand and `removed` left it.

    A removed card that was not publicly known leaves the known cards as they are.
    """
    known = state.known or ((),) * state.players
    left = list(known[seat])
    for card in removed:
        if card in left:
            left.remove(card)
    return replace_at(known, seat, (*left, *added))


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


def _to_pile(state: ShitheadState, seat: int, zone: Zone, cards: Sequence[Card]) -> ShitheadState:
    """Moves `cards` from `seat`'s `zone` onto the pile."""
    held = without(cards_in(state, seat, zone), cards)
    field = ZONE_FIELDS[zone]
    changes = {field: replace_at(getattr(state, field), seat, held)}
    return msgspec.structs.replace(state, pile=state.pile + tuple(cards), **changes)


def _swapped(state: ShitheadState, e: CardsSwapped) -> ShitheadState:
    hand = (*without(state.hands[e.seat], [e.hand_card]), e.face_up_card)
    face_up = (*without(state.face_up[e.seat], [e.face_up_card]), e.hand_card)
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, hand),
        face_up=replace_at(state.face_up, e.seat, face_up),
        known=_with_known(state, e.seat, [e.face_up_card], [e.hand_card]),
    )


def _stacked(state: ShitheadState, e: CardStacked) -> ShitheadState:
    return msgspec.structs.replace(
        state,
        hands=replace_at(state.hands, e.seat, without(state.hands[e.seat], [e.card])),
        face_up=replace_at(state.face_up, e.seat, (*state.face_up[e.seat], e.card)),
        known=_with_known(state, e.seat, removed=[e.card]),
    )


def _ready(state: ShitheadState, e: PlayerReady) -> ShitheadState:
    ready = tuple(r or seat == e.seat for seat, r in enumerate(state.ready))
    return msgspec.structs.replace(state, ready=ready)


def _play_started(state: ShitheadState, e: PlayStarted) -> ShitheadState:
    opening = (e.rank, e.zone) if e.rank is not None and e.zone is not None else None
    return msgspec.structs.replace(state, phase="play", turn=e.seat, opening=opening)


def _played(state: ShitheadState, e: CardsPlayed) -> ShitheadState:
    after = _to_pile(state, e.seat, e.source, e.cards)
    if e.source != "hand":
        return msgspec.structs.replace(after, opening=None)
    known = _with_known(state, e.seat, removed=e.cards)
    return msgspec.structs.replace(after, opening=None, known=known)


def _revealed(state: ShitheadState, e: FaceDownRevealed) -> ShitheadState:
    face_down = list(state.face_down[e.seat])
    del face_down[e.index]
    return msgspec.structs.replace(
        state,
        face_down=replace_at(state.face_down, e.seat, tuple(face_down)),
        pile=(*state.pile, e.card),
    )


def _deck_turned(state: ShitheadState, e: DeckCardTurned) -> ShitheadState:
    return msgspec.structs.replace(state, deck=state.deck[1:], pile=(*state.pile, e.card))


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


def evolve(state: ShitheadState | None, event: Event) -> ShitheadState:
    """Returns the state after `event`; clock events leave it as it is (`shared.model.clocks`)."""
    if isinstance(event, GameStarted):
        return _start(event)
    assert state is not None
    if isinstance(event, DECISIONS):
        state = msgspec.structs.replace(state, moves=state.moves + 1)
    match event:
        case CardsSwapped():
            return _swapped(state, event)
        case CardStacked():
            return _stacked(state, event)
        case PlayerReady():
            return _ready(state, event)
        case PlayStarted():
            return _play_started(state, event)
        case CardsPlayed():
            return _played(state, event)
        case FaceDownRevealed():
            return _revealed(state, event)
        case DeckCardTurned():
            return _deck_turned(state, event)
        case CardsDrawn():
            return _drawn(state, event)
        case DirectionReversed(direction=direction):
            return msgspec.structs.replace(state, direction=direction)
        case PileBurned():
            return msgspec.structs.replace(state, burnt=state.burnt + state.pile, pile=())
        case PilePickedUp():
            return _picked_up(state, event)
        case PlayerOut(seat=seat):
            return msgspec.structs.replace(state, out=(*state.out, seat))
        case TurnPassed(seat=seat):
            return msgspec.structs.replace(state, turn=seat)
        case SeatsSkipped():
            return state
        case GameFinished(result=result):
            return msgspec.structs.replace(state, phase="finished", result=result)
        case ClockEvent():
            return state
    raise TypeError(f"not a Shithead event: {type(event).__name__}")
