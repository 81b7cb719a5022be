"""How a game ends beside its own rules, as pure functions: a seat resigns, the platform aborts.

Resignation is the platform's action (`Resign`) in every game with decisions. A client's seat
(external or webhook) of a running game that has neither resigned nor forfeited may resign, on
its turn or not. Its `SeatResigned` makes it a forfeited seat from then on (the platform plays
its default actions whenever it is to move, and it places last); a resignation that leaves at
most one seat that has neither resigned nor forfeited ends the game at once: the platform's
`GameFinished` places that seat first and the others last, in the order they left.

An abort (`GameAborted`: the host's, a cancelled tournament's, or the reconciliation's of a
stale game) ends a running game of any kind with no result: nothing is rated, the seats' bots
are free, and no action is accepted any more.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from shared.errors import IllegalAction
from shared.games.base import AnyGame
from shared.messages.common import (
    ABORTED,
    Event,
    GameAborted,
    GameFinished,
    Result,
    Seat,
    SeatResigned,
)
from shared.model import clocks

RESIGNABLE_KINDS = frozenset({"external", "webhook"})
"""Seat kinds that may resign: those played by clients (a built-in bot never gives up)."""


def resigned_in(events: Iterable[Event]) -> tuple[int, ...]:
    """Returns the seats that resigned in `events`, in the order they did."""
    return tuple(event.seat for event in events if isinstance(event, SeatResigned))


def resignation(
    spec: AnyGame,
    state: Any,
    seats: Sequence[Seat],
    seat: int,
    forfeits: Sequence[int],
    resigned: Sequence[int],
) -> list[Event]:
    """Returns the events of `seat` resigning from a game in `state` whose `forfeits` (the
    seats that forfeited or resigned, in order; `resigned` those that resigned) are known,
    the deal's seed not yet revealed; raises IllegalAction naming the rule."""
    if not spec.has_decisions:
        raise IllegalAction(
            "no_decisions", f"{spec.title} has no decisions; its seats are played by the platform"
        )
    if spec.is_over(state):
        raise IllegalAction("game_over", "the game is over")
    if seats[seat].kind not in RESIGNABLE_KINDS:
        raise IllegalAction("bot_seat", f"seat {seat} is played by the built-in bot")
    if seat in resigned:
        raise IllegalAction("resigned", f"seat {seat} resigned already")
    if seat in forfeits:
        raise IllegalAction("forfeited", f"seat {seat} forfeited; the platform plays its turns")
    events: list[Event] = [SeatResigned(seat=seat)]
    left = (*forfeits, seat)
    if len(seats) - len(left) > 1:
        return events
    finished = GameFinished(result=Result("finished", [1] * len(seats)))
    return clocks.forfeits_last([*events, finished], left, (*resigned, seat))


ABORT_REASONS = frozenset({"host", "tournament_cancelled", "stale", "account_suspended"})
"""Why a game may be aborted (`GameAborted`'s `result.reason`)."""


def abort(spec: AnyGame, state: Any, reason: str) -> list[Event]:
    """Returns the events of aborting a game in `state` for `reason` (one of ABORT_REASONS),
    the deal's seed not yet revealed; raises IllegalAction (rule `game_over`) once it is
    over."""
    if reason not in ABORT_REASONS:
        raise ValueError(f"no abort reason {reason!r}")
    if spec.is_over(state):
        raise IllegalAction("game_over", "the game is over")
    return [GameAborted(result=Result(ABORTED, [], reason))]
