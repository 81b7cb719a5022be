"""Request and response bodies of the game service's REST API (v1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.plugins import OpenAPISchemaPlugin
from litestar.typing import FieldDefinition

from shared.app.loading import LoadedGame, Outcome
from shared.catalog import game_names, get_game
from shared.errors import InvalidRequest
from shared.messages.codec import to_json
from shared.messages.common import Clock, Result, Seat
from shared.messages.envelope import RecordedEvent
from shared.model.clocks import clock_of, timed_waits
from shared.model.registry import RegisteredBot, bound_seat

if TYPE_CHECKING:
    from litestar._openapi.schema_generation import SchemaCreator

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
    """The same seed on the same deployment deals the same cards, keyed with its deal secret
    (see the README's Seeds); none: fresh random cards."""
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


class ActionAccepted(msgspec.Struct, frozen=True, omit_defaults=True):
    """An applied action: the versions it wrote, or those of the first try when `replayed`."""

    game_id: str
    version: int
    first_version: int
    replayed: bool
    turn: SeatView | None = None
    """Asked for with `wait`: the seat's view once the game waits for it again or is over."""

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
    limit: int | msgspec.UnsetType = msgspec.UNSET
    """The limit reached: anonymous streams open at once, or a bot's open challenges."""


def preset_names() -> list[str]:
    """Returns the names of every game's ruleset presets, sorted."""
    return sorted({preset for name in game_names() for preset in get_game(name).presets})


def strategy_names() -> list[str]:
    """Returns the names of every game's built-in strategies, sorted, after "" (none)."""
    return ["", *sorted({bot for name in game_names() for bot in get_game(name).bots})]


CLOSED_SETS: dict[str, Callable[[], list[str]]] = {
    "game": game_names,
    "ruleset": preset_names,
    "strategy": strategy_names,
}
"""The strings the service accepts in a field or parameter of each of these names: anything
else is always refused. `ruleset` is a preset's name where it may be a string; some presets
and strategies belong to one game only, which the document does not state."""

_BOUNDS = {"ge": "minimum", "gt": "exclusive_minimum", "le": "maximum", "lt": "exclusive_maximum"}
"""msgspec's numeric constraints and the schema keyword each becomes."""


class AcceptedValues(OpenAPISchemaPlugin):
    """Completes the OpenAPI schemas Litestar generates where they allow more than the service
    accepts, so that a body or parameter the document calls valid is not refused for its shape
    or for a name outside a closed set:

    - a Struct that forbids unknown fields gets `additionalProperties: false`;
    - a string field or parameter named in `CLOSED_SETS` gets its set as an `enum`;
    - a Struct's optional numbers bounded by 0 keep that bound (Litestar 2 copies only truthy
      constraints onto the schema of an optional field).

    Each schema is first generated by Litestar (the plugin steps aside for that field), then
    completed; nothing changes what the service accepts.
    """

    def __init__(self) -> None:
        self._generating: list[FieldDefinition] = []

    def is_plugin_supported_field(self, field_definition: FieldDefinition) -> bool:
        """Returns whether the field is a Struct or a closed-set string (and its schema is
        not being generated right now)."""
        if any(field is field_definition for field in self._generating):
            return False
        return _is_struct(field_definition) or _closed_set(field_definition) is not None

    def to_openapi_schema(
        self, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        """Returns the schema Litestar generates for the field, completed."""
        self._generating.append(field_definition)
        try:
            made = schema_creator.for_field_definition(field_definition)
        finally:
            self._generating.pop()
        if _is_struct(field_definition):
            # A Struct's schema is a component: complete the registered one.
            registry = schema_creator.schema_registry
            schema = registry.get_schema_for_field_definition(field_definition)
            _complete(field_definition.annotation, schema)
            return schema
        assert isinstance(made, Schema)
        _close(made, CLOSED_SETS[field_definition.name])
        return made


def _is_struct(field: FieldDefinition) -> bool:
    """Returns whether the field is of one Struct type."""
    return not field.is_union and field.is_subclass_of(msgspec.Struct)


def _closed_set(field: FieldDefinition) -> Callable[[], list[str]] | None:
    """Returns the closed set of a plain string field or parameter named in CLOSED_SETS."""
    return CLOSED_SETS.get(field.name) if field.annotation is str else None


def _close(schema: Schema, values: Callable[[], list[str]]) -> None:
    """Sets `values` as the enum of `schema` if it is a string, else of its string arms."""
    arms = [schema, *(schema.one_of or ())]
    for arm in arms:
        if isinstance(arm, Schema) and arm.type == OpenAPIType.STRING:
            arm.enum = values()


def _complete(struct: type[msgspec.Struct], schema: Schema) -> None:
    """Completes the schema of `struct`: `additionalProperties: false` if it forbids unknown
    fields, enums for its closed-set strings, the 0 bounds of its optional numbers."""
    if struct.__struct_config__.forbid_unknown_fields:
        schema.additional_properties = False
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    for field in info.fields:
        prop = (schema.properties or {}).get(field.encode_name)
        if not isinstance(prop, Schema):
            continue
        values = CLOSED_SETS.get(field.encode_name)
        if values is not None:
            _close(prop, values)
        if isinstance(field.type, msgspec.inspect.UnionType):
            for arm in field.type.types:
                _restore_zero_bounds(arm, prop)


def _restore_zero_bounds(arm: msgspec.inspect.Type, prop: Schema) -> None:
    """Sets on `prop` the 0 bounds of `arm`, a type of an optional field, if a number."""
    if isinstance(arm, msgspec.inspect.IntType | msgspec.inspect.FloatType):
        for bound, keyword in _BOUNDS.items():
            if getattr(arm, bound) == 0 and getattr(prop, keyword) is None:
                setattr(prop, keyword, 0)
