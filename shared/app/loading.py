"""Loading a game: the fold of its stream, this process's cache of folds, and what a seat sees.

Every use case over a game starts here (`load`, `current`, `caught_up`); `appendable` is
the one gate an engine's events pass on their way to the store.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Generic

import msgspec
from typing_extensions import TypeVar

from shared.app.cache import FoldCache, PerStore
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, UnknownGame
from shared.games.base import AnyGame, GameSpec
from shared.messages.common import (
    ABORTED,
    Action,
    Event,
    GameCreated,
    GameFinished,
    NoteTaken,
    Resign,
)
from shared.messages.envelope import RecordedEvent
from shared.model import clocks, deals, endings
from shared.model.notes import withheld
from shared.ports.archive import EventArchive, decoded_log
from shared.store.port import EventStore

S = TypeVar("S", default=Any)
"""A game's state; `LoadedGame` alone is a game not known until run time."""


@dataclass(frozen=True)
class LoadedGame(Generic[S]):
    """A game folded from its stream: its spec, creation event, state, version and clock."""

    game_id: str
    spec: GameSpec[S, Any, Any, Any]
    created: GameCreated
    state: S
    version: int
    clock: clocks.ClockState | None = None
    """The game's clock (strikes, forfeits, banks, the current wait); None when untimed."""
    resigned: tuple[int, ...] = ()
    """The seats that resigned, in the order they did."""

    @property
    def forfeits(self) -> tuple[int, ...]:
        """Returns the seats that forfeited or resigned, in the order they did: the platform
        plays their default actions and they place last."""
        return self.resigned if self.clock is None else self.clock.forfeits

    @property
    def aborted(self) -> bool:
        """Returns whether the platform aborted the game (its `GameAborted`: no result)."""
        result = self.spec.result(self.state) if self.spec.is_over(self.state) else None
        return result is not None and result.status == ABORTED


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


GameCache = FoldCache[LoadedGame]
"""The games one process folded lately, so that the next load of a game folds only what
its stream gained since (see `load`)."""


def _game_cache() -> GameCache:
    """Returns an empty game cache."""
    return FoldCache(key=lambda loaded: loaded.game_id, version=lambda loaded: loaded.version)


_caches: PerStore[GameCache] = PerStore(_game_cache)


def cache_of(store: EventStore) -> GameCache:
    """Returns the game cache of `store` in this process (one per store object)."""
    return _caches.of(store)


def _fold(game_id: str, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns the game folded from its whole stream `recorded` (not empty)."""
    spec = get_game(recorded[0].kind)
    events = spec.codec.decode_all(recorded)
    created = events[0]
    if not isinstance(created, GameCreated):
        raise TypeError(f"game {game_id} does not start with GameCreated")
    state, clock = clocks.fold_with_clock(spec, created, events, recorded)
    resigned = endings.resigned_in(events)
    return LoadedGame(game_id, spec, created, state, recorded[-1].version, clock, resigned)


def _fold_more(known: LoadedGame, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns `known` with the events of `recorded` (the versions after it) folded in, as
    `clocks.fold_with_clock` folds them."""
    spec, state, clock = known.spec, known.state, known.clock
    events = spec.codec.decode_all(recorded)
    for event, item in zip(events, recorded, strict=True):
        if clock is not None:
            clock = clocks.after_event(spec, clock, state, event, item.version, item.recorded_at)
        state = spec.step(state, event)
    resigned = known.resigned + endings.resigned_in(events)
    version = recorded[-1].version
    return LoadedGame(known.game_id, spec, known.created, state, version, clock, resigned)


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


def as_seen_by(
    loaded: LoadedGame,
    event: Event,
    seat: int | None,
    *,
    sealed: bool = False,
    notes: Collection[int] = (),
) -> Event:
    """Returns `event` as `seat` (None: a spectator) may see it: all of it once the game is over
    and not `sealed` (a duplicate deal's table while another table of it runs), but for the
    text of a note of a seat not in `notes` (the seats whose notes the reader may read).

    While the game runs (or is sealed), hidden cards are redacted, the bots' seed and the
    deal's seed and salt are withheld (the deal's commitment stays), and so is every note's
    text, whatever `notes` says.
    """
    if isinstance(event, NoteTaken):
        over = loaded.spec.is_over(loaded.state) and not sealed
        return withheld(event, notes if over else ())
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
    forfeits, resigned = loaded.forfeits, loaded.resigned
    return deals.reveal(loaded.created, clocks.forfeits_last(events, forfeits, resigned))


def decided(loaded: LoadedGame, seat: int, action: Action) -> list[Event]:
    """Returns the events `seat` taking `action` appends to `loaded`, as the platform appends
    them (see `appendable`): the game's rules decide its own actions, the platform its own
    (`Resign`, see `shared.model.endings`). Raises IllegalAction naming the rule."""
    if isinstance(action, Resign):
        events = endings.resignation(
            loaded.spec,
            loaded.state,
            loaded.created.seats,
            seat,
            loaded.forfeits,
            loaded.resigned,
        )
        return deals.reveal(loaded.created, events)
    return appendable(loaded, loaded.spec.decide(loaded.state, seat, action))


def parse_action(spec: AnyGame, payload: Any) -> Action:
    """Returns the action in a JSON-like payload (one of the game's, or of the platform's in
    a game with decisions); raises InvalidRequest naming the field."""
    try:
        action: Action = msgspec.convert(payload, spec.command_type)
    except msgspec.ValidationError as error:
        raise InvalidRequest("action", spec.action_problem(payload, str(error))) from None
    return action


def loaded_from(game_id: str, recorded: list[RecordedEvent]) -> LoadedGame:
    """Returns the game folded from its whole log `recorded`; raises UnknownGame for an
    empty log or one that is not a game's (a tournament's, the registry's)."""
    spec, created, events = decoded_log(game_id, recorded)
    state, clock = clocks.fold_with_clock(spec, created, events, recorded)
    resigned = endings.resigned_in(events)
    return LoadedGame(game_id, spec, created, state, recorded[-1].version, clock, resigned)


def load_logged(store: EventStore, archive: EventArchive, game_id: str) -> LoadedGame:
    """Returns the game: loaded from the store while it holds the game's stream (through
    this process's game cache, see `load`), else folded from the archive's
    copy; raises UnknownGame, also for a stream that is not a game's."""
    try:
        return load(store, game_id)
    except GameNotFound:
        raise UnknownGame(game_id) from None
    except UnknownGame:
        return loaded_from(game_id, archive.read(game_id))
