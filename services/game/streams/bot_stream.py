"""One bot's server-sent stream of its games' starts, turns and finishes, its challenges, and
the notifications of its challenges and tournaments (`services.game.streams.notices`).

The bot's games and challenges come from the app's bot index (`shared.ports.bot_index`): on
connect its running games and open challenges, then, for each feed entry, whether the entry's
game seats the bot. A `Last-Event-ID` replays the starts, finishes and notifications from the
feed between that cursor and the feed's end at connect (the feed itself, never a fold of all
of it). The stream follows the open challenges the bot issued and records each expiry when it
is due, so that its `challenge_expired` comes from the feed like every other notification.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from litestar.response import ServerSentEventMessage

from services.game.http.pipeline.auth import Caller
from services.game.http.pipeline.credentials import CredentialEnded, Hold, TokenWatch, checked
from services.game.http.waiters import Streams, Ticket
from services.game.streams.notices import Notes, note
from services.game.streams.schemas import GameOver, StartedGame, Turn
from services.game.streams.sse import keepalive, sse_event
from services.game.streams.turns import all_waiting, open_challenges, waiting_turns
from shared.app import challenges as challenge_app
from shared.app.waiting import wait_ms
from shared.catalog import get_game
from shared.messages.common import GameCreated, GameFinished
from shared.model import challenges
from shared.model.challenges import Challenge, ChallengeIssued, UnknownChallenge
from shared.model.tournaments import model as tournaments
from shared.ports.bot_index import BotIndex
from shared.ports.game_slots import GameSlots
from shared.store.port import (
    EventStore,
    FeedEntry,
    cursor_of,
    cursor_positions,
    own_position,
    position_key,
)

T = TypeVar("T")
_NOTICE_KINDS = frozenset({challenges.KIND, tournaments.KIND})


@dataclass
class BotStream:
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
    issued: GameSlots | None = None
    """The places of the challenges the bot issued (`Access.challenges`): on connect, those
    still open are followed, and their expiries recorded when due."""
    expiring: dict[str, datetime] = field(default_factory=dict)
    """The open challenges the bot issued: when each expires."""
    ticket: Ticket | None = None
    """The stream's place among its token's (`Streams.admit_token`), given back at its end."""
    opened_at: str | None = None
    """The feed's cursor when the request came, read before the answer starts: what happens
    after a client's request is sent, even before its first byte of answer, is in its stream
    (read at the first iteration, a notice written between the answer's headers and that read
    was lost)."""
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
        return [sse_event("challenge", challenge, event_id)]

    def _turns(self, turns: list[Turn], event_id: str) -> list[ServerSentEventMessage]:
        """Returns `your_turn` for each of `turns` not yet announced."""
        fresh = [t for t in turns if (t.game_id, t.seat, t.version) not in self.announced]
        self.announced.update((t.game_id, t.seat, t.version) for t in fresh)
        return [sse_event("your_turn", turn, event_id) for turn in fresh]

    def _news(self, index: BotIndex, entries: list[FeedEntry]) -> tuple[list[Any], list[str]]:
        """Returns the messages in `entries` for this bot (`game_started`, `game_finished`,
        `challenge`, and the notifications of `notices`), and the ids of its games that they
        touch; follows the expiries of the challenges it issued (the index and the notices
        may read: run it in a thread)."""
        messages: list[Any] = []
        touched: list[str] = []
        for entry in entries:
            recorded = entry.event
            if recorded.kind in _NOTICE_KINDS:
                if recorded.kind == challenges.KIND:
                    messages += self._issued(entry)
                notes = Notes()
                note(self.store, self.bot, entry, notes)
                messages += notes.messages
                self.expiring.update(notes.issued)
                for challenge_id in notes.closed:
                    self.expiring.pop(challenge_id, None)
                continue
            seats = index.seats_of(self.bot, recorded.game_id)
            if not seats:
                continue
            if recorded.game_id not in touched:
                touched.append(recorded.game_id)
            if recorded.type not in {"GameCreated", "GameFinished", "GameAborted"}:
                continue
            event = get_game(recorded.kind).codec.decode(recorded)
            if isinstance(event, GameCreated):
                started = StartedGame(recorded.game_id, recorded.kind, seats)
                messages.append(sse_event("game_started", started, entry.position))
            elif isinstance(event, GameFinished):
                over = GameOver(recorded.game_id, seats, event.result)
                messages.append(sse_event("game_finished", over, entry.position))
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

    async def _backlog(self, index: BotIndex, until: str) -> AsyncIterator[Any]:
        """Yields the starts and finishes from `resume_from` up to the feed cursor `until`
        (of each partition, the entries up to its position there)."""
        position = self.resume_from or until
        bound = cursor_positions(until, self.store.partitions)
        while position != until:
            page = await self._call(self.store.read_feed, position, 500)
            if not page:
                return
            inside = [
                clamped(entry, bound)
                for entry in page
                if position_key(own_position(entry)) <= position_key(bound[entry.partition])
            ]
            await self._call(index.refresh)
            messages, _ = await self._call(self._news, index, inside)
            for message in messages:
                yield message
            position = page[-1].position

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
            position: str
            if self.opened_at is None:
                position = await call(store.feed_position)
            else:
                position = self.opened_at
            async for message in self._backlog(index, position):
                yield message
            for challenge in await call(open_challenges, store, index, self.bot):
                for message in self._challenge(challenge, position):
                    yield message
            for message in self._turns(await call(all_waiting, store, index, self.bot), position):
                yield message
            await call(self._follow_issued)
            while (remaining := deadline - time.monotonic()) > 0:
                wait = wait_ms(min(remaining, config.keepalive_s, self._to_expiry()))
                entries = await call(store.wait_feed, position, wait)
                if self._to_expiry() == 0:
                    await call(self._expire_due)
                if not entries:
                    yield keepalive()
                    continue
                position = entries[-1].position
                await call(index.refresh)
                messages, touched = await call(self._news, index, entries)
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
            if self.ticket is not None:
                self.ticket.release()

    def _follow_issued(self) -> None:
        """Follows the open challenges the bot issued (its places of open challenges) and
        records the expiry of each that expired unrecorded: the record's feed entry, after
        the stream's position, brings its `challenge_expired` (blocks: run it in a thread)."""
        if self.issued is None:
            return
        now = datetime.now(UTC)
        for challenge_id in self.issued.games(self.bot):
            if not challenge_id.startswith("reserved:"):
                self._follow(challenge_id, now)

    def _follow(self, challenge_id: str, now: datetime) -> None:
        """Records `challenge_id`'s expiry when due, else follows it while it is open."""
        try:
            challenge = challenge_app.expire(self.store, challenge_id, now)
        except UnknownChallenge:
            return
        if challenge.status == "open" and challenge.challenger == self.bot:
            self.expiring[challenge_id] = datetime.fromisoformat(challenge.expires_at)

    def _to_expiry(self) -> float:
        """Returns the seconds until the first followed challenge expires (inf: none)."""
        if not self.expiring:
            return math.inf
        soonest = min(self.expiring.values())
        return max(0.0, (soonest - datetime.now(UTC)).total_seconds())

    def _expire_due(self) -> None:
        """Records the expiry of every followed challenge that is due (blocks)."""
        now = datetime.now(UTC)
        for challenge_id in [c for c, at in self.expiring.items() if at <= now]:
            self.expiring.pop(challenge_id, None)
            with contextlib.suppress(UnknownChallenge):
                challenge_app.expire(self.store, challenge_id, now)


def clamped(entry: FeedEntry, bound: list[str]) -> FeedEntry:
    """Returns `entry` (of a merged read) with its cursor held at `bound` in every partition
    it passed: a client resuming from it reads again what lies past `bound` (which the live
    part of the stream sends), so a backlog's ids leave no gap."""
    parts = cursor_positions(entry.position, len(bound))
    held = [
        part if position_key(part) <= position_key(limit) else limit
        for part, limit in zip(parts, bound, strict=True)
    ]
    return FeedEntry(cursor_of(held), entry.event, entry.partition)
