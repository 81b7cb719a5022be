"""Server-sent event messages: an event with JSON data and an id, or a keep-alive comment."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar.response import ServerSentEventMessage


def _json(value: Any) -> str:
    """Returns `value` as a JSON text (the data of an event)."""
    return msgspec.json.encode(value).decode()


def sse_event(event: str, value: Any, event_id: int | str) -> ServerSentEventMessage:
    """Returns the SSE event `event` with `value` as its JSON data and `event_id` as its id."""
    return ServerSentEventMessage(data=_json(value), event=event, id=event_id)


def keepalive() -> ServerSentEventMessage:
    """Returns a keep-alive comment line (no event)."""
    return ServerSentEventMessage(data=None, comment="keep-alive")
