"""Autobus's ruleset and card values, and which rulesets a table can play."""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec

from shared.errors import InvalidRuleset
from shared.games.cards import JOKER, SUITS, Card
from shared.messages.common import Clock

RANKS = "A23456789TJQK"
VALUE = {rank: index + 1 for index, rank in enumerate(RANKS)}
"""A = 1 ... K = 13."""
KING = 13
RankNumber: TypeAlias = Annotated[int, msgspec.Meta(ge=1, le=KING, title="RankNumber")]
"""A rank as Autobus counts it, 1 (ace) to 13 (king), in its events, view, state and actions;
the title names the documented schema."""


class AutobusRuleset(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Hospodský autobus options (docs/rules/hospodsky-autobus.md)."""

    main_pile: int = 10
    """Cards in each main pile (its top face up)."""
    hand: int = 4
    """Cards a hand is refilled to."""
    slots: int = 4
    """Reserve slots per player."""
    decks: int = 2
    """52-card decks shuffled together."""
    jokers: int = 4
    """Jokers in the whole pack."""
    max_turns: int = 1000
    """The turn cap: the game ends as a draw after this many turns."""
    draw: Literal["no_move_possible", "quiet_round"] | msgspec.UnsetType = msgspec.UNSET
    """The draw of rule 10: `no_move_possible` (unset means this), a full round without a play
    onto a sequence, nothing left to draw and no seat able to play onto one; `quiet_round`
    (how the engine read it before 2026-12-03), the round and nothing to draw alone."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The clock of games played under this ruleset; unset (and then not even encoded):
    untimed (a game with a webhook seat still gets the default webhook clock, see
    `shared.model.clocks.clock_for`). A game's own clock overrides it."""


def earlier_readings(ruleset: AutobusRuleset) -> list[AutobusRuleset]:
    """Returns `ruleset` as read before 2026-12-03 where it leaves the reading open: a quiet
    round with nothing to draw was a draw whether or not a seat could play."""
    if not isinstance(ruleset.draw, msgspec.UnsetType):
        return []
    return [msgspec.structs.replace(ruleset, draw="quiet_round")]


def value(card: Card) -> int:
    """Returns the rank value of a plain card (A = 1 ... K = 13)."""
    return VALUE[card[0]]


NUMBER: dict[Card, int] = {
    **{rank + suit: n for rank, n in VALUE.items() for suit in SUITS},
    **{f"{JOKER}{i}": 0 for i in range(1, 10)},
}
"""The rank number of every card a game can hold (A = 1 ... K = 13), 0 for a joker: one dict
lookup on the hot paths."""


def validate(ruleset: AutobusRuleset, players: int) -> None:
    """Raises InvalidRuleset (naming the field) unless `players` can play `ruleset`."""
    if not 2 <= players <= 4:
        raise InvalidRuleset("players", f"Hospodský autobus takes 2 to 4 players, not {players}")
    checks = {
        "main_pile": 1 <= ruleset.main_pile <= 30,
        "hand": 1 <= ruleset.hand <= 10,
        "slots": 1 <= ruleset.slots <= 8,
        "decks": 1 <= ruleset.decks <= 4,
        "jokers": 0 <= ruleset.jokers <= 8,
        "max_turns": ruleset.max_turns >= 1,
    }
    for field, ok in checks.items():
        if not ok:
            raise InvalidRuleset(field, f"{getattr(ruleset, field)} is out of range")
    total = ruleset.decks * 52 + ruleset.jokers
    if (ruleset.main_pile + ruleset.hand) * players > total:
        raise InvalidRuleset("decks", f"{players} players need more than {total} cards")
