"""The game service's Litestar application factory."""

from __future__ import annotations

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from services.game import problems
from services.game.bots import BotsController
from services.game.leaderboards import LeaderboardsController
from services.game.routes import GamesController, health
from services.game.schedules import SchedulesController
from services.game.tournaments import TournamentsController
from shared.handlers import BotTurnDispatcher
from shared.store.port import EventStore
from shared.tournaments.schedule import InProcessScheduler, Scheduler
from shared.views.memory import InMemoryTournamentViews
from shared.views.port import TournamentViews


def create_app(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    *,
    views: TournamentViews | None = None,
    scheduler: Scheduler | None = None,
    debug: bool = False,
) -> Litestar:
    """Returns the game service over `store`, starting bot turns through `dispatcher`.

    Tournament lists and leaderboards read `views`; by default the in-memory twin folding
    `store`'s feed (the embedded default; the real stack passes the PostgreSQL views).
    Scheduled tournaments go to `scheduler`; by default an in-process one firing through
    `dispatcher`, closed when the app shuts down.
    """
    tournament_views = views if views is not None else InMemoryTournamentViews(store)
    schedules = scheduler if scheduler is not None else InProcessScheduler(dispatcher)

    def provide_store() -> EventStore:
        return store

    def provide_dispatcher() -> BotTurnDispatcher:
        return dispatcher

    def provide_views() -> TournamentViews:
        return tournament_views

    def provide_scheduler() -> Scheduler:
        return schedules

    return Litestar(
        route_handlers=[
            GamesController,
            TournamentsController,
            BotsController,
            LeaderboardsController,
            SchedulesController,
            health,
        ],
        dependencies={
            "store": Provide(provide_store, sync_to_thread=False),
            "dispatcher": Provide(provide_dispatcher, sync_to_thread=False),
            "views": Provide(provide_views, sync_to_thread=False),
            "scheduler": Provide(provide_scheduler, sync_to_thread=False),
        },
        exception_handlers=problems.HANDLERS,
        on_shutdown=[] if scheduler is not None else [schedules.close],
        openapi_config=OpenAPIConfig(
            title="cardarena game service", version="1.0.0", path="/schema"
        ),
        debug=debug,
    )
