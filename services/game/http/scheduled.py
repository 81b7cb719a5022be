"""A scheduled tournament as the service shows it: the tournaments routes answer one for a
definition with a `schedule` (202), the schedules routes list and read them."""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Literal

import msgspec

from shared.model.tournaments import seeds
from shared.model.tournaments.model import TournamentDefinition, stream_id
from shared.model.tournaments.schedule import Schedule
from shared.ports.scheduler import ScheduledTournament, run_definition
from shared.store.port import EventStore


class ScheduleRun(msgspec.Struct, frozen=True):
    """A run of a schedule: its slot and the tournament it created."""

    slot: datetime
    """The time the run was due."""
    tournament_id: str
    """The tournament the run created."""


class ScheduleSummary(msgspec.Struct, frozen=True):
    """A schedule: its id, kind (`once` or `cron`), timing, tournament (its seed withheld:
    each run's tournament shows it once it ends) and next run."""

    schedule_id: str
    """The schedule's id."""
    kind: Literal["once", "cron"]
    """`once` (one run at a time) or `cron` (a run on each tick)."""
    schedule: Schedule
    """When it runs."""
    definition: TournamentDefinition
    """The tournament each run creates (its seed withheld)."""
    created_at: datetime
    """When the schedule was created."""
    next_run: datetime | None
    """When the next run is due (maybe overdue); null once a once-schedule has run."""


class ScheduleDetail(ScheduleSummary, frozen=True):
    """A schedule with the tournaments of its runs so far (a cron's latest 100 slots)."""

    runs: list[ScheduleRun] = []
    """The runs so far, oldest first (a cron's latest 100)."""


def schedule_id_for(key: str | None) -> str:
    """Returns a new schedule id; a creation retried with the same key gets the same id."""
    if key is None:
        return uuid.uuid4().hex
    return hashlib.sha256(f"schedule:{key}".encode()).hexdigest()[:32]


def summary(entry: ScheduledTournament) -> ScheduleSummary:
    """Returns a schedule's representation, without its runs."""
    return ScheduleSummary(
        schedule_id=entry.schedule_id,
        kind=entry.schedule.kind,
        schedule=entry.schedule,
        definition=seeds.withheld(run_definition(entry.definition)),
        created_at=entry.since,
        next_run=entry.next_run,
    )


def detail(store: EventStore, entry: ScheduledTournament) -> ScheduleDetail:
    """Returns a schedule's representation with the runs whose tournament exists in `store`."""
    runs = [
        ScheduleRun(slot, tournament_id)
        for slot, tournament_id in entry.runs_until(datetime.now(UTC))
        if store.version(stream_id(tournament_id)) > 0
    ]
    return ScheduleDetail(**msgspec.structs.asdict(summary(entry)), runs=runs)
