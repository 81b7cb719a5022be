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
    face_up_card: Card


class Ready(Action, frozen=True, kw_only=True):
    """Swap phase: done swapping."""


class PlayCards(Action, frozen=True, kw_only=True):
    """Play one or more cards of one rank from the hand (or, when it is empty, face up)."""

    cards: list[Card]


class PlayFaceDown(Action, frozen=True, kw_only=True):
    """Turn over the face-down card at `index` and play it if it can be played."""

    index: int


class PickUp(Action, frozen=True, kw_only=True):
    """Pick up the whole pile into the hand."""


class PlayFromDeck(Action, frozen=True, kw_only=True):
    """Turn the deck's top card and play it if it can be played (a gamble or a blind play)."""


ShitheadAction = Swap | Ready | PlayCards | PlayFaceDown | PickUp | PlayFromDeck


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: every seat's face-down, face-up and hand cards, and the deck (top first)."""

    ruleset: ShitheadRuleset
    players: int
    face_down: list[list[Card]]
    face_up: list[list[Card]]
    hands: list[list[Card]]
    deck: list[Card]


class CardsSwapped(Event, frozen=True, kw_only=True):
    """A seat moved `hand_card` face up and took `face_up_card` into the hand."""

    seat: int
    hand_card: Card
    face_up_card: Card


class PlayerReady(Event, frozen=True, kw_only=True):
    """A seat finished swapping."""

    seat: int


class PlayStarted(Event, frozen=True, kw_only=True):
    """The play phase began; `seat` leads by `rule`, and must play `rank` from `zone` if set."""

    seat: int
    rule: str
    rank: Rank | None = None
    zone: Zone | None = None


class CardsPlayed(Event, frozen=True, kw_only=True):
    """A seat played cards of one rank from its hand or its face-up cards."""

    seat: int
    cards: list[Card]
    source: Zone


class FaceDownRevealed(Event, frozen=True, kw_only=True):
    """A seat turned over its face-down card at `index` onto the pile."""

    seat: int
    index: int
    card: Card
    playable: bool


class DeckCardTurned(Event, frozen=True, kw_only=True):
    """A seat turned the deck's top card onto the pile (a gamble or a blind play)."""

    seat: int
    card: Card
    playable: bool
    blind: bool = False


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards from the deck; others see only how many."""

    seat: int
    cards: list[Card]


class DirectionReversed(Event, frozen=True, kw_only=True):
    """A joker reversed the direction of play."""

    direction: int


class PileBurned(Event, frozen=True, kw_only=True):
    """The pile left the game, by the burn rank or by a run of one rank."""

    seat: int
    reason: Literal["burn_rank", "run"]
    count: int


class PilePickedUp(Event, frozen=True, kw_only=True):
    """A seat took the whole pile into the hand."""

    seat: int
    cards: list[Card]
    reason: Literal["no_play", "chosen", "failed_reveal", "failed_gamble"]


class PlayerOut(Event, frozen=True, kw_only=True):
    """A seat has no cards left; `place` is its finishing place."""

    seat: int
    place: int


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int


ShitheadEvent = (
    GameCreated
    | GameStarted
    | CardsSwapped
    | PlayerReady
    | PlayStarted
    | CardsPlayed
    | FaceDownRevealed
    | DeckCardTurned
    | CardsDrawn
    | DirectionReversed
    | PileBurned
    | PilePickedUp
    | PlayerOut
    | TurnPassed
    | GameFinished
)


DECISIONS = (CardsSwapped, PlayerReady, CardsPlayed, FaceDownRevealed, DeckCardTurned)
