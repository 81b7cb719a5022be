"""Autobus's commands (a seat's actions) and events, and their unions."""

from __future__ import annotations

from typing import Any, Literal

from shared.games.autobus.rules import KING, RANKS, AutobusRuleset, RankNumber
from shared.games.cards import Card
from shared.messages.common import Action, Event, GameCreated, GameFinished

Source = Literal["hand", "main", "slot"]


class PlayToSequence(Action, frozen=True, kw_only=True):
    """Play a card from the hand (`card`), the main pile's top or a slot's top onto a sequence.

    `sequence` is the index of an open sequence, or None to open a new one (ace or joker).
    """

    source: Source
    """Where the card comes from: `hand`, `main` (the own main pile's top) or `slot`."""
    card: Card | None = None
    """The hand card played (only from the hand)."""
    slot: int | None = None
    """The slot whose top is played (only from a slot)."""
    sequence: int | None = None
    """The open sequence it goes onto; null opens a new one (an ace or a joker)."""
    joker_rank: RankNumber | None = None
    """The rank number (1 ace ... 13 king) a joker stands for, where it is not implied."""


class Discard(Action, frozen=True, kw_only=True):
    """End the turn: a hand card onto a slot of its rank or an empty slot."""

    card: Card
    """The hand card discarded."""
    slot: int
    """The own slot it goes onto (one of its rank, or an empty one)."""
    joker_rank: RankNumber | None = None
    """The rank number (1 ace ... 13 king) a joker stands for on an empty slot."""


class UnderTheBus(Action, frozen=True, kw_only=True):
    """End the turn: a hand card that fits no slot goes under the own main pile."""

    card: Card
    """The hand card that goes under the own main pile."""


class EndTurn(Action, frozen=True, kw_only=True):
    """End the turn with an empty hand when nothing can be drawn."""


AutobusAction = PlayToSequence | Discard | UnderTheBus | EndTurn


def upgrade_action(stored: dict[str, Any]) -> dict[str, Any]:
    """Returns a stored action (`DefaultActionPlayed.action`) in today's shape: logs written
    before actions took rank numbers name a joker's rank by its character (`"Q"` is 12)."""
    named = stored.get("joker_rank")
    if isinstance(named, str) and len(named) == 1 and named in RANKS:
        return {**stored, "joker_rank": RANKS.index(named) + 1}
    return stored


def action_problem(payload: Any, error: str) -> str:
    """Returns the message of a refused action payload, msgspec's `error`, saying what a
    `joker_rank` is when that is what was wrong."""
    named = payload.get("joker_rank") if isinstance(payload, dict) else None
    if named is None or (type(named) is int and 1 <= named <= KING):
        return error
    meaning = f"1 ace ... 10, 11 jack, 12 queen, {KING} king"
    return f"joker_rank is a rank number 1-{KING} ({meaning}), not {named!r}: {error}"


class GameStarted(Event, frozen=True, kw_only=True):
    """The deal: main piles (top first, the top face up), hands, the draw pile (top first)."""

    ruleset: AutobusRuleset
    """The game's ruleset."""
    players: int
    """The number of seats."""
    mains: list[list[Card]]
    """Each seat's main pile, top first (the top face up)."""
    hands: list[list[Card]]
    """Each seat's hand."""
    draw: list[Card]
    """The draw pile, top first."""
    shuffle_seed: str
    """Seeds each later reshuffle of the completed stock."""


class CardPlayed(Event, frozen=True, kw_only=True):
    """A card went onto a sequence, standing for `rank` (a new sequence when `opened`)."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    source: Source
    """Where the card came from: `hand`, `main` or `slot`."""
    card: Card
    """The card played."""
    sequence: int
    """The sequence it went onto."""
    rank: RankNumber
    """The rank it stands for there."""
    slot: int | None = None
    """The slot it came from (only from a slot)."""
    opened: bool = False
    """Whether it opened a new sequence."""


class MainTopRevealed(Event, frozen=True, kw_only=True):
    """The next card of a main pile was turned face up."""

    seat: int
    """The seat whose main pile it is."""
    card: Card
    """The new top card, now face up."""


class SequenceCompleted(Event, frozen=True, kw_only=True):
    """A sequence reached the king and left for the completed stock."""

    sequence: int
    """The sequence that reached the king."""
    cards: list[Card]
    """Its cards, in the order they were played."""


class CardsDrawn(Event, frozen=True, kw_only=True):
    """A seat drew cards (a refill or an emptied hand); others see only how many."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    cards: list[Card]
    """The cards drawn (`??` to other seats while the game runs)."""
    reason: Literal["refill", "empty_hand"]
    """`refill` (the start of a turn) or `empty_hand`."""


class StockReshuffled(Event, frozen=True, kw_only=True):
    """The completed stock became the draw pile, in this (hidden) order."""

    cards: list[Card]
    """The new draw pile, top first (hidden while the game runs)."""
    number: int
    """The reshuffle's number, from 1."""


class CardDiscarded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card onto a slot, which now has `rank`."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    card: Card
    """The card discarded."""
    slot: int
    """The slot it went onto."""
    rank: RankNumber
    """The slot's rank now."""


class CardUnderTheBus(Event, frozen=True, kw_only=True):
    """A seat ended its turn with a hand card under its own main pile."""

    seat: int
    """The seat, numbered from 0 in seat order."""
    card: Card
    """The card put under the seat's main pile."""


class TurnEnded(Event, frozen=True, kw_only=True):
    """A seat ended its turn with an empty hand and nothing to draw."""

    seat: int
    """The seat, numbered from 0 in seat order."""


class TurnPassed(Event, frozen=True, kw_only=True):
    """It is now `seat`'s turn."""

    seat: int
    """The seat whose turn it is now."""


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
