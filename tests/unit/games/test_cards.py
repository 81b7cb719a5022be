"""Cards and the portable seeded shuffle."""

from __future__ import annotations

import hashlib
from collections import Counter

from shared.games.cards import deal_round_robin, shuffled, standard_deck


def test_the_shuffle_is_pinned_so_any_language_can_recompute_a_deal() -> None:
    assert shuffled(standard_deck(), 1)[:10] == [
        "9D", "5D", "KH", "3D", "8H", "TC", "9S", "4S", "9H", "QH",
    ]  # fmt: skip
    assert shuffled(standard_deck(), "abc")[:4] == ["QD", "AS", "8C", "5C"]


def test_the_shuffle_follows_sha256_counter_mode_fisher_yates() -> None:
    cards = ["a", "b"]
    word = int.from_bytes(hashlib.sha256(b"7:0").digest()[:8], "big")
    expected = ["b", "a"] if word % 2 == 0 else ["a", "b"]
    assert shuffled(cards, 7) == expected


def test_the_shuffle_keeps_every_card_and_spreads_them() -> None:
    deck = standard_deck(decks=2, jokers=4)
    assert len(deck) == 108
    firsts = Counter(shuffled(standard_deck(), seed)[0] for seed in range(2000))
    assert Counter(shuffled(deck, 3)) == Counter(deck)
    assert len(firsts) == 52
    assert max(firsts.values()) < 100


def test_dealing_round_robin_gives_the_first_card_to_seat_zero() -> None:
    assert deal_round_robin(["a", "b", "c", "d", "e"], 2) == [["a", "c", "e"], ["b", "d"]]
