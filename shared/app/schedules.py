"""Scheduled tournaments: a tournament run once at a time, or on every tick of a cron expression.

A run is identified by its slot: the `at` time of a once-schedule, or the cron tick the
run belongs to (the latest tick at or before the moment it fires). Its tournament's id
derives from the schedule's id and the slot, and creating a tournament is idempotent per
id, so a run fired twice (a restarted beat, a redelivered task) creates one tournament.

A firing that comes late (beat was down over several ticks) runs once, for the latest
tick; the ticks it skipped have no run. The `Scheduler` port stores schedules and fires
their runs: `InProcessScheduler` here (the embedded default), the celery-redbeat adapter
in `services/workers/beat.py`.
"""

from __future__ import annotations

import abc
import builtins
import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import msgspec
from croniter import CroniterBadDateError, CroniterError, croniter

from shared.app.games import BotTurnDispatcher
from shared.errors import InvalidRequest

if TYPE_CHECKING:
    from shared.model.tournaments.model import TournamentDefinition

_log = logging.getLogger(__name__)

RUNS_SHOWN = 100
"""How many of a cron schedule's latest slots `slots_until` looks at."""


class Schedule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """When a tournament runs: once `at` an aware time, or on each tick of `cron`.

    `cron` is a five-field expression (minute hour day-of-month month day-of-week) read in
    `timezone` (an IANA name, default UTC); as in cron, a day of the month and a day of
    the week both given match either. A schedule that cannot be read raises ValueError
    naming its field, so decoding one from JSON fails with that field's path.
    """

    at: datetime | None = None
    cron: str | None = None
    timezone: str | None = None

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


def run_definition(definition: TournamentDefinition) -> TournamentDefinition:
    """Returns the definition a run's tournament is created with: the same, unscheduled."""
    return msgspec.structs.replace(definition, schedule=None)


@dataclass(frozen=True)
class ScheduledTournament:
    """A stored schedule: its id, the tournament it runs, when it was made, its last run."""

    schedule_id: str
    definition: TournamentDefinition
    since: datetime
    last_slot: datetime | None = None

    @property
    def schedule(self) -> Schedule:
        """Returns the definition's schedule."""
        assert self.definition.schedule is not None
        return self.definition.schedule

    @property
    def next_run(self) -> datetime | None:
        """Returns when the next run is due (maybe overdue), None once no run is left."""
        return self.schedule.next_run(self.since, self.last_slot)

    def due_slot(self, now: datetime) -> datetime | None:
        """Returns the slot of the run due at `now`, None if none is."""
        return self.schedule.due_slot(self.since, self.last_slot, now)

    def runs_until(self, now: datetime) -> list[tuple[datetime, str]]:
        """Returns (slot, tournament id) of each slot up to `now`: the runs there may be."""
        slots = self.schedule.slots_until(self.since, now)
        return [(slot, run_id(self.schedule_id, slot)) for slot in slots]


class UnknownSchedule(LookupError):
    """No schedule has that id."""

    def __init__(self, schedule_id: str) -> None:
        super().__init__(f"no schedule {schedule_id!r}")
        self.schedule_id = schedule_id


class Scheduler(abc.ABC):
    """Stores tournament schedules and fires their runs when they are due."""

    @abc.abstractmethod
    def add(self, schedule_id: str, definition: TournamentDefinition) -> ScheduledTournament:
        """Stores a validated, scheduled definition; an id already stored returns that schedule."""

    @abc.abstractmethod
    def get(self, schedule_id: str) -> ScheduledTournament:
        """Returns the schedule; raises UnknownSchedule."""

    @abc.abstractmethod
    def list(self) -> list[ScheduledTournament]:
        """Returns every schedule, oldest first."""

    @abc.abstractmethod
    def remove(self, schedule_id: str) -> None:
        """Cancels a schedule: no run of it starts after this; raises UnknownSchedule."""

    def close(self) -> None:  # noqa: B027 - most adapters hold nothing to release
        """Releases what the scheduler holds (threads, connections)."""


def _utcnow() -> datetime:
    """Returns the current time, in UTC."""
    return datetime.now(UTC)


class InProcessScheduler(Scheduler):
    """The embedded twin: schedules held in this process, fired by a daemon thread.

    Each due run starts its tournament through `dispatcher` (in-process in the embedded
    default). A run's slot is recorded before it starts, so a slot runs at most once here;
    a process that stops loses its schedules.
    """

    def __init__(
        self, dispatcher: BotTurnDispatcher, clock: Callable[[], datetime] = _utcnow
    ) -> None:
        self._dispatcher = dispatcher
        self._clock = clock
        self._entries: dict[str, ScheduledTournament] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, schedule_id: str, definition: TournamentDefinition) -> ScheduledTournament:
        if definition.schedule is None:
            raise ValueError("only a definition with a schedule can be scheduled")
        with self._changed:
            known = self._entries.get(schedule_id)
            if known is not None:
                return known
            entry = ScheduledTournament(schedule_id, definition, self._clock())
            self._entries[schedule_id] = entry
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="cardarena-scheduler", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()
            return entry

    def get(self, schedule_id: str) -> ScheduledTournament:
        with self._changed:
            entry = self._entries.get(schedule_id)
        if entry is None:
            raise UnknownSchedule(schedule_id)
        return entry

    def list(self) -> list[ScheduledTournament]:
        with self._changed:
            entries = list(self._entries.values())
        return sorted(entries, key=lambda entry: (entry.since, entry.schedule_id))

    def remove(self, schedule_id: str) -> None:
        with self._changed:
            if self._entries.pop(schedule_id, None) is None:
                raise UnknownSchedule(schedule_id)
            self._changed.notify_all()

    def run_due(self, now: datetime | None = None) -> builtins.list[str]:
        """Starts every run due at `now` (default: the clock); returns their tournament ids."""
        now = now or self._clock()
        claimed: builtins.list[tuple[ScheduledTournament, datetime]] = []
        with self._changed:
            for schedule_id, entry in self._entries.items():
                slot = entry.due_slot(now)
                if slot is not None:
                    self._entries[schedule_id] = replace(entry, last_slot=slot)
                    claimed.append((entry, slot))
        started = []
        for entry, slot in claimed:
            tournament_id = run_id(entry.schedule_id, slot)
            try:
                self._dispatcher.start_tournament(run_definition(entry.definition), tournament_id)
            except Exception:
                _log.exception("the run %s of schedule %s failed", slot, entry.schedule_id)
                continue
            started.append(tournament_id)
        return started

    def close(self) -> None:
        with self._changed:
            self._closed = True
            thread, self._thread = self._thread, None
            self._changed.notify_all()
        if thread is not None:
            thread.join(timeout=30)

    def _run(self) -> None:
        """The thread's loop: fire what is due, then sleep until the next run or a change."""
        while True:
            self.run_due()
            with self._changed:
                if self._closed:
                    return
                self._changed.wait(self._seconds_to_next())
                if self._closed:
                    return

    def _seconds_to_next(self) -> float:
        """Returns how long to sleep: until the earliest next run, at most a minute."""
        runs = [entry.next_run for entry in self._entries.values()]
        due = [run for run in runs if run is not None]
        if not due:
            return 60.0
        wait = (min(due) - self._clock()) / timedelta(seconds=1)
        return min(max(wait, 0.0), 60.0)
