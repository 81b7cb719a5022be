"""Request and response bodies of the game service's REST API (v1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import msgspec

from shared.clocks import clock_of, timed_waits
from shared.handlers import InvalidRequest, LoadedGame, Outcome
from shared.messages.codec import to_json
from shared.messages.common import Clock, Result, Seat
from shared.registry import RegisteredBot, bound_seat
from shared.store.port import RecordedEvent

NonNegative = Annotated[int, msgspec.Meta(ge=0)]
PlayerCount = Annotated[int, msgspec.Meta(ge=0, le=64)]
"""Bounded here so that a huge count cannot make the service build a huge table."""


class SeatSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who plays a seat: a built-in `bot` (default: the game's first) or an `external` client.

    An `external` or `webhook` seat naming a registered bot (`bot`, `version`, default "1")
    is bound to it: only that bot's token may play it. A webhook seat always names its bot.
    """

    kind: Literal["bot", "external", "webhook"] = "bot"
    bot: str | None = None
    name: str | None = None
    version: str | None = None

    @property
    def binds(self) -> bool:
        """Returns whether this seat names a registered external or webhook bot."""
        return self.kind == "webhook" or (self.kind == "external" and self.bot is not None)

    def to_seat(
        self, game: str = "", bots: Sequence[RegisteredBot] = (), field: str = "seat"
    ) -> Seat:
        """Returns the seat as the domain records it, bound to one of `bots` if it names one.

        Raises InvalidRequest naming the field (under `field`) that cannot be seated.
        """
        if not self.binds:
            if self.version is not None:
                raise InvalidRequest(
                    f"{field}.version", "only a seat of a registered external or webhook bot"
                )
            return Seat(kind=self.kind, bot=self.bot, name=self.name)
        if self.bot is None:
            raise InvalidRequest(f"{field}.bot", "a webhook seat names its registered bot")
        if self.name is not None:
            raise InvalidRequest(f"{field}.name", "a bot's seat goes by the bot's name")
        return bound_seat(game, self.kind, self.bot, self.version or "1", bots, field)


class CreateGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Creates a game: its name, a ruleset (a preset name or fields), seats or a player count."""

    game: str
    ruleset: str | dict[str, Any] | None = None
    seats: list[SeatSpec] | None = None
    players: PlayerCount | None = None
    seed: int | str | None = None
    clock: Clock | None = None
    """Times the client seats: `{"move_seconds", "bank_seconds", "strikes_to_forfeit"}`,
    overriding the ruleset's clock; none: the ruleset's, else untimed (a game with a webhook
    seat still gets a clock)."""

    def table(self, bots: Sequence[RegisteredBot] = ()) -> list[Seat] | None:
        """Returns the requested seats as domain seats (bound to `bots` where they name one),
        None when none were given. Raises InvalidRequest naming the seat's field.
        """
        if self.seats is None:
            return None
        return [
            seat.to_seat(self.game, bots, f"seats[{index}]")
            for index, seat in enumerate(self.seats)
        ]

    def binds(self) -> bool:
        """Returns whether any requested seat names a registered external or webhook bot."""
        return any(seat.binds for seat in self.seats or ())


class PostAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One action of `seat`, taken at `expected_version`; `action` is tagged by its `type`."""

    seat: NonNegative
    action: dict[str, Any]
    expected_version: NonNegative


def status_of(result: Result | None) -> str:
    """Returns a game's status: `playing` while it runs, else its result's status."""
    return "playing" if result is None else result.status


class Game(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game as anyone may see it; `view` only for games without decisions (all public)."""

    game_id: str
    game: str
    ruleset: dict[str, Any]
    seats: list[Seat]
    version: int
    status: str
    to_move: list[int]
    result: Result | None
    created_at: str
    view: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The game's clock; absent for an untimed game."""

    @classmethod
    def of(cls, loaded: LoadedGame) -> Game:
        """Returns the public resource of a loaded game."""
        spec, state = loaded.spec, loaded.state
        result: Result | None = spec.result(state)
        view = msgspec.UNSET if spec.has_decisions else msgspec.to_builtins(spec.view(state, 0))
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
            view=view,
            clock=clock_of(loaded.created) or msgspec.UNSET,
        )


class SeatView(msgspec.Struct, frozen=True):
    """What one seat may know of a game, its legal actions, and the version to act at."""

    game_id: str
    seat: int
    version: int
    status: str
    to_move: list[int]
    view: dict[str, Any]
    legal_actions: list[dict[str, Any]]
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
    type: str
    recorded_at: int
    data: dict[str, Any]

    @classmethod
    def of(cls, recorded: RecordedEvent, event: Any) -> EventItem:
        """Returns the item of `recorded`, whose decoded event is `event`."""
        return cls(recorded.version, recorded.type, recorded.recorded_at, to_json(event))


class EventPage(msgspec.Struct, frozen=True):
    """Events of a game in version order, after a given version; `version` is the stream's."""

    game_id: str
    version: int
    events: list[EventItem]


class ActionAccepted(msgspec.Struct, frozen=True):
    """An applied action: the versions it wrote, or those of the first try when `replayed`."""

    game_id: str
    version: int
    first_version: int
    replayed: bool

    @classmethod
    def of(cls, outcome: Outcome) -> ActionAccepted:
        """Returns the body of an action's outcome."""
        return cls(outcome.game_id, outcome.version, outcome.first_version, outcome.replayed)


class Health(msgspec.Struct, frozen=True):
    """The service answers."""

    status: Literal["ok"] = "ok"


class Problem(msgspec.Struct, frozen=True, omit_defaults=True):
    """An RFC 9457 problem: `type`, `title`, `status`, `detail` and one extension member.

    `field` names the bad input, `rule` the broken game rule, `current_version` the
    stream's version on a conflict, `game_id` / `tournament_id` / `challenge_id` what does
    not exist.
    """

    type: str
    title: str
    status: int
    detail: str
    field: str | msgspec.UnsetType = msgspec.UNSET
    rule: str | msgspec.UnsetType = msgspec.UNSET
    current_version: int | msgspec.UnsetType = msgspec.UNSET
    game_id: str | msgspec.UnsetType = msgspec.UNSET
    tournament_id: str | msgspec.UnsetType = msgspec.UNSET
    challenge_id: str | msgspec.UnsetType = msgspec.UNSET
    challenge_status: str | msgspec.UnsetType = msgspec.UNSET
    """A closed challenge's status (`started`, `declined`, `cancelled`, `expired`)."""
    event_version: int | msgspec.UnsetType = msgspec.UNSET
    """The version of the first bad event of a refused import."""
