"""Bodies several contexts of the game service answer or take: a game, a seat's view, an event
item, a requested seat."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shared.app.loading import LoadedGame
from shared.messages.codec import to_json
from shared.messages.common import Clock, Result, Seat
from shared.messages.envelope import RecordedEvent
from shared.model.clocks import ClockState, clock_of, timed_waits
from shared.model.tournaments.model import TournamentState
from shared.model.unrated import Unrated, rated_flag, unrated_reason


class SeatSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who plays a seat: a built-in `bot` (default: the game's first) or an `external` client.

    An `external` or `webhook` seat naming a registered bot (`bot`, `version`, default "1")
    is bound to it: only that bot's token may play it. A webhook seat always names its bot.
    """

    kind: Literal["bot", "external", "webhook"] = "bot"
    """`bot` (a built-in strategy), `external` (a client with a token) or `webhook` (the platform
    calls the bot's URL)."""
    bot: str | None = None
    """A `bot` seat's strategy (default: the game's first), or the registered bot an `external` or
    `webhook` seat is bound to."""
    name: str | None = None
    """The seat's display name."""
    version: str | None = None
    """The registered bot's version label (default "1")."""


RESULT_STATUSES = ("finished", "capped", "loop", "draw", "aborted")
"""How a game can end (`Result.status`): `finished` by its rules, `capped` at the ruleset's cap
of moves or cards, `loop` (Beggar-my-neighbour) when a trick's start repeated, `draw`
(Autobus) after a round without a play onto a sequence, or at the turn cap, `aborted` by the
platform with no places (`GameAborted`: the host, a cancelled tournament, a stale game)."""
GAME_STATUSES = ("playing", *RESULT_STATUSES)
"""A game's status: `playing` while it runs, else its result's status."""


def status_of(result: Result | None) -> str:
    """Returns a game's status: `playing` while it runs, else its result's status."""
    return "playing" if result is None else result.status


class SeatClock(msgspec.Struct, frozen=True, omit_defaults=True):
    """One seat's clock in a timed game, as its log says (anyone may see it): a page counts
    `deadline` down between events."""

    timed: bool
    """Whether the clock times the seat (a client's seat: `external` or `webhook`; built-in
    bots are never timed)."""
    bank_ms: int
    """What is left of the seat's time bank, in ms, as of the game's last event."""
    strikes: int
    """The seat's timeouts so far."""
    forfeited: bool
    """Whether the seat forfeited or resigned (it is no longer timed)."""
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """While the game waits for this timed seat: when its time (the move deadline, then its
    bank) runs out, in ms since the epoch; absent otherwise."""


def seat_clocks(loaded: LoadedGame) -> list[SeatClock] | msgspec.UnsetType:
    """Returns every seat's clock of a timed game, UNSET for an untimed one."""
    clock: ClockState | None = loaded.clock
    if clock is None:
        return msgspec.UNSET
    waits = timed_waits(loaded.spec, loaded.state, clock)
    return [
        SeatClock(
            timed=clock.timed[seat],
            bank_ms=clock.banks_ms[seat],
            strikes=clock.strikes[seat],
            forfeited=seat in clock.forfeits,
            deadline=clock.deadline_ms(seat) if seat in waits else msgspec.UNSET,
        )
        for seat in range(len(clock.timed))
    ]


class Game(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game as anyone may see it; `view` only for games without decisions (all public)."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name."""
    ruleset: dict[str, Any]
    """The game's ruleset, every option a field."""
    seats: list[Seat]
    """Who plays each seat, in seat order."""
    version: int
    """The game's version: the number of events in its log."""
    status: str
    """`playing` while the game runs, else its result's status."""
    to_move: list[int]
    """The seats the game waits for; empty when it is over."""
    result: Result | None
    """How the game ended; null while it runs."""
    created_at: str
    """When the game was created (ISO 8601, UTC)."""
    rated: bool | None
    """Whether it counts (once over, will count) for the ratings: false with `unrated` saying
    why, null while it runs and nothing rules it out yet."""
    unrated: Unrated | None
    """Why it is not rated (`code` and `message`); null when it is, or may still be."""
    view: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    """The whole table, only for a game without decisions (everything in it is public)."""
    table: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    """What anyone may know of the game now, only for a game with decisions: a spectator's
    table, with no card that some seat may not see (every card in it is in every seat's
    view); the game's own schema (`<Game>Table`)."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The game's clock; absent for an untimed game."""
    clocks: list[SeatClock] | msgspec.UnsetType = msgspec.UNSET
    """Each seat's clock now (bank, strikes, the deadline of a seat the game waits for), in
    seat order; absent for an untimed game."""

    @classmethod
    def of(cls, loaded: LoadedGame, tournament: TournamentState | None = None) -> Game:
        """Returns the public resource of a loaded game; `tournament`, its tournament's state
        when read, tells whether a cancelled tournament left it unrecorded (unrated)."""
        spec, state = loaded.spec, loaded.state
        result: Result | None = spec.result(state)
        unrated = unrated_of(loaded, result, tournament)
        view = msgspec.UNSET if spec.has_decisions else msgspec.to_builtins(spec.view(state, 0))
        table = msgspec.UNSET if spec.table is None else msgspec.to_builtins(spec.table(state))
        return cls(
            game_id=loaded.game_id,
            game=spec.name,
            ruleset=loaded.created.ruleset,
            seats=loaded.created.seats,
            version=loaded.version,
            status=status_of(result),
            to_move=spec.to_move(state),
            result=result,
            created_at=loaded.created.created_at,
            rated=rated_flag(unrated, result is not None),
            unrated=unrated,
            view=view,
            table=table,
            clock=clock_of(loaded.created) or msgspec.UNSET,
            clocks=seat_clocks(loaded),
        )


def unrated_of(
    loaded: LoadedGame, result: Result | None, tournament: TournamentState | None
) -> Unrated | None:
    """Returns why a loaded game is not rated (see `shared.model.unrated`), None when it is or
    may still be."""
    created = loaded.created
    cancelled_unrecorded = (
        tournament is not None
        and tournament.status == "cancelled"
        and all(record.game_id != loaded.game_id for record in tournament.records)
    )
    return unrated_reason(
        created.game,
        created.seats,
        forked=bool(created.forked_from),
        abort_reason=result.reason if loaded.aborted and result is not None else None,
        cancelled_unrecorded=cancelled_unrecorded,
    )


class SeatView(msgspec.Struct, frozen=True):
    """What one seat may know of a game, its legal actions, and the version to act at."""

    game_id: str
    """The game's id."""
    seat: int
    """The seat this view is of."""
    version: int
    """The game's version: post an action at this `expected_version`."""
    status: str
    """`playing` while the game runs, else its result's status."""
    to_move: list[int]
    """The seats the game waits for; empty when it is over."""
    view: dict[str, Any]
    """What the seat may know of the game, in its game's view schema."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post now, in a stable order; empty when the game does not wait for
    it."""
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game waiting for this seat: when its time (the move deadline and what is
    left of its bank) runs out, in ms since the epoch."""

    @classmethod
    def of(cls, loaded: LoadedGame, seat: int) -> SeatView:
        """Returns the view of `seat` (a seat of the game) in a loaded game."""
        spec, state, clock = loaded.spec, loaded.state, loaded.clock
        timed = clock is not None and seat in timed_waits(spec, state, clock)
        return cls(
            game_id=loaded.game_id,
            seat=seat,
            version=loaded.version,
            status=status_of(spec.result(state)),
            to_move=spec.to_move(state),
            view=msgspec.to_builtins(spec.view(state, seat)),
            legal_actions=msgspec.to_builtins(spec.legal_actions(state, seat)),
            deadline=clock.deadline_ms(seat) if clock is not None and timed else msgspec.UNSET,
        )


class EventItem(msgspec.Struct, frozen=True):
    """One stored event: its version, type tag, store time (ms since the epoch) and content."""

    version: int
    """The event's version: its place in the game's log, from 1."""
    type: str
    """The event's type, the same as `data.type`."""
    recorded_at: int
    """When the store recorded it, in ms since the epoch."""
    data: dict[str, Any]
    """The event, as the caller may see it (cards it may not know read `??`)."""

    @classmethod
    def of(cls, recorded: RecordedEvent, event: Any) -> EventItem:
        """Returns the item of `recorded`, whose decoded event is `event`."""
        return cls(recorded.version, recorded.type, recorded.recorded_at, to_json(event))


class WebhookAnswer(msgspec.Struct, frozen=True):
    """A webhook bot's answer to its turn's call."""

    action: dict[str, Any]
    """The seat's action: one of the call's `legal_actions` (tagged by its `type`)."""
    note: str | None = None
    """A private note on the move, as `postAction` takes it (at most 1024 bytes of UTF-8, no
    control character but newline and tab; else the whole answer is `invalid_answer`)."""
