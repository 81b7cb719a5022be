"""One client's server-sent stream of one game: the snapshot, the events after it (redacted as
the reader may see them) and a seat's turns, until the game ends."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread
from litestar import Request
from litestar.response import ServerSentEventMessage

from services.game.http.pipeline.auth import Access, Caller
from services.game.http.pipeline.credentials import CredentialEnded, Hold, TokenWatch, checked
from services.game.http.pipeline.limits import RateLimited
from services.game.http.schemas import EventItem, Game, SeatView
from services.game.http.waiters import Streams, Ticket
from services.game.streams.sse import keepalive, sse_event
from shared.app.loading import LoadedGame, as_seen_by, caught_up
from shared.app.sealing import states_of
from shared.app.waiting import wait_ms
from shared.messages.envelope import RecordedEvent
from shared.ports.archive import EventArchive, game_log
from shared.store.port import EventStore

T = TypeVar("T")


@dataclass
class GameStream:
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
        return sse_event("your_turn", view, loaded.version)

    def _snapshot(self) -> ServerSentEventMessage:
        """Returns the full snapshot: the seat's view, or the public game as `getGame` answers
        it (its tournament's state read, so that a game a cancelled tournament left
        unrecorded says `tournament_cancelled` there too). Reads the store."""
        loaded = self.loaded
        if self.seat is not None:
            return sse_event("snapshot", SeatView.of(loaded, self.seat), loaded.version)
        tournament = loaded.created.tournament
        states = states_of(self.store)
        state = states.state(self.store, self.archive, tournament) if tournament else None
        return sse_event("snapshot", Game.of(loaded, state), loaded.version)

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
                yield await self._call(self._snapshot)
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
                    wait = wait_ms(min(remaining, config.keepalive_s))
                    batch = await self._call(self.store.wait, self.loaded.game_id, version, wait)
                    if not batch:
                        yield keepalive()
                        continue
                    if batch[0].version == self.loaded.version + 1:  # a fold, no I/O
                        self.loaded = caught_up(self.store, self.loaded, batch)
                    else:
                        self.loaded = await self._call(caught_up, self.store, self.loaded, batch)
                spec = self.loaded.spec
                for recorded, event in zip(batch, spec.codec.decode_all(batch), strict=True):
                    seen = as_seen_by(self.loaded, event, self.seat, sealed=self.sealed)
                    yield sse_event("event", EventItem.of(recorded, seen), recorded.version)
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
