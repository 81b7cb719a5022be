"""The envelope of a stored event: what the codec writes and reads, below every store.

The event store port (`shared.store.port`) appends `NewEvent`s and returns `RecordedEvent`s;
the codec (`shared.messages.codec`) turns events into the one and back from the other.
"""

from __future__ import annotations

import msgspec

SCHEMA_VERSION = 1
"""The envelope schema version written with every event; readers refuse any other."""


class NewEvent(msgspec.Struct, frozen=True):
    """An encoded event about to be appended: its type tag and its payload bytes."""

    type: str
    data: bytes


class RecordedEvent(msgspec.Struct, frozen=True):
    """An event as stored: game, version (1-based, gapless), type, payload and envelope."""

    game_id: str
    kind: str
    version: int
    type: str
    data: bytes
    schema: int = SCHEMA_VERSION
    recorded_at: int = 0
    """Milliseconds since the epoch, from the store's clock."""
