"""REST v1 ladders: the host opens a permanent queue for a game, bots join and leave it with
their tokens, and the platform pairs the waiting bots continuously into rated games."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.handlers.base import BaseRouteHandler
from litestar.params import JSONBody, PathParameter

from services.game.http.pipeline.auth import (
    BEARER,
    Caller,
    Forbidden,
    caller_of,
    calling_bot,
    host_only,
)
from services.game.http.pipeline.limits import BOT_BODY_SIZE
from services.game.http.pipeline.problems import Problem, problem, responses
from services.game.ladders.schemas import JoinLadder, LadderView, OpenLadder, view
from shared.app import ladder as ladders
from shared.app.ladder import LadderRefused, UnknownLadder
from shared.app.registry import find_bot
from shared.catalog import get_game
from shared.errors import InvalidRequest
from shared.model.ladder_events import Ladder
from shared.model.registry import RegisteredBot
from shared.ports.views.port import TournamentViews
from shared.store.port import EventStore

LadderId = Annotated[str, PathParameter(description="The ladder's id.")]

_REFUSALS = {"ladder_closed": "ladder-closed", "account_suspended": "account-suspended"}


def _now() -> datetime:
    return datetime.now(UTC)


def _unknown(_: Request[Any, Any, Any], error: UnknownLadder) -> Response[Problem]:
    return problem(404, "unknown-ladder", str(error), field="ladder_id")


def _refused(_: Request[Any, Any, Any], error: LadderRefused) -> Response[Problem]:
    slug = _REFUSALS[error.rule]
    return problem(error.status, slug, error.message, field=error.field, rule=error.rule)


def _bot_or_host(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Route guard of a join: a bot's token or the admin key (an account key is 403, no
    credentials 401), checked before the body is read."""
    caller = caller_of(connection)
    if caller.bot is None and not caller.host:
        calling_bot(caller, "a bot joins a ladder itself")


def _joiner(store: EventStore, caller: Caller, data: JoinLadder | None) -> RegisteredBot:
    """Returns the bot a join puts in the queue: the calling bot's own, or the one the host
    names. Raises Forbidden, Unauthorized, InvalidRequest (`bot`) for one not registered."""
    if caller.bot is not None:
        if data is not None and (data.bot, data.version) != (caller.bot.name, caller.bot.version):
            raise Forbidden(f"{caller.bot.key} joins a ladder itself only")
        return caller.bot
    if not caller.host:
        calling_bot(caller, "a bot joins a ladder itself")
    if data is None:
        raise InvalidRequest("bot", "name the registered bot the host puts in the queue")
    found = find_bot(store, data.bot, data.version)
    if found is None:
        raise InvalidRequest("bot", f"no bot {data.bot}@{data.version} is registered")
    return found


def _shown(views: TournamentViews, ladder: Ladder) -> LadderView:
    """Returns `ladder` with its ranking (none for a game that is never rated)."""
    board = views.leaderboard(ladder.game, 1000) if get_game(ladder.game).has_decisions else []
    return view(ladder, board)


class LaddersController(Controller):
    """Ladders: permanent queues of bots, paired continuously into rated games."""

    path = "/v1/ladders"
    tags = ("ladders",)
    exception_handlers = {UnknownLadder: _unknown, LadderRefused: _refused}

    @post(
        operation_id="openLadder",
        summary="Open a ladder for a game (the host)",
        description=(
            "Opens a permanent queue for `game` (with its `ruleset` and `table_size`): bots"
            " join it with their tokens (`joinLadder`) and the platform pairs those waiting"
            " every CARDARENA_LADDER_PAIR_SECONDS into rated games, opponents close in rating"
            " (a window that widens as a bot waits), never two bots of one account, no rematch"
            " within CARDARENA_LADDER_COOLDOWN_SECONDS, at most CARDARENA_LADDER_MAX_CONCURRENT"
            " games at once and CARDARENA_LADDER_MAX_DAILY a day per bot, and, with ten or more"
            " waiting, no opponent taking more than a quarter of a bot's last games."
            " 422 names the field: an unknown `game` (or one without decisions, never rated),"
            " a `table_size` the game does not seat,"
            " a `ruleset` field. A hosting operation: needs the admin key."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[host_only],
        security=BEARER,
        responses=responses(400, 401, 403, 422, 503),
    )
    def open(
        self,
        store: NamedDependency[EventStore],
        views: NamedDependency[TournamentViews],
        data: JSONBody[OpenLadder],
    ) -> Response[LadderView]:
        ladder = ladders.open_ladder(store, data.game, data.ruleset, data.table_size, _now())
        headers = {"Location": f"/v1/ladders/{ladder.ladder_id}"}
        return Response(_shown(views, ladder), status_code=201, headers=headers)

    @get(
        operation_id="listLadders",
        summary="The ladders the host opened",
        description="Every ladder, oldest first, closed ones too, each with its queue and games.",
        sync_to_thread=True,
        responses=responses(400, 503),
    )
    def list_all(
        self, store: NamedDependency[EventStore], views: NamedDependency[TournamentViews]
    ) -> list[LadderView]:
        return [_shown(views, ladder) for ladder in ladders.list_ladders(store)]

    @get(
        "/{ladder_id:str}",
        operation_id="getLadder",
        summary="A ladder: its queue, live games, last games and ranking",
        description=(
            "The bots waiting, the games in progress, the last 20 games and the ranking of"
            " the bots that played it (the leaderboard's OpenSkill ordinal; the views may lag)."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        views: NamedDependency[TournamentViews],
        ladder_id: LadderId,
    ) -> LadderView:
        return _shown(views, ladders.read_ladder(store, ladder_id))

    @delete(
        "/{ladder_id:str}",
        operation_id="closeLadder",
        summary="Close a ladder (the host)",
        description=(
            "Nothing more is paired; running games play on and are rated. Closing again"
            " answers the ladder unchanged. A hosting operation: needs the admin key."
        ),
        sync_to_thread=True,
        status_code=200,
        guards=[host_only],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 503),
    )
    def close(
        self,
        store: NamedDependency[EventStore],
        views: NamedDependency[TournamentViews],
        ladder_id: LadderId,
    ) -> LadderView:
        return _shown(views, ladders.close_ladder(store, ladder_id, _now()))

    @post(
        "/{ladder_id:str}/queue",
        operation_id="joinLadder",
        summary="Join a ladder's queue (the bot's token)",
        description=(
            "The calling bot waits in the queue until the pairing seats it; after each game it"
            " waits again, until it leaves (`leaveLadder`). Its games start as any game does"
            " (a `game_started` event on `/v1/bots/me/events`, its turns on"
            " `/v1/bots/me/turns`). Joining again answers the ladder unchanged. 409"
            " `ladder-closed`: the host closed it; 403 `account-suspended`: the bot's account"
            " is suspended; 422 `bot`: the bot plays another game. The admin key puts the"
            " registered bot its body names in the queue (the host's built-in bots: the"
            " opponents of a new version's first CARDARENA_LADDER_PROVISIONAL_GAMES games);"
            " a bot's token with a body naming another bot is 403."
        ),
        sync_to_thread=True,
        status_code=200,
        guards=[_bot_or_host],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
        request_max_body_size=BOT_BODY_SIZE,
    )
    def join(
        self,
        store: NamedDependency[EventStore],
        views: NamedDependency[TournamentViews],
        caller: NamedDependency[Caller],
        ladder_id: LadderId,
        data: JSONBody[JoinLadder | None] = None,
    ) -> LadderView:
        return _shown(views, ladders.join(store, ladder_id, _joiner(store, caller, data), _now()))

    @delete(
        "/{ladder_id:str}/queue",
        operation_id="leaveLadder",
        summary="Leave a ladder's queue (the bot's token)",
        description=(
            "The calling bot is paired no more; a game it plays goes on and is rated."
            " Leaving when not queued answers the ladder unchanged."
        ),
        sync_to_thread=True,
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 503),
    )
    def leave(
        self,
        store: NamedDependency[EventStore],
        views: NamedDependency[TournamentViews],
        caller: NamedDependency[Caller],
        ladder_id: LadderId,
    ) -> LadderView:
        bot = calling_bot(caller, "a bot leaves a ladder itself")
        return _shown(views, ladders.leave(store, ladder_id, bot, _now()))
