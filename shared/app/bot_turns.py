"""Bot turns: the platform plays every consecutive built-in (or forfeited) seat's move."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from shared.app import stalls
from shared.app.loading import LoadedGame, appendable, cache_of, load
from shared.messages.codec import encode_all
from shared.messages.common import Event
from shared.messages.envelope import NewEvent
from shared.model import clocks, idempotency
from shared.store.port import AppendResult, ConcurrencyConflict, EventStore, StoreError


def next_bot_seat(loaded: LoadedGame) -> int | None:
    """Returns the first seat to move that the platform plays at once, None if none is:
    a built-in bot's, or a forfeited or resigned seat (whose default action it plays)."""
    return _first_played(loaded.spec.to_move(loaded.state), _played_seats(loaded))


def _played_seats(loaded: LoadedGame) -> set[int]:
    """Returns the seats the platform plays in `loaded`: built-in bots', forfeited ones."""
    seats = loaded.created.seats
    return {seat for seat, s in enumerate(seats) if s.kind == "bot"}.union(loaded.forfeits)


def _first_played(to_move: Sequence[int], played: set[int]) -> int | None:
    """Returns the first seat of `to_move` that is among `played`, None if none is."""
    return next((seat for seat in to_move if seat in played), None)


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
) -> tuple[list[tuple[int, Sequence[NewEvent], str | None]], LoadedGame]:
    """Returns up to `limit` consecutive bot moves from `loaded` as append batches, and the
    game as it stands once they are all appended."""
    spec, state, version = loaded.spec, loaded.state, loaded.version
    seats, forfeits = loaded.created.seats, loaded.forfeits
    to_move, is_over = spec.to_move, spec.is_over
    legal_actions, view, apply = spec.legal_actions, spec.view, spec.apply
    batches: list[tuple[int, Sequence[NewEvent], str | None]] = []
    played = _played_seats(loaded)
    bots = {
        seat: spec.bots[s.bot or next(iter(spec.bots))]
        for seat, s in enumerate(seats)
        if s.kind == "bot"
    }
    bot_seed = loaded.created.bot_seed or loaded.game_id
    while len(batches) < limit:
        seat = _first_played(to_move(state), played)
        if seat is None:
            break
        events: list[Event]
        if seat in forfeits:
            events = clocks.forced_move(spec, state, seat, "forfeited")
            after = spec.fold(events, state)
        else:
            legal = legal_actions(state, seat)
            action = bots[seat].choose(view(state, seat), legal, f"{bot_seed}:{version}:{seat}")
            after, events = apply(state, seat, action)
        appended = events
        if is_over(after):  # the GameFinished goes out as the platform appends it
            appended = appendable(loaded, events)
            after = spec.fold(appended, state)
        batches.append((version, encode_all(appended), idempotency.bot_turn(version)))
        state = after
        version += len(appended)
    return batches, replace(loaded, state=state, version=version)


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
        batches, after = _bot_moves(loaded, min(batch, max_moves - appended))
        if not batches:
            return appended
        results = store.append_batches(game_id, loaded.spec.name, batches)
        fresh = 0
        for outcome in results:
            if isinstance(outcome, ConcurrencyConflict):
                break
            if isinstance(outcome, StoreError):
                raise outcome
            if isinstance(outcome, AppendResult) and not outcome.replayed:
                fresh += 1
        appended += fresh
        if fresh == len(batches) and after.clock is None:
            cache_of(store).put(after)
    return appended
