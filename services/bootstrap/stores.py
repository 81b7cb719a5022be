"""Builds the adapters every process shares: the event store, the outbox, the views, the archive,
the slots of running games."""

from __future__ import annotations

import redis
from redis.cluster import RedisCluster

from services.projection.archive import PostgresEventArchive
from services.projection.views import PostgresTournamentViews
from services.settings import CommonSettings
from shared.ports import deal_secret
from shared.ports.archive import EventArchive, StoreArchive
from shared.ports.deal_secret import DealSecret, GivenDealSecret, ProcessDealSecret
from shared.ports.game_slots import GameSlots, InMemoryGameSlots
from shared.ports.outbox import InMemoryOutbox, Outbox
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_common import Client
from shared.store.redis_deal_secret import RedisDealSecret
from shared.store.redis_limits import RedisGameSlots
from shared.store.redis_outbox import RedisOutbox
from shared.store.redis_store import RedisEventStore


def redis_client(settings: CommonSettings) -> redis.Redis:
    """Returns a client of the settings' standalone Redis that gives up on a silent server."""
    return redis.Redis.from_url(settings.redis_url, socket_timeout=10, health_check_interval=30)


def store_client(settings: CommonSettings) -> Client:
    """Returns a client of the event store's Redis: a cluster client when
    CARDARENA_REDIS_CLUSTER is set, else `redis_client`."""
    if settings.redis_cluster:
        return RedisCluster.from_url(settings.redis_url, socket_timeout=10)
    return redis_client(settings)


def redis_store(settings: CommonSettings, client: Client | None = None) -> RedisEventStore:
    """Returns the settings' Redis event store (through `client`, default `store_client`)."""
    return RedisEventStore(
        client if client is not None else store_client(settings),
        namespace=settings.namespace,
        partitions=settings.partitions,
        wait_replicas=settings.redis_wait_replicas,
        wait_timeout_ms=settings.redis_wait_timeout_ms,
    )


def build_store(settings: CommonSettings) -> EventStore:
    """Returns the event store of `settings`: in memory, or Redis Streams; its games are
    dealt with the deployment's deal secret (`shared.ports.deal_secret`)."""
    store: EventStore
    if settings.store == "memory":
        store = InMemoryEventStore()
        secret: DealSecret = ProcessDealSecret()
    else:
        client = store_client(settings)
        store = redis_store(settings, client)
        secret = RedisDealSecret(client, settings.namespace)
    deal_secret.attach(
        store, GivenDealSecret(settings.deal_secret) if settings.deal_secret else secret
    )
    return store


def build_outbox(settings: CommonSettings) -> Outbox:
    """Returns where work the broker could not take waits: this process (memory store), or
    the event store's Redis, shared by the game service and the workers."""
    if settings.store == "memory":
        return InMemoryOutbox()
    return RedisOutbox(store_client(settings), settings.namespace)


def build_slots(settings: CommonSettings) -> GameSlots:
    """Returns the slots of each bot's running games: this process's (memory store), else
    the ones every game service process and worker shares in the event store's Redis."""
    if settings.store == "memory":
        return InMemoryGameSlots()
    return RedisGameSlots(store_client(settings), settings.namespace)


def build_views(settings: CommonSettings, store: EventStore) -> TournamentViews:
    """Returns the tournament views: folded from the in-memory store, else PostgreSQL's."""
    if settings.store == "memory":
        return InMemoryTournamentViews(store)
    return PostgresTournamentViews(settings.database_url)


def build_archive(settings: CommonSettings, store: EventStore) -> EventArchive:
    """Returns where games whose stream left the store are read: the store itself (memory,
    which never drops one), else the projection's PostgreSQL archive."""
    if settings.store == "memory":
        return StoreArchive(store)
    return PostgresEventArchive(settings.database_url)
