"""Bodies of the schedules routes (a schedule itself: `services.game.http.scheduled`)."""

from __future__ import annotations

import msgspec

from services.game.http.scheduled import ScheduleSummary


class SchedulePage(msgspec.Struct, frozen=True):
    """Every schedule, oldest first."""

    schedules: list[ScheduleSummary]
    """The schedules, newest first."""
