"""Scheduled tournaments: reading a schedule, its slots and run ids, the in-process twin."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import msgspec
import pytest

from shared.app.runtime import InProcessDispatcher, InProcessScheduler
from shared.app.tournaments import load_tournament
from shared.model.tournaments.model import (
    Entrant,
    InvalidTournament,
    TournamentDefinition,
    validate,
)
from shared.model.tournaments.schedule import Schedule, run_id
from shared.ports.scheduler import run_definition
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client

NOON = datetime(2031, 5, 6, 12, 0, tzinfo=UTC)
BODY: dict[str, Any] = {
    "game": "beggar",
    "entrants": [{"bot": "turner"}, {"bot": "random"}, {"bot": "turner", "name": "t2"}],
    "table_size": 2,
    "seed": "3",
}


def beggar(schedule: Schedule | None) -> TournamentDefinition:
    """Returns a small Beggar-my-neighbour round robin with `schedule`."""
    entrants = [Entrant(bot="turner"), Entrant(bot="random"), Entrant(bot="turner", name="t2")]
    return TournamentDefinition(
        game="beggar", entrants=entrants, table_size=2, seed="3", schedule=schedule
    )


def soon(seconds: float) -> str:
    """Returns the time `seconds` from now, in ISO 8601 with its offset."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "* * *"}, "cron"),
        ({"cron": "@daily"}, "cron"),
        ({"cron": "0 0 31 2 *"}, "cron"),
        ({"cron": "0 * * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"at": datetime(2031, 1, 1, 12, 0)}, "at"),
        ({"at": NOON, "timezone": "Europe/Prague"}, "timezone"),
    ],
)
def test_a_schedule_that_does_not_read_names_its_field(given: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"field `{field}`"):
        Schedule(**given)


def test_a_schedule_takes_exactly_one_of_at_or_cron() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Schedule()
    with pytest.raises(ValueError, match="exactly one"):
        Schedule(at=NOON, cron="0 * * * *")


def test_a_time_in_the_past_is_an_invalid_tournament_naming_schedule_at() -> None:
    with pytest.raises(InvalidTournament) as caught:
        validate(beggar(Schedule(at=datetime.now(UTC) - timedelta(seconds=1))))
    assert caught.value.field == "schedule.at"
    validate(beggar(Schedule(at=datetime.now(UTC) + timedelta(hours=1))))
    validate(beggar(Schedule(cron="*/5 * * * *", timezone="Europe/Prague")))


@pytest.mark.parametrize(
    ("schedule", "field"),
    [
        ({"cron": "not a cron"}, "schedule.cron"),
        ({"cron": "0 25 * * *"}, "schedule.cron"),
        ({"cron": "0 * * * *", "timezone": "Nowhere/Land"}, "schedule.timezone"),
        ({"at": "2031-01-01T12:00:00"}, "schedule.at"),
        ({"at": "tomorrow"}, "schedule.at"),
        ({"at": "2031-01-01T12:00:00Z", "cron": "0 * * * *"}, "schedule"),
        ({"every": "day"}, "schedule.every"),
    ],
)
def test_a_schedule_that_does_not_read_is_400_naming_the_field(
    client: Client, schedule: dict[str, Any], field: str
) -> None:
    response = client.post("/v1/tournaments", json={**BODY, "schedule": schedule})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["field"] == field


def test_a_time_in_the_past_is_422_naming_schedule_at(client: Client) -> None:
    response = client.post("/v1/tournaments", json={**BODY, "schedule": {"at": soon(-5)}})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "schedule.at"


def test_a_run_id_depends_on_the_schedule_and_the_instant_of_its_slot_only() -> None:
    prague = timezone(timedelta(hours=2))
    assert run_id("s1", NOON) == run_id("s1", NOON.astimezone(prague))
    assert run_id("s1", NOON) != run_id("s1", NOON + timedelta(minutes=1))
    assert run_id("s1", NOON) != run_id("s2", NOON)


def test_a_once_schedule_is_due_from_its_time_until_it_has_run() -> None:
    once = Schedule(at=NOON)
    made = NOON - timedelta(hours=1)
    assert once.next_run(made, None) == NOON
    assert once.due_slot(made, None, NOON - timedelta(seconds=1)) is None
    assert once.due_slot(made, None, NOON) == NOON
    assert once.due_slot(made, None, NOON + timedelta(days=3)) == NOON
    assert once.due_slot(made, NOON, NOON + timedelta(days=3)) is None
    assert once.next_run(made, NOON) is None


def test_a_cron_run_belongs_to_the_latest_tick_at_or_before_it_fires() -> None:
    every_five = Schedule(cron="*/5 * * * *")
    made = NOON - timedelta(minutes=7)
    assert every_five.next_run(made, None) == NOON - timedelta(minutes=5)
    assert every_five.due_slot(made, None, NOON) == NOON
    assert every_five.due_slot(made, None, NOON + timedelta(seconds=59)) == NOON
    assert every_five.due_slot(made, NOON, NOON + timedelta(minutes=4)) is None
    assert every_five.next_run(made, NOON) == NOON + timedelta(minutes=5)
    assert every_five.due_slot(made, None, made) is None


def test_a_late_cron_firing_runs_once_for_the_latest_tick() -> None:
    hourly = Schedule(cron="0 * * * *")
    made = NOON - timedelta(hours=5, minutes=30)
    assert hourly.due_slot(made, None, NOON + timedelta(minutes=10)) == NOON
    assert hourly.slots_until(made, NOON) == [NOON - timedelta(hours=h) for h in range(5, -1, -1)]


def test_cron_ticks_are_read_in_the_schedules_time_zone_across_daylight_saving() -> None:
    daily = Schedule(cron="30 9 * * *", timezone="Europe/Prague")
    before = datetime(2031, 3, 29, 12, 0, tzinfo=UTC)
    assert daily.next_run(before, None) == datetime(2031, 3, 30, 7, 30, tzinfo=UTC)
    winter = datetime(2031, 3, 28, 12, 0, tzinfo=UTC)
    assert daily.next_run(winter, None) == datetime(2031, 3, 29, 8, 30, tzinfo=UTC)


def test_a_day_of_the_month_and_a_day_of_the_week_match_either_as_in_cron() -> None:
    friday_or_13th = Schedule(cron="0 0 13 * 5")
    friday = datetime(2031, 5, 9, tzinfo=UTC)
    assert friday_or_13th.next_run(NOON, None) == friday
    assert friday_or_13th.next_run(NOON, friday) == datetime(2031, 5, 13, tzinfo=UTC)


def test_a_run_is_the_definition_without_its_schedule() -> None:
    definition = beggar(Schedule(at=NOON))
    assert run_definition(definition) == beggar(None)


def test_the_in_process_twin_fires_a_due_run_once_whatever_the_repeats(
    store: InMemoryEventStore,
) -> None:
    scheduler = InProcessScheduler(InProcessDispatcher(store))
    at = datetime.now(UTC) + timedelta(hours=1)
    try:
        scheduler.add("s1", beggar(Schedule(at=at)))
        assert scheduler.run_due(at - timedelta(seconds=1)) == []
        assert scheduler.run_due(at) == [run_id("s1", at)]
        assert scheduler.run_due(at + timedelta(seconds=1)) == []
        state, _ = load_tournament(store, run_id("s1", at))
        assert state.status == "finished"
        assert state.definition.schedule is None
        assert len(state.records) == 3
        assert scheduler.get("s1").next_run is None
    finally:
        scheduler.close()


def test_the_in_process_twin_fires_each_cron_tick_as_its_own_tournament(
    store: InMemoryEventStore,
) -> None:
    made = datetime.now(UTC)
    scheduler = InProcessScheduler(InProcessDispatcher(store), clock=lambda: made)
    try:
        scheduler.add("s1", beggar(Schedule(cron="0 0 1 1 *")))
        first = scheduler.get("s1").next_run
        assert first is not None
        second = first.replace(year=first.year + 1)
        assert scheduler.run_due(first) == [run_id("s1", first)]
        assert scheduler.run_due(first + timedelta(days=1)) == []
        assert scheduler.run_due(second) == [run_id("s1", second)]
        assert scheduler.get("s1").next_run == first.replace(year=first.year + 2)
    finally:
        scheduler.close()


def test_a_scheduled_tournament_is_answered_202_and_its_thread_starts_and_finishes_it(
    client: Client, store: InMemoryEventStore
) -> None:
    created = client.post("/v1/tournaments", json={**BODY, "schedule": {"at": soon(1)}})
    assert created.status_code == 202, created.text
    schedule = created.json()
    assert created.headers["location"] == f"/v1/schedules/{schedule['schedule_id']}"
    assert schedule["kind"] == "once"
    assert schedule["next_run"] is not None
    assert schedule["runs"] == []
    at = msgspec.convert(schedule["schedule"]["at"], datetime)
    expected = run_id(schedule["schedule_id"], at)
    deadline = time.monotonic() + 60
    runs: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not runs:
        runs = client.get(created.headers["location"]).json()["runs"]
        time.sleep(0.1)
    assert [run["tournament_id"] for run in runs] == [expected]
    state, _ = load_tournament(store, expected)
    while state.status == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
        state, _ = load_tournament(store, expected)
    assert state.status == "finished"
    tournament = client.get(f"/v1/tournaments/{expected}").json()
    assert tournament["games_played"] == 3
    assert client.get(created.headers["location"]).json()["next_run"] is None


def test_schedules_are_listed_read_and_cancelled(client: Client) -> None:
    hourly = {**BODY, "schedule": {"cron": "0 * * * *", "timezone": "Europe/Prague"}}
    first = client.post("/v1/tournaments", json=hourly, headers={"Idempotency-Key": "k1"}).json()
    again = client.post("/v1/tournaments", json=hourly, headers={"Idempotency-Key": "k1"}).json()
    assert again == first
    assert first["kind"] == "cron"
    second = client.post("/v1/tournaments", json={**BODY, "schedule": {"at": soon(3600)}}).json()
    listed = client.get("/v1/schedules").json()["schedules"]
    assert [s["schedule_id"] for s in listed] == [first["schedule_id"], second["schedule_id"]]
    url = f"/v1/schedules/{first['schedule_id']}"
    assert client.get(url).json() == first
    assert client.delete(url).status_code == 204
    missing = client.get(url)
    assert missing.status_code == 404
    assert missing.json()["type"] == "urn:cardarena:problem:unknown-schedule"
    assert first["schedule_id"] in missing.json()["detail"]
    assert client.delete(url).status_code == 404
    assert [s["schedule_id"] for s in client.get("/v1/schedules").json()["schedules"]] == [
        second["schedule_id"]
    ]
