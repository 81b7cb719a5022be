"""The servers a command needs, asked once before it starts: one that does not answer ends
the command with one line (which server, at which URL, set by which variable, and what to
try) instead of a traceback, or a service that starts and then logs its failures for ever.

A server that goes away later is the service's to ride out (retries, readiness); this check
is only about the first hour of a user whose Redis or PostgreSQL is not running yet.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis

from services.cli.common import UNREACHABLE, CannotStart
from services.settings import CommonSettings

TIMEOUT_S = 5.0
"""How long a server may take to answer before the command gives up on it."""


def shown(url: str) -> str:
    """Returns `url` with its password, if any, masked (`redis://:***@host:6379/0`)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port is not None else ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))


def unreachable(server: str, url: str, variable: str, reason: str, compose: str) -> CannotStart:
    """Returns the failure of a command whose `server` at `url` (set by `variable`) did not
    answer, for `reason`; `compose` is the server's service in docker-compose.yml."""
    why = reason.strip().splitlines()[0].rstrip(".") if reason.strip() else "no answer"
    if "does not exist" in why:  # the server answers; the database it names is missing
        name = urlsplit(url).path.lstrip("/") or "it"
        hint = f"create it (createdb {name}; `cardarena dev` creates it) or set {variable}"
    else:
        hint = f"start it (docker compose up -d {compose}) or set {variable} to one that runs"
    return CannotStart(
        f"cannot reach {server} at {shown(url)} ({variable}): {why}; {hint}", UNREACHABLE
    )


def require_redis(url: str, variable: str = "REDIS_URL", timeout: float = TIMEOUT_S) -> None:
    """Raises CannotStart unless the Redis at `url` answers a PING within `timeout`."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    except (redis.RedisError, ValueError) as error:  # ValueError: a URL redis cannot read
        raise unreachable("Redis", url, variable, str(error), "redis") from None
    finally:
        client.close()


def require_postgresql(
    url: str, variable: str = "DATABASE_URL", timeout: float = TIMEOUT_S
) -> None:
    """Raises CannotStart unless the PostgreSQL at `url` takes a connection within `timeout`
    (its database included)."""
    try:
        psycopg.connect(url, connect_timeout=max(2, round(timeout))).close()
    except psycopg.Error as error:
        raise unreachable("PostgreSQL", url, variable, str(error), "postgres") from None


def broker_redis(settings: CommonSettings) -> tuple[str, str] | None:
    """Returns the Celery broker's URL and variable when the broker is a Redis other than the
    event store's (None for RabbitMQ, whose client Celery retries and reports itself)."""
    if settings.broker_is_amqp or settings.celery_broker == settings.redis_url:
        return None
    return settings.celery_broker, "CELERY_BROKER_URL"


def require_service(service: str, settings: CommonSettings) -> None:
    """Raises CannotStart unless every server `service` (`cardarena serve <service>`) needs
    at its start answers: the event store's Redis (the game service only on the Redis
    store), the projection's PostgreSQL, the workers' Redis broker, beat's Redis."""
    if service == "beat":
        require_redis(settings.schedules_redis, _schedules_variable(settings))
        return
    if service != "game" or settings.store == "redis":
        require_redis(settings.redis_url)
    if service == "projection":
        require_postgresql(settings.database_url)
    if service == "workers" and (broker := broker_redis(settings)) is not None:
        require_redis(*broker)


def _schedules_variable(settings: CommonSettings) -> str:
    """Returns the variable that chose beat's Redis (see `CommonSettings.schedules_redis`)."""
    if settings.schedules_redis_url:
        return "CARDARENA_SCHEDULES_REDIS_URL"
    return "CELERY_BROKER_URL" if settings.redis_cluster else "REDIS_URL"
