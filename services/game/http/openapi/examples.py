"""Examples of the main operations' bodies: real requests and answers of the service, taken
from one run (a bot registered, a game created, its view read, an action posted, its events
listed, a challenge issued, a tournament created) and kept in `examples.json`; a test
validates each against its operation's schemas."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import msgspec

_FILE = Path(__file__).with_name("examples.json")


@cache
def examples() -> dict[str, dict[str, Any]]:
    """Returns per operation id: `request` (its JSON body) and `responses` (status to a JSON
    body)."""
    found: dict[str, dict[str, Any]] = msgspec.json.decode(_FILE.read_bytes())
    return found


def add(operation: dict[str, Any]) -> None:
    """Sets the examples of `operation` on its request body and answers."""
    found = examples().get(operation.get("operationId", ""))
    if found is None:
        return
    if "request" in found:
        operation["requestBody"]["content"]["application/json"]["example"] = found["request"]
    for status, body in found.get("responses", {}).items():
        operation["responses"][status]["content"]["application/json"]["example"] = body
