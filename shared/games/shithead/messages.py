"""Shithead's commands (a seat's actions) and events, and their unions."""

from __future__ import annotations

from typing import Literal

from shared.games.cards import Card, Rank
from shared.games.shithead.rules import ShitheadRuleset
from shared.messages.common import Action, Event, GameCreated, GameFinished

Phase = Literal["swap", "play", "finished"]


Zone = Literal["hand", "face_up", "face_down"]


class Swap(Action, frozen=True, kw_only=True):
    """Swap phase: exchange a hand card with a face-up card."""

    hand_card: Card
    """The hand card to put face up."""
    face_up_card: Card
    """The face-up card to take into the hand."""


class Stack(Action, frozen=True, kw_only=True):
    """Swap phase, where the ruleset allows it: put a hand card face up onto a face-up card of
    its rank; the hand draws a card back from the deck."""

    hand_card: Card
    """The hand card to stack onto the face-up cards of its rank."""


class Ready(Action, frozen=True, kw_only=True):
    """Swap phase: done swapping."""


class PlayCards(Action, frozen=True, kw_only=True):
    """Play one or more cards of one rank from the hand (or, when it is empty, face up)."""

    cards: list[Card]
    """The cards to play, all of one rank, from the hand (from the face-up cards once the hand is
    empty)."""


class PlayFaceDown(Action, frozen=True, kw_only=True):
    """Turn over the face-down card at `index` and play it if it can be played."""

    index: int
    """The face-down card's index among the seat's face-down cards, from 0."""


class PickUp(Action, frozen=True, kw_only=True):
    """Pick up the whole pile into the hand."""


class PlayFromDeck(Action, frozen=True, kw_only=True):
    """Turn the deck's top card and play it if it can be played (a gamble or a blind play)."""


ShitheadAction = Swap | Ready | PlayCards | PlayFaceDown | PickUp | PlayFromDeck | Stack


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: every seat's face-down, face-up and hand cards, and the deck (top first)."""

    ruleset: ShitheadRuleset
    """The game's ruleset."""
    players: int
    """The number of seats."""
    face_down: list[list[Card]]
    """Each seat's face-down cards."""
    face_up: list[list[Card]]
    """Each seat's face-up cards."""
    hands: list[list[Card]]
    """Each seat's hand."""
    deck: list[Card]
    """The deck, top first."""


class CardsSwapped(Event, frozen=True, kw_only=True):
    """A seat moved `hand_card` face up and took `face_up_card` into the hand."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    hand_card: Card
    """The hand card put face up."""
    face_up_card: Card
    """The face-up card taken into the hand."""


class CardStacked(Event, frozen=True, kw_only=True):
    """A seat stacked `card` from its hand onto its face-up cards of that rank (swap phase)."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    card: Card
    """The card stacked, now face up."""


class PlayerReady(Event, frozen=True, kw_only=True):
    """A seat finished swapping."""

    seat: int
    """The seat, numbered from 0 in seat order."""


class PlayStarted(Event, frozen=True, kw_only=True):
    """The play phase began; `seat` leads by `rule`, and must play `rank` from `zone` if set."""

    seat: int
    """The seat that leads."""
    rule: str
    """Why it leads: `first_seat`, `lowest_card` (it holds the lowest plain card),
    `face_up_first` (the lowest plain rank, face up before in a hand) or `no_plain_card`."""
    rank: Rank | None = None
    """The rank it must play first, if any."""
    zone: Zone | None = None
    """Where that rank must come from, if set: `hand`, `face_up` or `face_down`."""


class CardsPlayed(Event, frozen=True, kw_only=True):
    """A seat played cards of one rank from its hand or its face-up cards."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    cards: list[Card]
    """The cards played, all of one rank."""
    source: Zone
    """Where they came from: `hand` or `face_up`."""


class FaceDownRevealed(Event, frozen=True, kw_only=True):
    """A seat turned over its face-down card at `index` onto the pile."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    index: int
    """The face-down card's index, from 0."""
    card: Card
    """The card turned over."""
    playable: bool
    """Whether it could be played (else the seat picks up the pile)."""


class DeckCardTurned(Event, frozen=True, kw_only=True):
    """A seat turned the deck's top card onto the pile (a gamble or a blind play)."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    card: Card
    """The card turned."""
    playable: bool
    """Whether it could be played."""
    blind: bool = False
    """Whether it was a blind play (the seat could have played a card of its own; the ruleset's
    `blind_deck_play`), not a gamble (it could not)."""


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards from the deck; others see only how many."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    cards: list[Card]
    """The cards drawn (`??` to other seats while the game runs)."""


class DirectionReversed(Event, frozen=True, kw_only=True):
    """A joker (with `joker_reverses`) or a card of the reverse rank reversed the direction of
    play."""

    direction: int
    """The direction of play now: 1 (seat order) or -1."""


class SeatsSkipped(Event, frozen=True, kw_only=True):
    """Cards of the skip rank made the turn pass over `seats`, in the order they were skipped."""

    seats: list[int]
    """The seats skipped, one per skip card (the player's own seat included when the count
    goes round the table)."""


class PileBurned(Event, frozen=True, kw_only=True):
    """The pile left the game, by the burn rank or by a run of one rank."""

    seat: int
    """The seat whose play burned it."""
    reason: Literal["burn_rank", "run"]
    """`burn_rank` (the burn rank was played) or `run` (a run of one rank)."""
    count: int
    """The cards that left the game."""


class PilePickedUp(Event, frozen=True, kw_only=True):
    """A seat took the whole pile into the hand."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    cards: list[Card]
    """The pile's cards, bottom first, now in the seat's hand."""
    reason: Literal["no_play", "chosen", "failed_reveal", "failed_gamble"]
    """`no_play` (nothing could be played), `chosen`, `failed_reveal` or `failed_gamble`."""


class PlayerOut(Event, frozen=True, kw_only=True):
    """A seat has no cards left; `place` is its finishing place."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    place: int
    """Its finishing place (1 is best)."""


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int
    """The seat whose turn it is now."""


ShitheadEvent = (
    GameCreated
    | GameStarted
    | CardsSwapped
    | CardStacked
    | PlayerReady
    | PlayStarted
    | CardsPlayed
    | FaceDownRevealed
    | DeckCardTurned
    | CardsDrawn
    | DirectionReversed
    | SeatsSkipped
    | PileBurned
    | PilePickedUp
    | PlayerOut
    | TurnPassed
    | GameFinished
)


DECISIONS = (
    CardsSwapped,
    CardStacked,
    PlayerReady,
    CardsPlayed,
    FaceDownRevealed,
    DeckCardTurned,
)
