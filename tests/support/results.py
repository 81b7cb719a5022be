"""Checks of a game's result that hold whatever the deal: what the rules say of its places."""

from __future__ import annotations

import itertools
from typing import Any


def assert_shithead_places(result: dict[str, Any]) -> None:
    """Asserts that a Shithead game played to the last seat has the places its rules give:
    1..n, one each, when it is `finished`; at the move cap (`capped`), those out by order,
    then the rest by cards left (`scores`), fewest first, a tie sharing the higher place
    (1, 2, 3, 3), as shared/games/shithead/__init__.py says."""
    places, scores = result["places"], result["scores"]
    if result["status"] == "finished":
        assert sorted(places) == list(range(1, len(places) + 1)), result
        return
    assert result["status"] == "capped", result
    assert places == [1 + sum(p < place for p in places) for place in places], result
    for seat, other in itertools.permutations(range(len(places)), 2):
        if scores[seat] < scores[other]:
            assert places[seat] < places[other], result
        if scores[seat] == scores[other] > 0:
            assert places[seat] == places[other], result
