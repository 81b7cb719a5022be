"""Autobus's commands (a seat's actions) and events, and their unions."""

from __future__ import annotations

from typing import Literal

from shared.games.autobus.rules import AutobusRuleset, RankNumber
from shared.games.cards import Card, Rank
from shared.messages.common import Action, Event, GameCreated, GameFinished

Source = Literal["hand", "main", "slot"]


class PlayToSequence(Action, frozen=True, kw_only=True):
    """Play a card from the hand (`card`), the main pile's top or a slot's top onto a sequence.

    `sequence` is the index of an open sequence, or None to open a new one (ace or joker).
    """

    source: Source
    card: Card | None = None
    slot: int | None = None
    sequence: int | None = None
    joker_rank: Rank | None = None


class Discard(Action, frozen=True, kw_only=True):
    """End the turn: a hand card onto a slot of its rank or an empty slot."""

    card: Card
    slot: int
    joker_rank: Rank | None = None


class UnderTheBus(Action, frozen=True, kw_only=True):
    """End the turn: a hand card that fits no slot goes under the own main pile."""

    card: Card


class EndTurn(Action, frozen=True, kw_only=True):
    """End the turn with an empty hand when nothing can be drawn."""


AutobusAction = PlayToSequence | Discard | UnderTheBus | EndTurn


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: main piles (top first, the top face up), hands, the draw pile (top first)."""

    ruleset: AutobusRuleset
    players: int
    mains: list[list[Card]]
    hands: list[list[Card]]
    draw: list[Card]
    shuffle_seed: str


class CardPlayed(Event, frozen=True, kw_only=True):
    """A card went onto a sequence, standing for `rank` (a new sequence when `opened`)."""

    seat: int
    source: Source
    card: Card
    sequence: int
    rank: RankNumber
    slot: int | None = None
    opened: bool = False


class MainTopRevealed(Event, frozen=True, kw_only=True):
    """The next card of a main pile was turned face up."""

    seat: int
    card: Card


class SequenceCompleted(Event, frozen=True, kw_only=True):
    """A sequence reached the king and left for the completed stock."""

    sequence: int
    cards: list[Card]


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards (a refill or an emptied hand); others see only how many."""

    seat: int
    cards: list[Card]
    reason: Literal["refill", "empty_hand"]


class StockReshuffled(Event, frozen=True, kw_only=True):
    """The completed stock became the draw pile, in this (hidden) order."""

    cards: list[Card]
    number: int


class CardDiscarded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card onto a slot, which now has `rank`."""

    seat: int
    card: Card
    slot: int
    rank: RankNumber


class CardUnderTheBus(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card under its own main pile."""

    seat: int
    card: Card


class TurnEnded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with an empty hand and nothing to draw."""

    seat: int


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int


AutobusEvent = (
    GameCreated
    | GameStarted
    | CardPlayed
    | MainTopRevealed
    | SequenceCompleted
    | CardsDrawn
    | StockReshuffled
    | CardDiscarded
    | CardUnderTheBus
    | TurnEnded
    | TurnPassed
    | GameFinished
)
