"""What one seat may know: its view of the table, and each event as it may see it."""

from __future__ import annotations

import msgspec

from shared.games.cards import HIDDEN, Card, Rank
from shared.games.shithead.messages import (
    CardsDrawn,
    CardsPlayed,
    CardsSwapped,
    CardStacked,
    DeckCardTurned,
    FaceDownRevealed,
    GameStarted,
    Phase,
    PickUp,
    PilePickedUp,
    PlayCards,
    PlayerReady,
    PlayFaceDown,
    PlayFromDeck,
    Ready,
    ShitheadAction,
    Stack,
    Swap,
    Zone,
)
from shared.games.shithead.rules import ShitheadRuleset
from shared.games.shithead.state import ShitheadState, zone_of
from shared.messages.common import Event, Result


class ShitheadView(msgspec.Struct, frozen=True):
    """What one seat may know: its hand, every face-up card, counts of the rest, the pile.

    The pile and the burnt cards were all played face up, so they are public knowledge.
    """

    seat: int
    """The seat this view is of."""
    ruleset: ShitheadRuleset
    """The game's ruleset."""
    phase: Phase
    """`swap`, `play` or `finished`."""
    turn: int
    """The seat to move in the play phase."""
    direction: int
    """The direction of play: 1 (seat order) or -1."""
    hand: list[Card]
    """The seat's own hand."""
    face_up: list[list[Card]]
    """Each seat's face-up cards."""
    hand_sizes: list[int]
    """The cards in each seat's hand."""
    face_down_sizes: list[int]
    """The face-down cards of each seat."""
    deck_size: int
    """The cards left in the deck."""
    pile: list[Card]
    """The pile, bottom first."""
    burnt: list[Card]
    """The cards burned out of the game."""
    ready: list[bool]
    """Per seat, whether it finished swapping."""
    out: list[int]
    """The seats out of cards, in the order they went out."""
    known: list[list[Card]]
    """Per seat, the hand cards all players saw go in and not come out (public events)."""
    zone: Zone | None
    """Where the seat plays from now: `hand`, `face_up` or `face_down`; null with an empty hand
    while the deck lasts, or with no cards."""
    opening: Rank | None
    """The rank the leader must open with, if the ruleset says so."""
    moves: int
    """Moves played so far."""
    result: Result | None
    """The result once the game is over; else null."""


def view(state: ShitheadState, seat: int) -> ShitheadView:
    """Returns exactly what `seat` may know (docs/rules/shithead.md, "What each seat may see")."""
    return ShitheadView(
        seat=seat,
        ruleset=state.ruleset,
        phase=state.phase,
        turn=state.turn,
        direction=state.direction,
        hand=list(state.hands[seat]),
        face_up=[list(cards) for cards in state.face_up],
        hand_sizes=[len(cards) for cards in state.hands],
        face_down_sizes=[len(cards) for cards in state.face_down],
        deck_size=len(state.deck),
        pile=list(state.pile),
        burnt=list(state.burnt),
        ready=list(state.ready),
        out=list(state.out),
        known=[list(cards) for cards in state.known or ((),) * state.players],
        zone=zone_of(state, seat),
        opening=state.opening[0] if state.opening else None,
        moves=state.moves,
        result=state.result,
    )


class ShitheadTable(msgspec.Struct, frozen=True):
    """What anyone may know of a running game, a spectator's table: every face-up card, the
    pile and the burnt cards, the hand cards all players saw go in, counts of the rest."""

    ruleset: ShitheadRuleset
    """The game's ruleset."""
    phase: Phase
    """`swap`, `play` or `finished`."""
    turn: int
    """The seat to move in the play phase."""
    direction: int
    """The direction of play: 1 (seat order) or -1."""
    face_up: list[list[Card]]
    """Each seat's face-up cards."""
    hand_sizes: list[int]
    """The cards in each seat's hand."""
    face_down_sizes: list[int]
    """The face-down cards of each seat."""
    deck_size: int
    """The cards left in the deck."""
    pile: list[Card]
    """The pile, bottom first."""
    burnt: list[Card]
    """The cards burned out of the game."""
    ready: list[bool]
    """Per seat, whether it finished swapping."""
    out: list[int]
    """The seats out of cards, in the order they went out."""
    known: list[list[Card]]
    """Per seat, the hand cards all players saw go in and not come out (public events)."""
    opening: Rank | None
    """The rank the leader must open with, if the ruleset says so."""
    moves: int
    """Moves played so far."""
    result: Result | None
    """The result once the game is over; else null."""


def table(state: ShitheadState) -> ShitheadTable:
    """Returns what anyone may know of the game: a seat's view without its own hand."""
    return ShitheadTable(
        ruleset=state.ruleset,
        phase=state.phase,
        turn=state.turn,
        direction=state.direction,
        face_up=[list(cards) for cards in state.face_up],
        hand_sizes=[len(cards) for cards in state.hands],
        face_down_sizes=[len(cards) for cards in state.face_down],
        deck_size=len(state.deck),
        pile=list(state.pile),
        burnt=list(state.burnt),
        ready=list(state.ready),
        out=list(state.out),
        known=[list(cards) for cards in state.known or ((),) * state.players],
        opening=state.opening[0] if state.opening else None,
        moves=state.moves,
        result=state.result,
    )


def redact(event: Event, seat: int | None) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it while the game runs."""
    if isinstance(event, GameStarted):
        return msgspec.structs.replace(
            event,
            face_down=[[HIDDEN] * len(cards) for cards in event.face_down],
            hands=[
                cards if s == seat else [HIDDEN] * len(cards) for s, cards in enumerate(event.hands)
            ],
            deck=[HIDDEN] * len(event.deck),
        )
    if isinstance(event, CardsDrawn) and event.seat != seat:
        return msgspec.structs.replace(event, cards=[HIDDEN] * len(event.cards))
    return event


def action_of(event: Event) -> tuple[int, ShitheadAction] | None:
    """Returns the seat and the action whose decision begins with `event`, None for an event
    that follows within a decision."""
    match event:
        case CardsSwapped(seat=seat, hand_card=hand_card, face_up_card=face_up_card):
            return seat, Swap(hand_card=hand_card, face_up_card=face_up_card)
        case CardStacked(seat=seat, card=card):
            return seat, Stack(hand_card=card)
        case PlayerReady(seat=seat):
            return seat, Ready()
        case CardsPlayed(seat=seat, cards=cards):
            return seat, PlayCards(cards=list(cards))
        case FaceDownRevealed(seat=seat, index=index):
            return seat, PlayFaceDown(index=index)
        case DeckCardTurned(seat=seat):
            return seat, PlayFromDeck()
        case PilePickedUp(seat=seat, reason="chosen" | "no_play"):
            return seat, PickUp()
    return None
