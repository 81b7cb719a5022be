"""Builds the game service's parts: access, bot-turn dispatch, schedules, the bot index,
readiness, metrics."""

from __future__ import annotations

import functools

from services.bootstrap.stores import build_outbox, store_client
from services.game.http.pipeline.auth import Access
from services.game.http.pipeline.follower import RegistryFollower
from services.ops.health import Readiness, StackReadiness, StoreReadiness
from services.ops.metrics import GameMetrics, outbox_records, queue_depth, tournaments_running
from services.projection.bot_index import ProjectedBotIndex
from services.projection.dead_letters import summary as dead_letters_summary
from services.settings import CommonSettings, GameSettings, WorkerSettings, as_kind
from services.workers.beat import RedBeatTournamentScheduler, key_prefix
from services.workers.broker import waiting_tasks
from services.workers.celery_app import create_celery
from services.workers.dispatch import CeleryDispatcher
from services.workers.webhooks import play_webhook_turn
from shared.app.ladder import Pairing, ratings_of, rules_of
from shared.app.registry import LEASES, RegistryIndex
from shared.app.runtime import (
    InProcessDispatcher,
    InProcessScheduler,
    LadderPairer,
    OutboxDispatcher,
)
from shared.app.starting import GameCap
from shared.model.clocks import entrant_clock
from shared.ports.bot_index import BotIndex, FeedBotIndex
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.scheduler import Scheduler
from shared.ports.views.port import TournamentViews
from shared.store.port import EventStore
from shared.store.redis_leases import RedisReadLeases
from shared.store.redis_limits import RedisGameSlots, RedisRateLimiter
from shared.store.redis_store import RedisEventStore


def build_access(settings: GameSettings, store: EventStore) -> Access:
    """Returns the game service's access: the admin key, and rate limits and game slots in
    this process (memory store) or in Redis, shared by every server process; on Redis, the
    registry followed under a read lease (its thread started), so that token checks read
    nothing.
    """
    if settings.store == "memory":
        return Access.embedded(store, settings)
    client = store_client(settings)
    registry = RegistryIndex(store)
    follower = None
    if settings.registry_lease_seconds > 0:
        leases = RedisReadLeases(client, LEASES, settings.namespace)
        lease_ms = max(1, round(settings.registry_lease_seconds * 1000))
        follower = RegistryFollower(store, registry, leases, lease_ms)
        follower.start()
    return Access(
        admin_key=settings.admin_key,
        registry=registry,
        follower=follower,
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
        entrant_clock=entrant_clock(settings.entrant_move_seconds, settings.entrant_bank_seconds),
        registration=settings.registration,
        max_bots_per_account=settings.max_bots_per_account,
        registration_limiter=RedisRateLimiter(
            client, settings.registration_rate_limit, settings.rate_window, settings.namespace
        ),
    )


def build_dispatcher(settings: CommonSettings, store: EventStore) -> BotTurnDispatcher:
    """Returns how bot turns run: in this process, or as tasks on the Celery workers, sent
    by name through the outbox (its sender thread started) while the broker is unreachable."""
    if settings.dispatch == "inprocess":
        webhooks = functools.partial(
            play_webhook_turn, allow_private=settings.webhook_allow_private
        )
        return InProcessDispatcher(store, webhooks=webhooks)
    celery = CeleryDispatcher(create_celery(as_kind(settings, WorkerSettings)), settings.queue)
    dispatcher = OutboxDispatcher(celery, build_outbox(settings))
    dispatcher.start()
    return dispatcher


def build_scheduler(settings: CommonSettings, dispatcher: BotTurnDispatcher) -> Scheduler:
    """Returns where schedules live: in this process, or in Redis for `cardarena serve beat`."""
    if settings.dispatch == "inprocess":
        return InProcessScheduler(dispatcher)
    return RedBeatTournamentScheduler(
        settings.schedules_redis, key_prefix(settings), settings.queue
    )


def build_ladder_pairer(
    settings: GameSettings,
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    views: TournamentViews,
    access: Access,
) -> LadderPairer | None:
    """Returns the embedded stack's thread that pairs the open ladders; None when bot turns go
    to Celery (the workers' beat task pairs them) or CARDARENA_LADDER_PAIR_SECONDS is 0."""
    if settings.dispatch != "inprocess" or settings.ladder_pair_seconds == 0:
        return None
    rules = rules_of(
        settings.ladder_max_concurrent,
        settings.ladder_max_daily,
        settings.ladder_cooldown_seconds,
        settings.ladder_provisional_games,
    )
    cap = GameCap(access.slots, access.max_games_per_bot)
    pairing = Pairing(cap, dispatcher, ratings_of(views.leaderboard), rules)
    return LadderPairer(store, pairing, settings.ladder_pair_seconds)


def build_bot_index(settings: CommonSettings, store: EventStore) -> BotIndex:
    """Returns which games and challenges wait for which bot: the twin folding the in-memory
    store's feed, else the projection's views at its checkpoint and the feed after it."""
    if settings.store == "memory":
        return FeedBotIndex(store)
    return ProjectedBotIndex(store, settings.database_url)


def build_readiness(settings: CommonSettings, store: EventStore) -> Readiness:
    """Returns what the game service's `/ready` checks: the in-memory store answers, or Redis
    and PostgreSQL answer with every migration applied (and the projection's dead letters,
    reported as degraded)."""
    if settings.store == "memory":
        return StoreReadiness(store)
    store_problems = store.problems if isinstance(store, RedisEventStore) else None
    return StackReadiness(
        settings.redis_url,
        settings.database_url,
        dead_letters=dead_letters_summary,
        store_problems=store_problems,
    )


def build_game_metrics(settings: CommonSettings, views: TournamentViews) -> GameMetrics:
    """Returns the game service's metrics, with the running tournaments (from `views`) and,
    when bot turns go to Celery, the records waiting in the outbox and the depth of its
    queue, read from the broker (Redis or RabbitMQ) at each scrape."""
    metrics = GameMetrics()
    metrics.watch(tournaments_running(lambda: len(views.tournaments("running", limit=1000))))
    if settings.dispatch == "celery":
        metrics.watch(outbox_records(build_outbox(settings).size))
        metrics.watch(queue_depth(settings.queue, waiting_tasks(settings)))
    return metrics
