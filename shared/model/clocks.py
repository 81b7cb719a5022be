"""Clocks, as pure functions over a game's log: deadlines, time banks, strikes and forfeits.

A game created with a `Clock` times the seats that clients play (kind `external` or
`webhook`); built-in bots and untimed games are never timed. The rules:

- A seat's wait starts with the last game event (not a clock event: a failed webhook call
  does not restart it) after which the game waits for it. Its deadline is that instant plus
  the move deadline plus what is left of its time bank. Every game event restarts the wait
  of every seat the game still waits for (in Shithead's swap phase, where several seats
  are waited for at once, another seat's swap restarts it too).
- When a game event ends a wait, each seat waited for drains its bank by the time it used
  beyond the move deadline (never below zero). The times are the events' `recorded_at`
  (the store's clock, in ms), so the clock is derived from the log alone.
- A seat whose deadline passed gets `TurnTimedOut` (a strike), then `DefaultActionPlayed`
  and the events of the game's default action, in one append; at `strikes_to_forfeit`
  strikes `SeatForfeited` comes between the two. A forfeited seat is no longer timed: the
  platform plays its default actions at once, each marked by `DefaultActionPlayed`.
- Forfeited seats place last: the others keep their order (ties share) and take the first
  places; among forfeited seats, the earlier a seat forfeited, the worse its place (no
  ties). The game's `GameFinished` records these places, so results, ratings and
  tournaments see them.
- A seat that resigned (`SeatResigned`, see `shared.model.resignations`) counts as forfeited
  from then on: it is no longer timed and places among the forfeited seats.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

import msgspec

from shared.games.base import AnyGame
from shared.messages.common import (
    Action,
    Clock,
    ClockEvent,
    DefaultActionPlayed,
    Event,
    GameAborted,
    GameCreated,
    GameFinished,
    Result,
    Seat,
    SeatForfeited,
    SeatResigned,
    TurnTimedOut,
)
from shared.messages.envelope import RecordedEvent

TIMED_KINDS: frozenset[str] = frozenset({"external", "webhook"})
"""Seat kinds a clock times: those played by clients, never the built-in bots."""

WEBHOOK_CLOCK = Clock(move_seconds=10, bank_seconds=60)
"""The clock of a game with a webhook seat created without one: every webhook call has a
deadline, so such a game is always timed."""


class ClockState(msgspec.Struct, frozen=True):
    """A timed game's clock as its log says: banks, strikes, forfeits and the current wait."""

    clock: Clock
    timed: tuple[bool, ...]
    """Per seat, whether the clock times it (its kind is in TIMED_KINDS)."""
    banks_ms: tuple[int, ...]
    """Per seat, what is left of its time bank."""
    strikes: tuple[int, ...]
    """Per seat, its timeouts so far."""
    forfeits: tuple[int, ...] = ()
    """The seats that forfeited or resigned, in the order they did: none is timed."""
    turn_version: int = 0
    """The version of the last game event: the waits now running started there."""
    turn_started_ms: int = 0
    """When the last game event was recorded (ms since the epoch)."""

    def deadline_ms(self, seat: int) -> int:
        """Returns when `seat`'s current wait runs out (ms since the epoch), bank included."""
        return self.turn_started_ms + _ms(self.clock.move_seconds) + self.banks_ms[seat]


def clock_of(created: GameCreated) -> Clock | None:
    """Returns the clock a game was created with, None for an untimed game."""
    return None if isinstance(created.clock, msgspec.UnsetType) else created.clock


def clock_for(clock: Clock | None, seats: Sequence[Seat]) -> Clock | None:
    """Returns the clock to create a game with: the one asked for, else `WEBHOOK_CLOCK` when
    a seat is a webhook's, else None (untimed)."""
    if clock is None and any(seat.kind == "webhook" for seat in seats):
        return WEBHOOK_CLOCK
    return clock


def ruleset_clock(rules: msgspec.Struct) -> Clock | None:
    """Returns the clock a ruleset sets for its games, None when it sets none."""
    clock = getattr(rules, "clock", None)
    return clock if isinstance(clock, Clock) else None


def entrant_clock(move_seconds: float, bank_seconds: float) -> Clock | None:
    """Returns the default clock of client entrants (CARDARENA_ENTRANT_MOVE_SECONDS and
    CARDARENA_ENTRANT_BANK_SECONDS), None when `move_seconds` is 0 (no default)."""
    return Clock(move_seconds=move_seconds, bank_seconds=bank_seconds) if move_seconds else None


def with_default(
    clock: Clock | None, rules: msgspec.Struct, kinds: Iterable[str], default: Clock | None
) -> Clock | None:
    """Returns the clock a tournament or challenge records for its games: `clock` when it sets
    one; else `default` when a seat's kind is timed (TIMED_KINDS) and the ruleset sets no clock
    either (a silent entrant then forfeits instead of stalling it); else None."""
    if clock is not None or ruleset_clock(rules) is not None:
        return clock
    return default if TIMED_KINDS.intersection(kinds) else None


def _ms(seconds: float) -> int:
    """Returns `seconds` in whole milliseconds."""
    return round(seconds * 1000)


def initial_clock(created: GameCreated) -> ClockState | None:
    """Returns the clock of a new game (None when untimed): full banks, no strikes."""
    clock = clock_of(created)
    if clock is None:
        return None
    seats = len(created.seats)
    return ClockState(
        clock=clock,
        timed=tuple(seat.kind in TIMED_KINDS for seat in created.seats),
        banks_ms=(_ms(clock.bank_seconds),) * seats,
        strikes=(0,) * seats,
    )


def timed_waits(spec: AnyGame, state: Any, clock: ClockState | None) -> list[int]:
    """Returns the seats the game waits for that the clock times (not forfeited), in order."""
    if clock is None or state is None or spec.is_over(state):
        return []
    return [s for s in spec.to_move(state) if clock.timed[s] and s not in clock.forfeits]


def after_event(
    spec: AnyGame,
    clock: ClockState,
    before: Any,
    event: Event,
    version: int,
    recorded_at: int,
) -> ClockState:
    """Returns the clock after `event` (version `version`, recorded at `recorded_at` ms) was
    appended to a game in state `before`."""
    if isinstance(event, TurnTimedOut):
        strikes = list(clock.strikes)
        strikes[event.seat] = event.strikes
        return msgspec.structs.replace(clock, strikes=tuple(strikes))
    if isinstance(event, SeatForfeited | SeatResigned):
        return msgspec.structs.replace(clock, forfeits=(*clock.forfeits, event.seat))
    if isinstance(event, ClockEvent | GameCreated):
        return clock
    banks = clock.banks_ms
    waited = timed_waits(spec, before, clock)
    if waited:
        used = recorded_at - clock.turn_started_ms - _ms(clock.clock.move_seconds)
        if used > 0:
            banks = tuple(
                max(0, bank - used) if seat in waited else bank for seat, bank in enumerate(banks)
            )
    return msgspec.structs.replace(
        clock, banks_ms=banks, turn_version=version, turn_started_ms=recorded_at
    )


def fold_with_clock(
    spec: AnyGame,
    created: GameCreated,
    events: Sequence[Event],
    recorded: Sequence[RecordedEvent],
) -> tuple[Any, ClockState | None]:
    """Returns a game's state and its clock (None when untimed) after its logged `events`
    (`recorded` holds their versions and times)."""
    clock = initial_clock(created)
    if clock is None:
        return spec.fold(events), None
    state: Any = None
    for event, item in zip(events, recorded, strict=True):
        clock = after_event(spec, clock, state, event, item.version, item.recorded_at)
        state = spec.step(state, event)
    if state is None:
        raise ValueError("a game's log must hold its start event")
    return state, clock


def default_action(spec: AnyGame, state: Any, seat: int) -> Action:
    """Returns the game's default action for `seat`: the spec's, else its first legal action."""
    action: Action = (
        spec.default_action(state, seat)
        if spec.default_action is not None
        else spec.legal_actions(state, seat)[0]
    )
    return action


def forced_move(
    spec: AnyGame, state: Any, seat: int, reason: Literal["timeout", "forfeited"]
) -> list[Event]:
    """Returns the events of the platform playing `seat`'s default action, marked as such."""
    action = default_action(spec, state, seat)
    played = DefaultActionPlayed(seat=seat, action=msgspec.to_builtins(action), reason=reason)
    return [played, *spec.decide(state, seat, action)]


def expire(
    spec: AnyGame, state: Any, clock: ClockState, now_ms: int, resigned: Sequence[int] = ()
) -> list[Event]:
    """Returns the events of every timed wait whose deadline is past at `now_ms`, in seat
    order: a strike, a forfeit at the last strike, the default action; [] when none is.
    `resigned`: the seats among the clock's forfeits that resigned (a result names them)."""
    events: list[Event] = []
    forfeits = clock.forfeits
    for seat in timed_waits(spec, state, clock):
        if clock.deadline_ms(seat) > now_ms or seat not in spec.to_move(state):
            continue
        strikes = clock.strikes[seat] + 1
        events.append(TurnTimedOut(seat=seat, strikes=strikes))
        if strikes >= clock.clock.strikes_to_forfeit:
            events.append(SeatForfeited(seat=seat))
            forfeits = (*forfeits, seat)
        moved = forced_move(spec, state, seat, "timeout")
        events.extend(moved)
        state = spec.fold(moved, state)
        if spec.is_over(state):
            break
    return forfeits_last(events, forfeits, resigned)


def next_deadline_ms(spec: AnyGame, state: Any, clock: ClockState | None) -> int | None:
    """Returns the earliest deadline of the timed waits now running, None when none runs."""
    waits = timed_waits(spec, state, clock)
    if clock is None or not waits:
        return None
    return min(clock.deadline_ms(seat) for seat in waits)


def place_forfeits_last(
    result: Result, forfeits: Sequence[int], resigned: Collection[int] = ()
) -> Result:
    """Returns `result` with the forfeited seats (those of `resigned` among them resigned)
    placed last: the others keep their order (ties share), then the forfeited seats, the
    latest to forfeit first. The reason names them: `forfeited: seat 0; resigned: seat 2`."""
    if not forfeits:
        return result
    old = result.places
    staying = [seat for seat in range(len(old)) if seat not in forfeits]
    places = [0] * len(old)
    for seat in staying:
        places[seat] = 1 + sum(old[other] < old[seat] for other in staying)
    for offset, seat in enumerate(reversed(forfeits)):
        places[seat] = len(staying) + 1 + offset
    notes = []
    forfeited = [str(seat) for seat in forfeits if seat not in resigned]
    gave_up = [str(seat) for seat in forfeits if seat in resigned]
    if forfeited:
        notes.append("forfeited: seat " + ", ".join(forfeited))
    if gave_up:
        notes.append("resigned: seat " + ", ".join(gave_up))
    note = "; ".join(notes)
    reason = f"{result.reason}; {note}" if result.reason else note
    return msgspec.structs.replace(result, places=places, reason=reason)


def forfeits_last(
    events: Sequence[Event], forfeits: Sequence[int], resigned: Collection[int] = ()
) -> list[Event]:
    """Returns `events` with a GameFinished among them placing the forfeited seats last (see
    `place_forfeits_last`)."""
    if not forfeits:
        return list(events)
    return [
        msgspec.structs.replace(e, result=place_forfeits_last(e.result, forfeits, resigned))
        if isinstance(e, GameFinished) and not isinstance(e, GameAborted)
        else e
        for e in events
    ]
