"""Schedules of tournaments: a tournament run once at a time, or on every tick of a cron expression.

A run is identified by its slot: the `at` time of a once-schedule, or the cron tick the
run belongs to (the latest tick at or before the moment it fires). Its tournament's id
derives from the schedule's id and the slot (`run_id`), and creating a tournament is
idempotent per id, so a run fired twice (a restarted beat, a redelivered task) creates
one tournament. A firing that comes late (beat was down over several ticks) runs once,
for the latest tick; the ticks it skipped have no run. The port that stores schedules and
fires their runs is `shared.ports.scheduler.Scheduler`.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec
from croniter import CroniterBadDateError, CroniterError, croniter

from shared.errors import InvalidRequest

RUNS_SHOWN = 100
"""How many of a cron schedule's latest slots `slots_until` looks at."""


class Schedule(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """When a tournament runs: once `at` an aware time, or on each tick of `cron`.

    `cron` is a five-field expression (minute hour day-of-month month day-of-week) read in
    `timezone` (an IANA name, default UTC); as in cron, a day of the month and a day of
    the week both given match either. A schedule that cannot be read raises ValueError
    naming its field, so decoding one from JSON fails with that field's path.
    """

    at: datetime | None = None
    """Run once at this time (with its offset)."""
    cron: str | None = None
    """Run on each tick of this five-field cron expression."""
    timezone: str | None = None
    """The IANA time zone `cron` is read in (default UTC)."""

    def __post_init__(self) -> None:
        if (self.at is None) == (self.cron is None):
            raise ValueError("a schedule takes exactly one of at (a time) or cron (ticks)")
        if self.at is not None:
            if self.at.utcoffset() is None:
                raise ValueError("the time in field `at` needs a UTC offset, e.g. +00:00")
            if self.timezone is not None:
                raise ValueError("field `timezone` is for cron; `at` carries its own offset")
            return
        assert self.cron is not None
        zone = _zone(self.timezone)
        if len(self.cron.split()) != 5:
            raise ValueError(
                f"field `cron` takes five fields (minute hour day month weekday), not {self.cron!r}"
            )
        try:
            croniter(self.cron, datetime.now(zone)).get_next(datetime)
        except CroniterBadDateError:
            raise ValueError(f"field `cron`: {self.cron!r} never comes round") from None
        except CroniterError as error:
            raise ValueError(f"field `cron`: {self.cron!r} does not parse: {error}") from None

    @property
    def kind(self) -> Literal["once", "cron"]:
        """Returns `once` (an `at` time) or `cron`."""
        return "once" if self.at is not None else "cron"

    @property
    def zone(self) -> tzinfo:
        """Returns the time zone cron ticks are read in."""
        return _zone(self.timezone)

    def next_run(self, since: datetime, last_slot: datetime | None) -> datetime | None:
        """Returns the slot of the next run (overdue ones too), None once no run is left.

        `since` is when the schedule was made, `last_slot` the slot of its last run (None:
        it has not run); cron slots come strictly after both.
        """
        if self.at is not None:
            return self.at if last_slot is None else None
        after = since if last_slot is None else max(since, last_slot)
        following: datetime = self._ticks(after).get_next(datetime)
        return following.astimezone(UTC)

    def due_slot(
        self, since: datetime, last_slot: datetime | None, now: datetime
    ) -> datetime | None:
        """Returns the slot a run fired at `now` belongs to, None if no run is due."""
        if self.at is not None:
            return self.at if last_slot is None and self.at <= now else None
        latest = self._latest_tick(now)
        after = since if last_slot is None else max(since, last_slot)
        return latest if latest > after else None

    def slots_until(
        self, since: datetime, now: datetime, limit: int = RUNS_SHOWN
    ) -> list[datetime]:
        """Returns the slots from `since` to `now`, oldest first (a cron's latest `limit`)."""
        if self.at is not None:
            return [self.at] if self.at <= now else []
        slots: list[datetime] = []
        tick = self._latest_tick(now)
        ticks = self._ticks(tick)
        while tick > since and len(slots) < limit:
            slots.append(tick)
            earlier: datetime = ticks.get_prev(datetime)
            tick = earlier.astimezone(UTC)
        return slots[::-1]

    def _ticks(self, start: datetime) -> croniter:
        """Returns the cron iterator from `start`, in the schedule's time zone."""
        assert self.cron is not None
        return croniter(self.cron, start.astimezone(self.zone))

    def _latest_tick(self, now: datetime) -> datetime:
        """Returns the latest cron tick at or before `now`, in UTC."""
        previous: datetime = self._ticks(now).get_prev(datetime)
        following: datetime = self._ticks(previous).get_next(datetime)
        return (following if following <= now else previous).astimezone(UTC)


def _zone(name: str | None) -> tzinfo:
    """Returns the time zone `name` (None: UTC); raises ValueError naming `timezone`."""
    if name is None or name == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"field `timezone`: {name!r} is no IANA time zone") from None


class InvalidSchedule(InvalidRequest):
    """A schedule that reads well but cannot run (a time in the past); `field` names it."""


def validate_schedule(schedule: Schedule, now: datetime | None = None) -> None:
    """Raises InvalidSchedule when `schedule` has no run left after `now` (default: the clock)."""
    now = now or datetime.now(UTC)
    if schedule.at is not None and schedule.at <= now:
        raise InvalidSchedule("at", f"{schedule.at.isoformat()} is in the past")


def run_id(schedule_id: str, slot: datetime) -> str:
    """Returns the id of the tournament that a schedule's run at `slot` creates."""
    key = f"schedule:{schedule_id}:{slot.astimezone(UTC).isoformat()}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]
