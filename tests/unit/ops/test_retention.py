"""The retention setting and the pace of the projection's sweep (the sweep itself runs
against real Redis and PostgreSQL in tests/integration/test_retention.py)."""

from __future__ import annotations

from datetime import datetime

import msgspec
import pytest

from services.bootstrap.projection import build_retention
from services.projection.retention import Retention
from services.settings import load_settings
from shared.ports.archive import StoreArchive
from shared.store.memory import InMemoryEventStore


class CountingRetention(Retention):
    """Counts its sweeps instead of reading a database."""

    sweeps = 0

    def sweep(self, now: datetime | None = None) -> list[str]:
        self.sweeps += 1
        return []


def test_the_sweep_runs_at_most_once_per_interval() -> None:
    now = [1000.0]
    store = InMemoryEventStore()
    retention = CountingRetention(
        "unused", store, StoreArchive(store), 60, every_s=60, clock=lambda: now[0]
    )

    for step in (0, 30, 59.9, 60, 61, 119.9, 120):
        now[0] = 1000.0 + step
        retention.maybe_sweep()

    assert retention.sweeps == 3


def test_retention_defaults_to_a_week_and_zero_keeps_streams_forever() -> None:
    store = InMemoryEventStore()

    assert load_settings({}).retention_seconds == 7 * 86_400
    assert load_settings({"CARDARENA_RETENTION_SECONDS": "3600"}).retention_seconds == 3600
    assert build_retention(load_settings({"CARDARENA_RETENTION_SECONDS": "0"}), store) is None
    assert build_retention(load_settings({}), store) is not None
    with pytest.raises(msgspec.ValidationError):
        load_settings({"CARDARENA_RETENTION_SECONDS": "-1"})
