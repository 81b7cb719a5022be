"""Bodies of the export routes (an export itself is JSON lines, see `shared.model.exported_log`)."""

from __future__ import annotations

import msgspec


class ImportedGame(msgspec.Struct, frozen=True):
    """An imported game: its id and version; `created` false when the same log was there."""

    game_id: str
    """The imported game's id."""
    version: int
    """The imported game's version: the number of events in its log."""
    created: bool
    """False when the same log was already there (nothing was written)."""
