"""REST v1 schedules: the scheduled tournaments, their next run and their runs so far.

A definition with a `schedule` posted to /v1/tournaments is stored here (see
`TournamentsController.create`); each run creates a tournament whose id derives from the
schedule's id and the run's slot.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get
from litestar.di import NamedDependency
from litestar.params import PathParameter

from services.game.http.pipeline.auth import BEARER, host_only
from services.game.http.pipeline.problems import Problem, problem, responses
from services.game.http.scheduled import ScheduleDetail, detail, summary
from services.game.schedules.schemas import SchedulePage
from shared.ports.scheduler import Scheduler, UnknownSchedule
from shared.store.port import EventStore

ScheduleId = Annotated[str, PathParameter(description="The schedule's id.")]


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
