"""REST v1 schedules: the scheduled tournaments, their next run and their runs so far.

A definition with a `schedule` posted to /v1/tournaments is stored here (see
`TournamentsController.create`); each run creates a tournament whose id derives from the
schedule's id and the run's slot.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import msgspec
from litestar import Controller, Request, Response, delete, get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from services.game.auth import BEARER, host_only
from services.game.problems import problem, responses
from services.game.schemas import Problem
from shared.model.tournaments import seeds
from shared.model.tournaments.model import TournamentDefinition, stream_id
from shared.model.tournaments.schedule import Schedule
from shared.ports.scheduler import ScheduledTournament, Scheduler, UnknownSchedule, run_definition
from shared.store.port import EventStore

ScheduleId = Annotated[str, PathParameter(description="The schedule's id.")]


class ScheduleRun(msgspec.Struct, frozen=True):
    """A run of a schedule: its slot and the tournament it created."""

    slot: datetime
    tournament_id: str


class ScheduleSummary(msgspec.Struct, frozen=True):
    """A schedule: its id, kind (`once` or `cron`), timing, tournament (its seed withheld:
    each run's tournament shows it once it ends) and next run."""

    schedule_id: str
    kind: Literal["once", "cron"]
    schedule: Schedule
    definition: TournamentDefinition
    created_at: datetime
    next_run: datetime | None
    """When the next run is due (maybe overdue); null once a once-schedule has run."""


class ScheduleDetail(ScheduleSummary, frozen=True):
    """A schedule with the tournaments of its runs so far (a cron's latest 100 slots)."""

    runs: list[ScheduleRun] = []


class SchedulePage(msgspec.Struct, frozen=True):
    """Every schedule, oldest first."""

    schedules: list[ScheduleSummary]


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


def _unknown_schedule(_: Request[Any, Any, Any], error: UnknownSchedule) -> Response[Problem]:
    return problem(404, "unknown-schedule", f"no schedule {error.schedule_id!r}")


class SchedulesController(Controller):
    """Schedules of tournaments: list, read, cancel (create through POST /v1/tournaments).

    Hosting operations, every one: they need the admin key (in open mode, nothing).
    """

    path = "/v1/schedules"
    tags = ("schedules",)
    guards = [host_only]
    security = BEARER
    exception_handlers = {UnknownSchedule: _unknown_schedule}

    @get(
        operation_id="listSchedules",
        summary="Every scheduled tournament with its next run",
        sync_to_thread=True,
        responses=responses(401, 403, 503),
    )
    def list_schedules(self, scheduler: NamedDependency[Scheduler]) -> SchedulePage:
        """Returns every schedule, oldest first."""
        return SchedulePage([summary(entry) for entry in scheduler.list()])

    @get(
        "/{schedule_id:str}",
        operation_id="getSchedule",
        summary="A schedule: its timing, next run and the tournaments of its runs so far",
        sync_to_thread=True,
        responses=responses(400, 401, 403, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        scheduler: NamedDependency[Scheduler],
        schedule_id: ScheduleId,
    ) -> ScheduleDetail:
        """Returns the schedule and its runs so far."""
        return detail(store, scheduler.get(schedule_id))

    @delete(
        "/{schedule_id:str}",
        operation_id="cancelSchedule",
        summary="Cancel a schedule: no further run of it starts",
        description="Tournaments that its runs already started go on.",
        sync_to_thread=True,
        responses=responses(400, 401, 403, 404, 503),
    )
    def cancel(self, scheduler: NamedDependency[Scheduler], schedule_id: ScheduleId) -> None:
        """Removes the schedule; 204."""
        scheduler.remove(schedule_id)
