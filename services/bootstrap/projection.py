"""Builds the projection service's parts: the retention sweep."""

from __future__ import annotations

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
