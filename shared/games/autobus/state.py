"""The whole Autobus table, and who moves on it."""

from __future__ import annotations

import msgspec

from shared.games.autobus.rules import AutobusRuleset
from shared.games.cards import Card
from shared.messages.common import Result


class AutobusState(msgspec.Struct, frozen=True):
    """The whole table."""

    ruleset: AutobusRuleset
    mains: tuple[tuple[Card, ...], ...]
    hands: tuple[tuple[Card, ...], ...]
    slots: tuple[tuple[tuple[Card, ...], ...], ...]
    slot_ranks: tuple[tuple[int | None, ...], ...]
    draw: tuple[Card, ...]
    shuffle_seed: str
    sequences: tuple[tuple[Card, ...], ...] = ()
    completed: tuple[Card, ...] = ()
    reshuffles: int = 0
    turn: int = 0
    turns: int = 0
    played_this_turn: bool = False
    quiet_turns: int = 0
    result: Result | None = None

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
