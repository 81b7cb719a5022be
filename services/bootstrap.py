"""Builds the adapters that the settings choose; entry points call these, nothing else does."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import redis

from services.game.auth import Access
from services.ops.health import Readiness, StackReadiness, StoreReadiness
from services.ops.metrics import GameMetrics, outbox_records, queue_depth, tournaments_running
from services.settings import CommonSettings, GameSettings, ProjectionSettings
from shared.app.registry import RegistryIndex
from shared.app.runtime import InProcessDispatcher, InProcessScheduler, OutboxDispatcher
from shared.ports import deal_secret
from shared.ports.archive import EventArchive, StoreArchive
from shared.ports.deal_secret import DealSecret, GivenDealSecret, ProcessDealSecret
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import InMemoryOutbox, Outbox
from shared.ports.scheduler import Scheduler
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_deal_secret import RedisDealSecret
from shared.store.redis_limits import RedisGameSlots, RedisRateLimiter
from shared.store.redis_outbox import RedisOutbox
from shared.store.redis_store import RedisEventStore

if TYPE_CHECKING:
    from services.projection.retention import Retention


def build_store(settings: CommonSettings) -> EventStore:
    """Returns the event store of `settings`: in memory, or Redis Streams; its games are
    dealt with the deployment's deal secret (`shared.model.deal_keys`)."""
    store: EventStore
    if settings.store == "memory":
        store = InMemoryEventStore()
        secret: DealSecret = ProcessDealSecret()
    else:
        client = redis.Redis.from_url(
            settings.redis_url, socket_timeout=10, health_check_interval=30
        )
        store = RedisEventStore(client, namespace=settings.namespace)
        secret = RedisDealSecret(client, settings.namespace)
    deal_secret.attach(
        store, GivenDealSecret(settings.deal_secret) if settings.deal_secret else secret
    )
    return store


def build_access(settings: GameSettings, store: EventStore) -> Access:
    """Returns the game service's access: the admin key, and rate limits and game slots in
    this process (memory store) or in Redis, shared by every server process.
    """
    if settings.store == "memory":
        return Access.embedded(store, settings)
    client = redis.Redis.from_url(settings.redis_url, socket_timeout=10, health_check_interval=30)
    return Access(
        admin_key=settings.admin_key,
        registry=RegistryIndex(store),
        limiter=RedisRateLimiter(
            client, settings.rate_limit, settings.rate_window, settings.namespace
        ),
        slots=RedisGameSlots(client, settings.namespace),
        max_games_per_bot=settings.max_games_per_bot,
        webhook_allow_private=settings.webhook_allow_private,
        spectator_limiter=RedisRateLimiter(
            client, settings.spectator_rate_limit, settings.rate_window, settings.namespace
        ),
        challenges=RedisGameSlots(client, settings.namespace, "botchallenges:"),
        max_open_challenges=settings.max_open_challenges,
    )


def build_outbox(settings: CommonSettings) -> Outbox:
    """Returns where work the broker could not take waits: this process (memory store), or
    the event store's Redis, shared by the game service and the workers."""
    if settings.store == "memory":
        return InMemoryOutbox()
    client = redis.Redis.from_url(settings.redis_url, socket_timeout=10, health_check_interval=30)
    return RedisOutbox(client, settings.namespace)


def build_dispatcher(settings: CommonSettings, store: EventStore) -> BotTurnDispatcher:
    """Returns how bot turns run: in this process, or as tasks on the Celery workers, sent
    through the outbox (its sender thread started) while the broker is unreachable."""
    if settings.dispatch == "inprocess":
        from services.workers.webhooks import play_webhook_turn  # noqa: PLC0415 - httpx

        webhooks = functools.partial(
            play_webhook_turn, allow_private=settings.webhook_allow_private
        )
        return InProcessDispatcher(store, webhooks=webhooks)
    from services.workers.tasks import CeleryDispatcher  # noqa: PLC0415 - Celery only when asked

    dispatcher = OutboxDispatcher(CeleryDispatcher(settings.queue), build_outbox(settings))
    dispatcher.start()
    return dispatcher


def build_views(settings: CommonSettings, store: EventStore) -> TournamentViews:
    """Returns the tournament views: folded from the in-memory store, else PostgreSQL's."""
    if settings.store == "memory":
        return InMemoryTournamentViews(store)
    from services.projection.views import PostgresTournamentViews  # noqa: PLC0415 - psycopg

    return PostgresTournamentViews(settings.database_url)


def build_scheduler(settings: CommonSettings, dispatcher: BotTurnDispatcher) -> Scheduler:
    """Returns where schedules live: in this process, or in Redis for `cardarena serve beat`."""
    if settings.dispatch == "inprocess":
        return InProcessScheduler(dispatcher)
    from services.workers.beat import RedBeatTournamentScheduler, key_prefix  # noqa: PLC0415

    return RedBeatTournamentScheduler(settings.redis_url, key_prefix(settings), settings.queue)


def build_archive(settings: CommonSettings, store: EventStore) -> EventArchive:
    """Returns where games whose stream left the store are read: the store itself (memory,
    which never drops one), else the projection's PostgreSQL archive."""
    if settings.store == "memory":
        return StoreArchive(store)
    from services.projection.archive import PostgresEventArchive  # noqa: PLC0415 - psycopg

    return PostgresEventArchive(settings.database_url)


def build_retention(settings: ProjectionSettings, store: EventStore) -> Retention | None:
    """Returns the projection's sweep of finished games' streams out of `store` (Redis) once
    the PostgreSQL archive holds them; None when streams are kept forever
    (`retention_seconds` 0)."""
    if settings.retention_seconds == 0:
        return None
    from services.projection.archive import PostgresEventArchive  # noqa: PLC0415 - psycopg
    from services.projection.retention import Retention  # noqa: PLC0415

    archive = PostgresEventArchive(settings.database_url)
    return Retention(settings.database_url, store, archive, settings.retention_seconds)


def build_readiness(settings: CommonSettings, store: EventStore) -> Readiness:
    """Returns what the game service's `/ready` checks: the in-memory store answers, or Redis
    and PostgreSQL answer with every migration applied."""
    if settings.store == "memory":
        return StoreReadiness(store)
    return StackReadiness(settings.redis_url, settings.database_url)


def build_game_metrics(settings: CommonSettings, views: TournamentViews) -> GameMetrics:
    """Returns the game service's metrics, with the running tournaments (from `views`) and,
    when bot turns go to Celery, the records waiting in the outbox and, over Redis, the
    depth of its queue (another broker, such as RabbitMQ, has its own)."""
    metrics = GameMetrics()
    metrics.watch(tournaments_running(lambda: len(views.tournaments("running", limit=1000))))
    over_redis = settings.celery_broker.startswith(("redis://", "rediss://", "unix://"))
    if settings.dispatch == "celery":
        metrics.watch(outbox_records(build_outbox(settings).size))
    if settings.dispatch == "celery" and over_redis:
        client = redis.Redis.from_url(settings.celery_broker, socket_timeout=2)
        metrics.watch(queue_depth(client, settings.queue))
    return metrics
