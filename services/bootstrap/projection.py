"""Builds the projection service's parts: which partitions it owns, the retention sweep."""

from __future__ import annotations

import re
import socket

from services.projection.archive import PostgresEventArchive
from services.projection.retention import Retention
from services.settings import ProjectionSettings
from shared.store.port import EventStore


def build_retention(settings: ProjectionSettings, store: EventStore) -> Retention | None:
    """Returns the projection's sweep of finished games' streams out of `store` (Redis) once
    the PostgreSQL archive holds them; None when streams are kept forever
    (`retention_seconds` 0)."""
    if settings.retention_seconds == 0:
        return None
    archive = PostgresEventArchive(settings.database_url)
    return Retention(settings.database_url, store, archive, settings.retention_seconds)


def projector_index(settings: ProjectionSettings, hostname: str | None = None) -> int:
    """Returns this projection service's index: `projector_index`, or the number that ends
    `hostname` (default the machine's), as a StatefulSet's pod `projection-1` has; else 0."""
    index = settings.projector_index
    if index < 0:
        name = socket.gethostname() if hostname is None else hostname
        found = re.search(r"-(\d+)$", name)
        index = int(found.group(1)) if found else 0
    if index >= settings.projectors:
        raise ValueError(
            f"projector index {index} is not below CARDARENA_PROJECTORS={settings.projectors}"
        )
    return index


def owned_partitions(settings: ProjectionSettings, index: int) -> list[int]:
    """Returns the partitions projector `index` projects: those whose number modulo
    `projectors` is `index`; raises ValueError when that is none."""
    owned = [p for p in range(settings.partitions) if p % settings.projectors == index]
    if not owned:
        raise ValueError(
            f"{settings.projectors} projectors for {settings.partitions} partitions:"
            f" projector {index} would own none"
        )
    return owned
