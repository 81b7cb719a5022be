"""Streams over HTTP: a game's server-sent events and a seat's long poll (`GameStreamController`),
a bot's events, turns and open challenges (`BotStreamsController`); each route's contract is its
OpenAPI description.

Every blocking store call (waits included) runs in a worker thread under the streams' own
capacity limiter (`services.game.http.waiters`), and no single wait outlasts
`StreamConfig.keepalive_s`: a quiet stream sends a keep-alive comment that often, and notices
then at the latest that its client has gone. A stream closes after `StreamConfig.lifetime_s`;
clients reconnect (with `Last-Event-ID`). A bot's games and challenges are found with the
app's bot index (`shared.ports.bot_index.BotIndex`: over the Redis store, the projection's
views at its checkpoint and the feed after it, `services.projection.bot_index`).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from litestar import Controller, Request, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.response import ServerSentEvent

from services.game.http.openapi.operations import SSE_OPT
from services.game.http.params import GameId, SeatNumber, TournamentId, ViewerSeat, Wait
from services.game.http.pipeline.auth import BEARER, BEARER_OPTIONAL, Access, Caller, calling_bot
from services.game.http.pipeline.credentials import checked
from services.game.http.pipeline.limits import CHARGED_ON_ANSWER, Charge, charged_as, view_charge
from services.game.http.pipeline.problems import responses
from services.game.http.schemas import SeatView
from services.game.http.waiters import Ticket, streams_of
from services.game.streams.bot_stream import BotStream
from services.game.streams.game_stream import GameStream, admit_spectator
from services.game.streams.params import (
    BOT_STREAM_PROBLEMS,
    GAME_STATUSES,
    STREAM_PROBLEMS,
    GameStatus,
    LastMessage,
    LastPosition,
    LastVersion,
    check_kept,
    check_position,
    resume_after,
)
from services.game.streams.schemas import BotGames, ChallengeList, Turns
from services.game.streams.sse_events import BOT_STREAM, GAME_STREAM, TOURNAMENT_STREAM
from services.game.streams.tournament_stream import TournamentStream, tournament_log
from services.game.streams.turns import (
    all_waiting,
    bots_games,
    open_challenges,
    opened_sealed,
    running_games,
    seat_turn,
    waiting_turns,
)
from shared.app.waiting import wait_ms
from shared.errors import InvalidRequest
from shared.ports.archive import EventArchive
from shared.store.port import EventStore

T = TypeVar("T")


_SSE = {
    200: ResponseSpec(
        str,
        description="Server-sent events (text/event-stream)",
        media_type="text/event-stream",
        generate_examples=False,
    )
}


class GameStreamController(Controller):
    """A game's server-sent events, and the long poll of a seat's turn."""

    path = "/v1/games"
    tags = ("games",)
    exception_handlers = STREAM_PROBLEMS

    @get(
        "/{game_id:str}/stream",
        operation_id="streamGame",
        summary="Follow a game as server-sent events",
        description=(
            "First a `snapshot` (with `?seat=N` the body of `getSeatView`, else the body of"
            " `getGame`), then one `event` per stored event after it (the body of one item of"
            " `listGameEvents`, redacted as the seat or a spectator may see it while the game"
            " runs), and for a seat a `your_turn` (its view with the legal actions) whenever"
            " the game waits for it. Every `id:` is the game's version; `Last-Event-ID: N`"
            " resumes after version N without the snapshot, so no event is missed or repeated."
            " Quiet streams get keep-alive comments; the stream ends after the game's last"
            " event, or after a while (reconnect with `Last-Event-ID`). A seat needs the same"
            " credentials as its view. A table of a duplicate deal that another table still plays"
            " is streamed as a running game, and only to its seats' bots and the host (else"
            " 403, rule `deal_sealed`)."
        ),
        security=BEARER_OPTIONAL,
        responses={**_SSE, **responses(400, 401, 403, 404, 422, 429, 503)},
        opt={SSE_OPT: GAME_STREAM},
    )
    async def stream(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        game_id: GameId,
        seat: ViewerSeat = None,
        last_event_id: LastVersion = None,
    ) -> ServerSentEvent:
        """Returns the game's event stream as `seat` (none: a spectator) may see it."""
        streams, spectator = streams_of(request), seat is None
        anonymous = spectator and caller.role == "anonymous"
        ticket: Ticket | None
        if anonymous:
            ticket = await admit_spectator(request, streams, access)
        else:
            ticket = streams.admit_token(caller.token_id)
        try:
            loaded, sealed = await streams.run(
                opened_sealed,
                store,
                archive,
                game_id,
                seat,
                caller,
                last_event_id,
                spectator=spectator,
            )
        except BaseException:
            if ticket is not None:
                ticket.release()
            raise
        watch = streams.watch(store, access.registry)
        stream = GameStream(
            streams, store, archive, loaded, seat, last_event_id, caller, watch, ticket, sealed
        )
        events = stream.events()
        if ticket is not None:  # a stream never iterated gives its place back when collected
            weakref.finalize(events, ticket.release)
        return ServerSentEvent(events)

    @get(
        "/{game_id:str}/turn",
        operation_id="waitSeatTurn",
        summary="Wait for a seat's turn (long poll)",
        description=(
            "The seat's view (the body of `getSeatView`) as soon as the game waits for the"
            " seat or is over; when it does neither, waits up to `wait` seconds (0-60) for"
            " that, then answers the view as it stands (its `legal_actions` empty). A bot"
            " plays a game with this and `postAction` alone: one request per turn, no polling"
            " and no event-stream parser. Needs the same credentials as the seat's view."
        ),
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 429, 503),
        opt={CHARGED_ON_ANSWER: "reads"},
        after_request=charged_as(view_charge),
    )
    async def turn(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        game_id: GameId,
        seat: SeatNumber,
        wait: Wait = 0,
    ) -> SeatView:
        """Returns `seat`'s view once the game waits for it or is over, waiting up to `wait` s;
        401 at once when the caller's token is rotated or revoked meanwhile."""
        streams = streams_of(request)
        chunk = streams.config.keepalive_s
        with (
            streams.token_place(caller.token_id),
            streams.watch(store, access.registry).hold(caller) as hold,
        ):
            args = (store, archive, game_id, seat, caller, wait, chunk, hold)
            return await hold.wait(lambda: streams.run(checked, hold, seat_turn, *args))


class TournamentStreamController(Controller):
    """A tournament's public server-sent events."""

    path = "/v1/tournaments"
    tags = ("tournaments",)
    exception_handlers = STREAM_PROBLEMS

    @get(
        "/{tournament_id:str}/stream",
        operation_id="streamTournament",
        summary="Follow a tournament as server-sent events",
        description=(
            "Public: anyone may follow it (anonymous spectators under the same cap and rate"
            " limit as a game's spectator streams: 503 `streams-busy`, 429). Every message"
            " follows from the tournament's own event stream: `round_started` and one"
            " `game_started` per game when a round is scheduled, `game_finished` (places,"
            " status, `rated` and `unrated`) and `standings` when the tournament records a"
            " game, then `standings` and `tournament_finished` or `tournament_cancelled`, after"
            " which the stream ends. Every `id:` is `V-i` (the tournament event's version and"
            " the message's index in it), so ids order the messages; without `Last-Event-ID`"
            " the stream starts from the tournament's beginning, with it after that message:"
            " nothing missed, nothing twice. A catch-up sends only its last `standings`. Quiet"
            " streams get keep-alive comments and close after a while (reconnect with"
            " `Last-Event-ID`). 400 (`Last-Event-ID`): an id that is not `V-i`; 404: an unknown"
            " tournament."
        ),
        security=BEARER_OPTIONAL,
        responses={**_SSE, **responses(400, 401, 404, 429, 503)},
        opt={SSE_OPT: TOURNAMENT_STREAM},
    )
    async def stream(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        tournament_id: TournamentId,
        last_event_id: LastMessage = None,
    ) -> ServerSentEvent:
        """Returns the tournament's event stream."""
        after = resume_after(last_event_id)
        streams = streams_of(request)
        anonymous = caller.role == "anonymous"
        ticket: Ticket | None
        if anonymous:
            ticket = await admit_spectator(request, streams, access)
        else:
            ticket = streams.admit_token(caller.token_id)
        try:  # admitted first: an anonymous read of a log is charged, found or not
            log = await streams.run(tournament_log, store, archive, tournament_id, spectator=True)
        except BaseException:
            if ticket is not None:
                ticket.release()
            raise
        stream = TournamentStream(streams, store, tournament_id, log, after, ticket)
        events = stream.events()
        if ticket is not None:  # a stream never iterated gives its place back when collected
            weakref.finalize(events, ticket.release)
        return ServerSentEvent(events)


def _turns_charge(body: Any) -> Charge:
    """Returns how a turns poll is charged: a turn when it found one."""
    return "turn" if isinstance(body, Turns) and body.turns else "other"


class BotStreamsController(Controller):
    """The calling bot's events and turns."""

    path = "/v1/bots/me"
    tags = ("bots",)
    exception_handlers = BOT_STREAM_PROBLEMS

    @get(
        "/events",
        operation_id="streamBotEvents",
        summary="Follow the calling bot's games as server-sent events",
        description=(
            "Needs a bot token. On connect, one `your_turn` per game waiting for the bot"
            " (`game_id`, `game`, `seat` and the seat's view as `getSeatView` answers it:"
            " `version`, `status`, `to_move`, `view`, `legal_actions`, `deadline` in a timed"
            " game); then `game_started` (`game_id`, `game`, `seats`), `your_turn` and"
            " `game_finished` (`game_id`, `seats`, `result`) as they happen, and keep-alive"
            " comments when quiet. Every `id:` is a cursor over the feed's partitions;"
            " `Last-Event-ID` first replays what happened since that cursor (410,"
            " rule `feed_trimmed`, when the feed no longer keeps it). A"
            " `challenge` (the body of `getChallenge`) comes when one is issued to the bot, and"
            " on connect for each open one waiting for its answer. To the challenger:"
            " `challenge_declined` (`challenge_id`, `game`, `bot`, `reason`, `at`),"
            " `challenge_cancelled` (`challenge_id`, `game`, `by`, `at`) and"
            " `challenge_expired` (`challenge_id`, `game`, `expires_at`, `pending`), once each"
            " (an expiry is recorded when the challenger's stream or its next challenge finds it"
            " due, and told from that record). To each entrant of a tournament with a token:"
            " `tournament_started` (`tournament_id`, `game`, `format`, `table_size`, `entries`,"
            " `entrants`), `round_started` (`tournament_id`, `round`, `games` with the bot's"
            " `seats`, `bye`) and `tournament_finished` (`tournament_id`, `status`, `winner`,"
            " `reason`). The stream closes after a while: reconnect."
        ),
        security=BEARER,
        responses={**_SSE, **responses(400, 401, 403, 410, 429, 503)},
        opt={SSE_OPT: BOT_STREAM},
    )
    async def events(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        last_event_id: LastPosition = None,
    ) -> ServerSentEvent:
        """Returns the calling bot's event stream."""
        check_position(last_event_id, store.partitions)
        bot, streams = calling_bot(caller), streams_of(request)
        if last_event_id is not None:
            await streams.run(check_kept, store, last_event_id)
        opened_at = await streams.run(store.feed_position)
        watch = streams.watch(store, access.registry)
        ticket = streams.admit_token(caller.token_id)
        stream = BotStream(
            streams,
            store,
            bot,
            last_event_id,
            caller,
            watch,
            issued=access.challenges,
            ticket=ticket,
            opened_at=opened_at,
        )
        events = stream.events()
        if ticket is not None:  # a stream never iterated gives its place back when collected
            weakref.finalize(events, ticket.release)
        return ServerSentEvent(events)

    @get(
        "/turns",
        operation_id="waitBotTurns",
        summary="The games waiting for the calling bot's move (long poll)",
        description=(
            "Needs a bot token. Answers at once with every game waiting for one of the bot's"
            " seats (`game_id`, `game`, `seat`, `version`, `legal_actions`, `deadline`); when"
            " none waits, waits up to `wait` seconds (0-60) for one, then answers an empty"
            " list."
        ),
        security=BEARER,
        responses=responses(400, 401, 403, 429, 503),
        opt={CHARGED_ON_ANSWER: "reads"},
        after_request=charged_as(_turns_charge),
    )
    async def turns(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        wait: Wait = 0,
    ) -> Turns:
        """Returns the turns waiting for the calling bot, waiting up to `wait` s for one; 401
        at once when its token is rotated or revoked meanwhile."""
        bot, streams = calling_bot(caller), streams_of(request)
        with (
            streams.token_place(caller.token_id),
            streams.watch(store, access.registry).hold(caller) as hold,
        ):

            async def call(function: Callable[..., T], *args: Any) -> T:
                return await hold.wait(lambda: streams.run(checked, hold, function, *args))

            index = streams.index(store)
            deadline = time.monotonic() + wait
            position = await call(store.feed_position)
            found = await call(all_waiting, store, index, bot)
            while not found and (remaining := deadline - time.monotonic()) > 0:
                wait_for = wait_ms(min(remaining, streams.config.keepalive_s))
                entries = await call(store.wait_feed, position, wait_for)
                if not entries:
                    continue
                position = entries[-1].position
                await call(index.refresh)
                touched = list(dict.fromkeys(e.event.game_id for e in entries))
                mine = await call(bots_games, index, bot, touched)
                if mine:
                    found = await call(waiting_turns, store, index, bot, mine)
            return Turns(found)

    @get(
        "/games",
        operation_id="listBotGames",
        summary="The calling bot's running games, with its seats in each",
        description=(
            "Needs a bot token (401 without one or with a bad one; 403 with the admin key: a"
            " bot's games are read with its own token). Every game the bot is seated in that"
            " is still running, oldest first, with its seats, version and the seats it waits"
            " for: what a bot that restarts needs to pick its games up again (then"
            " `waitBotTurns` or `getSeatView` for each seat). `status` is `playing`, the"
            " default; any other value is 422 naming `status`."
        ),
        security=BEARER,
        responses=responses(400, 401, 403, 422, 503),
    )
    async def games(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
        status: GameStatus = "playing",
    ) -> BotGames:
        """Returns the calling bot's games in `status`."""
        bot, streams = calling_bot(caller), streams_of(request)
        if status not in GAME_STATUSES:
            valid = ", ".join(GAME_STATUSES)
            raise InvalidRequest("status", f"unknown status {status[:40]!r}; valid: {valid}")
        found = await streams.run(running_games, store, streams.index(store), bot)
        return BotGames(found)

    @get(
        "/challenges",
        operation_id="listBotChallenges",
        summary="The open challenges waiting for the calling bot's answer",
        description=(
            "Needs a bot token. For clients without server-sent events: each open challenge"
            " issued to the bot that it has not answered, oldest first (the body of"
            " `getChallenge`); answer with `acceptChallenge` or `declineChallenge`."
        ),
        security=BEARER,
        responses=responses(401, 403, 503),
    )
    async def challenges(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
    ) -> ChallengeList:
        """Returns the open challenges waiting for the calling bot."""
        bot, streams = calling_bot(caller), streams_of(request)
        found = await streams.run(open_challenges, store, streams.index(store), bot)
        return ChallengeList(found)
