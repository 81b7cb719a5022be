"""Taking an action over HTTP, with the optional wait for the seat's next turn: the action runs
in the app's thread pool, the wait on the streams' waiter places (`services.game.http.waiters`)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import anyio.to_thread
import msgspec
import structlog
from litestar import Request
from litestar.connection import ASGIConnection

from services.game.games.schemas import ActionAccepted, PostAction
from services.game.http.context import GameContext
from services.game.http.params import client_key_of
from services.game.http.pipeline.auth import Caller, caller_of, check_seat
from services.game.http.pipeline.credentials import CredentialEnded, Hold
from services.game.http.schemas import SeatView
from services.game.http.waiters import held, streams_of
from services.ops.metrics import GameMetrics
from shared.app.games import act
from shared.app.loading import LoadedGame, current, load
from shared.app.starting import play_bots
from shared.app.waiting import due, until_due
from shared.errors import GameNotFound, UnknownGame
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore

log = structlog.get_logger(__name__)


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
        note=data.note,
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


async def take_action(
    request: Request[Any, Any, Any],
    context: GameContext,
    game_id: str,
    data: PostAction,
    idempotency_key: str | None,
    wait: int | None,
) -> ActionAccepted:
    """Applies a seat's action and, with `wait`, answers its next turn too (see `postAction`).

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
