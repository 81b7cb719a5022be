"""A ladder's stream: the host opens it for a game (and ruleset), bots join and leave its
queue, and each pairing records the tables it seated and their games.

Each ladder is one stream (`ladder:<id>`, kind `ladder`), appended with its expected
version: two pairers that read the same version cannot both record a pairing, so a bot is
never seated twice (the second gets a conflict and reads again). A pairing records its
games' ids before any game is created (each id derives from the pairing's idempotency key),
so a pairer that dies in between leaves games that the next pairing creates; a game that
ends (or could not start) frees its bots, recorded by the next pairing as `LadderGameEnded`.
The ladders the host opened are listed by one more stream (`ladders`, the index). This
module is the events and the pure fold; the use cases are `shared.app.ladder`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from shared.messages.codec import EventCodec
from shared.messages.common import Event

KIND = "ladder"
STREAM_PREFIX = "ladder:"
INDEX = "ladders"
"""The stream listing every ladder the host opened (its `LadderListed` events)."""


class LadderOpened(Event, frozen=True, kw_only=True):
    """The host opened a ladder: its game, ruleset (a preset's name or fields) and table size."""

    ladder_id: str
    game: str
    ruleset: str | dict[str, Any] | None = None
    table_size: int = 2
    opened_at: str = ""


class LadderClosed(Event, frozen=True, kw_only=True):
    """The host closed the ladder: nothing more is paired (running games play on)."""

    at: str = ""


class BotQueued(Event, frozen=True, kw_only=True):
    """`bot` (`name@version`, of `account`) joined the queue."""

    bot: str
    account: str = ""
    at: str = ""


class BotLeft(Event, frozen=True, kw_only=True):
    """`bot` left the queue: it is paired no more (its running game plays on)."""

    bot: str
    at: str = ""


class LadderPaired(Event, frozen=True, kw_only=True):
    """A pairing seated `tables` (bots in seat order), one game each (`game_ids`, in order)."""

    tables: list[list[str]]
    game_ids: list[str]
    at: str = ""


class LadderGameEnded(Event, frozen=True, kw_only=True):
    """A ladder game ended (or could not start: `reason`); its bots are free again."""

    game_id: str
    reason: str = ""
    at: str = ""


class LadderListed(Event, frozen=True, kw_only=True):
    """The index's record of an opened ladder."""

    ladder_id: str
    game: str


LadderEvent = (
    LadderOpened
    | LadderClosed
    | BotQueued
    | BotLeft
    | LadderPaired
    | LadderGameEnded
    | LadderListed
)
"""Every event of kind `ladder`: a ladder's stream's, and the index's `LadderListed`."""
CODEC: EventCodec[LadderEvent] = EventCodec(LadderEvent)


class LadderGame(msgspec.Struct, frozen=True):
    """A ladder game: its number (the ladder's n-th game), id, bots in seat order, when it was
    paired."""

    number: int
    """Its place among the ladder's games (0: the first); its idempotency key's part."""
    game_id: str
    """The game's id."""
    bots: list[str]
    """`name@version` of each seat's bot, in seat order."""
    paired_at: str
    """When the pairing seated it (ISO 8601, UTC)."""


class QueuedBot(msgspec.Struct, frozen=True):
    """A bot in a ladder's queue."""

    bot: str
    """The bot, `name@version`."""
    account: str
    """Its account."""
    since: str
    """When it joined, or its last ladder game began (ISO 8601, UTC): how long it waited."""


class Ladder(msgspec.Struct, frozen=True):
    """A ladder as folded from its stream."""

    ladder_id: str
    game: str
    ruleset: str | dict[str, Any] | None
    table_size: int
    open: bool
    opened_at: str
    queue: list[QueuedBot]
    live: list[LadderGame]
    """The games in progress (not recorded as ended)."""
    history: list[LadderGame]
    """Every game it paired, oldest first."""
    version: int
    games_of: dict[str, tuple[int, ...]] = msgspec.field(default_factory=dict)
    """Each bot's games, as their places in `history`, oldest first: what a pairing reads of a
    bot's past without going through the whole history."""


class InvalidLadderStream(ValueError):
    """A ladder's stream does not begin with `LadderOpened`."""


def game_key(ladder_id: str, number: int) -> str:
    """Returns the idempotency key of the ladder's `number`-th game (its id derives from it)."""
    return f"ladder:{ladder_id}:{number}"


def stream_id(ladder_id: str) -> str:
    """Returns the stream of ladder `ladder_id`."""
    return f"{STREAM_PREFIX}{ladder_id}"


def fold(events: Sequence[LadderEvent], version: int) -> Ladder:
    """Returns the ladder `events` (its whole stream, at `version`) make."""
    if not events or not isinstance(events[0], LadderOpened):
        raise InvalidLadderStream("a ladder's stream begins with LadderOpened")
    folding = LadderFold(events[0])
    for event in events[1:]:
        folding.step(event)
    return folding.ladder(version)


class LadderFold:
    """A ladder's fold that goes on: `step` folds the next event of its stream in, `ladder`
    returns the ladder so far (later steps leave a returned ladder as it is). Folding a stream
    in steps makes the ladder `fold` makes of it at once."""

    def __init__(self, opened: LadderOpened) -> None:
        self.opened = opened
        self.open = True
        self.queue: dict[str, QueuedBot] = {}
        self.live: dict[str, LadderGame] = {}
        self.history: list[LadderGame] = []
        self.games_of: dict[str, tuple[int, ...]] = {}

    def step(self, event: LadderEvent) -> None:
        """Folds in the stream's next event."""
        match event:
            case LadderClosed():
                self.open = False
            case BotQueued(bot=bot, account=account, at=at):
                self.queue.setdefault(bot, QueuedBot(bot, account, at))
            case BotLeft(bot=bot):
                self.queue.pop(bot, None)
            case LadderPaired(tables=tables, game_ids=game_ids, at=at):
                for table, game_id in zip(tables, game_ids, strict=True):
                    game = LadderGame(len(self.history), game_id, list(table), at)
                    self.live[game_id] = game
                    self.history.append(game)
                    for bot in table:
                        self.games_of[bot] = (*self.games_of.get(bot, ()), game.number)
                    self._waits(table, at)
            case LadderGameEnded(game_id=game_id, at=at):
                ended = self.live.pop(game_id, None)
                self._waits(ended.bots if ended is not None else [], at)
            case LadderOpened() | LadderListed():
                pass

    def _waits(self, bots: Sequence[str], at: str) -> None:
        """Records that the queued ones of `bots` wait since `at`."""
        for bot in bots:
            if bot in self.queue:
                self.queue[bot] = msgspec.structs.replace(self.queue[bot], since=at)

    def ladder(self, version: int) -> Ladder:
        """Returns the ladder folded so far, at `version` (its last event's)."""
        opened = self.opened
        return Ladder(
            ladder_id=opened.ladder_id,
            game=opened.game,
            ruleset=opened.ruleset,
            table_size=opened.table_size,
            open=self.open,
            opened_at=opened.opened_at,
            queue=list(self.queue.values()),
            live=list(self.live.values()),
            history=list(self.history),
            version=version,
            games_of=dict(self.games_of),
        )
