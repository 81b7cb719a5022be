"""Text the stores can hold: no NUL (PostgreSQL's text and jsonb refuse it) and no lone
surrogate (UTF-8, and so Redis and PostgreSQL, cannot encode one).

Pure: the game service refuses such text at its door (`services.game.http.pipeline.strict`),
the export reader refuses it in a log, and the projection keeps it out of its tables.
"""

from __future__ import annotations

import re
from typing import Any

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """Returns what in `text` no store can hold (`NUL (U+0000)`), None when all of it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    return "NUL (U+0000)" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"


def find_unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """Returns the path (`seats[0].name`, `""` for `value` itself) of the first string, or
    object key, in decoded JSON `value` that no store can hold, with what it holds; None
    when every string can be stored."""
    if isinstance(value, str):
        found = unstorable(value)
        return None if found is None else (path, found)
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and (found := unstorable(key)) is not None:
                return (path or "body", f"a key holding {found}")
            if (deeper := find_unstorable(item, name)) is not None:
                return deeper
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if (deeper := find_unstorable(item, f"{path}[{index}]")) is not None:
                return deeper
    return None


def printable(text: str, limit: int = 300) -> str:
    """Returns `text` with what no store can hold escaped (`\\x00`, `\\ud800`), cut to `limit`."""
    escaped = _UNSTORABLE.sub(lambda m: m.group().encode("unicode_escape").decode(), text)
    return escaped if len(escaped) <= limit else escaped[: limit - 1] + "…"
