"""A bounded cache of a pure function of immutable values, as cheap to hit as a dict lookup."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from itertools import islice
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(dict[K, V], Generic[K, V]):
    """`memo[key]` is `function(key)`, computed once while it stays cached; once it holds `size`
    values the older half is dropped, so it never grows with the games played. Values are
    shared: callers must not change them."""

    def __init__(self, function: Callable[[K], V], size: int) -> None:
        super().__init__()
        self.function = function
        self.size = size

    def __missing__(self, key: K) -> V:
        if len(self) >= self.size:
            for old in list(islice(self, self.size // 2)):
                del self[old]
        value = self[key] = self.function(key)
        return value
