"""Cards and a portable, seeded shuffle.

A card is a short string: a rank character and a suit character (`"AS"`, `"TD"`), or a
joker (`"X1"`, `"X2"`, ...). Engines that only care about ranks may use one-character
cards (the rules pages' notation for fixed deals).

The shuffle is Fisher-Yates driven by SHA-256 in counter mode, so a deal can be
recomputed from its seed in any language; no engine depends on Python's `random`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, TypeAlias

import msgspec

Card: TypeAlias = Annotated[str, msgspec.Meta(title="Card")]
"""A card code (the title names the documented `Card` schema; it constrains nothing)."""
Rank: TypeAlias = Annotated[str, msgspec.Meta(title="Rank")]
"""A rank character, a card code's first (`"2"`-`"9"`, `"T"`, `"J"`, `"Q"`, `"K"`, `"A"`,
`"X"` for a joker)."""

RANKS = "23456789TJQKA"
SUITS = "CDHS"
JOKER = "X"
HIDDEN = "??"
"""What a redacted card looks like to a seat that may not know it."""


def standard_deck(decks: int = 1, jokers: int = 0) -> list[Card]:
    """Returns `decks` 52-card decks in a fixed order followed by `jokers` jokers."""
    cards = [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
    cards.extend(f"{JOKER}{i + 1}" for i in range(jokers))
    return cards


def rank_of(card: Card) -> Rank:
    """Returns the rank character of `card` (`"X"` for a joker)."""
    return card[0]


def is_joker(card: Card) -> bool:
    """Returns whether `card` is a joker."""
    return card[0] == JOKER


def replace_at(
    items: tuple[tuple[Card, ...], ...], seat: int, value: tuple[Card, ...]
) -> tuple[tuple[Card, ...], ...]:
    """Returns `items` with the entry at `seat` replaced."""
    return (*items[:seat], value, *items[seat + 1 :])


def without(cards: tuple[Card, ...], removed: Sequence[Card]) -> tuple[Card, ...]:
    """Returns `cards` less one copy of each of `removed` (each must be there)."""
    left = list(cards)
    for card in removed:
        left.remove(card)
    return tuple(left)


def _random_words(seed: str) -> Iterator[int]:
    """Yields 64-bit words of SHA-256(seed ":" counter), counter = 0, 1, 2, ..."""
    counter = 0
    while True:
        digest = hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        for i in range(0, 32, 8):
            yield int.from_bytes(digest[i : i + 8], "big")
        counter += 1


def _below(words: Iterator[int], bound: int) -> int:
    """Returns a uniform integer in [0, bound) by rejection sampling 64-bit words."""
    limit = (1 << 64) - (1 << 64) % bound
    while True:
        word = next(words)
        if word < limit:
            return word % bound


def shuffled(cards: Iterable[Card], seed: int | str) -> list[Card]:
    """Returns a new list with `cards` shuffled by the portable seeded Fisher-Yates."""
    result = list(cards)
    words = _random_words(str(seed))
    for i in range(len(result) - 1, 0, -1):
        j = _below(words, i + 1)
        result[i], result[j] = result[j], result[i]
    return result


def deal_round_robin(deck: Sequence[Card], players: int) -> list[list[Card]]:
    """Deals `deck` one card at a time from seat 0; each hand lists its first card first."""
    return [list(deck[seat::players]) for seat in range(players)]
