"""Streams: a game's server-sent events, a bot's events, and the long poll of a bot's turns.

`GET /v1/games/{id}/stream` sends a snapshot (the seat's view, or the public game for a
spectator), then every stored event after it, redacted as the reader may see it, each with
`id:` = its version; a seat also gets `your_turn` (its view with the legal actions) whenever
the game waits for it. `Last-Event-ID: N` resumes after version N: the snapshot is skipped
and the events from N + 1 on follow, so a reconnecting client sees each event once. The
stream ends after the game's last event (its finish).

`GET /v1/bots/me/events` (a bot token) sends, on connect, one `your_turn` per game waiting
for the bot, then `game_started`, `your_turn` and `game_finished` as they happen; `id:` is
a position in the global feed, and `Last-Event-ID` replays the starts and finishes missed
since that position before the resync. A `challenge` (see `shared.model.challenges`) is sent when
one is issued to the bot, and on connect for every open one waiting for its answer.
`GET /v1/bots/me/turns?wait=S` answers the games waiting for the bot at once, or waits up
to S seconds for one; `GET /v1/bots/me/challenges` lists the open challenges.

A bot's games are found with `BotGames`, an index of the global feed kept in this process
(seats bound to the bot in each `GameCreated`, and which games have finished); it reads only
what the feed gained since its last look-up. (The game slots of `shared.ports.game_slots` are not
used: they track only games created over the API while a cap is set.)

Every blocking store call (waits included) runs in a worker thread under the streams' own
capacity limiter, so that waiting streams cannot starve the API's other handlers, and no
single wait outlasts `StreamConfig.keepalive_s`: a quiet stream sends a keep-alive comment
that often, and notices then at the latest that its client has gone. A stream closes after
`StreamConfig.lifetime_s`; clients reconnect (with `Last-Event-ID`). Tests set their own
`Streams` in `app.state[STATE_KEY]` before the first request.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
import msgspec
from litestar import Controller, Request, Response, get
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from services.game.auth import (
    BEARER,
    Access,
    Caller,
    RateLimited,
    caller_of,
    calling_bot,
    check_seat,
)
from services.game.auth import STATE_KEY as AUTH_KEY
from services.game.credentials import CredentialEnded, Hold, TokenWatch, checked
from services.game.params import GameId, SeatNumber, ViewerSeat, Wait
from services.game.problems import problem, responses
from services.game.schemas import EventItem, Game, Problem, SeatView
from services.game.seals import check_unsealed
from shared.app import challenges as challenge_app
from shared.app.loading import LoadedGame, as_seen_by, caught_up, load, load_logged
from shared.app.registry import RegistryIndex
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, UnknownGame
from shared.messages.common import GameCreated, GameFinished, Result
from shared.messages.envelope import RecordedEvent
from shared.model import challenges
from shared.model.challenges import Challenge, ChallengeIssued
from shared.ports.archive import EventArchive, game_log
from shared.ports.views.fold import position_key
from shared.store.port import EventStore, FeedEntry

STATE_KEY = "streams"
"""Where the app's `Streams` lives in `app.state` (created on first use when absent)."""

T = TypeVar("T")


@dataclass(frozen=True)
class StreamConfig:
    """How the streams behave; the defaults suit the real service, tests shorten them."""

    keepalive_s: float = 5.0
    """A quiet stream sends a keep-alive comment this often; also the longest single wait
    on the store (keep it below the Redis client's socket timeout)."""
    lifetime_s: float = 600.0
    """A stream closes after this long; its client reconnects with `Last-Event-ID`."""
    waiters: int = 64
    """Threads that may wait on the store at once for seats' and bots' streams and long polls
    (spectator streams never take one)."""
    spectators: int = 64
    """Anonymous spectator streams open at once (one more is refused with 503); also the
    threads that spectator streams (anyone's) wait in, apart from `waiters`."""


class BotGames:
    """The games each bot is seated in, and which have finished, folded from the global feed.

    Each look-up first folds in what the feed gained since the last one. Thread-safe.
    """

    def __init__(self, store: EventStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._position = "0"
        self._seats: dict[str, dict[str, list[int]]] = {}
        """Per bot (`name@version`): game id -> the seats bound to it."""
        self._finished: set[str] = set()
        self._challenges: dict[str, list[str]] = {}
        """Per bot: the challenges issued to it (open or not), oldest first."""

    def refresh(self) -> None:
        """Folds in the feed entries appended since the last refresh."""
        with self._lock:
            while page := self._store.read_feed(self._position, 1000):
                for entry in page:
                    self._apply(entry)
                self._position = page[-1].position

    def _apply(self, entry: FeedEntry) -> None:
        """Records the bound seats of a created game, or that a game finished."""
        recorded = entry.event
        if recorded.kind == challenges.KIND:
            if recorded.type == "ChallengeIssued":
                issued = challenges.CODEC.decode(recorded)
                assert isinstance(issued, ChallengeIssued)
                for bot in issued.pending:
                    self._challenges.setdefault(bot, []).append(issued.challenge_id)
            return
        if recorded.type == "GameFinished":
            self._finished.add(recorded.game_id)
        if recorded.type != "GameCreated":
            return
        try:
            created = get_game(recorded.kind).codec.decode(recorded)
        except GameNotFound:
            return
        if not isinstance(created, GameCreated):
            return
        for index, seat in enumerate(created.seats):
            if seat.bound_bot is not None:
                games = self._seats.setdefault(seat.bound_bot, {})
                games.setdefault(recorded.game_id, []).append(index)

    def seats_of(self, bot: str, game_id: str) -> list[int]:
        """Returns the seats of `game_id` bound to `bot` (none: not its game), as last refreshed."""
        with self._lock:
            return list(self._seats.get(bot, {}).get(game_id, ()))

    def challenges_of(self, bot: str) -> list[str]:
        """Returns the challenges issued to `bot` (open or not), as last refreshed."""
        with self._lock:
            return list(self._challenges.get(bot, ()))

    def running(self, bot: str) -> list[str]:
        """Returns the games `bot` is seated in that have not finished, as last refreshed."""
        with self._lock:
            return [g for g in self._seats.get(bot, {}) if g not in self._finished]


class StreamsBusy(Exception):
    """As many anonymous spectator streams are open as the process allows."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            f"{limit} anonymous spectator streams are open, the most this server keeps;"
            f" retry after {retry_after} s, or send a bot token"
        )
        self.message = str(self)
        self.limit = limit
        self.retry_after = retry_after


class Ticket:
    """An anonymous spectator stream's place among `StreamConfig.spectators`; given back once."""

    def __init__(self, streams: Streams) -> None:
        self._streams: Streams | None = streams

    def release(self) -> None:
        """Gives the place back (again: nothing)."""
        streams, self._streams = self._streams, None
        if streams is not None:
            with streams._lock:
                streams.spectating -= 1


@dataclass
class Streams:
    """The streams of one app: their config, limiters, bot index, token watch, and how many
    are open."""

    config: StreamConfig = field(default_factory=StreamConfig)
    open: int = 0
    """Streams whose generator runs now (a disconnected client's ends within a keep-alive)."""
    spectating: int = 0
    """Anonymous spectator streams admitted and not yet over."""
    _limiter: anyio.CapacityLimiter | None = None
    _spectators: anyio.CapacityLimiter | None = None
    _unbounded: anyio.CapacityLimiter | None = None
    """The threads of `run_reserved` (counted by the places they hold in `_limiter`)."""
    _index: BotGames | None = None
    _watch: TokenWatch | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def limiter(self, *, spectator: bool = False) -> anyio.CapacityLimiter:
        """Returns the capacity limiter of the seats' and bots' store calls, or with
        `spectator` of the spectator streams' (made in the event loop)."""
        if spectator:
            if self._spectators is None:
                self._spectators = anyio.CapacityLimiter(self.config.spectators)
            return self._spectators
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.config.waiters)
        return self._limiter

    def admit_spectator(self) -> Ticket:
        """Returns a place for one more anonymous spectator stream; raises StreamsBusy."""
        with self._lock:
            if self.spectating >= self.config.spectators:
                raise StreamsBusy(self.config.spectators, math.ceil(self.config.keepalive_s))
            self.spectating += 1
        return Ticket(self)

    def watch(self, store: EventStore, registry: RegistryIndex) -> TokenWatch:
        """Returns the watch that ends the holds of rotated and revoked tokens."""
        with self._lock:
            if self._watch is None:
                self._watch = TokenWatch(store, registry, self.config.keepalive_s)
            return self._watch

    def index(self, store: EventStore) -> BotGames:
        """Returns the index of the bots' games over `store` (the app's only store)."""
        with self._lock:
            if self._index is None:
                self._index = BotGames(store)
            return self._index

    async def run(self, function: Callable[..., T], *args: Any, spectator: bool = False) -> T:
        """Returns `function(*args)` run in a worker thread (with `spectator`, one of the
        spectator streams'); a cancelled caller stops waiting."""
        call = functools.partial(function, *args)
        limiter = self.limiter(spectator=spectator)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True, limiter=limiter)

    def reserve(self) -> object | None:
        """Takes one of the waiters' places now, if one is free (never queues for one);
        returns the borrower to hand to `run_reserved`, None when all are taken."""
        borrower = object()
        try:
            self.limiter().acquire_on_behalf_of_nowait(borrower)
        except anyio.WouldBlock:
            return None
        return borrower

    async def run_reserved(self, borrower: object, function: Callable[..., T], *args: Any) -> T:
        """Returns `function(*args)` run in a worker thread on the place `reserve` took
        (given back afterwards); a cancelled caller stops waiting."""
        if self._unbounded is None:
            self._unbounded = anyio.CapacityLimiter(math.inf)
        call = functools.partial(function, *args)
        try:
            return await anyio.to_thread.run_sync(
                call, abandon_on_cancel=True, limiter=self._unbounded
            )
        finally:
            self.limiter().release_on_behalf_of(borrower)


_streams_lock = threading.Lock()


def streams_of(request: ASGIConnection[Any, Any, Any, Any]) -> Streams:
    """Returns the app's `Streams`, made with the default config on first use."""
    state = request.app.state
    with _streams_lock:
        known = state.get(STATE_KEY)
        if not isinstance(known, Streams):
            known = Streams()
            state[STATE_KEY] = known
    return known


class Turn(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game waiting for a bot's seat: post one of `legal_actions` at `version`."""

    game_id: str
    game: str
    seat: int
    version: int
    legal_actions: list[dict[str, Any]]
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game: when the seat's time runs out, in ms since the epoch."""


class ChallengeList(msgspec.Struct, frozen=True):
    """The open challenges waiting for the calling bot's answer, oldest first."""

    challenges: list[Challenge]


class Turns(msgspec.Struct, frozen=True):
    """The games waiting for the calling bot's move (empty when none came in time)."""

    turns: list[Turn]


class GameStarted(msgspec.Struct, frozen=True):
    """The data of a bot's `game_started` event: a game it has seats in was created."""

    game_id: str
    game: str
    seats: list[int]


class GameOver(msgspec.Struct, frozen=True):
    """The data of a bot's `game_finished` event: a game it has seats in is over."""

    game_id: str
    seats: list[int]
    result: Result


def _json(value: Any) -> str:
    """Returns `value` as a JSON text (the data of an event)."""
    return msgspec.json.encode(value).decode()


def _message(event: str, value: Any, event_id: int | str) -> ServerSentEventMessage:
    """Returns the SSE event `event` with `value` as its JSON data and `event_id` as its id."""
    return ServerSentEventMessage(data=_json(value), event=event, id=event_id)


def _keepalive() -> ServerSentEventMessage:
    """Returns a keep-alive comment line (no event)."""
    return ServerSentEventMessage(data=None, comment="keep-alive")


def _ms(seconds: float) -> int:
    """Returns `seconds` in whole milliseconds, at least 1."""
    return max(1, int(seconds * 1000))


def turns_in(loaded: LoadedGame, bot: str) -> list[Turn]:
    """Returns the turns of `loaded` waiting for `bot`'s external seats (forfeited ones are
    played by the platform)."""
    spec, state, seats = loaded.spec, loaded.state, loaded.created.seats
    if spec.is_over(state):
        return []
    found: list[Turn] = []
    for seat in spec.to_move(state):
        if seats[seat].kind != "external" or seats[seat].bound_bot != bot:
            continue
        if seat in loaded.forfeits:
            continue
        view = SeatView.of(loaded, seat)
        if view.legal_actions:
            found.append(
                Turn(
                    loaded.game_id, spec.name, seat, view.version, view.legal_actions, view.deadline
                )
            )
    return found


def waiting_turns(store: EventStore, index: BotGames, bot: str, game_ids: list[str]) -> list[Turn]:
    """Returns the turns waiting for `bot` in `game_ids` (each read from the store now)."""
    found: list[Turn] = []
    for game_id in game_ids:
        try:
            found += turns_in(load(store, game_id), bot)
        except UnknownGame:
            continue
    return found


def all_waiting(store: EventStore, index: BotGames, bot: str) -> list[Turn]:
    """Refreshes the index; returns the turns waiting for `bot` in all its running games."""
    index.refresh()
    return waiting_turns(store, index, bot, index.running(bot))


def open_challenges(store: EventStore, index: BotGames, bot: str) -> list[Challenge]:
    """Refreshes the index; returns the open challenges waiting for `bot`'s answer."""
    index.refresh()
    now = datetime.now(UTC)
    found: list[Challenge] = []
    for challenge_id in index.challenges_of(bot):
        challenge, _ = challenge_app.read(store, challenge_id, now)
        if challenge.status == "open" and bot in challenge.pending:
            found.append(challenge)
    return found


def _opened(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int | None,
    caller: Caller,
    after: int | None,
) -> LoadedGame:
    """Returns the game to stream (from the archive once its stream left the store) after
    checking the seat, the caller and `Last-Event-ID`."""
    loaded = load_logged(store, archive, game_id)
    if seat is not None:
        count = len(loaded.created.seats)
        if not 0 <= seat < count:
            raise InvalidRequest("seat", f"seat must be 0 to {count - 1}, not {seat}")
        check_seat(caller, loaded.created.seats, seat)
    if after is not None and after > loaded.version:
        raise InvalidRequest(
            "Last-Event-ID", f"the game is at version {loaded.version}, not {after}"
        )
    return loaded


def _opened_sealed(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int | None,
    caller: Caller,
    after: int | None,
) -> tuple[LoadedGame, bool]:
    """Returns `_opened`'s game and whether it is sealed; raises DealSealed when it is and
    the caller holds none of its seats."""
    loaded = _opened(store, archive, game_id, seat, caller, after)
    return loaded, check_unsealed(store, archive, loaded, caller)


@dataclass
class _GameStream:
    """One client's stream of one game, from a version on."""

    streams: Streams
    store: EventStore
    archive: EventArchive
    loaded: LoadedGame
    seat: int | None
    resume_after: int | None
    caller: Caller
    watch: TokenWatch
    ticket: Ticket | None = None
    """An anonymous spectator's place, given back when the stream ends."""
    sealed: bool = False
    """A duplicate deal's table that another table plays: streamed as a running game (a seal
    only ever opens, so one taken at the start errs on the safe side)."""
    announced: int = -1
    """The version of the last `your_turn` sent."""
    _hold: Hold = field(default_factory=Hold)

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        """Returns `function(*args)` run in a worker thread, once the caller's token is known
        to be live after it; raises CredentialEnded (at once when the watch ends the hold)."""
        run = self.streams.run
        hold, spectator = self._hold, self.seat is None
        return await hold.wait(lambda: run(checked, hold, function, *args, spectator=spectator))

    def _turn(self) -> ServerSentEventMessage | None:
        """Returns `your_turn` when the game waits for the seat at a version not yet announced."""
        loaded, seat = self.loaded, self.seat
        if seat is None or loaded.version == self.announced or loaded.spec.is_over(loaded.state):
            return None
        view = SeatView.of(loaded, seat)
        if not view.legal_actions:
            return None
        self.announced = loaded.version
        return _message("your_turn", view, loaded.version)

    def _snapshot(self) -> ServerSentEventMessage:
        """Returns the full snapshot: the seat's view, or the public game."""
        loaded = self.loaded
        body: Any = Game.of(loaded) if self.seat is None else SeatView.of(loaded, self.seat)
        return _message("snapshot", body, loaded.version)

    def _logged_after(self, version: int) -> list[RecordedEvent]:
        """Returns the game's events after `version` up to the version it was loaded at,
        from the store's stream or, once that left the store, from the archive."""
        log = game_log(self.store, self.archive, self.loaded.game_id)
        return [r for r in log if version < r.version <= self.loaded.version]

    async def events(self) -> AsyncIterator[ServerSentEventMessage]:
        """Yields the snapshot (unless resuming), the events after it, and the seat's turns,
        until the game ends, or the stream's lifetime, or the caller's token (each message
        follows a look-up of it)."""
        config, self.streams.open = self.streams.config, self.streams.open + 1
        try:
            self._hold = self.watch.take(self.caller)
            deadline = time.monotonic() + config.lifetime_s
            await self._call(_nothing)
            version = self.resume_after
            if version is None:
                version = self.loaded.version
                yield self._snapshot()
            while True:
                if version >= self.loaded.version:
                    if (turn := self._turn()) is not None:
                        yield turn
                    if self.loaded.spec.is_over(self.loaded.state):
                        return
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                if version < self.loaded.version:  # resumed: what it missed, as it stands
                    batch = await self._call(self._logged_after, version)
                else:
                    wait = _ms(min(remaining, config.keepalive_s))
                    batch = await self._call(self.store.wait, self.loaded.game_id, version, wait)
                    if not batch:
                        yield _keepalive()
                        continue
                    if batch[0].version == self.loaded.version + 1:  # a fold, no I/O
                        self.loaded = caught_up(self.store, self.loaded, batch)
                    else:
                        self.loaded = await self._call(caught_up, self.store, self.loaded, batch)
                spec = self.loaded.spec
                for recorded, event in zip(batch, spec.codec.decode_all(batch), strict=True):
                    seen = as_seen_by(self.loaded, event, self.seat, sealed=self.sealed)
                    yield _message("event", EventItem.of(recorded, seen), recorded.version)
                version = batch[-1].version
        except CredentialEnded:
            return
        finally:
            self.watch.give(self._hold)
            self.streams.open -= 1
            if self.ticket is not None:
                self.ticket.release()


def _nothing() -> None:
    """Does nothing (a call that only looks the caller's token up after it)."""


@dataclass
class _BotStream:
    """One bot's stream of its games' starts, turns and finishes."""

    streams: Streams
    store: EventStore
    bot: str
    resume_from: str | None
    caller: Caller
    watch: TokenWatch
    announced: set[tuple[str, int, int]] = field(default_factory=set)
    """(game, seat, version) of every `your_turn` sent."""
    challenged: set[str] = field(default_factory=set)
    """The challenges announced."""
    _hold: Hold = field(default_factory=Hold)

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        """Returns `function(*args)` run in a worker thread, once the bot's token is known to
        be live after it; raises CredentialEnded (at once when the watch ends the hold)."""
        run, hold = self.streams.run, self._hold
        return await hold.wait(lambda: run(checked, hold, function, *args))

    def _challenge(self, challenge: Challenge, event_id: str) -> list[ServerSentEventMessage]:
        """Returns `challenge` for a challenge not yet announced."""
        if challenge.challenge_id in self.challenged:
            return []
        self.challenged.add(challenge.challenge_id)
        return [_message("challenge", challenge, event_id)]

    def _turns(self, turns: list[Turn], event_id: str) -> list[ServerSentEventMessage]:
        """Returns `your_turn` for each of `turns` not yet announced."""
        fresh = [t for t in turns if (t.game_id, t.seat, t.version) not in self.announced]
        self.announced.update((t.game_id, t.seat, t.version) for t in fresh)
        return [_message("your_turn", turn, event_id) for turn in fresh]

    def _news(self, index: BotGames, entries: list[FeedEntry]) -> tuple[list[Any], list[str]]:
        """Returns the `game_started` / `game_finished` messages in `entries` for this bot,
        and the ids of its games that they touch."""
        messages: list[Any] = []
        touched: list[str] = []
        for entry in entries:
            recorded = entry.event
            if recorded.kind == challenges.KIND:
                messages += self._issued(entry)
                continue
            seats = index.seats_of(self.bot, recorded.game_id)
            if not seats:
                continue
            if recorded.game_id not in touched:
                touched.append(recorded.game_id)
            if recorded.type not in {"GameCreated", "GameFinished"}:
                continue
            event = get_game(recorded.kind).codec.decode(recorded)
            if isinstance(event, GameCreated):
                started = GameStarted(recorded.game_id, recorded.kind, seats)
                messages.append(_message("game_started", started, entry.position))
            elif isinstance(event, GameFinished):
                over = GameOver(recorded.game_id, seats, event.result)
                messages.append(_message("game_finished", over, entry.position))
        return messages, touched

    def _issued(self, entry: FeedEntry) -> list[ServerSentEventMessage]:
        """Returns `challenge` when `entry` issues a challenge to this bot."""
        recorded = entry.event
        if recorded.type != "ChallengeIssued":
            return []
        issued = challenges.CODEC.decode(recorded)
        assert isinstance(issued, ChallengeIssued)
        if self.bot not in issued.pending:
            return []
        challenge = challenges.fold([issued], recorded.version, datetime.now(UTC))
        return self._challenge(challenge, entry.position)

    async def _backlog(self, index: BotGames, until: str) -> AsyncIterator[Any]:
        """Yields the starts and finishes from `resume_from` up to the feed position `until`."""
        position = self.resume_from or until
        while position != until:
            page = await self._call(self.store.read_feed, position, 500)
            if not page:
                return
            await self._call(index.refresh)
            messages, _ = self._news(index, page)
            for message in messages:
                yield message
            position = page[-1].position
            if until in (entry.position for entry in page):
                return

    async def events(self) -> AsyncIterator[ServerSentEventMessage]:
        """Yields the missed starts and finishes, the resync, then the bot's news as it comes,
        until the stream's lifetime or the bot's token ends (each message follows a look-up
        of it)."""
        streams, store, config, call = self.streams, self.store, self.streams.config, self._call
        streams.open += 1
        try:
            self._hold = self.watch.take(self.caller)
            deadline = time.monotonic() + config.lifetime_s
            index = streams.index(store)
            position = await call(store.feed_position)
            async for message in self._backlog(index, position):
                yield message
            for challenge in await call(open_challenges, store, index, self.bot):
                for message in self._challenge(challenge, position):
                    yield message
            for message in self._turns(await call(all_waiting, store, index, self.bot), position):
                yield message
            while (remaining := deadline - time.monotonic()) > 0:
                wait = _ms(min(remaining, config.keepalive_s))
                entries = await call(store.wait_feed, position, wait)
                if not entries:
                    yield _keepalive()
                    continue
                position = entries[-1].position
                await call(index.refresh)
                messages, touched = self._news(index, entries)
                for message in messages:
                    yield message
                turns = await call(waiting_turns, store, index, self.bot, touched)
                for message in self._turns(turns, position):
                    yield message
        except CredentialEnded:
            return
        finally:
            self.watch.give(self._hold)
            streams.open -= 1


async def admit_spectator(
    request: Request[Any, Any, Any], streams: Streams, access: Access
) -> Ticket:
    """Returns an anonymous spectator stream's place; raises StreamsBusy (503) when the
    process holds as many as it may, RateLimited (429) when the client's address opened
    more than its limit in the rate window."""
    ticket = streams.admit_spectator()
    address = request.client.host if request.client is not None else "unknown"
    limiter = access.spectator_limiter
    try:
        decision = await anyio.to_thread.run_sync(limiter.hit, f"spectator:{address}")
    except BaseException:
        ticket.release()
        raise
    if not decision.allowed:
        ticket.release()
        raise RateLimited(
            f"{address} opened more than {limiter.limit} anonymous streams in"
            f" {limiter.window_s} s; retry after {decision.retry_after} s, or send a bot token",
            decision.retry_after,
        )
    return ticket


def _busy(_: Request[Any, Any, Any], error: StreamsBusy) -> Response[Problem]:
    headers = {"Retry-After": str(error.retry_after)}
    return problem(503, "streams-busy", error.message, headers=headers, limit=error.limit)


LastVersion = Annotated[
    int | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        ge=0,
        description="Resume after this version (the last `id:` received): no snapshot, no gap",
        schema_extra={"minimum": 0},  # Litestar 2 leaves an optional parameter's 0 bound out
    ),
]
LastPosition = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        pattern=r"^\d{1,20}(-\d{1,20})?$",
        description="Replay the starts and finishes after this feed position (the last `id:`)",
    ),
]
MAX_ID_PART = 2**64 - 1
"""The largest part of a Redis stream id (`ms-seq`, each an unsigned 64-bit integer)."""


def check_position(position: str | None) -> None:
    """Raises a 400 naming `Last-Event-ID` unless `position` is None or a feed position the
    store can read after (each part at most 2**64 - 1, not both)."""
    if position is None:
        return
    key = position_key(position)
    if max(key) > MAX_ID_PART or key == (MAX_ID_PART, MAX_ID_PART):
        message = "no feed position is there: each part is at most 2**64 - 1"
        raise ValidationException(
            message, extra=[{"key": "last_event_id", "message": message, "source": "header"}]
        )


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
    exception_handlers = {StreamsBusy: _busy}

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
        security=BEARER,
        responses={**_SSE, **responses(400, 401, 403, 404, 422, 503)},
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
        ticket = await admit_spectator(request, streams, access) if anonymous else None
        try:
            loaded, sealed = await streams.run(
                _opened_sealed,
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
        stream = _GameStream(
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
        responses=responses(400, 401, 403, 404, 422, 503),
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
        with streams.watch(store, access.registry).hold(caller) as hold:
            args = (store, archive, game_id, seat, caller, wait, chunk, hold)
            return await hold.wait(lambda: streams.run(checked, hold, seat_turn, *args))


@contextlib.contextmanager
def held(connection: ASGIConnection[Any, Any, Any, Any], store: EventStore) -> Iterator[Hold]:
    """Yields the hold of the token of `connection`'s caller (identified already) while the
    block runs."""
    access: Access = connection.app.state[AUTH_KEY]
    watch = streams_of(connection).watch(store, access.registry)
    with watch.hold(caller_of(connection)) as hold:
        yield hold


def due(loaded: LoadedGame, seat: int) -> bool:
    """Returns whether the game is over or waits for `seat`."""
    return loaded.spec.is_over(loaded.state) or seat in loaded.spec.to_move(loaded.state)


def seat_turn(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int,
    caller: Caller,
    wait_s: float,
    chunk_s: float,
    hold: Hold | None = None,
) -> SeatView:
    """Returns `seat`'s view as soon as the game waits for the seat or is over, or after
    `wait_s` seconds (its view as it stands then), waiting no more once `hold` ended.
    Blocks: run it in a worker thread (one for the whole wait; each wait on the store lasts
    at most `chunk_s`)."""
    loaded = _opened(store, archive, game_id, seat, caller, None)
    ended = (lambda: hold.ended) if hold is not None else None
    return SeatView.of(until_due(store, loaded, seat, wait_s, chunk_s, ended), seat)


def until_due(
    store: EventStore,
    loaded: LoadedGame,
    seat: int,
    wait_s: float,
    chunk_s: float,
    ended: Callable[[], bool] | None = None,
) -> LoadedGame:
    """Returns the game `loaded` as it stands once it waits for `seat` or is over, or after
    `wait_s` seconds, or (checked between waits) once `ended()`. Blocks (each wait on the
    store lasts at most `chunk_s`)."""
    deadline = time.monotonic() + wait_s
    while not due(loaded, seat) and (remaining := deadline - time.monotonic()) > 0:
        if ended is not None and ended():
            break
        batch = store.wait(loaded.game_id, loaded.version, _ms(min(remaining, chunk_s)))
        if batch:
            loaded = caught_up(store, loaded, batch)
    return loaded


class BotStreamsController(Controller):
    """The calling bot's events and turns."""

    path = "/v1/bots/me"
    tags = ("bots",)

    @get(
        "/events",
        operation_id="streamBotEvents",
        summary="Follow the calling bot's games as server-sent events",
        description=(
            "Needs a bot token. On connect, one `your_turn` (`game_id`, `game`, `seat`,"
            " `version`, `legal_actions`, `deadline` in a timed game) per game waiting for the"
            " bot; then `game_started` (`game_id`, `game`, `seats`), `your_turn` and"
            " `game_finished` (`game_id`, `seats`, `result`) as they happen, and keep-alive"
            " comments when quiet. Every `id:` is a position in the global feed;"
            " `Last-Event-ID` first replays the starts and finishes since that position. A"
            " `challenge` (the body of `getChallenge`) comes when one is issued to the bot, and"
            " on connect for each open one waiting for its answer. The stream closes after a"
            " while: reconnect."
        ),
        security=BEARER,
        responses={**_SSE, **responses(400, 401, 403, 503)},
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
        check_position(last_event_id)
        bot, streams = calling_bot(caller), streams_of(request)
        watch = streams.watch(store, access.registry)
        stream = _BotStream(streams, store, bot, last_event_id, caller, watch)
        return ServerSentEvent(stream.events())

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
        responses=responses(400, 401, 403, 503),
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
        with streams.watch(store, access.registry).hold(caller) as hold:

            async def call(function: Callable[..., T], *args: Any) -> T:
                return await hold.wait(lambda: streams.run(checked, hold, function, *args))

            index = streams.index(store)
            deadline = time.monotonic() + wait
            position = await call(store.feed_position)
            found = await call(all_waiting, store, index, bot)
            while not found and (remaining := deadline - time.monotonic()) > 0:
                wait_ms = _ms(min(remaining, streams.config.keepalive_s))
                entries = await call(store.wait_feed, position, wait_ms)
                if not entries:
                    continue
                position = entries[-1].position
                await call(index.refresh)
                touched = list(dict.fromkeys(e.event.game_id for e in entries))
                mine = [g for g in touched if index.seats_of(bot, g)]
                if mine:
                    found = await call(waiting_turns, store, index, bot, mine)
            return Turns(found)

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
