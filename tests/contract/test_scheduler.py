"""The Scheduler contract, run against the in-process twin and the celery-redbeat adapter."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from services.bootstrap.workers import create_celery_app
from services.settings import WorkerSettings, load_settings
from services.workers.beat import TASK, RedBeatTournamentScheduler
from shared.app.runtime import InProcessDispatcher, InProcessScheduler
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.model.tournaments.schedule import Schedule
from shared.ports.scheduler import Scheduler, UnknownSchedule
from shared.store.memory import InMemoryEventStore


def definition(schedule: Schedule) -> TournamentDefinition:
    """Returns a small scheduled Beggar-my-neighbour round robin."""
    entrants = [Entrant(bot="turner"), Entrant(bot="random", version="2")]
    return TournamentDefinition(
        game="beggar", entrants=entrants, table_size=2, seed="9", schedule=schedule
    )


@pytest.fixture(params=["memory", pytest.param("redbeat", marks=pytest.mark.integration)])
def scheduler(request: pytest.FixtureRequest) -> Iterator[Scheduler]:
    """Returns each implementation in turn, empty."""
    made: Scheduler
    if request.param == "memory":
        made = InProcessScheduler(InProcessDispatcher(InMemoryEventStore()))
    else:
        redis_url: str = request.getfixturevalue("redis_url")
        namespace: str = request.getfixturevalue("namespace")
        made = RedBeatTournamentScheduler(redis_url, f"{namespace}schedules:", f"{namespace}q")
    yield made
    made.close()


def test_an_added_schedule_reads_back_with_its_next_run(scheduler: Scheduler) -> None:
    at = datetime.now(UTC).replace(microsecond=250_000) + timedelta(days=2)
    before = datetime.now(UTC)
    added = scheduler.add("s1", definition(Schedule(at=at)))
    assert added.schedule_id == "s1"
    assert added.definition == definition(Schedule(at=at))
    assert before <= added.since <= datetime.now(UTC)
    assert added.last_slot is None
    assert added.next_run == at
    assert scheduler.get("s1") == added


def test_a_cron_schedule_runs_next_at_its_first_tick_after_it_was_made(
    scheduler: Scheduler,
) -> None:
    made = scheduler.add("s1", definition(Schedule(cron="15 3 * * *", timezone="Asia/Tokyo")))
    following = made.next_run
    assert following is not None
    assert following > made.since
    assert following - made.since <= timedelta(days=1)
    tokyo = following.astimezone(made.schedule.zone)
    assert (tokyo.hour, tokyo.minute, tokyo.second) == (3, 15, 0)


def test_adding_an_id_again_keeps_the_first_schedule(scheduler: Scheduler) -> None:
    at = datetime.now(UTC) + timedelta(days=1)
    first = scheduler.add("s1", definition(Schedule(at=at)))
    again = scheduler.add("s1", definition(Schedule(cron="0 * * * *")))
    assert again == first
    assert scheduler.list() == [first]


def test_schedules_are_listed_oldest_first(scheduler: Scheduler) -> None:
    at = datetime.now(UTC) + timedelta(days=1)
    ids = ["zz", "aa", "mm"]
    for schedule_id in ids:
        scheduler.add(schedule_id, definition(Schedule(at=at)))
    assert [entry.schedule_id for entry in scheduler.list()] == ids


def test_a_removed_schedule_is_gone_and_unknown_ids_are_refused(scheduler: Scheduler) -> None:
    at = datetime.now(UTC) + timedelta(days=1)
    scheduler.add("s1", definition(Schedule(at=at)))
    scheduler.add("s2", definition(Schedule(at=at)))
    scheduler.remove("s1")
    with pytest.raises(UnknownSchedule):
        scheduler.get("s1")
    with pytest.raises(UnknownSchedule):
        scheduler.remove("s1")
    assert [entry.schedule_id for entry in scheduler.list()] == ["s2"]


def test_only_a_scheduled_definition_can_be_added(scheduler: Scheduler) -> None:
    unscheduled = TournamentDefinition(
        game="beggar", entrants=[Entrant(bot="turner"), Entrant(bot="random")], table_size=2
    )
    with pytest.raises(ValueError, match="schedule"):
        scheduler.add("s1", unscheduled)


def test_the_redbeat_adapter_sends_the_workers_task() -> None:
    assert TASK in create_celery_app(load_settings(None, WorkerSettings)).tasks
