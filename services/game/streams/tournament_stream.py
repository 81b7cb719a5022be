"""One client's server-sent stream of one tournament: what it missed (after its Last-Event-ID,
else everything), then each new event of the tournament's stream as it is appended, until the
tournament ends. The messages and their ids are `tournament_feed`'s."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from litestar.response import ServerSentEventMessage

from services.game.http.waiters import Streams, Ticket
from services.game.streams.sse import keepalive, sse_event
from services.game.streams.tournament_feed import TERMINAL, Message, coalesced, messages
from shared.app.tournaments import UnknownTournament
from shared.app.waiting import wait_ms
from shared.messages.envelope import RecordedEvent
from shared.model.tournaments.model import CODEC, TournamentState, stream_id
from shared.ports.archive import EventArchive
from shared.store.port import EventStore

T = TypeVar("T")


def tournament_log(
    store: EventStore, archive: EventArchive, tournament_id: str
) -> list[RecordedEvent]:
    """Returns the tournament's events, from the store's stream while it holds one, else from
    the archive's copy; raises UnknownTournament when neither knows it."""
    stream = stream_id(tournament_id)
    recorded = store.read(stream) or archive.read(stream)
    if not recorded or recorded[0].kind != "tournament":
        raise UnknownTournament(tournament_id)
    return recorded


@dataclass
class TournamentStream:
    """One client's stream of one tournament, after a message id (None: from the start)."""

    streams: Streams
    store: EventStore
    tournament_id: str
    log: list[RecordedEvent]
    """The tournament's events when the stream was opened."""
    after: tuple[int, int] | None
    ticket: Ticket | None = None
    """An anonymous spectator's place, given back when the stream ends."""
    state: TournamentState | None = None
    version: int = 0

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        """Returns `function(*args)` run in one of the spectator streams' threads."""
        return await self.streams.run(function, *args, spectator=True)

    def _fold(self, batch: list[RecordedEvent]) -> list[Message]:
        """Folds `batch` in; returns its messages that follow the client's last one."""
        out: list[Message] = []
        for recorded, event in zip(batch, CODEC.decode_all(batch), strict=True):
            self.state, told = messages(self.tournament_id, self.state, event, recorded.version)
            self.version = recorded.version
            out += [m for m in told if self.after is None or m.key > self.after]
        return coalesced(out)

    async def events(self) -> AsyncIterator[ServerSentEventMessage]:
        """Yields what the client missed, then each new message, with keep-alive comments when
        quiet, until the tournament's last message or the stream's lifetime."""
        config, self.streams.open = self.streams.config, self.streams.open + 1
        stream = stream_id(self.tournament_id)
        try:
            deadline = time.monotonic() + config.lifetime_s
            batch = self.log
            while True:
                for message in self._fold(batch):
                    yield sse_event(message.event, message.data, message.id)
                    if message.event in TERMINAL:
                        return
                if self.state is not None and self.state.status != "running":
                    return  # resumed after its last message: nothing more will come
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                wait = wait_ms(min(remaining, config.keepalive_s))
                batch = await self._call(self.store.wait, stream, self.version, wait)
                if not batch:
                    yield keepalive()
        finally:
            self.streams.open -= 1
            if self.ticket is not None:
                self.ticket.release()
