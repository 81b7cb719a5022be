"""Encodes events into store envelopes and decodes them back, one decoder per union."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import msgspec

from shared.messages.common import Event
from shared.messages.envelope import SCHEMA_VERSION, NewEvent, RecordedEvent

E = TypeVar("E", bound=Event)

_encoder = msgspec.msgpack.Encoder()


class UnknownSchemaVersion(ValueError):
    """A stored event carries an envelope schema version this code does not know."""


_tags: dict[type, str] = {}
"""Each event type's tag, read once (`__struct_config__` builds a new config each time)."""


def encode(event: Event) -> NewEvent:
    """Returns the envelope of `event`: its type tag and its msgpack payload."""
    kind = type(event)
    tag = _tags.get(kind)
    if tag is None:
        tag = _tags[kind] = str(kind.__struct_config__.tag)
    return NewEvent(tag, _encoder.encode(event))


def encode_all(events: Iterable[Event]) -> list[NewEvent]:
    """Returns the envelopes of `events`, in order."""
    return [encode(event) for event in events]


class EventCodec(Generic[E]):
    """Decodes stored events of one union type (a game's events plus the common ones)."""

    def __init__(self, union: Any) -> None:
        self._decoder: msgspec.msgpack.Decoder[E] = msgspec.msgpack.Decoder(union)

    def decode(self, recorded: RecordedEvent) -> E:
        """Returns the event in `recorded`; an unknown schema version is an error, not a guess."""
        if recorded.schema != SCHEMA_VERSION:
            raise UnknownSchemaVersion(
                f"{recorded.game_id} v{recorded.version}: schema {recorded.schema} "
                f"is not {SCHEMA_VERSION}"
            )
        return self._decoder.decode(recorded.data)

    def decode_all(self, recorded: Iterable[RecordedEvent]) -> list[E]:
        """Returns the events in `recorded`, in order."""
        return [self.decode(item) for item in recorded]


def to_json(event: Event) -> dict[str, Any]:
    """Returns `event` as JSON-ready builtins, with its `type` tag."""
    result: dict[str, Any] = msgspec.to_builtins(event)
    return result
