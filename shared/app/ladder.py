"""The ladder's use cases: the host opens and closes a ladder, a bot joins and leaves its
queue, and `pair_ladder` seats the waiting bots (the embedded runtime's thread and the
workers' beat task both call it).

Every change appends to the ladder's stream at the version read (`shared.model.ladder_events`):
two pairers that read one version cannot both record a pairing, so no bot is seated twice;
the loser reads again. A pairing is recorded before its games are created (their ids derive
from the ladder's game numbers), so a pairer that dies in between leaves games the next
pairing creates. A refusal appends nothing.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import msgspec

from shared.app.admission import full
from shared.app.cache import PerStore
from shared.app.loading import load
from shared.app.registry import registered_bots
from shared.app.starting import GameCap, NewGame, start_game
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, InvalidRuleset, UnknownGame
from shared.messages.codec import encode_all
from shared.messages.common import Seat
from shared.model.accounts import HOST, recorded_owner
from shared.model.idempotency import game_id_for
from shared.model.ladder import Candidate, Met, Rules, pair
from shared.model.ladder_events import (
    CODEC,
    INDEX,
    KIND,
    BotLeft,
    BotQueued,
    InvalidLadderStream,
    Ladder,
    LadderClosed,
    LadderEvent,
    LadderFold,
    LadderGame,
    LadderGameEnded,
    LadderListed,
    LadderOpened,
    LadderPaired,
    game_key,
    stream_id,
)
from shared.model.registry import RegisteredBot, bound_seat
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import ConcurrencyConflict, EventStore, StoreUnavailable

RECENT_GAMES = 100
"""How many of a bot's last ladder games the pairing weighs (rematches and diversity)."""
RECOVER_AFTER = timedelta(seconds=30)
"""A recorded ladder game not created this long after its pairing is created by the next one
(its pairer died in between)."""


class UnknownLadder(LookupError):
    """No ladder has this id; 404."""

    def __init__(self, ladder_id: str) -> None:
        super().__init__(f"no ladder {ladder_id[:40]!r}")
        self.ladder_id = ladder_id


class LadderRefused(Exception):
    """The ladder refuses a bot or a change (`rule` names the rule, `field` the field); 409,
    or 403 for a suspended account."""

    def __init__(self, field: str, message: str, rule: str, *, status: int = 409) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.rule = rule
        self.status = status


@dataclass(frozen=True)
class Pairing:
    """What a pairing needs beside the store: the cap of running games per bot (the game
    service's: its slots and CARDARENA_MAX_GAMES_PER_BOT), the dispatcher that starts the
    platform's play, each game's ratings (`key` to ordinal), and the rules."""

    cap: GameCap
    dispatcher: BotTurnDispatcher
    ratings: Callable[[str], Mapping[str, float]]
    rules: Rules = field(default_factory=Rules)


def iso(now: datetime) -> str:
    """Returns `now` as ISO 8601."""
    return now.isoformat()


def _plausible(ladder_id: str) -> bool:
    return len(ladder_id) == 32 and all(c in "0123456789abcdef" for c in ladder_id)


class _Folds:
    """The ladders a process read from one store, each as its fold so far and its version."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.folds: dict[str, tuple[LadderFold, int]] = {}


_folds: PerStore[_Folds] = PerStore(_Folds)


def read_ladder(store: EventStore, ladder_id: str) -> Ladder:
    """Returns the ladder; raises UnknownLadder.

    A ladder this process read before from `store` is folded on with only the events its
    stream gained since (read from the last one folded, to see that the stream still holds
    it), so a read costs what the ladder gained, not its whole history."""
    if not _plausible(ladder_id):
        raise UnknownLadder(ladder_id)
    known = _folds.of(store)
    stream = stream_id(ladder_id)
    with known.lock:
        if (cached := known.folds.pop(ladder_id, None)) is not None:
            folding, version = cached
            recorded = store.read(stream, version - 1)
            if recorded and recorded[0].version == version and recorded[0].kind == KIND:
                for event in CODEC.decode_all(recorded[1:]):
                    folding.step(event)
                version = recorded[-1].version
                known.folds[ladder_id] = (folding, version)
                return folding.ladder(version)
        recorded = store.read(stream)
        if not recorded or recorded[0].kind != KIND:
            raise UnknownLadder(ladder_id)
        events = CODEC.decode_all(recorded)
        if not isinstance(events[0], LadderOpened):
            raise InvalidLadderStream("a ladder's stream begins with LadderOpened")
        folding = LadderFold(events[0])
        for event in events[1:]:
            folding.step(event)
        known.folds[ladder_id] = (folding, recorded[-1].version)
        return folding.ladder(recorded[-1].version)


def list_ladders(store: EventStore) -> list[Ladder]:
    """Returns every ladder the host opened, oldest first (closed ones too)."""
    ladders: list[Ladder] = []
    for listed in CODEC.decode_all(store.read(INDEX)):
        if not isinstance(listed, LadderListed):
            continue
        try:
            ladders.append(read_ladder(store, listed.ladder_id))
        except UnknownLadder:
            continue
    return ladders


def open_ladder(
    store: EventStore,
    game: str,
    ruleset: str | dict[str, Any] | None,
    table_size: int,
    now: datetime,
) -> Ladder:
    """Opens a ladder for `game`; raises InvalidRequest naming the field (`game`: unknown, or
    without decisions, never rated; `ruleset...`; `table_size`), with nothing stored."""
    try:
        spec = get_game(game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {game!r}") from None
    if not spec.has_decisions:
        raise InvalidRequest("game", f"{spec.title} has no decisions: its games are never rated")
    if not spec.min_players <= table_size <= spec.max_players:
        raise InvalidRequest(
            "table_size",
            f"{spec.title} seats {spec.min_players} to {spec.max_players} players,"
            f" not {table_size}",
        )
    try:
        spec.validate(spec.ruleset(ruleset), table_size)
    except InvalidRuleset as error:
        field_ = "ruleset" if error.field == "ruleset" else f"ruleset.{error.field}"
        raise InvalidRequest(field_, error.message) from None
    ladder_id = uuid.uuid4().hex
    while True:
        version = store.version(INDEX)
        listed = LadderListed(ladder_id=ladder_id, game=spec.name)
        try:
            store.append(INDEX, KIND, version, encode_all([listed]))
            break
        except ConcurrencyConflict:
            continue
    opened = LadderOpened(
        ladder_id=ladder_id,
        game=spec.name,
        ruleset=ruleset,
        table_size=table_size,
        opened_at=iso(now),
    )
    store.append(stream_id(ladder_id), KIND, 0, encode_all([opened]))
    return read_ladder(store, ladder_id)


def _append(
    store: EventStore, ladder_id: str, step: Callable[[Ladder], list[LadderEvent]]
) -> Ladder:
    """Appends what `step` makes of the current ladder (nothing: no append) at the version it
    read, reading again on a conflict; returns the ladder after it."""
    while True:
        ladder = read_ladder(store, ladder_id)
        events = step(ladder)
        if not events:
            return ladder
        try:
            store.append(stream_id(ladder_id), KIND, ladder.version, encode_all(events))
        except ConcurrencyConflict:
            continue
        return read_ladder(store, ladder_id)


def close_ladder(store: EventStore, ladder_id: str, now: datetime) -> Ladder:
    """Closes a ladder (a closed one stays closed); raises UnknownLadder."""
    return _append(store, ladder_id, lambda lad: [LadderClosed(at=iso(now))] if lad.open else [])


def join(store: EventStore, ladder_id: str, bot: RegisteredBot, now: datetime) -> Ladder:
    """Puts `bot` in the ladder's queue (a queued bot stays as it is); returns the ladder.

    Raises UnknownLadder, LadderRefused (`ladder_closed`: the host closed it;
    `account_suspended`, 403) and InvalidRequest (`bot`: it plays another game).
    """

    def step(ladder: Ladder) -> list[LadderEvent]:
        if not ladder.open:
            raise LadderRefused("ladder", f"the ladder {ladder_id} is closed", "ladder_closed")
        if bot.suspended:
            raise LadderRefused(
                "bot",
                f"{bot.key} belongs to the suspended account {bot.account}: it plays nowhere",
                "account_suspended",
                status=403,
            )
        if bot.game != ladder.game:
            title = get_game(bot.game).title
            raise InvalidRequest("bot", f"{bot.key} plays {title}, not {ladder.game}")
        if any(q.bot == bot.key for q in ladder.queue):
            return []
        return [BotQueued(bot=bot.key, account=bot.account, at=iso(now))]

    return _append(store, ladder_id, step)


def leave(store: EventStore, ladder_id: str, bot: str, now: datetime) -> Ladder:
    """Takes `bot` out of the queue (no-op when it is not queued); raises UnknownLadder."""

    def step(ladder: Ladder) -> list[LadderEvent]:
        queued = any(q.bot == bot for q in ladder.queue)
        return [BotLeft(bot=bot, at=iso(now))] if queued else []

    return _append(store, ladder_id, step)


def _ended(store: EventStore, game: LadderGame) -> bool | None:
    """Returns whether a ladder game is over; None when it does not exist (yet)."""
    try:
        loaded = load(store, game.game_id)
    except UnknownGame:
        return None
    return bool(loaded.spec.is_over(loaded.state))


def _candidates(
    ladder: Ladder,
    bots: Mapping[str, RegisteredBot],
    ratings: Mapping[str, float],
    now: datetime,
    rules: Rules,
    busy: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Returns the queued bots that may be paired (registered, not suspended, not `busy`: at
    the game service's cap of running games), as the pure pairing sees them: a bot that is no
    built-in bot of the host's plays its first `rules.provisional_games` ladder games against
    those, while one of them is queued."""
    today = now.date().isoformat()
    yesterday = (now - timedelta(days=1)).date().isoformat()
    live: dict[str, int] = {}
    for game in ladder.live:
        for bot in game.bots:
            live[bot] = live.get(bot, 0) + 1
    queued_bots = [bots[q.bot] for q in ladder.queue if q.bot in bots]
    series = rules.provisional_games if any(gatekeeper(b) for b in queued_bots) else 0
    found: list[Candidate] = []
    for queued in ladder.queue:
        registered = bots.get(queued.bot)
        if registered is None or registered.suspended or registered.game != ladder.game:
            continue
        if queued.bot in busy:
            continue
        builtin = gatekeeper(registered)
        places = ladder.games_of.get(queued.bot, ())
        played = len(places)
        found.append(
            Candidate(
                key=queued.bot,
                account=registered.account,
                ordinal=ratings.get(queued.bot, 0.0),
                since=datetime.fromisoformat(queued.since).timestamp(),
                in_progress=live.get(queued.bot, 0),
                today=_today(ladder, places, today, yesterday),
                recent=_recent(ladder, queued.bot, places),
                provisional=not builtin and played < series,
                builtin=builtin,
            )
        )
    return found


def _recent(ladder: Ladder, bot: str, places: Sequence[int]) -> tuple[Met, ...]:
    """Returns the bot's last RECENT_GAMES ladder games (its `places` in the history), most
    recent first, as the pairing sees them."""
    games = (ladder.history[i] for i in reversed(places[-RECENT_GAMES:]))
    return tuple(
        Met(tuple(b for b in game.bots if b != bot), _seconds(game.paired_at)) for game in games
    )


def _today(ladder: Ladder, places: Sequence[int], today: str, yesterday: str) -> int:
    """Returns how many of the bot's games (its `places` in the history) began on the UTC day
    `today`; it looks back to the first one paired before `yesterday` (pairers' clocks may
    differ by a little, never by a day)."""
    count = 0
    for i in reversed(places):
        day = ladder.history[i].paired_at[:10]
        if day < yesterday:
            break
        count += day == today
    return count


@functools.lru_cache(maxsize=4096)
def _seconds(at: str) -> float:
    """Returns an ISO 8601 time as seconds since the epoch (one pairing's games share it)."""
    return datetime.fromisoformat(at).timestamp()


def gatekeeper(bot: RegisteredBot) -> bool:
    """Returns whether `bot` is one of the host's built-in bots: the opponents of a new
    version's provisional series."""
    return bot.kind == "builtin" and bot.account == HOST


def seat_of(bot: RegisteredBot, game: str, bots: Sequence[RegisteredBot], field_: str) -> Seat:
    """Returns the seat a registered bot plays (bound to it unless it is built-in)."""
    if bot.kind == "builtin":
        account = recorded_owner(bot.account)
        return Seat(
            kind="bot", bot=bot.strategy, name=bot.name, version=bot.version, account=account
        )
    return bound_seat(game, bot.kind, bot.name, bot.version, bots, field_)


def pair_ladder(store: EventStore, ladder_id: str, now: datetime, pairing: Pairing) -> list[str]:
    """Records the ladder games that ended, seats the waiting bots (`shared.model.ladder.pair`)
    and creates their games; returns the ids of the games it paired. A closed ladder pairs
    nobody. Raises UnknownLadder."""
    registered = registered_bots(store)
    bots = {b.key: b for b in registered}
    while True:
        ladder = read_ladder(store, ladder_id)
        events: list[LadderEvent] = []
        missing: list[LadderGame] = []
        for game in ladder.live:
            over = _ended(store, game)
            if over:
                events.append(LadderGameEnded(game_id=game.game_id, at=iso(now)))
            elif over is None and now - datetime.fromisoformat(game.paired_at) > RECOVER_AFTER:
                missing.append(game)
        ended = {e.game_id for e in events if isinstance(e, LadderGameEnded)}
        still = [g for g in ladder.live if g.game_id not in ended]
        current = msgspec.structs.replace(ladder, live=still)
        tables: list[tuple[str, ...]] = []
        if ladder.open:
            rules = replace(pairing.rules, table_size=ladder.table_size)
            busy = _at_cap(store, pairing.cap, [q.bot for q in ladder.queue])
            ratings = pairing.ratings(ladder.game)
            candidates = _candidates(current, bots, ratings, now, rules, busy)
            tables = pair(candidates, rules, now.timestamp(), f"{ladder_id}:{ladder.version}")
        first = len(ladder.history)
        game_ids = [game_id_for(game_key(ladder_id, first + i)) for i in range(len(tables))]
        if tables:
            events.append(
                LadderPaired(tables=[list(t) for t in tables], game_ids=game_ids, at=iso(now))
            )
        if not events:
            break
        try:
            store.append(stream_id(ladder_id), KIND, ladder.version, encode_all(events))
        except ConcurrencyConflict:
            continue
        break
    paired = [LadderGame(first + i, game_ids[i], list(t), iso(now)) for i, t in enumerate(tables)]
    for game in [*missing, *paired]:
        _create(store, ladder, game, registered, pairing, now)
    return game_ids


def _at_cap(store: EventStore, cap: GameCap, queued: Sequence[str]) -> frozenset[str]:
    """Returns the queued bots that sit in as many running games as `cap` allows (its games
    outside the ladder count too): the pairing leaves them waiting rather than pair a table
    whose game would be refused."""
    return frozenset(bot for bot in queued if full(cap.slots, store, bot, cap.cap))


def _create(
    store: EventStore,
    ladder: Ladder,
    game: LadderGame,
    registered: Sequence[RegisteredBot],
    pairing: Pairing,
    now: datetime,
) -> None:
    """Creates a recorded ladder game (idempotent); one that cannot start (a cap reached, a
    bot gone) is recorded as ended, freeing its bots."""
    bots = {b.key: b for b in registered}
    try:
        seats = []
        for index, key in enumerate(game.bots):
            bot = bots.get(key)
            if bot is None or bot.suspended:
                raise InvalidRequest(f"bots[{index}]", f"{key} may not be seated")
            seats.append(seat_of(bot, ladder.game, registered, f"bots[{index}]"))
        request = NewGame(
            game=ladder.game,
            ruleset=ladder.ruleset,
            seats=seats,
            idempotency_key=game_key(ladder.ladder_id, game.number),
        )
        start_game(store, pairing.cap, pairing.dispatcher, request)
    except InvalidRequest as error:
        reason = f"not started: {error}"

        def step(current: Ladder) -> list[LadderEvent]:
            live = any(g.game_id == game.game_id for g in current.live)
            return (
                [LadderGameEnded(game_id=game.game_id, reason=reason, at=iso(now))] if live else []
            )

        _append(store, ladder.ladder_id, step)


def pair_open_ladders(store: EventStore, now: datetime, pairing: Pairing) -> list[str]:
    """Pairs every open ladder (`pair_ladder`); returns the ids of the games it paired. A
    ladder whose pairing fails on bad data is left for the next run, not the others'."""
    paired: list[str] = []
    for ladder in list_ladders(store):
        if ladder.open or ladder.live:
            paired += pair_ladder(store, ladder.ladder_id, now, pairing)
    return paired


def rules_of(
    max_concurrent: int, max_daily: int, cooldown_s: float, provisional_games: int = 0
) -> Rules:
    """Returns the pairing rules of the settings (CARDARENA_LADDER_*), the rest by default."""
    return Rules(
        max_concurrent=max_concurrent,
        max_daily=max_daily,
        cooldown_s=cooldown_s,
        provisional_games=provisional_games,
    )


def ratings_of(board: Callable[[str, int], Sequence[Any]]) -> Callable[[str], Mapping[str, float]]:
    """Returns the ratings a pairing reads, from a leaderboard read (`views.leaderboard`): each
    rated bot version's ordinal; none while the views are unavailable (the pairing goes on,
    every bot rated alike, rather than stop)."""

    def ratings(game: str) -> Mapping[str, float]:
        try:
            return {entry.key: entry.ordinal for entry in board(game, 1000)}
        except StoreUnavailable:
            return {}

    return ratings
