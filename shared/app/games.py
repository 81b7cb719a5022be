"""Use cases over the event store: each loads a game's stream, decides and appends.

The game service, the workers and the CLI call these; none of them touches a rules
engine or the store's encoding directly.
"""

from __future__ import annotations

import abc
import hashlib
import secrets
import threading
import uuid
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from shared.app import stalls
from shared.catalog import get_game
from shared.errors import GameNotFound, IllegalAction, InvalidRequest, InvalidRuleset, UnknownGame
from shared.games.base import AnyGame
from shared.messages.codec import encode, encode_all
from shared.messages.common import (
    Action,
    Clock,
    Event,
    GameCreated,
    GameFinished,
    Seat,
)
from shared.model import clocks, deal_keys, deals, idempotency
from shared.model.idempotency import ClientKey
from shared.store.port import (
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    NewEvent,
    RecordedEvent,
    StoreError,
)


@dataclass(frozen=True)
class LoadedGame:
    """A game folded from its stream: its spec, creation event, state, version and clock."""

    game_id: str
    spec: AnyGame
    created: GameCreated
    state: Any
    version: int
    clock: clocks.ClockState | None = None
    """The game's clock (strikes, forfeits, banks, the current wait); None when untimed."""

    @property
    def forfeits(self) -> tuple[int, ...]:
        """Returns the seats that forfeited, in the order they did."""
        return () if self.clock is None else self.clock.forfeits


@dataclass(frozen=True)
class Outcome:
    """What an append produced: the stream's version after it and whether it was a replay."""

    game_id: str
    first_version: int
    version: int
    replayed: bool
    loaded: LoadedGame | None = None
    """The game after the append when this process could fold it on without reading the
    stream again (an action of an untimed game), else None: `load` it."""


class BotTurnDispatcher(abc.ABC):
    """Starts the platform's play of a game's consecutive bot turns (in-process or on workers)."""

    @abc.abstractmethod
    def dispatch(self, game_id: str) -> None:
        """Arranges for `play_bot_turns(game_id)` to run, and its tournament to go on after."""

    @abc.abstractmethod
    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        """Arranges for a tournament to be recorded (unless it is already) and its games started."""


class InProcessDispatcher(BotTurnDispatcher):
    """Plays bot turns at once, in the caller's thread: the embedded default.

    Games started while one is being played (a tournament's next games) wait in a queue
    that the outermost call drains, so a tournament runs iteratively, not recursively.
    Clocks and webhook seats are watched by threads (`shared.app.deadlines.TimerWatcher`);
    `webhooks` plays a webhook seat's turn (None: webhooks are not called, the clock alone
    plays those seats).
    """

    def __init__(
        self, store: EventStore, webhooks: Callable[[EventStore, str, int, int], str] | None = None
    ) -> None:
        from shared.app.deadlines import TimerWatcher  # noqa: PLC0415 - it builds on these handlers

        self._store = store
        self._local = threading.local()
        self._watcher = TimerWatcher(store, self.dispatch, webhooks)

    def dispatch(self, game_id: str) -> None:
        # Imported here: tournaments build on these handlers.
        from shared.app.tournaments import after_game  # noqa: PLC0415

        queue: deque[str] | None = getattr(self._local, "queue", None)
        if queue is not None:
            queue.append(game_id)
            return
        self._local.queue = queue = deque([game_id])
        try:
            while queue:
                current = queue.popleft()
                play_bot_turns(self._store, current)
                after_game(self._store, current, self.dispatch)
                self._watcher.watch(current)
        finally:
            self._local.queue = None

    def close(self) -> None:
        """Cancels the pending deadline timers of this dispatcher."""
        self._watcher.close()

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        from shared.app.tournaments import (  # noqa: PLC0415
            ensure_tournament,
            start_pending_games,
        )

        ensure_tournament(self._store, definition, tournament_id)
        start_pending_games(self._store, tournament_id, self.dispatch)


def game_id_for(idempotency_key: str | None) -> str:
    """Returns a new game id; a creation retried with the same key gets the same id."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    return hashlib.sha256(f"create:{idempotency_key}".encode()).hexdigest()[:32]


def _fingerprint(*parts: Any) -> str:
    """Returns a digest of a request's content, to tell a retry from a reused key."""
    return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()


def _seats(spec: AnyGame, seats: Sequence[Seat] | None, players: int | None) -> list[Seat]:
    """Returns the seats of a new game, defaulting every seat to the game's first bot.

    An external seat is host-played, or bound to a registered bot (`name`, `version`); a
    webhook seat is always bound. Binding is checked against the registry by the caller.
    """
    default_bot = next(iter(spec.bots))
    count = len(seats) if seats is not None else players
    if count is not None and not spec.min_players <= count <= spec.max_players:
        raise InvalidRequest(
            "players" if seats is None else "seats",
            f"{spec.title} takes {spec.min_players} to {spec.max_players} players, not {count}",
        )
    if seats is None:
        if players is None:
            raise InvalidRequest("seats", "give the seats, or the number of players")
        return [Seat(kind="bot", bot=default_bot) for _ in range(players)]
    if players is not None and players != len(seats):
        raise InvalidRequest("players", f"{players} players but {len(seats)} seats")
    checked: list[Seat] = []
    for index, seat in enumerate(seats):
        if seat.kind in {"external", "webhook"}:
            if not spec.has_decisions:
                raise InvalidRequest(
                    f"seats[{index}].kind",
                    f"{spec.title} has no decisions; every seat is played by the platform",
                )
            if seat.kind == "webhook" and seat.bound_bot is None:
                raise InvalidRequest(
                    f"seats[{index}].bot", "a webhook seat names its registered bot and version"
                )
            checked.append(seat)
            continue
        bot = seat.bot or default_bot
        if bot not in spec.bots:
            names = ", ".join(spec.bots)
            raise InvalidRequest(f"seats[{index}].bot", f"unknown bot {bot!r}; one of {names}")
        checked.append(Seat(kind="bot", bot=bot, name=seat.name, version=seat.version))
    return checked


def _ruleset_clock(rules: msgspec.Struct) -> Clock | None:
    """Returns the clock a ruleset sets for its games, None when it sets none."""
    clock = getattr(rules, "clock", None)
    return clock if isinstance(clock, Clock) else None


def create_game(
    store: EventStore,
    game: str,
    *,
    ruleset: str | Mapping[str, Any] | None = None,
    seats: Sequence[Seat] | None = None,
    players: int | None = None,
    seed: int | str | None = None,
    idempotency_key: str | None = None,
    created_at: str = "",
    tournament: tuple[str, str] | None = None,
    clock: Clock | None = None,
    salt: str | None = None,
) -> Outcome:
    """Creates and deals a game; raises InvalidRequest naming the field at fault.

    `tournament` is (tournament id, the game's key in its schedule) for a tournament game;
    `clock` times its client seats, overriding the ruleset's clock (a game with a webhook
    seat always has one, see `shared.model.clocks.clock_for`). The engine deals from `seed` itself
    (None: a fresh deal key of 256 random bits); the platform passes a host's seed as its
    deal key (`shared.model.deal_keys`). The game commits to its seed with `salt` (None: 32 random
    bytes; tests fix it), see `shared.model.deals`.
    """
    try:
        spec = get_game(game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {game!r}") from None
    try:
        rules = spec.ruleset(ruleset)
        table = _seats(spec, seats, players)
        spec.validate(rules, len(table))
    except InvalidRuleset as error:
        field = error.field if error.field in {"ruleset", "players"} else f"ruleset.{error.field}"
        raise InvalidRequest(field, error.message) from None
    timing = () if clock is None else (clock,)
    fingerprint = (
        _fingerprint(game, ruleset, seats, players, seed, *timing) if idempotency_key else ""
    )
    clock = clocks.clock_for(_ruleset_clock(rules) if clock is None else clock, table)
    seed = deal_keys.fresh() if seed is None else seed
    salt = secrets.token_hex(32) if salt is None else salt
    created = GameCreated(
        game=spec.name,
        ruleset=msgspec.to_builtins(rules),
        seats=table,
        created_at=created_at,
        bot_seed=hashlib.sha256(f"bots:{seed}".encode()).hexdigest()[:16],
        tournament=tournament[0] if tournament else "",
        tournament_key=tournament[1] if tournament else "",
        clock=msgspec.UNSET if clock is None else clock,
        commitment=deals.commitment(seed, salt),
        deal_seed=deals.seed_text(seed),
        salt=salt,
    )
    started = spec.deal(rules, len(table), seed)
    game_id = game_id_for(idempotency_key)
    result = store.append(
        game_id, spec.name, 0, encode_all([created, started]), idempotency_key, fingerprint
    )
    return Outcome(game_id, result.first_version, result.last_version, result.replayed)


class GameCache:
    """The games one process folded lately (least recently used first out), so that the next
    load of a game folds only what its stream gained since. Thread-safe.

    Streams are append-only and every event is folded by pure functions, so a cached game
    plus the events after its version is the game; `load` checks that the stream still
    holds the cached version's event (a dropped or lost stream is folded afresh).
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._games: OrderedDict[str, LoadedGame] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> LoadedGame | None:
        """Returns the game as last folded here, None if it is not cached."""
        with self._lock:
            known = self._games.get(game_id)
            if known is not None:
                self._games.move_to_end(game_id)
            return known

    def put(self, loaded: LoadedGame) -> None:
        """Keeps `loaded` unless a later version of the game is cached already."""
        with self._lock:
            known = self._games.get(loaded.game_id)
            if known is None or known.version <= loaded.version:
                self._games[loaded.game_id] = loaded
                self._games.move_to_end(loaded.game_id)
            while len(self._games) > self._size:
                self._games.popitem(last=False)

    def forget(self, game_id: str) -> None:
        """Drops the game from the cache."""
        with self._lock:
            self._games.pop(game_id, None)


_caches: weakref.WeakKeyDictionary[EventStore, GameCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def cache_of(store: EventStore) -> GameCache:
    """Returns the game cache of `store` in this process (one per store object)."""
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            cache = _caches[store] = GameCache()
        return cache


def _fold(game_id: str, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns the game folded from its whole stream `recorded` (not empty)."""
    spec = get_game(recorded[0].kind)
    events = spec.codec.decode_all(recorded)
    created = events[0]
    if not isinstance(created, GameCreated):
        raise TypeError(f"game {game_id} does not start with GameCreated")
    state, clock = clocks.fold_with_clock(spec, created, events, recorded)
    return LoadedGame(game_id, spec, created, state, recorded[-1].version, clock)


def _fold_more(known: LoadedGame, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns `known` with the events of `recorded` (the versions after it) folded in, as
    `clocks.fold_with_clock` folds them."""
    spec, state, clock = known.spec, known.state, known.clock
    for event, item in zip(spec.codec.decode_all(recorded), recorded, strict=True):
        if clock is not None:
            clock = clocks.after_event(spec, clock, state, event, item.version, item.recorded_at)
        state = spec.step(state, event)
    return LoadedGame(known.game_id, spec, known.created, state, recorded[-1].version, clock)


def load(store: EventStore, game_id: str) -> LoadedGame:
    """Returns the game folded from its stream; raises UnknownGame.

    A game this process loaded before is taken from `cache_of(store)` and folded on with
    only the events its stream gained since (the stream is read from the cached version's
    event, to see that it still holds it).
    """
    cache = cache_of(store)
    known = cache.get(game_id)
    if known is not None:
        recorded = store.read(game_id, known.version - 1)
        if recorded and recorded[0].version == known.version:
            loaded = _fold_more(known, recorded[1:]) if len(recorded) > 1 else known
            cache.put(loaded)
            return loaded
        cache.forget(game_id)
    recorded = store.read(game_id)
    if not recorded:
        raise UnknownGame(game_id)
    loaded = _fold(game_id, recorded)
    cache.put(loaded)
    return loaded


def current(store: EventStore, game_id: str, version: int) -> LoadedGame:
    """Returns the game to decide a move at `version` on: this process's fold of it when that
    is an untimed game at exactly `version`, with no read of the stream; else `load`.

    A fold cached at `version` is the game at `version` (streams are append-only), and the
    move's append succeeds only while the stream is still at `version`: a stale fold costs
    that append a ConcurrencyConflict (the client's version is stale too), never a wrong
    event. A timed game's fold depends on the store's clock, so it is always loaded.
    """
    known = cache_of(store).get(game_id)
    if known is not None and known.clock is None and known.version == version:
        return known
    return load(store, game_id)


def caught_up(store: EventStore, known: LoadedGame, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns the game `known` with `recorded` folded in, when they are the events its
    stream gained right after it (as a wait on the stream returns them); else loads it.
    """
    if not recorded or recorded[0].version != known.version + 1:
        return load(store, known.game_id)
    loaded = _fold_more(known, recorded)
    cache_of(store).put(loaded)
    return loaded


def _folded_on(
    store: EventStore, loaded: LoadedGame, events: Sequence[Event], result: AppendResult
) -> LoadedGame | None:
    """Returns `loaded` with the `events` it just appended folded in (and caches it), when
    that is what a fold of its stream gives: an untimed game (a clock folds by the store's
    timestamps) whose append was not a replay. Else None."""
    if loaded.clock is not None or result.replayed or result.first_version != loaded.version + 1:
        return None
    spec, state = loaded.spec, loaded.state
    state = spec.fold(events, state)
    after = LoadedGame(loaded.game_id, spec, loaded.created, state, result.last_version)
    cache_of(store).put(after)
    return after


def as_seen_by(
    loaded: LoadedGame, event: Event, seat: int | None, *, sealed: bool = False
) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it: all of it once the game is over
    and not `sealed` (a duplicate deal's table while another table of it runs).

    While the game runs (or is sealed), hidden cards are redacted, and the bots' seed and the
    deal's seed and salt are withheld (the deal's commitment stays).
    """
    if loaded.spec.is_over(loaded.state) and not sealed:
        return event
    if isinstance(event, GameCreated):
        return msgspec.structs.replace(event, bot_seed="", deal_seed="", salt="")
    if isinstance(event, GameFinished):
        return msgspec.structs.replace(event, seed="", salt="")
    return loaded.spec.redact(event, seat)


def appendable(loaded: LoadedGame, events: Sequence[Event]) -> list[Event]:
    """Returns a decision's events (a rules engine's) as the platform appends them to
    `loaded`: a GameFinished places forfeited seats last and reveals the deal's seed and salt.

    Every path that appends an engine's events goes through here (or, for the clock's
    timeouts, through `clocks.expire` and `deals.reveal`).
    """
    return deals.reveal(loaded.created, clocks.forfeits_last(events, loaded.forfeits))


def parse_action(spec: AnyGame, payload: Any) -> Action:
    """Returns the action in a JSON-like payload; raises InvalidRequest naming the field."""
    try:
        action: Action = msgspec.convert(payload, spec.action_type)
    except msgspec.ValidationError as error:
        raise InvalidRequest("action", str(error)) from None
    return action


def act(
    store: EventStore,
    game_id: str,
    *,
    seat: int,
    action: Any,
    expected_version: int,
    idempotency_key: ClientKey | None = None,
    loaded: LoadedGame | None = None,
) -> Outcome:
    """Applies a client's action for `seat` at `expected_version` (to `loaded`, the game as
    just loaded, when the caller has it).

    Raises UnknownGame, InvalidRequest, IllegalAction, ConcurrencyConflict (stale version)
    or IdempotencyKeyReused; on any error nothing is appended. A retry with the same key
    returns the first outcome: the append itself answers a retry that still passes the
    checks, and a retry that fails them (its version is stale by then) is looked up.
    """
    loaded = loaded if loaded is not None else load(store, game_id)
    spec = loaded.spec
    fingerprint = _fingerprint(seat, action, expected_version) if idempotency_key else ""
    try:
        events = _decided(loaded, seat, action, expected_version)
    except (InvalidRequest, IllegalAction, ConcurrencyConflict):
        if idempotency_key is not None:
            known = store.recall(game_id, idempotency_key, fingerprint)
            if known is not None:
                return Outcome(game_id, known.first_version, known.last_version, True)
        raise
    result = store.append(
        game_id, spec.name, expected_version, encode_all(events), idempotency_key, fingerprint
    )
    after = _folded_on(store, loaded, events, result)
    return Outcome(game_id, result.first_version, result.last_version, result.replayed, after)


def _decided(loaded: LoadedGame, seat: int, action: Any, expected_version: int) -> list[Event]:
    """Returns the events `seat`'s `action` appends to `loaded` at `expected_version`;
    raises InvalidRequest, IllegalAction or ConcurrencyConflict."""
    spec = loaded.spec
    if not spec.has_decisions:
        raise IllegalAction(
            "no_decisions", f"{spec.title} has no decisions; its seats are played by the platform"
        )
    parsed = parse_action(spec, action)
    if expected_version != loaded.version:
        raise ConcurrencyConflict(loaded.game_id, expected_version, loaded.version)
    seats = loaded.created.seats
    if not 0 <= seat < len(seats):
        raise InvalidRequest("seat", f"seat must be 0 to {len(seats) - 1}, not {seat}")
    if seats[seat].kind != "external":
        raise IllegalAction("bot_seat", f"seat {seat} is played by the built-in bot")
    if seat in loaded.forfeits:
        raise IllegalAction("forfeited", f"seat {seat} forfeited; the platform plays its turns")
    return appendable(loaded, spec.decide(loaded.state, seat, parsed))


def next_bot_seat(loaded: LoadedGame) -> int | None:
    """Returns the first seat to move that the platform plays at once, None if none is:
    a built-in bot's, or a forfeited seat (whose default action it plays)."""
    for seat in loaded.spec.to_move(loaded.state):
        if loaded.created.seats[seat].kind == "bot" or seat in loaded.forfeits:
            return seat
    return None


def platform_due(loaded: LoadedGame) -> bool:
    """Returns whether the platform has a part in the game's next move: a bot or forfeited
    seat to play, a webhook to call, or a timed seat's deadline to watch."""
    if loaded.spec.is_over(loaded.state):
        return False
    if next_bot_seat(loaded) is not None:
        return True
    seats = loaded.created.seats
    return bool(clocks.timed_waits(loaded.spec, loaded.state, loaded.clock)) or any(
        seats[seat].kind == "webhook" for seat in loaded.spec.to_move(loaded.state)
    )


def _bot_moves(
    loaded: LoadedGame, limit: int
) -> tuple[list[tuple[int, Sequence[NewEvent], str | None]], int]:
    """Returns up to `limit` consecutive bot moves from `loaded` as append batches."""
    spec, state, version = loaded.spec, loaded.state, loaded.version
    batches: list[tuple[int, Sequence[NewEvent], str | None]] = []
    while len(batches) < limit:
        current = LoadedGame(loaded.game_id, spec, loaded.created, state, version, loaded.clock)
        seat = next_bot_seat(current)
        if seat is None:
            break
        events: list[Event]
        if seat in loaded.forfeits:
            events = clocks.forced_move(spec, state, seat, "forfeited")
        else:
            bot_name = loaded.created.seats[seat].bot or next(iter(spec.bots))
            legal = spec.legal_actions(state, seat)
            bot_seed = loaded.created.bot_seed or loaded.game_id
            action = spec.bots[bot_name].choose(
                spec.view(state, seat), legal, f"{bot_seed}:{version}:{seat}"
            )
            events = spec.decide(state, seat, action)
        events = appendable(loaded, events)
        batches.append((version, encode_all(events), idempotency.bot_turn(version)))
        state = spec.fold(events, state)
        version += len(events)
    return batches, version


def play_bot_turns(
    store: EventStore,
    game_id: str,
    batch: int = 64,
    max_moves: int = 1_000_000,
    max_idle: int = stalls.MAX_IDLE_TRIES,
) -> int:
    """Plays every consecutive built-in bot move of a game; returns how many it appended.

    Moves are appended `batch` at a time in one round trip, each at its expected version
    and keyed by it, so a second runner (a retried task) appends nothing twice. After
    `max_idle` rounds in a row that left the game where it was (nothing appended, nothing
    moved), it gives up and reports the stall (`shared.app.stalls`): reconciliation plays on.
    """
    appended, idle, before = 0, 0, -1
    while appended < max_moves:
        loaded = load(store, game_id)
        idle = idle + 1 if loaded.version == before else 0
        if idle >= max_idle:
            stalls.report(stalls.Stall("bot_turns", game_id, loaded.version, idle))
            return appended
        before = loaded.version
        batches, _ = _bot_moves(loaded, min(batch, max_moves - appended))
        if not batches:
            return appended
        results = store.append_batches(game_id, loaded.spec.name, batches)
        for outcome in results:
            if isinstance(outcome, ConcurrencyConflict):
                break
            if isinstance(outcome, StoreError):
                raise outcome
            if isinstance(outcome, AppendResult) and not outcome.replayed:
                appended += 1
    return appended


__all__ = [
    "BotTurnDispatcher",
    "InProcessDispatcher",
    "LoadedGame",
    "Outcome",
    "act",
    "appendable",
    "create_game",
    "encode",
    "load",
    "play_bot_turns",
]
