"""This process's folds of streams, kept so that the next read folds only what a stream gained.

Streams are append-only and folded by pure functions, so a cached fold at a version plus the
events after it is the stream's fold; a reader checks that the stream still holds the cached
version (a dropped or lost stream is folded afresh). Used for games (`shared.app.loading`)
and tournaments (`shared.app.sealing`).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from shared.store.port import EventStore

T = TypeVar("T")


class FoldCache(Generic[T]):
    """The folds one process made lately (least recently used first out). Thread-safe."""

    def __init__(
        self, key: Callable[[T], str], version: Callable[[T], int], size: int = 4096
    ) -> None:
        self._key = key
        self._version = version
        self._size = size
        self._folds: OrderedDict[str, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> T | None:
        """Returns the fold of `key` as last made here, None if it is not cached."""
        with self._lock:
            known = self._folds.get(key)
            if known is not None:
                self._folds.move_to_end(key)
            return known

    def put(self, fold: T) -> None:
        """Keeps `fold` unless a later version of its stream is cached already."""
        key = self._key(fold)
        with self._lock:
            known = self._folds.get(key)
            if known is None or self._version(known) <= self._version(fold):
                self._folds[key] = fold
                self._folds.move_to_end(key)
            while len(self._folds) > self._size:
                self._folds.popitem(last=False)

    def forget(self, key: str) -> None:
        """Drops the fold of `key` from the cache."""
        with self._lock:
            self._folds.pop(key, None)


class PerStore(Generic[T]):
    """One object per store object in this process, made by `factory` on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._objects: weakref.WeakKeyDictionary[EventStore, T] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, store: EventStore) -> T:
        """Returns the object of `store`."""
        with self._lock:
            known = self._objects.get(store)
            if known is None:
                known = self._objects[store] = self._factory()
            return known
