"""Scheduled tournaments on celery beat, stored in Redis by celery-redbeat.

A schedule is one redbeat entry named by its id, under `<namespace>schedules:`: the task
`cardarena.run_scheduled_tournament` with the definition and the schedule id, and a
`TournamentTiming` that evaluates the schedule with the same code as the in-process twin
(`shared/model/tournaments/schedule.py`, the port `shared/ports/scheduler.py`).
Redbeat keeps each entry's last run in Redis and holds a lock, so a restarted beat knows
what ran and a second beat waits instead of firing too.

`TournamentBeatScheduler` differs from redbeat's scheduler in one step: it sends a due run
(with its slot) before it records the run, so a beat killed in between sends the same slot
again on restart, which creates nothing twice (run ids derive from the slot); redbeat's
order (record, then send) would lose that run instead.

Beat also sends the workers' reconciliation (`cardarena.reconcile_tournaments`, which plays
on the running games of tournaments and of none that the platform left waiting) every
`CARDARENA_RECONCILE_SECONDS`, a static redbeat entry under the same prefix.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import redis
from celery import Celery
from celery.schedules import BaseSchedule, schedstate
from redbeat.decoder import RedBeatJSONDecoder, RedBeatJSONEncoder
from redbeat.schedulers import RedBeatScheduler, RedBeatSchedulerEntry, ensure_conf, get_redis

from services.ops.health import heartbeat_path, touch
from services.settings import BeatSettings, CommonSettings
from services.workers.dispatch import (
    PAIR_LADDERS,
    RECONCILE_TOURNAMENTS,
    RUN_SCHEDULED_TOURNAMENT,
)
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.schedule import Schedule
from shared.ports.scheduler import ScheduledTournament, Scheduler, UnknownSchedule
from shared.store.port import StoreUnavailable

TASK = RUN_SCHEDULED_TOURNAMENT
"""The task a run sends: (definition, schedule id), and the run's `slot` as a keyword."""
RECONCILE = RECONCILE_TOURNAMENTS
"""The task beat sends every `reconcile_seconds`, with that stall as its argument."""
DEFAULT_MAX_INTERVAL = 5
"""Seconds beat sleeps at most between looks at Redis: how late a new schedule may fire."""
_TIMING_TYPE = "cardarena_timing"
HEARTBEAT_CONF = "cardarena_heartbeat"
"""The Celery setting naming beat's heartbeat file, touched at every tick."""


def key_prefix(settings: CommonSettings) -> str:
    """Returns the prefix of the schedules' Redis keys: within the settings' namespace."""
    return f"{settings.namespace}schedules:"


def beat_config(
    redis_url: str, prefix: str, max_interval: int = DEFAULT_MAX_INTERVAL
) -> dict[str, Any]:
    """Returns the Celery settings of beat and of redbeat's entries for schedules at `prefix`.

    Redbeat's lock (under the prefix) times out after five `max_interval`s, so a killed
    beat's successor takes over within that. No results are kept, so beat needs no entry
    of its own to clean them up.
    """
    return {
        "redbeat_redis_url": redis_url,
        "redbeat_redis_options": {},
        "redbeat_key_prefix": prefix,
        "beat_max_interval": max_interval,
        "beat_scheduler": "services.workers.beat:TournamentBeatScheduler",
        "result_expires": None,
    }


class TournamentTiming(BaseSchedule):
    """A schedule as celery beat asks about it; `last_run_at` is the slot of the last run."""

    def __init__(self, schedule: Schedule, since: datetime, app: Celery | None = None) -> None:
        super().__init__(app=app)
        self.schedule = schedule
        self.since = since

    def next_run(self, last_slot: datetime | None) -> datetime | None:
        """Returns when the next run is due (maybe overdue), None once none is left."""
        return self.schedule.next_run(self.since, last_slot)

    def due_slot(self, last_slot: datetime | None) -> datetime | None:
        """Returns the slot of the run due now, None if none is."""
        return self.schedule.due_slot(self.since, last_slot, self.now())

    def remaining_estimate(  # type: ignore[override]  # None: no run is left
        self, last_run_at: datetime | None
    ) -> timedelta | None:
        """Returns the time until the next run (negative when overdue), None if none is left."""
        following = self.next_run(last_run_at)
        return None if following is None else following - self.now()

    def is_due(self, last_run_at: datetime | None) -> schedstate:
        """Returns whether a run is due now, and the seconds until beat should look again."""
        slot = self.due_slot(last_run_at)
        following = self.next_run(slot or last_run_at)
        wait = None if following is None else max((following - self.now()).total_seconds(), 0.0)
        return schedstate(slot is not None, wait)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TournamentTiming):
            return NotImplemented
        return (self.schedule, self.since) == (other.schedule, other.since)

    def __hash__(self) -> int:
        return hash((self.schedule, self.since))

    def __repr__(self) -> str:
        return f"<TournamentTiming {self.schedule} since {self.since.isoformat()}>"


class _Encoder(RedBeatJSONEncoder):  # type: ignore[misc]
    """Redbeat's JSON encoder, plus TournamentTiming."""

    def default(self, obj: Any) -> Any:
        if isinstance(obj, TournamentTiming):
            return {
                "__type__": _TIMING_TYPE,
                "schedule": msgspec.to_builtins(obj.schedule),
                "since": obj.since.isoformat(),
            }
        return super().default(obj)


class _Decoder(RedBeatJSONDecoder):  # type: ignore[misc]
    """Redbeat's JSON decoder, plus TournamentTiming."""

    def dict_to_object(self, d: dict[str, Any]) -> Any:
        if d.get("__type__") == _TIMING_TYPE:
            schedule = msgspec.convert(d["schedule"], Schedule)
            return TournamentTiming(schedule, datetime.fromisoformat(d["since"]))
        return super().dict_to_object(d)


class TournamentEntry(RedBeatSchedulerEntry):  # type: ignore[misc]
    """A redbeat entry whose schedule is a TournamentTiming; `last_run_at` is the last slot.

    A new entry has no last run (redbeat would start one at its creation time).
    """

    @staticmethod
    def decode_definition(definition: str) -> dict[str, Any]:
        """Returns the entry's stored definition, TournamentTiming included."""
        decoded: dict[str, Any] = json.loads(definition, cls=_Decoder)
        return decoded

    @property
    def due_at(self) -> datetime | None:
        """Returns when the next run is due, None once none is left (redbeat's score -1)."""
        if isinstance(self.schedule, TournamentTiming):
            return self.schedule.next_run(self.last_run_at)
        return super().due_at  # type: ignore[no-any-return]

    def is_due(self) -> schedstate:
        """Returns whether a run is due, and when to look again; a disabled entry never is."""
        if isinstance(self.schedule, TournamentTiming) and self.enabled:
            return self.schedule.is_due(self.last_run_at)
        return super().is_due()  # type: ignore[no-any-return]

    def save(self) -> TournamentEntry:
        """Stores the entry (redbeat's save, with this module's encoder); keeps its last run."""
        definition = {
            "name": self.name,
            "task": self.task,
            "args": self.args,
            "kwargs": self.kwargs,
            "options": self.options,
            "schedule": self.schedule,
            "enabled": self.enabled,
        }
        meta = {"last_run_at": self.last_run_at}
        conf = self.app.redbeat_conf
        with get_redis(self.app).pipeline() as pipe:
            pipe.hset(self.key, "definition", json.dumps(definition, cls=_Encoder))
            pipe.hsetnx(self.key, "meta", json.dumps(meta, cls=RedBeatJSONEncoder))
            pipe.zadd(conf.schedule_key, {self.key: self.score})
            pipe.execute()
        return self

    def as_scheduled(self) -> ScheduledTournament | None:
        """Returns the schedule this entry runs, None for an entry that runs no tournament."""
        timing = self.schedule
        if self.task != TASK or not isinstance(timing, TournamentTiming):
            return None
        definition = msgspec.convert(self.args[0], TournamentDefinition)
        return ScheduledTournament(self.name, definition, timing.since, self.last_run_at)


class TournamentBeatScheduler(RedBeatScheduler):  # type: ignore[misc]
    """Redbeat's scheduler over TournamentEntry: sends a run with its slot, then records it."""

    Entry = TournamentEntry

    def tick(self, *args: Any, **kwargs: Any) -> Any:
        """Touches beat's heartbeat file (`cardarena probe beat`), then runs redbeat's tick."""
        heartbeat = self.app.conf.get(HEARTBEAT_CONF)
        if heartbeat:
            touch(Path(heartbeat))
        return super().tick(*args, **kwargs)

    def apply_async(
        self, entry: Any, producer: Any = None, advance: bool = True, **kwargs: Any
    ) -> Any:
        """Sends the due run of `entry` with its slot, then records the slot as its last run."""
        if not isinstance(entry.schedule, TournamentTiming):
            return super().apply_async(entry, producer, advance, **kwargs)
        slot = entry.schedule.due_slot(entry.last_run_at)
        if slot is None:
            return None
        sending = self.Entry(**dict(entry, kwargs={**entry.kwargs, "slot": slot.isoformat()}))
        result = super().apply_async(sending, producer, advance=False, **kwargs)
        if advance:
            entry.next(last_run_at=slot)
        return result


class RedBeatTournamentScheduler(Scheduler):
    """The Scheduler port over celery-redbeat: entries that `cardarena serve beat` fires.

    Runs go to the workers of `queue`; nothing runs without a beat process. A Redis that
    cannot be reached raises StoreUnavailable.
    """

    def __init__(self, redis_url: str, prefix: str, queue: str) -> None:
        self._app = Celery("cardarena-schedules", set_as_current=False)
        self._app.conf.update(beat_config(redis_url, prefix))
        self._conf = ensure_conf(self._app)
        self._queue = queue

    def add(self, schedule_id: str, definition: TournamentDefinition) -> ScheduledTournament:
        if definition.schedule is None:
            raise ValueError("only a definition with a schedule can be scheduled")
        with _unavailable():
            known = self._load(self._key(schedule_id))
            if known is not None:
                return known
            timing = TournamentTiming(definition.schedule, datetime.now(UTC), app=self._app)
            entry = TournamentEntry(
                name=schedule_id,
                task=TASK,
                schedule=timing,
                args=[msgspec.to_builtins(definition), schedule_id],
                kwargs={},
                options={"queue": self._queue},
                app=self._app,
            )
            entry.last_run_at = None
            get_redis(self._app).delete(entry.key)  # no leftover meta of a removed namesake
            entry.save()
        return self.get(schedule_id)

    def get(self, schedule_id: str) -> ScheduledTournament:
        with _unavailable():
            scheduled = self._load(self._key(schedule_id))
        if scheduled is None:
            raise UnknownSchedule(schedule_id)
        return scheduled

    def list(self) -> list[ScheduledTournament]:
        with _unavailable():
            keys = get_redis(self._app).zrange(self._conf.schedule_key, 0, -1)
            loaded = [self._load(key) for key in keys]
        found = [scheduled for scheduled in loaded if scheduled is not None]
        return sorted(found, key=lambda entry: (entry.since, entry.schedule_id))

    def remove(self, schedule_id: str) -> None:
        self.get(schedule_id)
        with _unavailable(), get_redis(self._app).pipeline() as pipe:
            pipe.zrem(self._conf.schedule_key, self._key(schedule_id))
            pipe.delete(self._key(schedule_id))
            pipe.execute()

    def close(self) -> None:
        get_redis(self._app).close()

    def _key(self, schedule_id: str) -> str:
        """Returns the Redis key of a schedule's entry."""
        return f"{self._conf.key_prefix}{schedule_id}"

    def _load(self, key: str) -> ScheduledTournament | None:
        """Returns the schedule stored at `key`, None if none (or another kind of entry) is."""
        try:
            entry = TournamentEntry.from_key(key, app=self._app)
        except KeyError:
            return None
        scheduled: ScheduledTournament | None = entry.as_scheduled()
        return scheduled


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """Raises StoreUnavailable for a Redis error inside."""
    try:
        yield
    except redis.RedisError as error:
        raise StoreUnavailable(f"the schedules' Redis is unavailable: {error}") from error


def reconcile_schedule(settings: BeatSettings) -> dict[str, Any]:
    """Returns beat's own entries: the reconciliation every `reconcile_seconds` (none at 0),
    and the ladders' pairing every `ladder_pair_seconds` (none at 0).

    A run not started within its period expires: runs that waited behind a long queue do
    not all run at once.
    """
    entries: dict[str, Any] = {}
    every = settings.reconcile_seconds
    if every:
        options = {"queue": settings.queue, "expires": every}
        entry = {"task": RECONCILE, "schedule": float(every), "args": (every,), "options": options}
        entries["cardarena-reconcile"] = entry
    pair_every = settings.ladder_pair_seconds
    if pair_every:
        options = {"queue": settings.queue, "expires": max(1.0, pair_every)}
        entries["cardarena-pair-ladders"] = {
            "task": PAIR_LADDERS,
            "schedule": pair_every,
            "args": (),
            "options": options,
        }
    return entries


def run_beat(app: Celery, settings: BeatSettings, max_interval: int = DEFAULT_MAX_INTERVAL) -> None:
    """Runs celery beat with `app` (the workers' configuration) over the schedules of
    `settings` until stopped; one beat fires at a time."""
    app.conf.update(beat_config(settings.schedules_redis, key_prefix(settings), max_interval))
    app.conf.beat_schedule = reconcile_schedule(settings)
    app.conf[HEARTBEAT_CONF] = str(heartbeat_path(settings.heartbeat_dir, "beat"))
    app.Beat(max_interval=max_interval, loglevel="INFO").run()
