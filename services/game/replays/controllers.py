"""Replays and what-if forks of a game, from its event log (the store's, else the archive's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import Body, QueryParameter

from services.game.http.notes import readable_notes
from services.game.http.params import GameId, IdempotencyKey, client_key_of
from services.game.http.pipeline.auth import (
    BEARER,
    BEARER_OPTIONAL,
    Access,
    Caller,
    check_seat,
    host_only,
)
from services.game.http.pipeline.problems import Problem, problem, responses
from services.game.http.schemas import EventItem, Game
from services.game.http.seals import DealSealed, check_created, sealed
from services.game.replays.schemas import ForkGame, Replay
from shared.app.forks import ForkOfRunningGame
from shared.app.loading import LoadedGame, as_seen_by, loaded_from
from shared.app.starting import NewFork, bind_seats, start_game
from shared.errors import InvalidRequest
from shared.games.base import AnyGame
from shared.messages.common import Event, GameCreated
from shared.messages.envelope import RecordedEvent
from shared.ports.archive import EventArchive, decoded_log, game_log
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore


class GameRunning(Exception):
    """The request needs a finished game: a running game's log is not public."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _refused(
    _: Request[Any, Any, Any], error: GameRunning | ForkOfRunningGame
) -> Response[Problem]:
    return problem(403, "game-running", error.message, rule="game_running")


ShownVersion = Annotated[
    int | None,
    QueryParameter(
        description="Show the game after this event (1 to the last version); none: the last"
    ),
]
ReplaySeat = Annotated[
    int | None,
    QueryParameter(
        ge=0,
        description="Replay as this seat saw the game; none: everything (a finished game only)",
        schema_extra={"minimum": 0},  # Litestar 2 leaves an optional parameter's 0 bound out
    ),
]
ForkVersion = Annotated[
    int,
    QueryParameter(
        description="Start the fork after this event of the original (2 or later), one that"
        " ends a move"
    ),
]


def _states(spec: AnyGame, events: list[Event], version: int) -> tuple[Any, Any]:
    """Returns the state after the first `version` events (None before the deal) and after
    them all, in one fold (GameCreated and clock events change no state)."""
    state: Any = None
    shown: Any = None
    for index, event in enumerate(events, start=1):
        state = spec.step(state, event)
        if index == version:
            shown = state
    return shown, state


def replay_of(
    game_id: str,
    log: list[RecordedEvent],
    version: int,
    seat: int | None,
    caller: Caller,
    seal: Callable[[GameCreated], bool] | None = None,
) -> Replay:
    """Returns the replay of the game whose whole log is `log` after event `version`, as
    `seat` (None: everyone, once the game is over) may see it; raises UnknownGame,
    InvalidRequest, GameRunning, Unauthorized, Forbidden or DealSealed. A game that `seal`
    says is sealed is replayed as a running one."""
    spec, created, events = decoded_log(game_id, log)
    sealed = seal is not None and seal(created)
    last = log[-1].version
    if not 1 <= version <= last:
        raise InvalidRequest("version", f"version must be 1 to {last}, not {version}")
    if seat is not None and not 0 <= seat < len(created.seats):
        raise InvalidRequest("seat", f"seat must be 0 to {len(created.seats) - 1}, not {seat}")
    state, final = _states(spec, events, version)
    finished = spec.is_over(final) and not sealed
    over = finished and state is not None and spec.is_over(state)
    if not finished:
        if seat is None:
            raise GameRunning(
                f"game {game_id} is still running: its full replay is public once it is over;"
                " until then replay it as a seat you hold (?seat=N)"
            )
        check_seat(caller, created.seats, seat)
    loaded = LoadedGame(game_id, spec, created, final, last)
    notes = readable_notes(caller, loaded, sealed=sealed)
    return Replay(
        game_id=game_id,
        game=spec.name,
        version=version,
        last_version=last,
        over=over,
        finished=finished,
        seat=seat,
        seats=created.seats,
        ruleset=created.ruleset,
        state=msgspec.to_builtins(state) if state is not None and seat is None else None,
        view=msgspec.to_builtins(spec.view(state, seat))
        if state is not None and seat is not None
        else None,
        events=[
            EventItem.of(item, as_seen_by(loaded, event, seat, sealed=sealed, notes=notes))
            for item, event in zip(log[:version], events[:version], strict=True)
        ],
        result=spec.result(state) if over else None,
    )


def _replay(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    version: int | None,
    seat: int | None,
    caller: Caller,
) -> Replay:
    """Returns the replay the caller asked for (see `replay_of`)."""
    log = game_log(store, archive, game_id)
    shown = (log[-1].version if log else 0) if version is None else version
    return replay_of(
        game_id,
        log,
        shown,
        seat,
        caller,
        lambda created: check_created(store, archive, game_id, created, caller),
    )


def _fork(
    store: EventStore,
    archive: EventArchive,
    dispatcher: BotTurnDispatcher,
    access: Access,
    game_id: str,
    version: int,
    data: ForkGame | None,
    key: str | None,
) -> Response[Game]:
    """Forks a finished game after event `version` and starts the platform's play: 201, or
    200 for a retried fork."""
    log = game_log(store, archive, game_id)
    original = loaded_from(game_id, log)
    if sealed(store, archive, original):
        raise DealSealed(game_id, original.created.tournament)
    data = data or ForkGame()
    request = NewFork(
        original=original,
        log=log,
        version=version,
        seats=bind_seats(store, original.spec.name, data.seats),
        seed=data.seed,
        idempotency_key=client_key_of(None, key),  # a host-only route
    )
    started = start_game(store, access.game_cap, dispatcher, request)
    return Response(
        Game.of(started.game),
        status_code=200 if started.outcome.replayed else 201,
        headers={"Location": f"/v1/games/{started.outcome.game_id}"},
    )


class ReplaysController(Controller):
    """Replays of a game at any version, and what-if forks from one."""

    path = "/v1/games"
    tags = ("replays",)
    exception_handlers = {GameRunning: _refused, ForkOfRunningGame: _refused}

    @get(
        "/{game_id:str}/replay",
        operation_id="replayGame",
        summary="Replay a game at a version",
        description=(
            "The game after event `version` (default: the last) with its events 1 to"
            " `version`. A finished game is public: without `seat` the answer holds the whole"
            " engine `state`, with `seat` that seat's `view`; the events are whole (but bot"
            " notes, below). A running"
            " game is replayed only as a seat, with the credentials of its view (a full replay"
            " is 403, rule `game_running`): its `view` and its redacted events. At version 1"
            " (GameCreated only) `state` and `view` are null. A game whose stream was trimmed"
            " from the event store is replayed from the archive. A table of a duplicate deal that"
            " another table still plays is replayed as a running game, and only by its seats'"
            " bots and the host (else 403, rule `deal_sealed`). Bot notes (`NoteTaken`) are"
            " whole only for their seat's bot and the host once the game is over (else an"
            " empty `text`)."
        ),
        sync_to_thread=True,
        security=BEARER_OPTIONAL,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def replay(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        caller: NamedDependency[Caller],
        game_id: GameId,
        version: ShownVersion = None,
        seat: ReplaySeat = None,
    ) -> Replay:
        """Returns the game after event `version`, as the caller may see it."""
        return _replay(store, archive, game_id, version, seat, caller)

    @post(
        "/{game_id:str}/fork",
        operation_id="forkGame",
        summary="Fork a finished game at a version",
        description=(
            "A hosting operation. Creates a new game from a finished one as it was after event"
            " `version`: a new GameCreated (the same game and ruleset, the given seats, default"
            " the original's; `forked_from`, `fork_version`) then copies of the original's"
            " events 2 to `version`; the platform plays on from there. `version` must leave a"
            " game that is dealt and not over, between two moves (not after a play and before its"
            " draw); else 422, `field` `version`, naming the nearest versions that end a move."
            " A running game"
            " cannot be forked (403, rule `game_running`), nor a table of a duplicate deal that"
            " another table still plays (403, rule `deal_sealed`). The fork's hidden cards are"
            " public in its original's log."
        ),
        sync_to_thread=True,
        guards=[host_only],
        security=BEARER,
        response_headers=[
            ResponseHeader(name="Location", description="The fork's URL", documentation_only=True)
        ],
        responses={
            200: ResponseSpec(Game, description="A retried fork: the game first created"),
            **responses(400, 401, 403, 404, 422, 503),
        },
    )
    def fork(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        dispatcher: NamedDependency[BotTurnDispatcher],
        access: NamedDependency[Access],
        game_id: GameId,
        version: ForkVersion,
        data: Annotated[ForkGame | None, Body()] = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Game]:
        """Creates the fork and starts the platform's play when a bot moves first."""
        return _fork(store, archive, dispatcher, access, game_id, version, data, idempotency_key)
