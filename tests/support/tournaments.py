"""Tournament definitions that several test tiers post."""

from __future__ import annotations

from typing import Any


def alice_swiss(seed: str) -> dict[str, Any]:
    """Returns a two-round Swiss tournament of short Shithead games (40 moves) at tables of
    two, for the registered bot `alice`, the heuristic and two versions of the random bot."""
    return {
        "game": "shithead",
        "ruleset": {"max_moves": 40},
        "entrants": [
            {"bot": "alice"},
            {"bot": "heuristic"},
            {"bot": "random"},
            {"bot": "random", "version": "2"},
        ],
        "table_size": 2,
        "format": "swiss",
        "rounds": 2,
        "seed": seed,
    }
