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


STATEFUL_POD = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?-(?P<ordinal>0|[1-9][0-9]*)")
"""A StatefulSet pod's name: the set's name, then `-` and the pod's ordinal."""


def projector_index(settings: ProjectionSettings, hostname: str | None = None) -> int:
    """Returns this projection service's index: `projector_index` when set, else 0 for a
    single projector, else the ordinal that ends `hostname` (default the machine's), as a
    StatefulSet's pod `projection-1` has. Raises ValueError for an index not below
    `projectors`: with several projectors and no index set, for any host name but a
    StatefulSet pod's of such an ordinal (a Deployment's pod `projection-7d9f8-x2k4q` has
    none, and one whose random suffix is all digits, `-24567`, is past any count)."""
    index = settings.projector_index
    if index < 0 and settings.projectors == 1:
        return 0
    if index < 0:
        name = socket.gethostname() if hostname is None else hostname
        found = STATEFUL_POD.fullmatch(name)
        index = int(found["ordinal"]) if found else settings.projectors
        if index >= settings.projectors:
            raise ValueError(
                f"host name {name!r} is no StatefulSet pod of an ordinal below"
                f" CARDARENA_PROJECTORS={settings.projectors}: set CARDARENA_PROJECTOR_INDEX"
            )
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
