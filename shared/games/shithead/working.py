"""A decision in progress: its events, and the table as they leave it, built into a state once.

A decision's events all concern the seat that acts (its zones, what it is publicly known to
hold) and the shared table (pile, deck, burnt cards, turn, direction, seats out, moves). Each
method here records one event and applies what `evolve` does with it, so that `state()` is
the fold of `events` onto the state the decision began from, with one state built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from shared.games.cards import Card
from shared.games.shithead.messages import (
    CardsDrawn,
    CardsPlayed,
    CardsSwapped,
    CardStacked,
    DeckCardTurned,
    DirectionReversed,
    FaceDownRevealed,
    PileBurned,
    PilePickedUp,
    PlayerOut,
    PlayerReady,
    PlayStarted,
    SeatsSkipped,
    TurnPassed,
    Zone,
)
from shared.games.shithead.state import ShitheadState, known_less, less
from shared.messages.common import Event, GameFinished, Result

BurnReason = Literal["burn_rank", "run"]
PickUpReason = Literal["no_play", "chosen", "failed_reveal", "failed_gamble"]


FIELDS = (
    "ruleset",
    "hands",
    "face_up",
    "face_down",
    "deck",
    "pile",
    "burnt",
    "phase",
    "ready",
    "turn",
    "direction",
    "opening",
    "moves",
    "out",
    "result",
    "known",
)
"""ShitheadState's fields in their order: `Working.state()` passes them by position (a third
of the time of keywords); importing this module checks that the order still holds."""
if ShitheadState.__struct_fields__ != FIELDS:
    raise TypeError(f"ShitheadState's fields are not {FIELDS}: update Working.state()")


class Working:
    """The events of a decision by `seat` so far and the table they lead to."""

    __slots__ = (
        "base",
        "burnt",
        "deck",
        "direction",
        "events",
        "face_down",
        "face_up",
        "hand",
        "known",
        "moves",
        "opening",
        "out",
        "phase",
        "pile",
        "ready",
        "result",
        "seat",
        "turn",
    )

    def __init__(self, state: ShitheadState, seat: int) -> None:
        self.base = state
        self.seat = seat
        self.events: list[Event] = []
        self.hand = state.hands[seat]
        self.face_up = state.face_up[seat]
        self.face_down = state.face_down[seat]
        self.known: tuple[Card, ...] | None = state.known[seat] if state.known else None
        """The seat's publicly known hand cards; None while a state built by hand, which
        tracks none, has not needed them."""
        self.pile = state.pile
        self.deck = state.deck
        self.burnt = state.burnt
        self.phase = state.phase
        self.ready = state.ready
        self.turn = state.turn
        self.direction = state.direction
        self.opening = state.opening
        self.moves = state.moves
        self.out = state.out
        self.result = state.result

    def state(self) -> ShitheadState:
        """Returns the state the events so far fold to."""
        base, seat = self.base, self.seat
        hands, face_up, face_down, known = base.hands, base.face_up, base.face_down, base.known
        if self.hand is not hands[seat]:
            hands = (*hands[:seat], self.hand, *hands[seat + 1 :])
        if self.face_up is not face_up[seat]:
            face_up = (*face_up[:seat], self.face_up, *face_up[seat + 1 :])
        if self.face_down is not face_down[seat]:
            face_down = (*face_down[:seat], self.face_down, *face_down[seat + 1 :])
        if self.known is not None and (not known or self.known is not known[seat]):
            known = known or ((),) * len(hands)
            known = (*known[:seat], self.known, *known[seat + 1 :])
        return ShitheadState(
            base.ruleset,
            hands,
            face_up,
            face_down,
            self.deck,
            self.pile,
            self.burnt,
            self.phase,
            self.ready,
            self.turn,
            self.direction,
            self.opening,
            self.moves,
            self.out,
            self.result,
            known,
        )

    def swapped(self, hand_card: Card, face_up_card: Card) -> None:
        """Records CardsSwapped."""
        self.events.append(
            CardsSwapped(seat=self.seat, hand_card=hand_card, face_up_card=face_up_card)
        )
        self.hand = (*less(self.hand, [hand_card]), face_up_card)
        self.face_up = (*less(self.face_up, [face_up_card]), hand_card)
        self.known = (*known_less(self.known or (), [hand_card]), face_up_card)
        self.moves += 1

    def stacked(self, card: Card) -> None:
        """Records CardStacked."""
        self.events.append(CardStacked(seat=self.seat, card=card))
        self.hand = less(self.hand, [card])
        self.face_up = (*self.face_up, card)
        self.known = known_less(self.known or (), [card])
        self.moves += 1

    def became_ready(self) -> None:
        """Records PlayerReady."""
        self.events.append(PlayerReady(seat=self.seat))
        self.ready = tuple(r or seat == self.seat for seat, r in enumerate(self.ready))
        self.moves += 1

    def started(self, event: PlayStarted) -> None:
        """Records PlayStarted."""
        self.events.append(event)
        self.phase = "play"
        self.turn = event.seat
        self.opening = (
            (event.rank, event.zone) if event.rank is not None and event.zone is not None else None
        )

    def played(self, cards: Sequence[Card], zone: Zone) -> None:
        """Records CardsPlayed."""
        self.events.append(CardsPlayed(seat=self.seat, cards=list(cards), source=zone))
        if zone == "hand":
            self.hand = less(self.hand, cards)
            self.known = known_less(self.known or (), cards)
        elif zone == "face_up":
            self.face_up = less(self.face_up, cards)
        else:
            self.face_down = less(self.face_down, cards)
        self.pile = (*self.pile, *cards)
        self.opening = None
        self.moves += 1

    def revealed(self, index: int, card: Card, playable: bool) -> None:
        """Records FaceDownRevealed of `card`, the face-down card at `index`."""
        self.events.append(
            FaceDownRevealed(seat=self.seat, index=index, card=card, playable=playable)
        )
        self.face_down = (*self.face_down[:index], *self.face_down[index + 1 :])
        self.pile = (*self.pile, card)
        self.moves += 1

    def turned(self, card: Card, playable: bool, blind: bool) -> None:
        """Records DeckCardTurned of `card`, the deck's top card."""
        self.events.append(
            DeckCardTurned(seat=self.seat, card=card, playable=playable, blind=blind)
        )
        self.deck = self.deck[1:]
        self.pile = (*self.pile, card)
        self.moves += 1

    def drew(self, count: int) -> None:
        """Records CardsDrawn of the deck's top `count` cards."""
        cards = self.deck[:count]
        self.events.append(CardsDrawn(seat=self.seat, cards=list(cards)))
        self.hand = (*self.hand, *cards)
        self.deck = self.deck[count:]

    def reversed(self) -> None:
        """Records DirectionReversed."""
        self.direction = -self.direction
        self.events.append(DirectionReversed(direction=self.direction))

    def skipped(self, seats: list[int]) -> None:
        """Records SeatsSkipped."""
        self.events.append(SeatsSkipped(seats=seats))

    def burned(self, reason: BurnReason) -> None:
        """Records PileBurned (`burn_rank` or `run`)."""
        self.events.append(PileBurned(seat=self.seat, reason=reason, count=len(self.pile)))
        self.burnt = (*self.burnt, *self.pile)
        self.pile = ()

    def picked_up(self, reason: PickUpReason) -> None:
        """Records PilePickedUp (`no_play`, `chosen`, `failed_reveal`, `failed_gamble`)."""
        pile = self.pile
        self.events.append(PilePickedUp(seat=self.seat, cards=list(pile), reason=reason))
        self.hand = (*self.hand, *pile)
        self.known = (*(self.known or ()), *pile)
        self.pile = ()
        self.moves += reason in ("no_play", "chosen")

    def went_out(self) -> None:
        """Records PlayerOut."""
        self.events.append(PlayerOut(seat=self.seat, place=len(self.out) + 1))
        self.out = (*self.out, self.seat)

    def next_seat(self, seat: int) -> int:
        """Returns the next seat after `seat` in the direction of play that is still in."""
        players, direction, out = len(self.base.hands), self.direction, self.out
        nxt = (seat + direction) % players
        while nxt in out and nxt != seat:
            nxt = (nxt + direction) % players
        return nxt

    def passed(self, seat: int) -> None:
        """Records TurnPassed to `seat`."""
        self.events.append(TurnPassed(seat=seat))
        self.turn = seat

    def finished(self, result: Result) -> None:
        """Records GameFinished."""
        self.events.append(GameFinished(result=result))
        self.phase = "finished"
        self.result = result
