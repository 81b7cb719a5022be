"""Examples of the main operations' bodies: real requests and answers of the service."""

from __future__ import annotations

from typing import Any

EXAMPLES: dict[str, dict[str, Any]] = {}
"""Per operation id: `request` (its JSON body) and `responses` (status to a JSON body)."""


def add(operation: dict[str, Any]) -> None:
    """Sets the examples of `operation` on its request body and answers."""
    found = EXAMPLES.get(operation.get("operationId", ""))
    if found is None:
        return
    if "request" in found:
        operation["requestBody"]["content"]["application/json"]["example"] = found["request"]
    for status, body in found.get("responses", {}).items():
        content = operation["responses"][status]["content"]
        next(iter(content.values()))["example"] = body
