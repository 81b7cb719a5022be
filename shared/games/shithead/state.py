"""The whole Shithead table, and what can be read off it: zones, cards left, who moves."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from shared.games.cards import Card, without
from shared.games.shithead.messages import Phase, Zone
from shared.games.shithead.rules import ShitheadRuleset
from shared.messages.common import Result


class ShitheadState(msgspec.Struct, frozen=True):
    """The whole table."""

    ruleset: ShitheadRuleset
    """The game's ruleset."""
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's hand."""
    face_up: tuple[tuple[Card, ...], ...]
    """Each seat's face-up cards."""
    face_down: tuple[tuple[Card, ...], ...]
    """Each seat's face-down cards."""
    deck: tuple[Card, ...]
    """The deck, top first."""
    pile: tuple[Card, ...] = ()
    """The pile, bottom first."""
    burnt: tuple[Card, ...] = ()
    """The cards burned out of the game."""
    phase: Phase = "swap"
    """`swap`, `play` or `finished`."""
    ready: tuple[bool, ...] = ()
    """Per seat, whether it finished swapping."""
    turn: int = 0
    """The seat to move in the play phase."""
    direction: int = 1
    """The direction of play: 1 (seat order) or -1."""
    opening: tuple[str, Zone] | None = None
    """The rank and zone the leader must open with, if the ruleset says so."""
    moves: int = 0
    """Moves played so far."""
    out: tuple[int, ...] = ()
    """The seats out of cards, in the order they went out."""
    result: Result | None = None
    """The result once the game is over; else null."""
    known: tuple[tuple[Card, ...], ...] = ()
    """Per seat, the cards of its hand that every player saw go in (a picked-up pile, a
    face-up card swapped into the hand) and that have not been played since; empty for
    a state built by hand, which then tracks nothing."""

    @property
    def players(self) -> int:
        """Returns the number of seats."""
        return len(self.hands)


def zone_of(state: ShitheadState, seat: int) -> Zone | None:
    """Returns the zone `seat` plays from: hand, face-up (once the deck is empty), face-down."""
    if state.hands[seat]:
        return "hand"
    if state.deck:
        return None
    if state.face_up[seat]:
        return "face_up"
    if state.face_down[seat]:
        return "face_down"
    return None


ZONE_FIELDS: dict[Zone, str] = {"hand": "hands", "face_up": "face_up", "face_down": "face_down"}


def cards_in(state: ShitheadState, seat: int, zone: Zone) -> tuple[Card, ...]:
    """Returns the cards of `seat` in `zone`."""
    if zone == "hand":
        return state.hands[seat]
    if zone == "face_up":
        return state.face_up[seat]
    return state.face_down[seat]


def cards_left(state: ShitheadState, seat: int) -> int:
    """Returns how many cards `seat` holds in all its zones."""
    return len(state.hands[seat]) + len(state.face_up[seat]) + len(state.face_down[seat])


def to_move(state: ShitheadState) -> list[int]:
    """Returns the seats whose action the game waits for: every unready seat, or the turn."""
    if state.phase == "play":
        return [state.turn]
    if state.phase == "swap":
        return [seat for seat, ready in enumerate(state.ready) if not ready]
    return []


def is_over(state: ShitheadState) -> bool:
    """Returns whether the game has ended."""
    return state.result is not None


def result(state: ShitheadState) -> Result | None:
    """Returns the result of an ended game, None while it runs."""
    return state.result


def less(cards: tuple[Card, ...], removed: Sequence[Card]) -> tuple[Card, ...]:
    """Returns `cards` less one copy of each of `removed` (each must be there)."""
    if len(removed) == 1:
        at = cards.index(removed[0])
        return cards[:at] + cards[at + 1 :]
    return without(cards, removed)


def known_less(known: tuple[Card, ...], removed: Sequence[Card]) -> tuple[Card, ...]:
    """Returns a seat's publicly known hand cards after `removed` left its hand (a removed card
    that was not known leaves them as they are)."""
    for card in removed:
        if card in known:
            known = less(known, [card])
    return known
