"""REST v1 controllers: each turns a request into a use case call and a response."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, JSONBody, PathParameter, QueryParameter

from services.game.problems import responses
from services.game.schemas import (
    ActionAccepted,
    CreateGame,
    EventItem,
    EventPage,
    Game,
    Health,
    PostAction,
)
from shared.games.base import get_game
from shared.handlers import (
    BotTurnDispatcher,
    UnknownGame,
    act,
    create_game,
    load,
    next_bot_seat,
)
from shared.store.port import EventStore

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="Makes a retry safe: the same key and body return the first result.",
    ),
]
GameId = Annotated[str, PathParameter(description="The game's id, as its creation returned it.")]


def _play_bots(store: EventStore, dispatcher: BotTurnDispatcher, game_id: str) -> None:
    """Starts the platform's play when a built-in bot is to move in the game."""
    if next_bot_seat(load(store, game_id)) is not None:
        dispatcher.dispatch(game_id)


def _create(
    store: EventStore, dispatcher: BotTurnDispatcher, data: CreateGame, key: str | None
) -> Response[Game]:
    """Creates a game and starts the bots' play if due: 201, or 200 for a retried creation."""
    outcome = create_game(
        store,
        data.game,
        ruleset=data.ruleset,
        seats=data.table(),
        players=data.players,
        seed=data.seed,
        idempotency_key=key,
        created_at=datetime.now(UTC).isoformat(),
    )
    _play_bots(store, dispatcher, outcome.game_id)
    return Response(
        Game.of(load(store, outcome.game_id)),
        status_code=200 if outcome.replayed else 201,
        headers={"Location": f"/v1/games/{outcome.game_id}"},
    )


def _events(store: EventStore, game_id: str, after: int, limit: int | None) -> EventPage:
    """Returns the events of a game after version `after`, decoded; raises UnknownGame."""
    recorded = store.read(game_id, after, limit)
    version = store.version(game_id)
    if version == 0:
        raise UnknownGame(game_id)
    items = [EventItem.of(item, get_game(item.kind).codec.decode(item)) for item in recorded]
    return EventPage(game_id=game_id, version=version, events=items)


def _act(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    game_id: str,
    data: PostAction,
    key: str | None,
) -> ActionAccepted:
    """Applies an action and starts the bots' play if one of them is to move next."""
    outcome = act(
        store,
        game_id,
        seat=data.seat,
        action=data.action,
        expected_version=data.expected_version,
        idempotency_key=key,
    )
    _play_bots(store, dispatcher, game_id)
    return ActionAccepted.of(outcome)


class GamesController(Controller):
    """Games: create, read, list events, post actions."""

    path = "/v1/games"
    tags = ("games",)

    @post(
        operation_id="createGame",
        summary="Create a game",
        sync_to_thread=True,
        response_headers=[
            ResponseHeader(name="Location", description="The game's URL", documentation_only=True)
        ],
        responses={
            200: ResponseSpec(Game, description="A retried creation: the game first created"),
            **responses(400, 422, 503),
        },
    )
    def create(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        data: JSONBody[CreateGame],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Game]:
        """Creates and deals a game; starts the platform's play when a bot moves first."""
        return _create(store, dispatcher, data, idempotency_key)

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="Read a game",
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(self, store: NamedDependency[EventStore], game_id: GameId) -> Game:
        """Returns the game's public state."""
        return Game.of(load(store, game_id))

    @get(
        "/{game_id:str}/events",
        operation_id="listGameEvents",
        summary="List a game's events",
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def events(
        self,
        store: NamedDependency[EventStore],
        game_id: GameId,
        after: Annotated[
            int, QueryParameter(ge=0, description="Only events after this version")
        ] = 0,
        limit: Annotated[
            int | None, QueryParameter(ge=1, le=10_000, description="At most this many")
        ] = None,
    ) -> EventPage:
        """Returns the game's events after version `after`, in version order."""
        return _events(store, game_id, after, limit)

    @post(
        "/{game_id:str}/actions",
        operation_id="postAction",
        summary="Take an action",
        status_code=200,
        sync_to_thread=True,
        responses=responses(400, 404, 409, 422, 503),
    )
    def post_action(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        game_id: GameId,
        data: JSONBody[PostAction],
        idempotency_key: IdempotencyKey = None,
    ) -> ActionAccepted:
        """Applies a seat's action at `expected_version`; a retry with the same key replays."""
        return _act(store, dispatcher, game_id, data, idempotency_key)


@get("/health", operation_id="health", summary="Liveness", tags=["service"], sync_to_thread=False)
def health() -> Health:
    """Returns `ok` while the service answers."""
    return Health()
