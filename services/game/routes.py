"""REST v1 controllers: each turns a request into a use case call and a response."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Parameter

from services.game.problems import responses
from services.game.schemas import (
    ActionAccepted,
    CreateGame,
    EventItem,
    EventPage,
    Game,
    Health,
    NonNegative,
    PostAction,
)
from shared.games.base import get_game
from shared.handlers import (
    BotTurnDispatcher,
    Outcome,
    UnknownGame,
    act,
    create_game,
    load,
    next_bot_seat,
)
from shared.store.port import EventStore

IdempotencyKey = Annotated[
    str | None,
    Parameter(
        header="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="Makes a retry safe: the same key and body return the first result.",
    ),
]
GameId = Annotated[str, Parameter(description="The game's id, as its creation returned it.")]


def _play_bots(store: EventStore, dispatcher: BotTurnDispatcher, game_id: str) -> None:
    """Starts the platform's play when a built-in bot is to move in the game."""
    if next_bot_seat(load(store, game_id)) is not None:
        dispatcher.dispatch(game_id)


def _created(store: EventStore, dispatcher: BotTurnDispatcher, outcome: Outcome) -> Response[Game]:
    """Returns the created (201) or, for a retried creation, the existing (200) game."""
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
    codec = get_game(recorded[0].kind).codec if recorded else None
    items = [EventItem.of(item, codec.decode(item)) for item in recorded if codec is not None]
    return EventPage(game_id=game_id, version=version, events=items)


def _acted(store: EventStore, dispatcher: BotTurnDispatcher, outcome: Outcome) -> ActionAccepted:
    """Returns the body of an applied action, after starting the bots' play if they are due."""
    _play_bots(store, dispatcher, outcome.game_id)
    return ActionAccepted.of(outcome)


class GamesController(Controller):
    """Games: create, read, list events, post actions."""

    path = "/v1/games"
    tags = ["games"]  # noqa: RUF012 - Litestar reads this class attribute as declared

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
        store: EventStore,
        dispatcher: BotTurnDispatcher,
        data: CreateGame,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Game]:
        """Creates and deals a game; starts the platform's play when a bot moves first."""
        now = datetime.now(UTC).isoformat()
        outcome = create_game(
            store,
            data.game,
            data.ruleset,
            data.table(),
            data.players,
            data.seed,
            idempotency_key,
            now,
        )
        return _created(store, dispatcher, outcome)

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="Read a game",
        sync_to_thread=True,
        responses=responses(404, 503),
    )
    def read(self, store: EventStore, game_id: GameId) -> Game:
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
        store: EventStore,
        game_id: GameId,
        after: Annotated[NonNegative, Parameter(description="Only events after this version")] = 0,
        limit: Annotated[
            int | None, Parameter(ge=1, le=10_000, description="At most this many")
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
        store: EventStore,
        dispatcher: BotTurnDispatcher,
        game_id: GameId,
        data: PostAction,
        idempotency_key: IdempotencyKey = None,
    ) -> ActionAccepted:
        """Applies a seat's action at `expected_version`; a retry with the same key replays."""
        outcome = act(
            store, game_id, data.seat, data.action, data.expected_version, idempotency_key
        )
        return _acted(store, dispatcher, outcome)


@get("/health", operation_id="health", summary="Liveness", tags=["service"], sync_to_thread=False)
def health() -> Health:
    """Returns `ok` while the service answers."""
    return Health()
