"""Typed settings, read from the environment once per process: one type per service.

`GameSettings`, `ProjectionSettings`, `WorkerSettings` and `BeatSettings` each hold what
that service reads (`CommonSettings` what they all read); `Settings` holds them all, for
the embedded default and the CLI, where one process plays every part. Each field names its
environment variable; `.env.example` lists them all (a test keeps the two in step). They are
frozen dataclasses (msgspec converts and validates them) rather than Structs because
`Settings` inherits from every service's type.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin, get_type_hints, overload

import msgspec

AMQP_SCHEMES = ("amqp://", "amqps://", "pyamqp://")
"""The schemes of a CELERY_BROKER_URL that names RabbitMQ; any other is a standalone Redis."""


@dataclass(frozen=True, kw_only=True)
class CommonSettings:
    """The settings every process reads; each field names its environment variable."""

    store: Literal["memory", "redis"] = "memory"
    """CARDARENA_STORE: `memory` (embedded, one process) or `redis` (the real stack)."""
    dispatch: Literal["inprocess", "celery"] = "inprocess"
    """CARDARENA_DISPATCH: play bot turns in the calling process or on Celery workers."""
    redis_url: str = "redis://127.0.0.1:6379/0"
    """REDIS_URL: the Redis holding the event streams (and the Celery broker by default)."""
    database_url: str = "postgresql://postgres@127.0.0.1:5432/cardarena"
    """DATABASE_URL: the PostgreSQL of the projection's views and event archive."""
    broker_url: str = ""
    """CELERY_BROKER_URL: the Celery broker; empty means REDIS_URL."""
    namespace: str = "cardarena:"
    """CARDARENA_NAMESPACE: prefix of every Redis key (streams, feed, idempotency records)."""
    redis_cluster: bool = False
    """CARDARENA_REDIS_CLUSTER: REDIS_URL is a node of a Redis Cluster (the event store then
    uses redis-py's cluster client; the broker must be RabbitMQ or a standalone Redis)."""
    partitions: Annotated[int, msgspec.Meta(ge=1, le=1024)] = 16
    """CARDARENA_PARTITIONS: how many partitions the Redis event store's feed has, fixed for
    the life of a deployment (a store records it; another count is refused at start)."""
    redis_wait_replicas: Annotated[int, msgspec.Meta(ge=0)] = 0
    """CARDARENA_REDIS_WAIT_REPLICAS: acknowledge an append only once this many replicas of
    its primary confirmed it (WAIT); 0: on the primary's word."""
    redis_wait_timeout_ms: Annotated[int, msgspec.Meta(ge=1)] = 1000
    """CARDARENA_REDIS_WAIT_TIMEOUT_MS: how long an append waits for those replicas before it
    answers 503 (a retry with the same Idempotency-Key then tells whether it was written)."""
    schedules_redis_url: str = ""
    """CARDARENA_SCHEDULES_REDIS_URL: the standalone Redis of beat's schedules (empty: REDIS_URL,
    or on a Redis Cluster the broker's Redis; required on a cluster with RabbitMQ)."""
    queue: str = "cardarena"
    """CARDARENA_QUEUE: the Celery queue of bot turns."""
    webhook_allow_private: bool = False
    """CARDARENA_WEBHOOK_ALLOW_PRIVATE: let webhook URLs reach loopback and private addresses."""
    max_games_per_bot: Annotated[int, msgspec.Meta(ge=0)] = 20
    """CARDARENA_MAX_GAMES_PER_BOT: running games a registered bot may sit in (0: no cap); the
    game service admits its games by it, and the ladders' pairing (a game service's thread or
    the workers' task) seats no bot that holds as many."""
    ladder_pair_seconds: Annotated[float, msgspec.Meta(ge=0)] = 2.0
    """CARDARENA_LADDER_PAIR_SECONDS: how often the open ladders are paired (the embedded
    service's thread, the workers' beat task); 0: never in this process."""
    ladder_max_concurrent: Annotated[int, msgspec.Meta(ge=1)] = 1
    """CARDARENA_LADDER_MAX_CONCURRENT: ladder games a bot plays at once, at most."""
    ladder_max_daily: Annotated[int, msgspec.Meta(ge=1)] = 200
    """CARDARENA_LADDER_MAX_DAILY: ladder games a bot begins in one UTC day, at most."""
    ladder_cooldown_seconds: Annotated[float, msgspec.Meta(ge=0)] = 300.0
    """CARDARENA_LADDER_COOLDOWN_SECONDS: two bots that met on a ladder are not paired again
    for this long."""
    ladder_provisional_games: Annotated[int, msgspec.Meta(ge=0)] = 5
    """CARDARENA_LADDER_PROVISIONAL_GAMES: a new bot version's first ladder games, played only
    against the host's built-in bots in the ladder's queue (while one is queued; 0: none)."""
    heartbeat_dir: str = ""
    """CARDARENA_HEARTBEAT_DIR: where the projection, workers and beat touch their heartbeat
    files for `cardarena probe` (empty: the system's temporary directory)."""
    heartbeat_max_age: Annotated[float, msgspec.Meta(gt=0)] = 30.0
    """CARDARENA_HEARTBEAT_MAX_AGE: seconds after which a heartbeat is stale (probe fails)."""
    log_json: bool = True
    """CARDARENA_LOG_JSON: `cardarena serve` logs JSON lines to stderr (false: readable text)."""
    deal_secret: Annotated[str, msgspec.Meta(pattern="^(.{32,})?$")] = ""
    """CARDARENA_DEAL_SECRET: what every deal is keyed with, at least 32 characters (empty: 32
    random bytes, drawn once per deployment into Redis, or per process in memory)."""

    @property
    def celery_broker(self) -> str:
        """Returns the broker URL Celery uses; raises ValueError when that would be a Redis
        Cluster (kombu speaks to one node)."""
        if self.redis_cluster and not self.broker_url:
            raise ValueError(
                "CARDARENA_REDIS_CLUSTER is set: a Redis Cluster cannot be the Celery broker;"
                " set CELERY_BROKER_URL to RabbitMQ (amqp://) or a standalone Redis"
            )
        return self.broker_url or self.redis_url

    @property
    def schedules_redis(self) -> str:
        """Returns the standalone Redis of beat's schedules (celery-redbeat):
        CARDARENA_SCHEDULES_REDIS_URL, else REDIS_URL; on a Redis Cluster, else the broker's
        Redis. Raises ValueError on a cluster with neither."""
        if self.schedules_redis_url:
            return self.schedules_redis_url
        if not self.redis_cluster:
            return self.redis_url
        if self.broker_url and not self.broker_url.startswith(AMQP_SCHEMES):
            return self.broker_url
        raise ValueError(
            "CARDARENA_REDIS_CLUSTER is set and the broker is not a Redis: set"
            " CARDARENA_SCHEDULES_REDIS_URL to a standalone Redis for beat's schedules"
        )

    @property
    def broker_is_amqp(self) -> bool:
        """Returns whether the Celery broker is RabbitMQ (an AMQP URL), not a Redis."""
        return self.celery_broker.startswith(AMQP_SCHEMES)


@dataclass(frozen=True, kw_only=True)
class GameSettings(CommonSettings):
    """The settings of the game service (`cardarena serve game`)."""

    host: str = "127.0.0.1"
    """CARDARENA_HOST: the address the game service listens on."""
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 8000
    """CARDARENA_PORT: the port the game service listens on."""
    admin_key: str = ""
    """CARDARENA_ADMIN_KEY: the bearer key of hosting operations; empty runs in open mode."""
    rate_limit: Annotated[int, msgspec.Meta(ge=0)] = 600
    """CARDARENA_RATE_LIMIT: a bot token's bucket of requests (its burst), refilled evenly
    over a window; a move and a read of the bot's own turn are not charged to it (0: unlimited)."""
    rate_window: Annotated[int, msgspec.Meta(ge=1)] = 60
    """CARDARENA_RATE_WINDOW: the seconds in which a rate-limit bucket refills from empty."""
    turn_rate_limit: Annotated[int, msgspec.Meta(ge=0)] = 2400
    """CARDARENA_TURN_RATE_LIMIT: a bot token's bucket of reads of its own turns (a seat's view
    or turn that waits for it, a turns poll that finds one), refilled over a window (0:
    unlimited); the default is 2 reads a turn, a turn a second, in 20 games, for 60 s."""
    spectator_streams: Annotated[int, msgspec.Meta(ge=1)] = 64
    """CARDARENA_SPECTATOR_STREAMS: anonymous spectator streams a game service process keeps
    open at once (more: 503); seats' and bots' streams have their own capacity."""
    max_streams_per_token: Annotated[int, msgspec.Meta(ge=0)] = 32
    """CARDARENA_MAX_STREAMS_PER_TOKEN: streams and long polls one bot token holds open at once
    on a game service process (more: 429; 0: no cap); a move's wait is never counted."""
    spectator_rate_limit: Annotated[int, msgspec.Meta(ge=0)] = 60
    """CARDARENA_SPECTATOR_RATE_LIMIT: anonymous streams a client address may open per rate
    window (more: 429; 0: unlimited)."""
    max_open_challenges: Annotated[int, msgspec.Meta(ge=0)] = 20
    """CARDARENA_MAX_OPEN_CHALLENGES: open challenges a bot may have issued at once (0: no cap)."""
    registry_lease_seconds: Annotated[float, msgspec.Meta(ge=0)] = 5.0
    """CARDARENA_REGISTRY_LEASE_SECONDS: how long a game service process answers token checks
    from its own fold of the bot registry after its last read (0: it reads the registry at
    every check); a change to the registry waits for every live lease, at most twice this."""
    entrant_move_seconds: Annotated[float, msgspec.Meta(ge=0, le=86_400)] = 60.0
    """CARDARENA_ENTRANT_MOVE_SECONDS: the move deadline of the default clock that times the
    external and webhook entrants of a tournament or challenge that sets no clock (neither
    its own nor its ruleset's), so that a silent entrant forfeits (0: no default clock)."""
    entrant_bank_seconds: Annotated[float, msgspec.Meta(ge=0, le=864_000)] = 300.0
    """CARDARENA_ENTRANT_BANK_SECONDS: the time bank per seat of that default clock."""
    registration: Literal["closed", "invite", "open"] = "closed"
    """CARDARENA_REGISTRATION: who may make an account and register bots without the admin key:
    nobody (`closed`), the holder of an invite code the host issued (`invite`), or anyone
    (`open`)."""
    max_bots_per_account: Annotated[int, msgspec.Meta(ge=0)] = 20
    """CARDARENA_MAX_BOTS_PER_ACCOUNT: bot versions an account (not the host's) may hold (0:
    no cap)."""
    registration_rate_limit: Annotated[int, msgspec.Meta(ge=0)] = 10
    """CARDARENA_REGISTRATION_RATE_LIMIT: registrations (accounts made, an account's bots) a
    client address, and an account, may make per rate window (more: 429; 0: unlimited)."""


@dataclass(frozen=True, kw_only=True)
class ProjectionSettings(CommonSettings):
    """The settings of the projection service (`cardarena serve projection`)."""

    projection_group: str = "projection"
    """CARDARENA_PROJECTION_GROUP: the consumer group of the projection service on the feed."""
    retention_seconds: Annotated[int, msgspec.Meta(ge=0)] = 7 * 86_400
    """CARDARENA_RETENTION_SECONDS: how long after its end a game's stream stays in Redis once
    archived (0: forever)."""
    projectors: Annotated[int, msgspec.Meta(ge=1)] = 1
    """CARDARENA_PROJECTORS: how many projection services share the feed's partitions (each
    owns those whose number modulo this is its index)."""
    projector_index: Annotated[int, msgspec.Meta(ge=-1)] = -1
    """CARDARENA_PROJECTOR_INDEX: this projection service's index among them (-1: 0 for a
    single projector, else the ordinal at the end of the host name, as a Kubernetes
    StatefulSet's pod `projection-2` has; a host name without one is refused)."""
    feed_retention_seconds: Annotated[int, msgspec.Meta(ge=0)] = 600
    """CARDARENA_FEED_RETENTION_SECONDS: how long a feed entry stays in Redis at least; it is
    trimmed after that once every consumer group passed it (a bot's event stream resumes with
    Last-Event-ID within this time)."""
    projection_metrics_port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 9100
    """CARDARENA_PROJECTION_METRICS_PORT: the projection's Prometheus port (0: off)."""
    projection_linger_ms: Annotated[int, msgspec.Meta(ge=0, le=1000)] = 20
    """CARDARENA_PROJECTION_LINGER_MS: after a batch smaller than a full one, how long the
    projection lets the feed gather more before its next batch (under load: fewer, bigger
    transactions, at up to this much more lag; 0: none)."""
    projection_retry_seconds: Annotated[int, msgspec.Meta(ge=1)] = 300
    """CARDARENA_PROJECTION_RETRY_SECONDS: how often the projection retries its dead letters
    (events it could not project; also retried at every start)."""


@dataclass(frozen=True, kw_only=True)
class WorkerSettings(CommonSettings):
    """The settings of the Celery workers (`cardarena serve workers`)."""

    workers_metrics_port: Annotated[int, msgspec.Meta(ge=0, le=65535)] = 9101
    """CARDARENA_WORKERS_METRICS_PORT: the workers' Prometheus port (0: off)."""
    broker_visibility_timeout: Annotated[int, msgspec.Meta(ge=1)] = 300
    """CARDARENA_BROKER_VISIBILITY_TIMEOUT: seconds a worker may hold a task unacknowledged
    before another worker's sweep sends it again: how late a killed worker's tasks come back
    (a webhook turn that waits longer is sent again, harmlessly: moves are version-checked)."""
    broker_restore_interval: Annotated[int, msgspec.Meta(ge=1)] = 10
    """CARDARENA_BROKER_RESTORE_INTERVAL: seconds between a worker's sweeps for tasks held past
    the visibility timeout."""
    stale_game_seconds: Annotated[int, msgspec.Meta(ge=0)] = 86_400
    """CARDARENA_STALE_GAME_SECONDS: the reconciliation aborts an untimed game of no tournament
    that has waited this long for a client's move, freeing its bots' slots (0: never)."""


@dataclass(frozen=True, kw_only=True)
class BeatSettings(CommonSettings):
    """The settings of celery beat (`cardarena serve beat`)."""

    reconcile_seconds: Annotated[int, msgspec.Meta(ge=0)] = 120
    """CARDARENA_RECONCILE_SECONDS: how often beat has the workers look for running games
    (of tournaments and of none) that the platform left waiting that long, and play them on
    (0: never)."""


@dataclass(frozen=True, kw_only=True)
class Settings(GameSettings, ProjectionSettings, WorkerSettings, BeatSettings):
    """Every setting: what the embedded default and the CLI read when one process plays
    every part (each field is declared once, by the service that reads it)."""


S = TypeVar("S", bound=CommonSettings)


_ENV = {
    "store": "CARDARENA_STORE",
    "dispatch": "CARDARENA_DISPATCH",
    "redis_url": "REDIS_URL",
    "database_url": "DATABASE_URL",
    "broker_url": "CELERY_BROKER_URL",
    "namespace": "CARDARENA_NAMESPACE",
    "redis_cluster": "CARDARENA_REDIS_CLUSTER",
    "partitions": "CARDARENA_PARTITIONS",
    "redis_wait_replicas": "CARDARENA_REDIS_WAIT_REPLICAS",
    "redis_wait_timeout_ms": "CARDARENA_REDIS_WAIT_TIMEOUT_MS",
    "schedules_redis_url": "CARDARENA_SCHEDULES_REDIS_URL",
    "queue": "CARDARENA_QUEUE",
    "ladder_pair_seconds": "CARDARENA_LADDER_PAIR_SECONDS",
    "ladder_max_concurrent": "CARDARENA_LADDER_MAX_CONCURRENT",
    "ladder_max_daily": "CARDARENA_LADDER_MAX_DAILY",
    "ladder_cooldown_seconds": "CARDARENA_LADDER_COOLDOWN_SECONDS",
    "ladder_provisional_games": "CARDARENA_LADDER_PROVISIONAL_GAMES",
    "projection_group": "CARDARENA_PROJECTION_GROUP",
    "host": "CARDARENA_HOST",
    "port": "CARDARENA_PORT",
    "admin_key": "CARDARENA_ADMIN_KEY",
    "rate_limit": "CARDARENA_RATE_LIMIT",
    "rate_window": "CARDARENA_RATE_WINDOW",
    "turn_rate_limit": "CARDARENA_TURN_RATE_LIMIT",
    "max_games_per_bot": "CARDARENA_MAX_GAMES_PER_BOT",
    "spectator_streams": "CARDARENA_SPECTATOR_STREAMS",
    "max_streams_per_token": "CARDARENA_MAX_STREAMS_PER_TOKEN",
    "spectator_rate_limit": "CARDARENA_SPECTATOR_RATE_LIMIT",
    "max_open_challenges": "CARDARENA_MAX_OPEN_CHALLENGES",
    "registry_lease_seconds": "CARDARENA_REGISTRY_LEASE_SECONDS",
    "entrant_move_seconds": "CARDARENA_ENTRANT_MOVE_SECONDS",
    "entrant_bank_seconds": "CARDARENA_ENTRANT_BANK_SECONDS",
    "registration": "CARDARENA_REGISTRATION",
    "max_bots_per_account": "CARDARENA_MAX_BOTS_PER_ACCOUNT",
    "registration_rate_limit": "CARDARENA_REGISTRATION_RATE_LIMIT",
    "webhook_allow_private": "CARDARENA_WEBHOOK_ALLOW_PRIVATE",
    "retention_seconds": "CARDARENA_RETENTION_SECONDS",
    "projectors": "CARDARENA_PROJECTORS",
    "projector_index": "CARDARENA_PROJECTOR_INDEX",
    "feed_retention_seconds": "CARDARENA_FEED_RETENTION_SECONDS",
    "heartbeat_dir": "CARDARENA_HEARTBEAT_DIR",
    "heartbeat_max_age": "CARDARENA_HEARTBEAT_MAX_AGE",
    "projection_metrics_port": "CARDARENA_PROJECTION_METRICS_PORT",
    "projection_linger_ms": "CARDARENA_PROJECTION_LINGER_MS",
    "projection_retry_seconds": "CARDARENA_PROJECTION_RETRY_SECONDS",
    "workers_metrics_port": "CARDARENA_WORKERS_METRICS_PORT",
    "broker_visibility_timeout": "CARDARENA_BROKER_VISIBILITY_TIMEOUT",
    "broker_restore_interval": "CARDARENA_BROKER_RESTORE_INTERVAL",
    "stale_game_seconds": "CARDARENA_STALE_GAME_SECONDS",
    "reconcile_seconds": "CARDARENA_RECONCILE_SECONDS",
    "log_json": "CARDARENA_LOG_JSON",
    "deal_secret": "CARDARENA_DEAL_SECRET",
}


@overload
def load_settings(environ: Mapping[str, str] | None = None) -> Settings: ...


@overload
def load_settings(environ: Mapping[str, str] | None, kind: type[S]) -> S: ...


def load_settings(
    environ: Mapping[str, str] | None = None, kind: type[CommonSettings] = Settings
) -> CommonSettings:
    """Returns the settings of `kind` (default: all of them) from `environ` (default: the
    process environment); raises SettingsError (a msgspec.ValidationError) naming the
    environment variable of a bad value."""
    env = os.environ if environ is None else environ
    names = {f.name for f in fields(kind)}
    given = {field: env[name] for field, name in _ENV.items() if name in env and field in names}
    try:
        return msgspec.convert(given, kind, strict=False)
    except msgspec.ValidationError as error:
        raise SettingsError.of(error, kind, given) from None


class SettingsError(msgspec.ValidationError):
    """A setting's value is not one its field takes; the message says, in one line, which
    environment variable, what it takes (read off the field's annotation) and what it got:
    `CARDARENA_PORT: expected an integer from 1 to 65535, got "notaport"`."""

    _PATH = re.compile(r"at `\$\.(\w+)`$")
    _HIDDEN = frozenset({"admin_key", "deal_secret"})
    """The fields whose values an error never repeats (a log line must not hold a secret)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        """The field of the setting (`port`), or None when msgspec named none."""

    @classmethod
    def of(
        cls, error: msgspec.ValidationError, kind: type[CommonSettings], given: Mapping[str, str]
    ) -> SettingsError:
        """Returns `error`, which msgspec raised converting `given` to `kind`, told of the
        environment variable: msgspec's path `$.port` is the field `port`."""
        found = cls._PATH.search(str(error))
        if found is None or found.group(1) not in _ENV:
            return cls(f"settings: {error}")
        field = found.group(1)
        expected = expectation(get_type_hints(kind, include_extras=True)[field])
        value = given.get(field, "")
        got = f"{len(value)} characters (not shown)" if field in cls._HIDDEN else json.dumps(value)
        return cls(f"{_ENV[field]}: expected {expected}, got {got}", field)


def expectation(annotation: Any) -> str:
    """Returns what a field of `annotation` takes, in words: `an integer from 1 to 65535`,
    `one of memory, redis`, `true or false`."""
    meta: dict[str, Any] = {}
    if get_origin(annotation) is Annotated:
        annotation, *extras = get_args(annotation)
        for extra in extras:
            if isinstance(extra, msgspec.Meta):
                meta.update({k: getattr(extra, k) for k in ("ge", "gt", "le", "lt", "pattern")})
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(str(value) for value in get_args(annotation))
    if annotation is bool:
        return "true or false"
    if annotation is str:
        pattern = meta.get("pattern")
        return "text" if pattern is None else f"text matching {pattern}"
    noun = {int: "an integer", float: "a number"}.get(annotation, f"a {annotation!r}")
    low, high = meta.get("ge"), meta.get("le")
    if low is not None and high is not None:
        return f"{noun} from {low:g} to {high:g}"
    bounds = [
        f"{words} {meta[key]:g}"
        for key, words in (
            ("ge", "of at least"),
            ("gt", "above"),
            ("le", "of at most"),
            ("lt", "below"),
        )
        if meta.get(key) is not None
    ]
    return " ".join([noun, *bounds])


def as_kind(settings: CommonSettings, kind: type[S], environ: Mapping[str, str] | None = None) -> S:
    """Returns `settings` as settings of `kind`: themselves when they are, else their common
    fields with the rest of `kind`'s read from `environ` (default: the process environment)."""
    if isinstance(settings, kind):
        return settings
    common = {f.name: getattr(settings, f.name) for f in fields(CommonSettings)}
    return replace(load_settings(environ, kind), **common)
