"""Shithead tables built card by card, the rules applied to them, and what a seat may know of
the cards: the helpers of the Shithead rule, original-text, property and hostile-input tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from shared.errors import IllegalAction
from shared.games.shithead.decide import decide
from shared.games.shithead.evolve import evolve
from shared.games.shithead.messages import (
    CardsSwapped,
    PilePickedUp,
    PlayCards,
    Ready,
)
from shared.games.shithead.rules import PRESETS, ShitheadRuleset
from shared.games.shithead.state import ShitheadState
from shared.messages.common import Event

CLASSIC = PRESETS["classic"]


def table(
    hands: Sequence[Sequence[str]],
    *,
    face_up: Sequence[Sequence[str]] | None = None,
    face_down: Sequence[Sequence[str]] | None = None,
    deck: Sequence[str] = (),
    pile: Sequence[str] = (),
    turn: int = 0,
    ruleset: ShitheadRuleset = CLASSIC,
    **rules: Any,
) -> ShitheadState:
    """Returns a play-phase state with the given cards (empty zones where not given)."""
    players = len(hands)
    return ShitheadState(
        ruleset=msgspec.structs.replace(ruleset, **rules),
        hands=tuple(tuple(h) for h in hands),
        face_up=tuple(tuple(u) for u in (face_up or [[]] * players)),
        face_down=tuple(tuple(d) for d in (face_down or [[]] * players)),
        deck=tuple(deck),
        pile=tuple(pile),
        phase="play",
        ready=(True,) * players,
        turn=turn,
    )


def apply(state: ShitheadState, seat: int, action: Any) -> tuple[ShitheadState, list[Event]]:
    """Returns the state after `seat` takes `action`, and the events it caused."""
    events = decide(state, seat, action)
    for event in events:
        state = evolve(state, event)
    return state, events


def refused(state: ShitheadState, seat: int, action: Any) -> str:
    """Returns the rule that refuses `action`, failing if it is accepted."""
    with pytest.raises(IllegalAction) as caught:
        decide(state, seat, action)
    return caught.value.rule


def play(*cards: str) -> PlayCards:
    """Returns a PlayCards of `cards`."""
    return PlayCards(cards=list(cards))


def kinds(events: Sequence[Event]) -> list[str]:
    """Returns the event type names."""
    return [type(event).__name__ for event in events]


def swap_phase(
    hands: Sequence[Sequence[str]], face_up: Sequence[Sequence[str]], **rules: Any
) -> ShitheadState:
    """Returns a swap-phase state with the given hands and face-up cards."""
    state = table(hands, face_up=face_up, face_down=[["AC"]] * len(hands), **rules)
    return msgspec.structs.replace(state, phase="swap", ready=(False,) * len(hands))


def all_ready(state: ShitheadState) -> tuple[ShitheadState, list[Event]]:
    """Declares every seat ready; returns the state and the last seat's events."""
    events: list[Event] = []
    for seat in range(state.players):
        state, events = apply(state, seat, Ready())
    return state, events


def ruleset_for(preset: str, players: int) -> ShitheadRuleset:
    """Returns the preset with as many decks as the table needs."""
    rules = PRESETS[preset]
    per_seat = rules.face_down + rules.face_up + rules.hand
    return msgspec.structs.replace(rules, decks=-(-per_seat * players // 52))


def known_to(
    state: ShitheadState, seat: int, taken: list[Counter[str]] | None = None
) -> Counter[str]:
    """Returns the cards `seat` may know: its hand, every face-up card, the pile, the burnt,
    and the cards of other hands that public events showed going in (`taken`, per seat)."""
    zones = (state.hands[seat], *state.face_up, state.pile, state.burnt)
    known = Counter(card for zone in zones for card in zone)
    for other, cards in enumerate(taken or []):
        known += Counter(state.hands[other]) & cards  # the seat's own appear twice: hand and known
    return known


def publicly_taken(taken: list[Counter[str]], event: Event) -> None:
    """Adds the cards `event` shows everyone going into a hand to that seat's tally."""
    if isinstance(event, PilePickedUp):
        taken[event.seat] += Counter(event.cards)
    elif isinstance(event, CardsSwapped):
        taken[event.seat][event.face_up_card] += 1
