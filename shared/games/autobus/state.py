"""The whole Autobus table, and who moves on it."""

from __future__ import annotations

import msgspec

from shared.games.autobus.rules import AutobusRuleset, RankNumber
from shared.games.cards import Card
from shared.messages.common import Result


class AutobusState(msgspec.Struct, frozen=True):
    """The whole table."""

    ruleset: AutobusRuleset
    """The game's ruleset."""
    mains: tuple[tuple[Card, ...], ...]
    """Each seat's main pile, top first."""
    hands: tuple[tuple[Card, ...], ...]
    """Each seat's hand."""
    slots: tuple[tuple[tuple[Card, ...], ...], ...]
    """Each seat's discard slots, each a pile bottom first."""
    slot_ranks: tuple[tuple[RankNumber | None, ...], ...]
    """The rank of each seat's slots; null for an empty slot."""
    draw: tuple[Card, ...]
    """The draw pile, top first."""
    shuffle_seed: str
    """Seeds each reshuffle of the completed stock."""
    sequences: tuple[tuple[Card, ...], ...] = ()
    """The open sequences, each bottom (ace) first."""
    completed: tuple[Card, ...] = ()
    """The completed sequences' cards, waiting to be reshuffled."""
    reshuffles: int = 0
    """Reshuffles so far."""
    turn: int = 0
    """The seat to move."""
    turns: int = 0
    """Turns played so far."""
    played_this_turn: bool = False
    """Whether the seat to move played onto a sequence this turn."""
    quiet_turns: int = 0
    """Turns in a row without a play onto a sequence."""
    result: Result | None = None
    """The result once the game is over; else null."""

    @property
    def players(self) -> int:
        """Returns the number of seats."""
        return len(self.hands)


def to_move(state: AutobusState) -> list[int]:
    """Returns the seat whose turn it is, or nothing once the game is over."""
    return [] if state.result is not None else [state.turn]


def is_over(state: AutobusState) -> bool:
    """Returns whether the game has ended."""
    return state.result is not None


def result(state: AutobusState) -> Result | None:
    """Returns the result of an ended game, None while it runs."""
    return state.result
