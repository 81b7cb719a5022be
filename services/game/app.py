"""The game service's Litestar application factory."""

from __future__ import annotations

from litestar import Litestar
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig

from services.game import problems
from services.game.routes import GamesController, health
from services.game.tournaments import TournamentsController
from shared.handlers import BotTurnDispatcher
from shared.store.port import EventStore


def create_app(
    store: EventStore, dispatcher: BotTurnDispatcher, *, debug: bool = False
) -> Litestar:
    """Returns the game service over `store`, starting bot turns through `dispatcher`."""

    def provide_store() -> EventStore:
        return store

    def provide_dispatcher() -> BotTurnDispatcher:
        return dispatcher

    return Litestar(
        route_handlers=[GamesController, TournamentsController, health],
        dependencies={
            "store": Provide(provide_store, sync_to_thread=False),
            "dispatcher": Provide(provide_dispatcher, sync_to_thread=False),
        },
        exception_handlers=problems.HANDLERS,
        openapi_config=OpenAPIConfig(
            title="cardarena game service", version="1.0.0", path="/schema"
        ),
        debug=debug,
    )
