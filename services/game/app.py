"""The game service's Litestar application factory: the one place that assembles the bounded
contexts (one package each, none importing another) over the shared plumbing of `http/`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from litestar import Litestar
from litestar.datastructures import State
from litestar.di import Provide
from litestar.openapi.spec import Components
from litestar.serialization import encode_json

from services.game.accounts.controllers import AccountsController, InvitesController
from services.game.bots.controllers import BotsController
from services.game.catalog.controllers import CatalogController
from services.game.challenges.controllers import ChallengesController
from services.game.evaluations.controllers import EvaluationsController
from services.game.exports.controllers import ExportsController
from services.game.games.controllers import GamesController
from services.game.http.context import GameContext
from services.game.http.openapi import docs, document, openapi
from services.game.http.ops import HANDLERS as OPS_HANDLERS
from services.game.http.ops import ObserveMiddleware, health, metrics, ready
from services.game.http.pages.arena import arena_handlers
from services.game.http.pages.viewer import viewer_handlers
from services.game.http.pipeline import auth, problems, strict
from services.game.http.pipeline.limits import RateLimitMiddleware
from services.game.http.seals import HANDLERS as SEALS
from services.game.http.waiters import STATE_KEY as STREAMS_KEY
from services.game.http.waiters import StreamConfig, Streams
from services.game.ladders.controllers import LaddersController
from services.game.leaderboards.controllers import LeaderboardsController
from services.game.replays.controllers import ReplaysController
from services.game.schedules.controllers import SchedulesController
from services.game.streams.controllers import (
    BotStreamsController,
    GameStreamController,
    TournamentStreamController,
)
from services.game.tournaments.controllers import TournamentsController
from services.game.version import API_VERSION
from services.ops.health import Readiness, StoreReadiness
from services.ops.metrics import GameMetrics
from shared.app import stalls
from shared.app.runtime import InProcessDispatcher, InProcessScheduler, LadderPairer
from shared.ports.archive import EventArchive, StoreArchive
from shared.ports.bot_index import BotIndex
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.scheduler import Scheduler
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore

MAX_BODY_SIZE = 1024 * 1024
"""The largest request body the service reads (1 MiB; imports: `exports.IMPORT_MAX_BODY_SIZE`);
a larger one is refused with 413 before it is read whole."""

SCHEMA_PATH = "/schema"
"""Where the OpenAPI document (`/openapi.json`, `/openapi.yaml`) and its page are served."""


def create_app(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    *,
    views: TournamentViews | None = None,
    scheduler: Scheduler | None = None,
    access: auth.Access | None = None,
    archive: EventArchive | None = None,
    readiness: Readiness | None = None,
    game_metrics: GameMetrics | None = None,
    streams: StreamConfig | None = None,
    bot_index: BotIndex | None = None,
    ladder_pairer: LadderPairer | None = None,
    debug: bool = False,
) -> Litestar:
    """Returns the game service over `store`, starting bot turns through `dispatcher`.

    Tournament lists and leaderboards read `views`; by default the in-memory twin folding
    `store`'s feed (the embedded default; the real stack passes the PostgreSQL views).
    Scheduled tournaments go to `scheduler`; by default an in-process one firing through
    `dispatcher`, closed when the app shuts down. Callers are identified and limited by
    `access`; by default open mode with in-memory rate limits and game slots. Games whose
    stream left the store are read from `archive`; by default the store itself (the embedded
    default never drops a stream; the real stack passes the PostgreSQL archive). `/ready`
    asks `readiness`; by default whether `store` answers (the real stack checks Redis and
    PostgreSQL). `/metrics` serves `game_metrics`; by default a fresh registry of its own.
    Streams and long polls behave as `streams` says; by default as `StreamConfig()`. The
    bots' games and challenges come from `bot_index`; by default the twin folding `store`'s
    feed (the real stack passes the projection's, `services.projection.bot_index`). The
    open ladders are paired by `ladder_pairer`'s thread from start-up to shut-down; by
    default by nothing in this process (the workers' beat task, or a test's own calls).
    """
    access = access if access is not None else auth.Access.embedded(store)
    tournament_views = views if views is not None else InMemoryTournamentViews(store)
    schedules = scheduler if scheduler is not None else InProcessScheduler(dispatcher)
    events_archive = archive if archive is not None else StoreArchive(store)
    checks = readiness if readiness is not None else StoreReadiness(store)
    observed = game_metrics if game_metrics is not None else GameMetrics()

    def provide_store() -> EventStore:
        return store

    def provide_dispatcher() -> BotTurnDispatcher:
        return dispatcher

    def provide_views() -> TournamentViews:
        return tournament_views

    def provide_scheduler() -> Scheduler:
        return schedules

    def provide_access() -> auth.Access:
        return access

    def provide_archive() -> EventArchive:
        return events_archive

    def provide_readiness() -> Readiness:
        return checks

    def provide_metrics() -> GameMetrics:
        return observed

    context = GameContext(store, dispatcher, observed)
    unsubscribe: list[Callable[[], None]] = []

    def count_stalls() -> None:  # loops run here when bot turns play in-process
        unsubscribe.append(stalls.subscribe(observed.count_stall))

    def stop_counting_stalls() -> None:
        while unsubscribe:
            unsubscribe.pop()()

    def provide_context() -> GameContext:
        return context

    accepted = openapi.AcceptedValues()
    completion = document.Completion(accepted)

    return Litestar(
        route_handlers=[
            GamesController,
            CatalogController,
            TournamentsController,
            EvaluationsController,
            BotsController,
            AccountsController,
            InvitesController,
            ChallengesController,
            LeaderboardsController,
            LaddersController,
            SchedulesController,
            GameStreamController,
            BotStreamsController,
            TournamentStreamController,
            ReplaysController,
            ExportsController,
            health,
            ready,
            metrics,
            *viewer_handlers(),
            *arena_handlers(),
        ],
        dependencies={
            "store": Provide(provide_store, sync_to_thread=False),
            "dispatcher": Provide(provide_dispatcher, sync_to_thread=False),
            "views": Provide(provide_views, sync_to_thread=False),
            "scheduler": Provide(provide_scheduler, sync_to_thread=False),
            "access": Provide(provide_access, sync_to_thread=False),
            "archive": Provide(provide_archive, sync_to_thread=False),
            "readiness": Provide(provide_readiness, sync_to_thread=False),
            "game_metrics": Provide(provide_metrics, sync_to_thread=False),
            "context": Provide(provide_context, sync_to_thread=False),
            "caller": auth.CALLER,
        },
        guards=[auth.authenticate],
        before_request=strict.guard,
        state=State(
            {
                auth.STATE_KEY: access,
                STREAMS_KEY: Streams(streams or StreamConfig(), bot_index=bot_index),
            }
        ),
        exception_handlers={
            **problems.HANDLERS,
            **auth.HANDLERS,
            **OPS_HANDLERS,
            **strict.HANDLERS,
            **SEALS,
        },
        middleware=[ObserveMiddleware(observed), RateLimitMiddleware(auth.identify_late)],
        plugins=[problems.ProblemDocumentation(), accepted, completion],
        on_startup=[count_stalls, *([ladder_pairer.start] if ladder_pairer else [])],
        on_shutdown=[
            stop_counting_stalls,
            *([ladder_pairer.close] if ladder_pairer else []),
            access.close,
            *([] if scheduler is not None else [schedules.close]),
        ],
        openapi_config=completion.config(
            title="cardarena game service",
            version=API_VERSION,
            path=SCHEMA_PATH,
            render_plugins=docs.render_plugins(SCHEMA_PATH),
            components=Components(security_schemes=auth.SECURITY_SCHEMES),
        ),
        request_max_body_size=MAX_BODY_SIZE,
        logging_config=None,  # logging is the process's: see services.ops.logs
        debug=debug,
    )


def openapi_document() -> dict[str, Any]:
    """Returns the service's OpenAPI document, as `/schema/openapi.json` serves it, from an app
    over the in-memory store that is built but never started (no server, no thread)."""
    store = InMemoryEventStore()
    app = create_app(store, InProcessDispatcher(store))
    document: dict[str, Any] = msgspec.json.decode(encode_json(app.openapi_schema.to_schema()))
    return document
