"""Finding the cards a JSON-like value names, to check that a view leaks none."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

CARD = re.compile(r"^(?:[2-9TJQKA][CDHS]|X\d+)$")


def cards_in(value: Any) -> Counter[str]:
    """Returns every card named anywhere in a JSON-like value."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if CARD.match(item):
                found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return Counter(found)
