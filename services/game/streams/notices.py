"""A bot's notifications read from the feed: its challenges declined, cancelled or expired (to
the challenger), and its tournaments started, their rounds drawn and their end (to each entrant
the tournament binds seats to: an external or webhook entrant, the bots with a token). A bot
that joins an arena late hears `tournament_started` at its join, then the arena's pairings.

Whose a challenge's or a tournament's event is comes from the first event of its stream
(`ChallengeIssued`, `TournamentCreated`), which never changes: this process keeps the latest
ones it read (`Heads`), so a round announced to many bots' streams reads it once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

from litestar.response import ServerSentEventMessage

from services.game.streams.schemas import (
    CancelledChallenge,
    DeclinedChallenge,
    ExpiredChallenge,
    FinishedTournament,
    RoundGame,
    StartedRound,
    StartedTournament,
)
from services.game.streams.sse import sse_event
from shared.app.cache import PerStore
from shared.messages.common import Event
from shared.model import challenges
from shared.model.challenges import (
    ChallengeCancelled,
    ChallengeDeclined,
    ChallengeExpired,
    ChallengeIssued,
    ChallengeStarted,
)
from shared.model.idempotency import game_id_for
from shared.model.tournaments import model as tournaments
from shared.model.tournaments.model import (
    EntrantJoined,
    RoundScheduled,
    TournamentCancelled,
    TournamentCreated,
    TournamentFinished,
)
from shared.store.port import EventStore, FeedEntry

CHALLENGE_EVENTS = ("challenge_declined", "challenge_cancelled", "challenge_expired")
"""The event names of a challenger's notifications."""
TOURNAMENT_EVENTS = ("tournament_started", "round_started", "tournament_finished")
"""The event names of an entrant's notifications."""
_TOKEN_KINDS = frozenset({"external", "webhook"})


class Heads:
    """The first events of the challenge and tournament streams this process read lately
    (least recently used first out). Thread-safe."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._heads: OrderedDict[str, Event] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, stream: str, head: Event) -> None:
        """Keeps `head` as the first event of `stream`."""
        with self._lock:
            self._heads[stream] = head
            self._heads.move_to_end(stream)
            while len(self._heads) > self._size:
                self._heads.popitem(last=False)

    def of(self, store: EventStore, stream: str) -> Event | None:
        """Returns the first event of `stream` (None: the store holds no such stream, or no
        longer), reading it unless it is kept."""
        with self._lock:
            known = self._heads.get(stream)
            if known is not None:
                self._heads.move_to_end(stream)
                return known
        first = store.read(stream, 0, 1)
        if not first:
            return None
        codec = challenges.CODEC if first[0].kind == challenges.KIND else tournaments.CODEC
        head: Event = codec.decode(first[0])
        self.put(stream, head)
        return head


_heads: PerStore[Heads] = PerStore(Heads)


class Joins:
    """The late joiners of the arenas this process read lately: per stream, the version read
    up to and each `EntrantJoined` (its version and bot key), read on from there as needed
    (least recently used first out). Thread-safe."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._joins: OrderedDict[str, tuple[int, list[tuple[int, str]]]] = OrderedDict()
        self._lock = threading.Lock()

    def upto(self, store: EventStore, stream: str, version: int) -> list[str]:
        """Returns the bot keys (`bot@version`) of the entrants that joined the arena of
        `stream` at or before `version`, in the order they joined."""
        with self._lock:
            read, joined = self._joins.get(stream, (0, []))
        if read < version:
            joined = list(joined)
            for recorded in store.read(stream, read, version - read):
                if recorded.type == "EntrantJoined":
                    event = tournaments.CODEC.decode(recorded)
                    assert isinstance(event, EntrantJoined)
                    key = f"{event.entrant.bot}@{event.entrant.version}"
                    if event.entrant.kind in _TOKEN_KINDS:
                        joined.append((recorded.version, key))
                    else:
                        joined.append((recorded.version, ""))
            with self._lock:
                self._joins[stream] = (version, joined)
                self._joins.move_to_end(stream)
                while len(self._joins) > self._size:
                    self._joins.popitem(last=False)
        return [key for at, key in joined if at <= version]


_joins: PerStore[Joins] = PerStore(Joins)


@dataclass
class Notes:
    """What some feed entries tell one bot: its notifications, the challenges it issued
    among them (when each expires) and those of its challenges that closed."""

    messages: list[ServerSentEventMessage] = field(default_factory=list)
    issued: dict[str, datetime] = field(default_factory=dict)
    closed: list[str] = field(default_factory=list)


def note(store: EventStore, bot: str, entry: FeedEntry, notes: Notes) -> None:
    """Adds to `notes` what `entry` (of a challenge's or a tournament's stream) tells `bot`
    (reads the stream's first event unless this process keeps it: run it in a thread)."""
    if entry.event.kind == challenges.KIND:
        _challenge(store, bot, entry, notes)
    elif entry.event.kind == tournaments.KIND:
        _tournament(store, bot, entry, notes)


def _challenge(store: EventStore, bot: str, entry: FeedEntry, notes: Notes) -> None:
    """Adds the challenger's news of one event of a challenge's stream."""
    recorded, heads = entry.event, _heads.of(store)
    event = challenges.CODEC.decode(recorded)
    if isinstance(event, ChallengeIssued):
        heads.put(recorded.game_id, event)
        if event.challenger == bot:
            notes.issued[event.challenge_id] = datetime.fromisoformat(event.expires_at)
        return
    if not isinstance(event, ChallengeDeclined | ChallengeCancelled | ChallengeExpired):
        if isinstance(event, ChallengeStarted):
            notes.closed.append(recorded.game_id.removeprefix(challenges.STREAM_PREFIX))
        return
    issued = heads.of(store, recorded.game_id)
    if not isinstance(issued, ChallengeIssued) or issued.challenger != bot:
        return
    challenge_id, game = issued.challenge_id, issued.game
    notes.closed.append(challenge_id)
    match event:
        case ChallengeDeclined(bot=by, reason=reason, at=at):
            data: object = DeclinedChallenge(challenge_id, game, by, reason, at)
            name = "challenge_declined"
        case ChallengeCancelled(by=by, at=at):
            data, name = CancelledChallenge(challenge_id, game, by, at), "challenge_cancelled"
        case _:
            pending = _pending(store, issued, recorded.version)
            data = ExpiredChallenge(challenge_id, game, issued.expires_at, pending)
            name = "challenge_expired"
    notes.messages.append(sse_event(name, data, entry.position))


def _pending(store: EventStore, issued: ChallengeIssued, version: int) -> list[str]:
    """Returns the bots an expired challenge still waited for (its stream up to `version`)."""
    recorded = store.read(challenges.stream_id(issued.challenge_id), 0, version)
    events = challenges.CODEC.decode_all(recorded) if recorded else [issued]
    return challenges.fold(events, version, datetime.fromisoformat(issued.expires_at)).pending


def entries_of(created: TournamentCreated, bot: str) -> list[int]:
    """Returns the indices of `bot`'s entries in a tournament (the entrants it binds seats
    to: a built-in strategy of the same name is not the bot)."""
    return [
        index
        for index, entrant in enumerate(created.definition.entrants)
        if entrant.kind in _TOKEN_KINDS and f"{entrant.bot}@{entrant.version}" == bot
    ]


def _tournament(store: EventStore, bot: str, entry: FeedEntry, notes: Notes) -> None:
    """Adds an entrant's news of one event of a tournament's stream."""
    recorded, heads = entry.event, _heads.of(store)
    if recorded.type not in _TOURNAMENT_TYPES:
        return
    event = tournaments.CODEC.decode(recorded)
    tournament_id = recorded.game_id.removeprefix("tournament:")
    if isinstance(event, TournamentCreated):
        heads.put(recorded.game_id, event)
        created: Event | None = event
    else:
        created = heads.of(store, recorded.game_id)
    if not isinstance(created, TournamentCreated):
        return
    entries = entries_of(created, bot)
    first, joined = len(created.definition.entrants), list[str]()
    if created.definition.format == "arena":  # its late joiners too
        joined = _joins.of(store).upto(store, recorded.game_id, recorded.version)
        entries += [first + i for i, key in enumerate(joined) if key == bot]
    if not entries:
        return
    data: object
    match event:
        case EntrantJoined():
            if first + len(joined) - 1 not in entries:
                return
            name = "tournament_started"  # to the late joiner: the arena it has joined
            definition = created.definition
            data = StartedTournament(
                tournament_id,
                definition.game,
                definition.format,
                definition.table_size,
                entries,
                first + len(joined),
            )
        case TournamentCreated(definition=definition):
            name = "tournament_started"
            data = StartedTournament(
                tournament_id,
                definition.game,
                definition.format,
                definition.table_size,
                entries,
                len(definition.entrants),
            )
        case RoundScheduled():
            name, data = "round_started", _round(tournament_id, event, entries)
            if created.definition.format == "arena" and not data.games:
                return  # an arena's pairing without the bot: nothing of its own
        case TournamentFinished(winner=winner):
            name = "tournament_finished"
            data = FinishedTournament(tournament_id, "finished", winner, "")
        case TournamentCancelled(reason=reason):
            name = "tournament_finished"
            data = FinishedTournament(tournament_id, "cancelled", None, reason)
        case _:
            return
    notes.messages.append(sse_event(name, data, entry.position))


_TOURNAMENT_TYPES = frozenset(
    {
        "TournamentCreated",
        "RoundScheduled",
        "TournamentFinished",
        "TournamentCancelled",
        "EntrantJoined",
    }
)


def _round(tournament_id: str, scheduled: RoundScheduled, entries: list[int]) -> StartedRound:
    """Returns the news of a round drawn, as one entrant (its `entries`) sees it."""
    games = []
    for game in scheduled.games:
        seats = [seat for seat, entrant in enumerate(game.table) if entrant in entries]
        if seats:
            games.append(RoundGame(game_id_for(game.key), seats))
    bye = any(entrant in scheduled.byes for entrant in entries)
    return StartedRound(tournament_id, scheduled.round, games, bye)
