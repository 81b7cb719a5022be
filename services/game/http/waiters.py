"""The streams' thread limiter: every blocking store call of a stream, a long poll or an action's
wait runs in a worker thread under the streams' own capacity, so that waiting streams cannot
starve the API's other handlers. Anonymous spectator streams take their own places
(`StreamConfig.spectators`) and tickets; a full house is StreamsBusy (503). A bot token's
streams and long polls take tickets of the token's own (`StreamConfig.per_token`); one more is
TooManyStreams (429). Tests set their own
`Streams` in `app.state[STATE_KEY]` before the first request.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from litestar.connection import ASGIConnection

from services.game.http.pipeline.auth import STATE_KEY as AUTH_KEY
from services.game.http.pipeline.auth import Access, caller_of
from services.game.http.pipeline.credentials import Hold, TokenWatch
from shared.app.registry import RegistryIndex
from shared.ports.bot_index import BotIndex, FeedBotIndex
from shared.store.port import EventStore

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
    per_token: int = 32
    """Streams and long polls one bot token holds open at once (one more is refused with
    429; 0: no cap). A move's wait for its next turn is never counted: a move always lands."""


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


class TooManyStreams(Exception):
    """A bot token holds as many streams and long polls open as the process allows one."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            f"this bot token holds {limit} streams and long polls open on this server, the most"
            f" one may (CARDARENA_MAX_STREAMS_PER_TOKEN); close one, or retry after"
            f" {retry_after} s"
        )
        self.message = str(self)
        self.limit = limit
        self.retry_after = retry_after


class Ticket:
    """A stream's place (an anonymous spectator's among `StreamConfig.spectators`, a bot
    token's among its `StreamConfig.per_token`); given back once."""

    def __init__(self, give_back: Callable[[], None]) -> None:
        self._give_back: Callable[[], None] | None = give_back

    def release(self) -> None:
        """Gives the place back (again: nothing)."""
        give_back, self._give_back = self._give_back, None
        if give_back is not None:
            give_back()


@dataclass
class Streams:
    """The streams of one app: their config, limiters, bot index, token watch, and how many
    are open."""

    config: StreamConfig = field(default_factory=StreamConfig)
    bot_index: BotIndex | None = None
    """Which games and challenges wait for which bot (None: the twin, `FeedBotIndex`, made
    over the app's store on first use)."""
    open: int = 0
    """Streams whose generator runs now (a disconnected client's ends within a keep-alive)."""
    spectating: int = 0
    """Anonymous spectator streams admitted and not yet over."""
    by_token: dict[str, int] = field(default_factory=dict)
    """Per bot token (its id): its streams and long polls admitted and not yet over."""
    _limiter: anyio.CapacityLimiter | None = None
    _spectators: anyio.CapacityLimiter | None = None
    _unbounded: anyio.CapacityLimiter | None = None
    """The threads of `run_reserved` (counted by the places they hold in `_limiter`)."""
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
        return Ticket(self._spectator_left)

    def _spectator_left(self) -> None:
        with self._lock:
            self.spectating -= 1

    def admit_token(self, token_id: str | None) -> Ticket | None:
        """Returns a place for one more stream or long poll of the bot token `token_id` (None:
        the admin key or anyone, who take none); raises TooManyStreams."""
        limit = self.config.per_token
        if token_id is None or limit == 0:
            return None
        with self._lock:
            held = self.by_token.get(token_id, 0)
            if held >= limit:
                raise TooManyStreams(limit, math.ceil(self.config.keepalive_s))
            self.by_token[token_id] = held + 1
        return Ticket(functools.partial(self._token_left, token_id))

    def _token_left(self, token_id: str) -> None:
        with self._lock:
            held = self.by_token.pop(token_id, 0) - 1
            if held > 0:
                self.by_token[token_id] = held

    @contextlib.contextmanager
    def token_place(self, token_id: str | None) -> Iterator[None]:
        """Holds a place of the bot token `token_id` while the block runs (a long poll);
        raises TooManyStreams."""
        ticket = self.admit_token(token_id)
        try:
            yield
        finally:
            if ticket is not None:
                ticket.release()

    def watch(self, store: EventStore, registry: RegistryIndex) -> TokenWatch:
        """Returns the watch that ends the holds of rotated and revoked tokens."""
        with self._lock:
            if self._watch is None:
                self._watch = TokenWatch(store, registry, self.config.keepalive_s)
            return self._watch

    def index(self, store: EventStore) -> BotIndex:
        """Returns the index of the bots' games and challenges: the one given, else the twin
        over `store` (the app's only store)."""
        with self._lock:
            if self.bot_index is None:
                self.bot_index = FeedBotIndex(store)
            return self.bot_index

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


@contextlib.contextmanager
def held(connection: ASGIConnection[Any, Any, Any, Any], store: EventStore) -> Iterator[Hold]:
    """Yields the hold of the token of `connection`'s caller (identified already) while the
    block runs."""
    access: Access = connection.app.state[AUTH_KEY]
    watch = streams_of(connection).watch(store, access.registry)
    with watch.hold(caller_of(connection)) as hold:
        yield hold
