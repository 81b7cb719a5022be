"""The scheduler port: it stores tournament schedules and fires their runs when they are due.

Its twins: `shared.app.runtime.InProcessScheduler` (the embedded default) and the
celery-redbeat adapter in `services/workers/beat.py`. When a schedule runs is
`shared.model.tournaments.schedule`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from datetime import datetime

import msgspec

from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.schedule import Schedule, run_id


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
