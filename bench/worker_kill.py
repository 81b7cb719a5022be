"""A Celery worker SIGKILLed in the middle of a tournament: nothing lost, nothing repeated.

Two `cardarena serve workers` (prefork, two processes each), beat (the reconciliation) and
the projection service run against Redis, on a namespace and queue of their own, and a
temporary PostgreSQL database; the Celery broker is that Redis or RabbitMQ
(`CELERY_BROKER_URL=amqp://...`, best on a virtual host of the run's own). A round robin of
built-in bots starts on the workers. When some but not all of its games are recorded and
one worker holds a task, the message at the head of the queue is taken away and that
worker's whole process group gets SIGKILL at once: what Redis does when it answers the BRPOP
of a worker that dies before it records the message (kombu's transport takes, then records),
a task lost to the broker for good. RabbitMQ loses no message so, but the run takes one
away there too (a get and an ack), so that the reconciliation is tried on both brokers. The
message taken is one whose game has not ended, and its game's version is read as it is
taken, before the kill: the game must move on past it, however soon.

The tasks the killed worker held come back through the broker (over Redis, the surviving
worker's sweep, after the visibility timeout; over RabbitMQ at once, when the killed
worker's connection closes; the run waits for them even once the tournament has
finished); the lost one through beat's reconciliation. Then
every game must finish, each game's stream must hold versions 1..n (no gaps, no repeats;
the feed each (game, version) once), and the standings must equal those of
`run_in_process` with the same definition and seed. Prints the figures; exit code 1 if a
check fails.

    REDIS_URL=... DATABASE_URL=... [CELERY_BROKER_URL=amqp://...] uv run python -m
        bench.worker_kill [--entrants 5] [--games-per-table 20] [--visibility 10] [--reconcile 5]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar, cast

import kombu
import redis

from bench.load import temporary_database
from services.cli.dev import Child, Launcher, cardarena, stack_environment
from services.ops.migrate import migrate
from services.settings import WorkerSettings, load_settings
from shared.app.loading import load
from shared.app.tournaments import load_tournament, run_in_process
from shared.errors import UnknownGame
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import Entrant, TournamentDefinition, TournamentState
from shared.model.tournaments.standings import standings
from shared.ports import deal_secret
from shared.ports.deal_secret import DealSecret, GivenDealSecret
from shared.store.memory import InMemoryEventStore
from shared.store.redis_common import feed_key
from shared.store.redis_deal_secret import RedisDealSecret
from shared.store.redis_store import RedisEventStore

T = TypeVar("T")

TOURNAMENT = "kill"
"""The tournament's id (the in-process run uses it too: game keys derive from it)."""
HANG_SECONDS = 600.0
"""How long a wait lasts before it counts as a hang: far beyond any healthy run."""
_TASK_LINE = re.compile(r"Task cardarena\.(\w+)\[([0-9a-f-]{36})\] (\w+)")


def definition(entrants: int, games_per_table: int, seed: str = "kill") -> TournamentDefinition:
    """Returns a Hospodsky autobus round robin of heuristic and random bots at two-seat
    tables: `entrants` choose 2 tables of `games_per_table` games."""
    field_ = [
        Entrant(bot="heuristic" if i % 2 == 0 else "random", name=f"bot{i}")
        for i in range(entrants)
    ]
    return TournamentDefinition(
        game="autobus", entrants=field_, table_size=2, games_per_table=games_per_table, seed=seed
    )


@dataclass
class Figures:
    """What one run measured and found."""

    games: int = 0
    recorded_at_kill: int = 0
    kill_at_s: float = 0.0
    broker: str = "redis"
    held: dict[str, str] = field(default_factory=dict)
    """The tasks the killed worker held at the kill: task id -> game id (over RabbitMQ,
    which keeps what a worker holds out of sight, the game is not known: empty)."""
    lost: str | None = None
    """The game whose bot-turn message was lost with the killed worker."""
    lost_version: int = 0
    """The lost game's version when its message was taken away, before the kill."""
    redelivered_after_s: float | None = None
    """From the kill until the surviving worker had received every held task again."""
    resumed_after_s: float | None = None
    """From the kill until the lost game's stream moved on past `lost_version` (the
    reconciliation)."""
    finished_after_s: float = 0.0
    finished: bool = False
    unfinished_games: list[str] = field(default_factory=list)
    gaps_or_repeats: list[str] = field(default_factory=list)
    """Games whose stream versions are not exactly 1..n."""
    feed_repeats: int = 0
    """(game, version) pairs the feed holds more than once."""
    standings_equal: bool = False
    records_equal: bool = False
    settings: dict[str, str] = field(default_factory=dict)


def until(check: Callable[[], T | None], what: str, seconds: float = HANG_SECONDS) -> T:
    """Returns the first truthy result of `check`; raises TimeoutError after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError(f"no {what} within {seconds:.0f} s")


def task_states(child: Child, task: str = "bot_turns") -> dict[str, str]:
    """Returns the last state each `task` id reached in the child's log (`received`,
    `succeeded`, ...)."""
    states: dict[str, str] = {}
    for line in list(child.lines):
        for name, task_id, state in _TASK_LINE.findall(line):
            if name == task:
                states[task_id] = state
    return states


def held_tasks(child: Child) -> set[str]:
    """Returns the bot-turn task ids the worker has received and not finished."""
    return {task_id for task_id, state in task_states(child).items() if state == "received"}


def bot_turn(headers: dict[str, Any], body: bytes) -> tuple[str, str] | None:
    """Returns (task id, game id) of a Celery message holding a bot-turn task, else None."""
    if headers.get("task") != "cardarena.bot_turns":
        return None
    args = json.loads(body)[0]
    return str(headers["id"]), str(args[0])


def redis_bot_turn(message: dict[str, Any]) -> tuple[str, str] | None:
    """Returns (task id, game id) of a kombu Redis message holding a bot-turn task."""
    return bot_turn(message["headers"], base64.b64decode(message["body"]))


def unacked_games(client: redis.Redis, namespace: str) -> dict[str, str]:
    """Returns task id -> game id of every bot-turn task held unacknowledged (kombu keeps
    them in `<namespace>unacked`, see services/workers/celery_app.py)."""
    found = {}
    for raw in cast("dict[bytes, bytes]", client.hgetall(f"{namespace}unacked")).values():
        task = redis_bot_turn(json.loads(raw)[0])
        if task is not None:
            found[task[0]] = task[1]
    return found


def unended(store: RedisEventStore, game_id: str) -> int | None:
    """Returns the game's version while it has not ended (0 before it is created), None once
    it has: a game that must still move on, and where from."""
    try:
        loaded = load(store, game_id)
    except UnknownGame:
        return 0
    return None if loaded.spec.is_over(loaded.state) else loaded.version


Lost = tuple[str, int]
"""A message taken away for good: its game, and that game's version when it was taken."""


def lose_one(client: redis.Redis, queue: str, store: RedisEventStore) -> Lost | None:
    """Takes the bot-turn message at the head of `queue` (the one a BRPOP takes) away for
    good if its game has not ended; returns its game and version, None if the head holds
    another task or an ended game's (put back) or none."""
    raw = cast("bytes | None", client.rpop(queue))
    if raw is None:
        return None
    task = redis_bot_turn(json.loads(raw))
    version = None if task is None else unended(store, task[1])
    if task is None or version is None:
        client.rpush(queue, raw)
        return None
    return task[1], version


def lose_one_amqp(url: str, queue: str, store: RedisEventStore, looked_at: int = 20) -> Lost | None:
    """Takes the first bot-turn message of the RabbitMQ `queue` whose game has not ended
    away for good (a get, then an ack); returns its game and version, None if none of the
    first `looked_at` messages is one. The others go back (requeued).

    It runs before the kill: the messages a worker holds are out of the queue's sight then
    (unacknowledged), so none of them is taken; RabbitMQ requeues them once the dead
    worker's connection closes, and they must all come back."""
    with kombu.Connection(url, connect_timeout=5) as connection:
        bound = kombu.Queue(queue, no_declare=True).bind(connection.default_channel)
        passed = []
        try:
            for _ in range(looked_at):
                message = bound.get()
                if message is None:
                    return None
                task = bot_turn(message.headers, cast("bytes", message.body))
                version = None if task is None else unended(store, task[1])
                if task is None or version is None:
                    passed.append(message)
                    continue
                message.ack()
                return task[1], version
            return None
        finally:
            for message in passed:
                message.requeue()


def delete_amqp_queue(url: str, queue: str) -> None:
    """Deletes the run's RabbitMQ queue (named by the run's namespace)."""
    with kombu.Connection(url, connect_timeout=5) as connection:
        kombu.Queue(queue, no_declare=True).bind(connection.default_channel).delete()


def recorded(store: RedisEventStore) -> TournamentState | None:
    """Returns the tournament's state, None before it is recorded."""
    with contextlib.suppress(LookupError):
        return load_tournament(store, TOURNAMENT)[0]
    return None


def deployment_secret(client: redis.Redis, namespace: str, env: dict[str, str]) -> DealSecret:
    """Returns the deal secret the stack's processes deal with: `CARDARENA_DEAL_SECRET` of
    their environment `env`, else the one drawn into Redis for the namespace."""
    given = env.get("CARDARENA_DEAL_SECRET")
    return GivenDealSecret(given) if given else RedisDealSecret(client, namespace)


def check(
    figures: Figures,
    store: RedisEventStore,
    client: redis.Redis,
    namespace: str,
    tournament: TournamentDefinition,
) -> None:
    """Fills in what the run left behind: unfinished games, streams with gaps or repeats,
    repeats in the feed, and whether standings and records equal the in-process run's."""
    state = recorded(store)
    assert state is not None
    keys = [game.key for rnd in state.rounds for game in rnd.games]
    done = {record.key for record in state.records}
    figures.unfinished_games = [key for key in keys if key not in done]
    for key in keys:
        versions = [event.version for event in store.read(game_id_for(key))]
        if not versions or versions != list(range(1, len(versions) + 1)):
            figures.gaps_or_repeats.append(key)
    feed: list[tuple[bytes, dict[bytes, bytes]]] = []
    for partition in range(store.partitions):
        key = feed_key(namespace, partition)
        feed += cast("list[tuple[bytes, dict[bytes, bytes]]]", client.xrange(key))
    counts = Counter((fields[b"g"], fields[b"v"]) for _, fields in feed)
    figures.feed_repeats = sum(n - 1 for n in counts.values())
    same_deployment = InMemoryEventStore()  # dealing with the workers' deal secret
    env = {**os.environ, **figures.settings}  # the stack's (`stack`)
    deal_secret.attach(same_deployment, deployment_secret(client, namespace, env))
    alone = run_in_process(same_deployment, tournament, TOURNAMENT)
    figures.standings_equal = standings(state) == standings(alone)
    by_key = {r.key: (r.places, r.status) for r in alone.records}
    figures.records_equal = {r.key: (r.places, r.status) for r in state.records} == by_key


@contextlib.contextmanager
def stack(
    redis_url: str, database_url: str, namespace: str, settings: dict[str, str], out: TextIO
) -> Iterator[Launcher]:
    """Runs the projection, beat and two workers on `namespace` while the block runs."""
    migrate(database_url)
    heartbeats = tempfile.mkdtemp(prefix="cardarena-kill-")
    env = {
        **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", 0),
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_HEARTBEAT_DIR": heartbeats,
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
        **settings,
    }
    try:
        with Launcher(env, out=out, grace=10) as launcher:
            launcher.start("projection", cardarena("serve", "projection"))
            launcher.start("beat", cardarena("serve", "beat", "--max-interval", "1"))
            for name in ("worker-a", "worker-b"):
                launcher.start(name, cardarena("serve", "workers", "--concurrency", "2"))
            yield launcher
    finally:
        shutil.rmtree(heartbeats, ignore_errors=True)


def run(
    redis_url: str,
    database_url: str,
    namespace: str,
    tournament: TournamentDefinition,
    settings: dict[str, str],
    out: TextIO,
    kill_fraction: float = 0.25,
) -> Figures:
    """Runs `tournament` on two workers, SIGKILLs one mid-way and loses the message it was
    taking; returns the figures (`check` filled in). The broker is `settings`'
    CELERY_BROKER_URL (RabbitMQ or a Redis), else the store's Redis."""
    env = {"REDIS_URL": redis_url, "CARDARENA_QUEUE": f"{namespace}bots", **settings}
    broker = load_settings(env, WorkerSettings)
    figures = Figures(settings=settings, broker="amqp" if broker.broker_is_amqp else "redis")
    client = redis.Redis.from_url(redis_url)
    store = RedisEventStore(client, namespace=namespace)
    queue = broker.queue
    try:
        with stack(redis_url, database_url, namespace, settings, out) as launcher:
            victim, survivor = launcher.children[-2:]
            for worker in (victim, survivor):
                until(functools.partial(worker.saw, " ready."), f"{worker.name} to be ready", 120)
            from services.workers.broker import waiting_tasks  # noqa: PLC0415 - on demand
            from services.workers.celery_app import create_celery  # noqa: PLC0415
            from services.workers.dispatch import CeleryDispatcher  # noqa: PLC0415

            app = create_celery(broker)
            waiting = waiting_tasks(broker)
            start = time.monotonic()
            CeleryDispatcher(app, queue).start_tournament(tournament, TOURNAMENT)
            state = until(lambda: recorded(store), "tournament to be recorded")
            figures.games = sum(len(rnd.games) for rnd in state.rounds)

            amqp = broker.broker_is_amqp

            def lose() -> Lost | None:
                """Takes a message away once some but not all games are recorded."""
                done = recorded(store)
                enough = done is not None and len(done.records) >= figures.games * kill_fraction
                if not (enough and waiting() > 0):
                    return None
                if amqp:
                    return lose_one_amqp(broker.celery_broker, queue, store)
                return lose_one(client, queue, store)

            lost = until(lose, "some but not all games to be recorded, a message to lose")
            until(lambda: held_tasks(victim), "the worker to hold a task")  # then kill at once
            os.killpg(victim.pid, signal.SIGKILL)
            killed = time.monotonic()
            figures.lost, figures.lost_version = lost
            figures.kill_at_s = killed - start
            figures.recorded_at_kill = len((recorded(store) or state).records)
            # Over Redis, the dead worker's tasks stay in the unacked hash until restored.
            unacked = {} if amqp else unacked_games(client, namespace)
            victim.process.wait()
            if victim.reader is not None:
                victim.reader.join(timeout=10)  # its log whole: a task acked logged its end
            held = held_tasks(victim)
            figures.held = (
                dict.fromkeys(held, "") if amqp else {t: unacked[t] for t in held if t in unacked}
            )
            _follow(figures, store, survivor, killed)
        check(figures, store, client, namespace, tournament)
    finally:
        keys = list(client.scan_iter(match=f"{namespace}*", count=1000))
        keys += [f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}"]
        client.delete(*keys)
        client.close()
        if broker.broker_is_amqp:
            delete_amqp_queue(broker.celery_broker, queue)
    return figures


def _follow(figures: Figures, store: RedisEventStore, survivor: Child, killed: float) -> None:
    """Waits for the tournament to finish and for the surviving worker to receive every task
    the killed one held, noting when the last came back and when the lost game moved on."""

    def done() -> bool:
        now = time.monotonic() - killed
        if figures.redelivered_after_s is None:
            seen = task_states(survivor)
            if figures.held and all(task_id in seen for task_id in figures.held):
                figures.redelivered_after_s = now
        lost = figures.lost
        if lost and figures.resumed_after_s is None and store.version(lost) > figures.lost_version:
            figures.resumed_after_s = now
        if not figures.finished and (state := recorded(store)) and state.status == "finished":
            figures.finished = True
            figures.finished_after_s = now
        return figures.finished and (not figures.held or figures.redelivered_after_s is not None)

    until(done, "tournament to finish and the held tasks to come back after the kill")


def report(figures: Figures, out: TextIO = sys.stdout) -> bool:
    """Prints the figures; returns whether every check passed."""
    ok = (
        figures.finished
        and not figures.unfinished_games
        and not figures.gaps_or_repeats
        and figures.feed_repeats == 0
        and figures.standings_equal
        and figures.records_equal
    )
    redelivered = figures.redelivered_after_s
    resumed = figures.resumed_after_s
    lines = [
        f"settings: {' '.join(f'{k}={v}' for k, v in figures.settings.items())}",
        f"games: {figures.games} (autobus round robin, two workers x 2 processes;"
        f" broker: {figures.broker})",
        f"kill: SIGKILL to one worker's process group {figures.kill_at_s:.1f} s after the"
        f" start, {figures.recorded_at_kill}/{figures.games} games recorded; it held"
        f" {len(figures.held)} bot-turn task(s); lost in flight: {1 if figures.lost else 0}",
        "redelivery of the held tasks (the broker): "
        + (f"{redelivered:.1f} s after the kill" if redelivered is not None else "none held"),
        "the lost game moved on (reconciliation): "
        + (f"{resumed:.1f} s after the kill" if resumed is not None else "none lost"),
        f"tournament finished: {'yes' if figures.finished else 'NO'},"
        f" {figures.finished_after_s:.1f} s after the kill",
        f"games unfinished: {len(figures.unfinished_games)}",
        f"games with gaps or repeats in their versions: {len(figures.gaps_or_repeats)};"
        f" feed repeats: {figures.feed_repeats}",
        f"standings equal to the in-process run: {'yes' if figures.standings_equal else 'NO'}"
        f" (every game's places too: {'yes' if figures.records_equal else 'NO'})",
        f"verdict: {'PASS' if ok else 'FAIL'}",
    ]
    for line in lines:
        print(line, file=out)
    return ok


def main() -> None:
    """Runs the benchmark once and prints its figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entrants", type=int, default=5)
    parser.add_argument("--games-per-table", type=int, default=20)
    parser.add_argument("--visibility", type=int, default=10, help="broker visibility timeout")
    parser.add_argument("--restore", type=int, default=1, help="broker restore interval")
    parser.add_argument("--reconcile", type=int, default=5, help="reconciliation period")
    parser.add_argument("--log", help="where the processes' output goes (default: a temp file)")
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    admin = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    settings = {
        **({"CELERY_BROKER_URL": url} if (url := os.environ.get("CELERY_BROKER_URL")) else {}),
        "CARDARENA_BROKER_VISIBILITY_TIMEOUT": str(args.visibility),
        "CARDARENA_BROKER_RESTORE_INTERVAL": str(args.restore),
        "CARDARENA_RECONCILE_SECONDS": str(args.reconcile),
    }
    log = args.log or tempfile.mkstemp(prefix="worker-kill-", suffix=".log")[1]
    tournament = definition(args.entrants, args.games_per_table)
    namespace = f"bench-kill:{uuid.uuid4().hex[:8]}:"
    with open(log, "w") as out, temporary_database(admin, "bench_kill") as database_url:
        figures = run(redis_url, database_url, namespace, tournament, settings, out)
    print(f"processes' output: {log}")
    sys.exit(0 if report(figures) else 1)


if __name__ == "__main__":
    main()
