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
    SeatView,
)
from shared.handlers import (
    BotTurnDispatcher,
    InvalidRequest,
    LoadedGame,
    act,
    as_seen_by,
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
SeatNumber = Annotated[int, QueryParameter(ge=0, description="A 0-based seat of the game")]
ViewerSeat = Annotated[
    int | None,
    QueryParameter(
        ge=0, description="The seat whose eyes to see a running game with; none: a spectator"
    ),
]


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


def _check_seat(loaded: LoadedGame, seat: int) -> None:
    """Raises InvalidRequest (field `seat`) unless `seat` is a seat of the game."""
    count = len(loaded.created.seats)
    if not 0 <= seat < count:
        raise InvalidRequest("seat", f"seat must be 0 to {count - 1}, not {seat}")


def _seat_view(store: EventStore, game_id: str, seat: int) -> SeatView:
    """Returns what `seat` may know of the game; raises UnknownGame or InvalidRequest."""
    loaded = load(store, game_id)
    _check_seat(loaded, seat)
    return SeatView.of(loaded, seat)


def _events(
    store: EventStore, game_id: str, after: int, limit: int | None, seat: int | None
) -> EventPage:
    """Returns the events after version `after`, as `seat` may see them while the game runs."""
    recorded = store.read(game_id, after, limit)
    loaded = load(store, game_id)
    if seat is not None:
        _check_seat(loaded, seat)
    items = [
        EventItem.of(item, as_seen_by(loaded, event, seat))
        for item, event in zip(recorded, loaded.spec.codec.decode_all(recorded), strict=True)
    ]
    return EventPage(game_id=game_id, version=loaded.version, events=items)


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
    """Games: create, read, read a seat's view, list events, post actions."""

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
        "/{game_id:str}/view",
        operation_id="getSeatView",
        summary="Read a seat's view",
        description=(
            "What one seat may know of the game (its own cards, every public card, counts of"
            " the rest), its legal actions (empty unless the game waits for that seat) and the"
            " version to post them at. Not yet authenticated: any client may read any seat;"
            " the authentication that restricts a seat to its owner comes with issue 6."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 422, 503),
    )
    def seat_view(
        self, store: NamedDependency[EventStore], game_id: GameId, seat: SeatNumber
    ) -> SeatView:
        """Returns the view and the legal actions of `seat`."""
        return _seat_view(store, game_id, seat)

    @get(
        "/{game_id:str}/events",
        operation_id="listGameEvents",
        summary="List a game's events",
        description=(
            "While the game runs, private data is hidden as `seat` may see it (none: a"
            " spectator): cards nobody or only another seat may know read `??`. Once the game"
            " is over, the whole log is public and `seat` changes nothing."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 422, 503),
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
        seat: ViewerSeat = None,
    ) -> EventPage:
        """Returns the events after version `after` in version order, redacted for `seat`."""
        return _events(store, game_id, after, limit, seat)

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
