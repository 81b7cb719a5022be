"""REST v1 games: create, list, read, a seat's view, events, actions (with a wait for the next
turn)."""

from __future__ import annotations

from typing import Annotated, Any

import structlog
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, QueryParameter

from services.game.games.actions import take_action
from services.game.games.listing import (
    GameFilter,
    ListLimit,
    StatusFilter,
    recent_games,
)
from services.game.games.schemas import (
    ActionAccepted,
    CreateGame,
    EventPage,
    GamePage,
    PostAction,
)
from services.game.http.context import GameContext
from services.game.http.notes import readable_notes
from services.game.http.params import (
    GameId,
    IdempotencyKey,
    NextTurnWait,
    SeatNumber,
    ViewerSeat,
    client_key_of,
)
from services.game.http.pipeline.auth import (
    BEARER,
    BEARER_OPTIONAL,
    IDENTIFIED_BY_HANDLER,
    Access,
    Caller,
    check_seat,
    host_only,
)
from services.game.http.pipeline.limits import (
    BOT_BODY_SIZE,
    CHARGED_ON_ANSWER,
    Charge,
    charged_as,
    view_charge,
)
from services.game.http.pipeline.problems import check_game_filter, responses
from services.game.http.schemas import EventItem, Game, SeatView
from services.game.http.seals import check_unsealed
from services.ops.metrics import GameMetrics
from shared.app.games import abort_game
from shared.app.loading import (
    LoadedGame,
    Outcome,
    as_seen_by,
    load,
    load_logged,
    loaded_from,
)
from shared.app.sealing import states_of
from shared.app.starting import NewGame, bind_seats, play_bots, start_game
from shared.errors import GameNotFound, InvalidRequest, UnknownGame
from shared.ports.archive import EventArchive, game_log
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.views.port import TournamentViews
from shared.store.port import EventStore

log = structlog.get_logger(__name__)


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


def _create(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    access: Access,
    data: CreateGame,
    key: str | None,
    metrics: GameMetrics,
) -> Response[Game]:
    """Creates a game and starts the bots' play if due: 201, or 200 for a retried creation."""

    def noted(outcome: Outcome) -> None:
        if outcome.replayed:
            metrics.replays.labels("createGame").inc()
        else:
            metrics.games_created.labels(data.game).inc()
            log.info("game created", game_id=outcome.game_id, game=data.game)

    request = NewGame(
        game=data.game,
        ruleset=data.ruleset,
        seats=bind_seats(store, data.game, data.seats),
        players=data.players,
        seed=data.seed,
        clock=data.clock,
        idempotency_key=client_key_of(None, key),  # a host-only route
    )
    started = start_game(store, access.game_cap, dispatcher, request, noted)
    return Response(
        Game.of(started.game),
        status_code=200 if started.outcome.replayed else 201,
        headers={"Location": f"/v1/games/{started.outcome.game_id}"},
    )


def _check_seat(loaded: LoadedGame, seat: int) -> None:
    """Raises InvalidRequest (field `seat`) unless `seat` is a seat of the game."""
    count = len(loaded.created.seats)
    if not 0 <= seat < count:
        raise InvalidRequest("seat", f"seat must be 0 to {count - 1}, not {seat}")


def _action_charge(body: Any) -> Charge:
    """Returns how an action's answer is charged: a move when it applied the action."""
    return "move" if isinstance(body, ActionAccepted) and not body.replayed else "other"


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
    notes = readable_notes(caller, loaded, sealed=sealed)
    items = [
        EventItem.of(item, as_seen_by(loaded, event, seat, sealed=sealed, notes=notes))
        for item, event in zip(recorded, loaded.spec.codec.decode_all(recorded), strict=True)
    ]
    return EventPage(game_id=game_id, version=loaded.version, events=items)


class GamesController(Controller):
    """Games: create, list, read, read a seat's view, list events, post actions."""

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
        operation_id="listGames",
        summary="List games, newest first",
        description=(
            "Each game's id, game, status (`playing`, else its result's status), seats'"
            " labels, creation and end times and tournament: nothing secret (no seed, no"
            " ruleset, no card). Reads the views (PostgreSQL behind the projection, which may"
            " lag the event store by its delay; the embedded default folds the store itself)."
            " A table of a duplicate deal that another table still plays is left out until"
            " the deal's last table ends (`getGame` refuses it to anyone but its seats)."
            " Filters: `game`, `status`; `limit` 1 to 100 (default 20). 400 (`field` named):"
            " an unknown game or status, a limit out of range."
        ),
        sync_to_thread=True,
        responses=responses(400, 503),
    )
    def list_games(
        self,
        views: NamedDependency[TournamentViews],
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        game: GameFilter = None,
        status: StatusFilter = None,
        limit: ListLimit = 20,
    ) -> GamePage:
        """Returns up to `limit` games anyone may read, newest first, matching the filters."""
        check_game_filter(game)
        return GamePage(recent_games(views, store, archive, game, status, limit))

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
        security=BEARER_OPTIONAL,
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
        tournament = loaded.created.tournament
        state = states_of(store).state(store, archive, tournament) if tournament else None
        return Game.of(loaded, state)

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
        responses=responses(400, 401, 403, 404, 422, 429, 503),
        opt={CHARGED_ON_ANSWER: "reads"},
        after_request=charged_as(view_charge),
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
            " only to its seats' bots and the host (else 403, rule `deal_sealed`). A bot note"
            " (`NoteTaken`) reads with an empty `text` while the game runs, and after it but"
            " for the seat's bot (its token, any version) and the host."
        ),
        sync_to_thread=True,
        security=BEARER_OPTIONAL,
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
        "/{game_id:str}/abort",
        operation_id="abortGame",
        summary="Abort a game",
        description=(
            "A hosting operation: needs the admin key (in open mode, nothing); a bot token is"
            " 403. Ends a running game with no result: it appends `GameAborted` (reason"
            " `host`), after which the game's status is `aborted`, nothing is rated, its bound"
            " bots' slots are free, its bots hear `game_finished`, and every action is 409"
            " (rule `aborted`). 404: no such game. 409: the game is over already (rule"
            " `game_over`, or `aborted`). 422 (rule `tournament_game`): a tournament's game,"
            " which ends with its tournament (`cancelTournament` aborts them)."
        ),
        sync_to_thread=True,
        status_code=200,
        guards=[host_only],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
    )
    def abort(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        game_id: GameId,
    ) -> Game:
        """Aborts a running game (reason `host`); returns it, over with status `aborted`. An
        evaluation's game then has its unit recorded (void) and the next started."""
        try:
            abort_game(store, game_id, "host")
        except GameNotFound:
            raise UnknownGame(game_id) from None
        log.info("game aborted", game_id=game_id)
        play_bots(store, dispatcher, game_id)
        return Game.of(load(store, game_id))

    @post(
        "/{game_id:str}/actions",
        operation_id="postAction",
        summary="Take an action",
        description=(
            "A seat bound to a bot is played with that bot's token only; any other seat with"
            " the admin key (in open mode, nothing). With `wait`, the answer also carries the"
            " seat's next turn (`turn`, the body of `getSeatView`) once the game waits for the"
            " seat again or is over, or after `wait` seconds as it stands (its"
            " `legal_actions` empty): a bot plays with one request per move. In a game with"
            ' decisions, `{"type": "Resign"}` resigns the seat (on its turn or not; never'
            " listed among its legal actions): the platform plays its default actions from then"
            " on and it places last, rated like any loss; a resignation that leaves one seat"
            " playing ends the game. 422 with `rule`: `resigned` (the seat resigned already),"
            " `forfeited`, `game_over`. 409 (rule `aborted`): the game was aborted."
        ),
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 429, 503),
        opt={IDENTIFIED_BY_HANDLER: True, CHARGED_ON_ANSWER: "moves"},
        after_request=charged_as(_action_charge),
        request_max_body_size=BOT_BODY_SIZE,
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
        """Applies a seat's action at `expected_version`; a retry with the same key replays."""
        return await take_action(request, context, game_id, data, idempotency_key, wait)
