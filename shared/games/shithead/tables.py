"""A ruleset's rank rules as lookups built once per ruleset: what may go on what, which counts
a play may hold, which ranks reverse, skip or burn; and the order cards are listed in."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import lru_cache

from shared.games.cards import JOKER, RANKS, Card, standard_deck
from shared.games.shithead.rules import COURT, ORDER, ShitheadRuleset

ALPHABET = (*RANKS, JOKER)
"""The ranks a deal holds; the tables list these, and compute any other rank when asked."""
DECKS = frozenset(standard_deck(jokers=8))
"""The cards of up to four decks with their jokers; the tables list these, and compute any
other card when asked."""


def rank_refusal(rules: ShitheadRuleset, top: str | None, rank: str) -> str | None:
    """Returns the rule that forbids `rank` on the effective top `top` (None: an empty pile),
    or None when it may be played."""
    if rank in (rules.reset, JOKER):
        return None
    if rank == rules.burn:
        return "burn_not_on_faces" if rules.ten_not_on_faces and top in COURT else None
    if top is None or top in (rules.reset, JOKER):
        return None
    if rank == rules.lower and rules.lower_on_anything:
        return None
    if top == rules.lower:
        return None if ORDER[rank] <= ORDER[top] else "must_be_equal_or_lower"
    return None if ORDER[rank] >= ORDER[top] else "must_be_equal_or_higher"


class Refusals(dict[str, str | None]):
    """Rank -> the rule that forbids it on one effective top (None: allowed); a rank outside
    `ALPHABET` is computed on lookup, not stored."""

    def __init__(self, rules: ShitheadRuleset, top: str | None) -> None:
        super().__init__((rank, rank_refusal(rules, top, rank)) for rank in ALPHABET)
        self.rules = rules
        self.top = top

    def __missing__(self, rank: str) -> str | None:
        return rank_refusal(self.rules, self.top, rank)


class RefusalsByTop(dict[str | None, Refusals]):
    """Effective top (None: an empty pile) -> its `Refusals`; a top outside `ALPHABET` is
    computed on lookup, not stored."""

    def __init__(self, rules: ShitheadRuleset) -> None:
        super().__init__((top, Refusals(rules, top)) for top in (None, *ALPHABET))
        self.rules = rules

    def __missing__(self, top: str | None) -> Refusals:
        return Refusals(self.rules, top)


class Playable(dict[Card, bool]):
    """Card -> whether it may go on one effective top; a card outside the decks is computed on
    lookup, not stored."""

    def __init__(self, refusals: Refusals) -> None:
        super().__init__((card, refusals[card[0]] is None) for card in DECKS)
        self.refusals = refusals

    def __missing__(self, card: Card) -> bool:
        return self.refusals[card[0]] is None


class PlayableByTop(dict[str | None, Playable]):
    """Effective top (None: an empty pile) -> its `Playable`; a top outside `ALPHABET` is
    computed on lookup, not stored."""

    def __init__(self, refusals: RefusalsByTop) -> None:
        super().__init__((top, Playable(by_rank)) for top, by_rank in refusals.items())
        self.refusals = refusals

    def __missing__(self, top: str | None) -> Playable:
        return Playable(self.refusals[top])


class Tables:
    """What one ruleset decides about ranks and counts, read on every decision: `refusals`
    (effective top -> rank -> the rule that refuses it there, None where it goes), `playable`
    (effective top -> card -> whether it goes there), `multiple_from` (the fewest cards of a
    multiple play; one card always goes), `reversers` (the ranks each card of which reverses
    the direction of play), and the ruleset's special ranks and sizes as plain values."""

    __slots__ = (
        "burn",
        "burn_run",
        "face_down_gone",
        "hand",
        "multiple_from",
        "playable",
        "refusals",
        "reversers",
        "skip",
        "transparent",
    )

    def __init__(self, rules: ShitheadRuleset) -> None:
        self.refusals = RefusalsByTop(rules)
        self.playable = PlayableByTop(self.refusals)
        self.multiple_from = {"any": 2, "three_or_more": 3, "single": sys.maxsize}[rules.multiples]
        reverse = (rules.reverse_rank, JOKER if rules.joker_reverses else None)
        self.reversers = frozenset(rank for rank in reverse if rank is not None)
        self.transparent = rules.transparent
        self.skip = rules.skip_rank
        self.burn = rules.burn
        self.burn_run = rules.burn_run
        self.hand = rules.hand
        self.face_down_gone = rules.out_when_face_down_gone

    def top(self, pile: Sequence[Card]) -> str | None:
        """Returns the rank the next card is compared with (below transparent cards), or None."""
        transparent = self.transparent
        if transparent is None:
            return pile[-1][0] if pile else None
        for card in reversed(pile):
            if card[0] != transparent:
                return card[0]
        return None

    def count_allowed(self, count: int) -> bool:
        """Returns whether a play of `count` cards of one rank is allowed by `multiples`."""
        return count == 1 or count >= self.multiple_from


@lru_cache(maxsize=16)
def _tables(rules: ShitheadRuleset) -> Tables:
    """Returns the lookups of `rules`, shared by equal rulesets."""
    return Tables(rules)


_BY_ID: dict[int, tuple[ShitheadRuleset, Tables]] = {}
"""The lookups of the rulesets last asked for, by identity (hashing a ruleset takes longer
than the rest of a lookup); each entry holds its ruleset, so an id is not reused meanwhile."""


def tables(rules: ShitheadRuleset) -> Tables:
    """Returns the lookups of `rules` (cached: a few rulesets are played at a time)."""
    entry = _BY_ID.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    found = _tables(rules)
    if len(_BY_ID) >= 16:
        _BY_ID.clear()
    _BY_ID[id(rules)] = (rules, found)
    return found


class _CardOrder(dict[Card, str]):
    """Card -> a string whose order is the listing order: by rank, low to high with jokers
    (and anything else) last, then by the card's code; a card outside the decks is computed
    on lookup, not stored."""

    def __missing__(self, card: Card) -> str:
        return chr(ord("A") + ORDER.get(card[0], len(ORDER))) + card


CARD_ORDER = _CardOrder()
CARD_ORDER.update((card, CARD_ORDER[card]) for card in DECKS)
"""Every card of up to four decks with jokers -> its sort key in the order plays are listed."""
