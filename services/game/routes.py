"""REST v1 controllers: each turns a request into a use case call and a response."""

from __future__ import annotations

import contextlib
import functools
from datetime import UTC, datetime
from typing import Annotated, Any

import anyio.to_thread
import msgspec
import structlog
from litestar import Controller, Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, QueryParameter

from services.game.auth import (
    BEARER,
    IDENTIFIED_BY_HANDLER,
    Access,
    Caller,
    caller_of,
    check_seat,
    host_only,
)
from services.game.context import GameContext
from services.game.credentials import CredentialEnded, Hold
from services.game.params import (
    GameId,
    IdempotencyKey,
    NextTurnWait,
    SeatNumber,
    ViewerSeat,
    client_key_of,
)
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
from services.game.seals import check_unsealed
from services.game.streams import due, held, streams_of, until_due
from services.ops.metrics import GameMetrics
from shared.app.admission import admit
from shared.app.bot_turns import platform_due
from shared.app.games import act, create_game
from shared.app.loading import LoadedGame, as_seen_by, current, load, load_logged, loaded_from
from shared.app.registry import registered_bots
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, UnknownGame
from shared.messages.common import Seat
from shared.model.idempotency import game_id_for
from shared.ports import deal_secret
from shared.ports.archive import EventArchive, game_log
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore

log = structlog.get_logger(__name__)


def play_bots(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    game_id: str,
    loaded: LoadedGame | None = None,
) -> None:
    """Starts the platform's play when it has a part in the game's next move: a bot to play,
    a webhook to call, a clock to watch; or a tournament game is over (to record it).

    `loaded` is the game as it stands, when the caller has it (else it is loaded)."""
    loaded = loaded if loaded is not None else load(store, game_id)
    over_in_tournament = bool(loaded.created.tournament) and loaded.spec.is_over(loaded.state)
    if platform_due(loaded) or over_in_tournament:
        dispatcher.dispatch(game_id)


def _load(store: EventStore, game_id: str, archive: EventArchive | None = None) -> LoadedGame:
    """Returns the game; raises UnknownGame, also for a stream that is not a game's.

    With an `archive`, a game whose stream left the store is folded from the archive.
    """
    if archive is not None:
        return load_logged(store, archive, game_id)
    try:
        return load(store, game_id)
    except GameNotFound:
        raise UnknownGame(game_id) from None


def _table(store: EventStore, data: CreateGame) -> list[Seat] | None:
    """Returns the requested seats, bound to the registered bots they name."""
    if not data.binds():
        return data.table()
    try:
        get_game(data.game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {data.game!r}") from None
    return data.table(registered_bots(store))


def _create(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    access: Access,
    data: CreateGame,
    key: str | None,
    metrics: GameMetrics,
) -> Response[Game]:
    """Creates a game and starts the bots' play if due: 201, or 200 for a retried creation.

    Each bound bot must be below its cap of running games (not checked for a retry).
    """
    table = _table(store, data)
    bound = [(f"seats[{i}]", s.bound_bot) for i, s in enumerate(table or []) if s.bound_bot]
    scoped = client_key_of(None, key)  # a host-only route
    retry = scoped is not None and store.version(game_id_for(scoped)) > 0
    admission = admit(access.slots, store, [] if retry else bound, access.max_games_per_bot)
    try:
        outcome = create_game(
            store,
            data.game,
            ruleset=data.ruleset,
            seats=table,
            players=data.players,
            seed=deal_secret.deal_key(store, "game", data.seed),
            idempotency_key=scoped,
            created_at=datetime.now(UTC).isoformat(),
            clock=data.clock,
        )
    except BaseException:
        admission.cancel()
        raise
    admission.confirm(outcome.game_id)
    if outcome.replayed:
        metrics.replays.labels("createGame").inc()
    else:
        metrics.games_created.labels(data.game).inc()
        log.info("game created", game_id=outcome.game_id, game=data.game)
    play_bots(store, dispatcher, outcome.game_id)
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


def _seat_view(
    store: EventStore, archive: EventArchive, game_id: str, seat: int, caller: Caller
) -> SeatView:
    """Returns what `seat` may know of the game; raises UnknownGame, InvalidRequest,
    Unauthorized or Forbidden.
    """
    loaded = _load(store, game_id, archive)
    _check_seat(loaded, seat)
    check_seat(caller, loaded.created.seats, seat)
    return SeatView.of(loaded, seat)


def _events(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    after: int,
    limit: int | None,
    seat: int | None,
    caller: Caller,
) -> EventPage:
    """Returns the events after version `after`, as `seat` may see them while the game runs."""
    log = game_log(store, archive, game_id)
    loaded = loaded_from(game_id, log)
    recorded = [item for item in log if item.version > after][:limit]
    if seat is not None:
        _check_seat(loaded, seat)
        check_seat(caller, loaded.created.seats, seat)
    sealed = check_unsealed(store, archive, loaded, caller)
    items = [
        EventItem.of(item, as_seen_by(loaded, event, seat, sealed=sealed))
        for item, event in zip(recorded, loaded.spec.codec.decode_all(recorded), strict=True)
    ]
    return EventPage(game_id=game_id, version=loaded.version, events=items)


def _act(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    game_id: str,
    data: PostAction,
    key: str | None,
    caller: Caller,
    metrics: GameMetrics,
) -> tuple[ActionAccepted, LoadedGame]:
    """Applies an action and starts the bots' play if one of them is to move next; returns
    the answer and the game after the action."""
    try:
        loaded = current(store, game_id, data.expected_version)
    except GameNotFound:
        raise UnknownGame(game_id) from None
    if data.seat < len(loaded.created.seats):
        check_seat(caller, loaded.created.seats, data.seat, act=True)
    outcome = act(
        store,
        game_id,
        seat=data.seat,
        action=data.action,
        expected_version=data.expected_version,
        idempotency_key=client_key_of(caller, key),
        loaded=loaded,
    )
    if outcome.replayed:
        metrics.replays.labels("postAction").inc()
    else:
        metrics.moves.labels(loaded.created.game).inc()
    log.info("action accepted", seat=data.seat, version=outcome.version, replayed=outcome.replayed)
    after = outcome.loaded if outcome.loaded is not None else load(store, game_id)
    play_bots(store, dispatcher, game_id, after)
    return ActionAccepted.of(outcome), after


def _act_now(
    connection: ASGIConnection[Any, Any, Any, Any],
    context: GameContext,
    game_id: str,
    data: PostAction,
    key: str | None,
    wait: int | None,
) -> tuple[ActionAccepted, LoadedGame | None]:
    """Identifies the caller (the route is `IDENTIFIED_BY_HANDLER`), then runs `_act`; with a
    `wait`, answers the seat's turn too when it needs no waiting (the game waits for the
    seat or is over, or `wait` is 0). Returns the answer and, when the turn is still to wait
    for, the game to wait on."""
    caller = caller_of(connection)
    store, dispatcher, metrics = context.store, context.dispatcher, context.metrics
    accepted, after = _act(store, dispatcher, game_id, data, key, caller, metrics)
    if wait is None:
        return accepted, None
    if wait == 0 or due(after, data.seat):
        return msgspec.structs.replace(accepted, turn=SeatView.of(after, data.seat)), None
    return accepted, after


def _act_and_wait(
    connection: ASGIConnection[Any, Any, Any, Any],
    context: GameContext,
    game_id: str,
    data: PostAction,
    key: str | None,
    wait: int,
    chunk: float,
) -> ActionAccepted:
    """Runs `_act_now`, then waits up to `wait` s for the seat's next turn (blocks)."""
    accepted, pending = _act_now(connection, context, game_id, data, key, wait)
    if pending is None:
        return accepted
    with held(connection, context.store) as hold:
        return _next_turn(context.store, accepted, pending, data.seat, wait, chunk, hold)


def _next_turn(
    store: EventStore,
    accepted: ActionAccepted,
    loaded: LoadedGame,
    seat: int,
    wait: int,
    chunk: float,
    hold: Hold,
) -> ActionAccepted:
    """Returns `accepted` with `seat`'s turn, waited for up to `wait` s (blocks); without it
    once `hold`'s token was rotated or revoked (the wait stops within a `chunk`)."""
    turn = SeatView.of(until_due(store, loaded, seat, wait, chunk, lambda: hold.ended), seat)
    if not hold.live():
        return accepted
    return msgspec.structs.replace(accepted, turn=turn)


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
        description=(
            "A hosting operation: needs the admin key (in open mode, nothing). A seat may name"
            ' a registered external or webhook bot (`{"kind": "external", "bot":'
            ' "alice", "version": "1"}`): only that bot\'s token plays it, and a bot'
            " already in as many running games as the cap allows is refused (422, `field`"
            " naming the seat). 422 also, with `field`: an unknown `game`; a player count the"
            " game cannot seat (`players`, or `seats`: Shithead 2-10, Hospodský autobus"
            " and Beggar-my-neighbour 2-4); `players` that disagrees with `seats`; an unknown"
            " built-in bot"
            " (`seats[i].bot`); an external or webhook seat in a game without decisions"
            " (`seats[i].kind`); a webhook seat naming no registered bot; a ruleset the game"
            " refuses (`ruleset.<field>`)."
        ),
        guards=[host_only],
        security=BEARER,
        responses={
            200: ResponseSpec(Game, description="A retried creation: the game first created"),
            **responses(400, 401, 403, 422, 503),
        },
    )
    def create(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        access: NamedDependency[Access],
        game_metrics: NamedDependency[GameMetrics],
        data: JSONBody[CreateGame],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Game]:
        """Creates and deals a game; starts the platform's play when a bot moves first."""
        return _create(store, dispatcher, access, data, idempotency_key, game_metrics)

    @get(
        "/{game_id:str}",
        operation_id="getGame",
        summary="Read a game",
        description=(
            "A table of a duplicate deal that another table still plays is sealed: only its"
            " seats' bots (and the host) read it, as a running game (else 403, rule"
            " `deal_sealed`)."
        ),
        sync_to_thread=True,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        caller: NamedDependency[Caller],
        game_id: GameId,
    ) -> Game:
        """Returns the game's public state."""
        loaded = _load(store, game_id, archive)
        check_unsealed(store, archive, loaded, caller)
        return Game.of(loaded)

    @get(
        "/{game_id:str}/view",
        operation_id="getSeatView",
        summary="Read a seat's view",
        description=(
            "What one seat may know of the game (its own cards, every public card, counts of"
            " the rest), its legal actions (empty unless the game waits for that seat) and the"
            " version to post them at. A seat bound to a bot is read with that bot's token"
            " (or the admin key); any other seat with the admin key (in open mode, nothing)."
        ),
        sync_to_thread=True,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def seat_view(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        caller: NamedDependency[Caller],
        game_id: GameId,
        seat: SeatNumber,
    ) -> SeatView:
        """Returns the view and the legal actions of `seat`."""
        return _seat_view(store, archive, game_id, seat, caller)

    @get(
        "/{game_id:str}/events",
        operation_id="listGameEvents",
        summary="List a game's events",
        description=(
            "While the game runs, private data is hidden as `seat` may see it (none: a"
            " spectator): cards nobody or only another seat may know read `??`. Once the game"
            " is over, the whole log is public and `seat` changes nothing. Reading as a seat"
            " needs the same credentials as reading its view; as a spectator, none. A table"
            " of a duplicate deal that another table still plays is served as running, and"
            " only to its seats' bots and the host (else 403, rule `deal_sealed`)."
        ),
        sync_to_thread=True,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def events(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        caller: NamedDependency[Caller],
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
        return _events(store, archive, game_id, after, limit, seat, caller)

    @post(
        "/{game_id:str}/actions",
        operation_id="postAction",
        summary="Take an action",
        description=(
            "A seat bound to a bot is played with that bot's token only; any other seat with"
            " the admin key (in open mode, nothing). With `wait`, the answer also carries the"
            " seat's next turn (`turn`, the body of `getSeatView`) once the game waits for the"
            " seat again or is over, or after `wait` seconds as it stands (its"
            " `legal_actions` empty): a bot plays with one request per move."
        ),
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
        opt={IDENTIFIED_BY_HANDLER: True},
    )
    async def post_action(
        self,
        request: Request[Any, Any, Any],
        context: NamedDependency[GameContext],
        game_id: GameId,
        data: JSONBody[PostAction],
        idempotency_key: IdempotencyKey = None,
        wait: NextTurnWait = None,
    ) -> ActionAccepted:
        """Applies a seat's action at `expected_version`; a retry with the same key replays.

        A wait for the next turn holds one of the streams' waiter places, as a long poll
        does; an action never queues for one, so that waits never hold up actions. With a
        place free, the action and its wait run in one worker thread on it; else the
        action runs in the app's pool and the wait then queues for a place."""
        args = (request, context, game_id, data, idempotency_key, wait)
        streams = streams_of(request)
        chunk = streams.config.keepalive_s
        if wait and (borrower := streams.reserve()) is not None:
            return await streams.run_reserved(borrower, _act_and_wait, *args, chunk)
        accepted, pending = await anyio.to_thread.run_sync(functools.partial(_act_now, *args))
        if pending is None or wait is None:
            return accepted
        with held(request, context.store) as hold:
            turn = (context.store, accepted, pending, data.seat, wait, chunk, hold)
            with contextlib.suppress(CredentialEnded):  # the token ended: no turn
                return await hold.wait(lambda: streams.run(_next_turn, *turn))
        return accepted


@get("/health", operation_id="health", summary="Liveness", tags=["service"], sync_to_thread=False)
def health() -> Health:
    """Returns `ok` while the service answers."""
    return Health()
