"""Hospodský autobus tables built card by card, the rules applied to them, and what a seat may
know of the cards: the helpers of the Autobus rule, property and hostile-input tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import pytest

from shared.errors import IllegalAction
from shared.games.autobus.decide import decide
from shared.games.autobus.evolve import _set_slot, evolve
from shared.games.autobus.rules import AutobusRuleset
from shared.games.autobus.state import AutobusState
from shared.messages.common import Event

RULES = AutobusRuleset()


def table(
    hands: Sequence[Sequence[str]],
    *,
    mains: Sequence[Sequence[str]] | None = None,
    slots: Mapping[tuple[int, int], tuple[Sequence[str], int]] | None = None,
    sequences: Sequence[Sequence[str]] = (),
    draw: Sequence[str] = (),
    completed: Sequence[str] = (),
    turn: int = 0,
    **rules: Any,
) -> AutobusState:
    """Returns a state with the given cards; `slots` maps (seat, slot) to (cards, rank)."""
    players = len(hands)
    ruleset = msgspec.structs.replace(RULES, **rules)
    state = AutobusState(
        ruleset=ruleset,
        mains=tuple(tuple(m) for m in (mains or [["9S", "9H"]] * players)),
        hands=tuple(tuple(h) for h in hands),
        slots=tuple(((),) * ruleset.slots for _ in range(players)),
        slot_ranks=tuple((None,) * ruleset.slots for _ in range(players)),
        draw=tuple(draw),
        shuffle_seed="s",
        sequences=tuple(tuple(s) for s in sequences),
        completed=tuple(completed),
        turn=turn,
    )
    for (seat, slot), (cards, rank) in (slots or {}).items():
        state = _set_slot(state, seat, slot, tuple(cards), rank)
    return state


def apply(state: AutobusState, seat: int, action: Any) -> tuple[AutobusState, list[Event]]:
    """Returns the state after `seat` takes `action`, and the events it caused."""
    events = decide(state, seat, action)
    for event in events:
        state = evolve(state, event)
    return state, events


def refused(state: AutobusState, seat: int, action: Any) -> str:
    """Returns the rule that refuses `action`, failing if it is accepted."""
    before = state
    with pytest.raises(IllegalAction) as caught:
        decide(state, seat, action)
    assert state == before
    return caught.value.rule


def known_to(state: AutobusState, seat: int) -> Counter[str]:
    """Returns the cards `seat` may know: its hand, main tops, slots, sequences."""
    slots = [cards for seat_slots in state.slots for cards in seat_slots]
    tops = [main[:1] for main in state.mains]
    zones = (state.hands[seat], *tops, *slots, *state.sequences)
    return Counter(card for zone in zones for card in zone)
