"""The game interface every rules engine exposes: `GameSpec`, its bots and its one decide-then-fold.

Each game module builds one `GameSpec` of pure functions over immutable Structs; the
catalogue (`shared.catalog`) pairs it with its bots, and services, workers and tests reach a
game through `shared.catalog.get_game(name)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar, Union, overload

import msgspec

from shared.errors import InvalidRuleset
from shared.messages.codec import EventCodec
from shared.messages.common import (
    PLATFORM_ACTIONS,
    PLATFORM_EVENTS,
    Action,
    ClockEvent,
    Event,
    GameCreated,
    Result,
)

S = TypeVar("S")
R = TypeVar("R", bound=msgspec.Struct)
V = TypeVar("V")
A = TypeVar("A", bound=Action)
V_contra = TypeVar("V_contra", contravariant=True)


class Bot(Generic[V_contra]):
    """A built-in strategy: picks one of the legal actions from a seat's view only.

    A bot for every game is a `Bot[object]`: it reads nothing of the view."""

    name: str = "bot"

    def choose(self, view: V_contra, legal: Sequence[Action], seed: str) -> Action:
        """Returns one of `legal` given the seat's `view`; `seed` makes the choice reproducible."""
        raise NotImplementedError


@dataclass(frozen=True)
class GameSpec(Generic[S, R, V, A]):
    """One game's rules as pure functions over its state `S`, ruleset `R`, a seat's view `V`
    and its actions `A` (a union of Action Structs), its presets and its bots."""

    name: str
    title: str
    min_players: int
    max_players: int
    has_decisions: bool
    ruleset_type: type[R]
    presets: Mapping[str, R]
    action_type: object
    """The union of `A`'s Structs that a seat's action is decoded into (mypy cannot spell
    `type[A]` for a union)."""
    event_type: object
    """The game's own event union (the start event, its events, GameFinished); `log_type`
    adds the clock's."""
    deal: Callable[[R, int, int | str], Event]
    """Returns the start event (ruleset, seats and the full deal) for a seed."""
    evolve: Callable[[S | None, Event], S]
    decide: Callable[[S, int, Action], list[Event]]
    """Returns the events of a seat's action; raises IllegalAction naming the rule."""
    view: Callable[[S, int], V]
    legal_actions: Callable[[S, int], list[A]]
    to_move: Callable[[S], list[int]]
    """Returns the seats whose action the game waits for, empty when it is over."""
    is_over: Callable[[S], bool]
    result: Callable[[S], Result | None]
    validate: Callable[[R, int], None]
    """Raises `InvalidRuleset` when the ruleset cannot be played by that many players."""
    redact: Callable[[Event, int | None], Event] = lambda event, _seat: event
    """Returns an event as a seat (None: a spectator) may see it while the game runs."""
    table: Callable[[S], Any] | None = None
    """Returns what anyone may know of the game now, a spectator's table: no card that some
    seat may not see (every card in it is in every seat's `view`). None: a game without
    decisions, whose whole table is public (its `view`)."""
    bots: Mapping[str, Bot[V]] = field(default_factory=dict)
    rules_page: str = ""
    """The game's rules page in the repository (`docs/rules/<name>.md`): the game as its
    original text describes it, every ruleset field and preset, the choices the text leaves
    open, the actions, events and illegal-action rules, and what each seat may see."""
    default_action: Callable[[S, int], A] | None = None
    """Returns what the platform plays for a seat that ran out of time (or forfeited), one of
    its legal actions; None: its first legal action."""
    action_of: Callable[[Event], tuple[int, A] | None] | None = None
    """Returns the seat and the action whose decision's events begin with `event`, None for
    an event that begins no decision; an offline replay recovers each decision with it (see
    `shared.model.exported_log`). None: the replay tries every legal action of the seats to move."""
    upgrade_action: Callable[[dict[str, Any]], dict[str, Any]] = lambda stored: stored
    """Returns a stored action (`DefaultActionPlayed.action`) in today's shape: the one place
    an older log's actions are upgraded (see `stored_action`). The default: unchanged."""
    play: Callable[[S, int, Action], tuple[S, list[Event]]] | None = None
    """Returns the state after a seat's action and its events, as `decide` then `fold` would,
    in one pass (for an engine that folds its events as it decides them); None: `apply`
    decides, then folds."""
    earlier_readings: Callable[[R], list[R]] = lambda _ruleset: []
    """Returns a stored ruleset as the engine read it before each rules change that left it a
    default (a field the stored ruleset leaves unset, given the value that plays the earlier
    reading), newest first: the offline replay checks a log that does not add up under
    today's reading under these. The default: none."""
    action_problem: Callable[[Any, str], str] = lambda _payload, error: error
    """Returns the message of a 422 for a posted action payload that msgspec refused with
    `error`, in the game's words. The default: msgspec's message."""

    @cached_property
    def log_type(self) -> object:
        """Returns the union of every event of a game's log: the game's and the platform's
        (shared.messages.common.PLATFORM_EVENTS: the clock's and a resignation, which every
        evolve leaves as they are and `shared.model.clocks` folds, and `GameAborted`, which
        every evolve folds as the `GameFinished` it is)."""
        return Union[(self.event_type, *PLATFORM_EVENTS)]

    @cached_property
    def command_type(self) -> object:
        """Returns the union a seat's posted action is decoded into: the game's actions and,
        in a game with decisions, the platform's (`PLATFORM_ACTIONS`: `Resign`)."""
        if not self.has_decisions:
            return self.action_type
        return Union[(self.action_type, *PLATFORM_ACTIONS)]

    def stored_action(self, stored: dict[str, Any]) -> A:
        """Returns the action a stored dict records, upgraded by `upgrade_action`; raises
        msgspec.ValidationError when it is none of the game's."""
        action: A = msgspec.convert(self.upgrade_action(stored), self.action_type)
        return action

    @cached_property
    def codec(self) -> EventCodec[Event]:
        """Returns the decoder of the game's stored events (`log_type`)."""
        return EventCodec(self.log_type)

    def ruleset(self, given: str | Mapping[str, Any] | None) -> R:
        """Returns the ruleset named by a preset, or built from fields (raising InvalidRuleset)."""
        if given is None:
            return self.presets["classic"]
        if isinstance(given, str):
            try:
                return self.presets[given]
            except KeyError:
                names = ", ".join(sorted(self.presets))
                raise InvalidRuleset(
                    "ruleset", f"unknown preset {given!r}; one of {names}"
                ) from None
        try:
            return msgspec.convert(given, self.ruleset_type)
        except msgspec.ValidationError as error:
            raise InvalidRuleset("ruleset", str(error)) from None

    @overload
    def step(self, state: S, event: Event) -> S: ...
    @overload
    def step(self, state: S | None, event: Event) -> S | None: ...

    def step(self, state: S | None, event: Event) -> S | None:
        """Returns the state after `event`: the one place GameCreated and clock events are
        skipped (the platform writes them; `shared.model.clocks` folds the clock's)."""
        if isinstance(event, GameCreated | ClockEvent):
            return state
        return self.evolve(state, event)

    def fold(self, events: Iterable[Event], state: S | None = None) -> S:
        """Returns `state` (None: before the deal) after folding `events` with `step`."""
        for event in events:
            state = self.step(state, event)
        if state is None:
            raise ValueError("a game's log must hold its start event")
        return state

    def apply(self, state: S, seat: int, action: Action) -> tuple[S, list[Event]]:
        """Returns the state after `seat` takes `action` and the events that decision wrote;
        raises IllegalAction naming the rule. The one decide-then-fold of every game."""
        if self.play is not None:
            return self.play(state, seat, action)
        events = self.decide(state, seat, action)
        return self.fold(events, state), events


AnyGame = GameSpec[Any, Any, Any, Any]
"""A game not known until run time (the catalogue's, a service's): code generic over games."""


class Decision(Generic[S]):
    """A decision's events so far and the state they lead to, for engines that emit stepwise."""

    def __init__(self, state: S, evolve: Callable[[S, Event], S]) -> None:
        self.state = state
        self.events: list[Event] = []
        self._evolve = evolve

    def emit(self, event: Event) -> None:
        """Records `event` and folds it into the working state."""
        self.events.append(event)
        self.state = self._evolve(self.state, event)
