"""A hosted evaluation's event stream: its definition, the units it started and recorded, its
verdict; and the pure decision of what follows each record (`advance`).

An evaluation (`evaluation:<id>`, kind `evaluation`) plays units of duplicate games as
`shared.model.evaluation` seats them, at most `IN_FLIGHT` units at a time, and after each
unit's games all end records the unit's score and updates the SPRT (`shared.model.sprt`). It
starts no unit once a bound is crossed or the next unit would take it past `max_games`, and
finishes at once when a bound is crossed (a unit still in flight plays out and counts for
nothing), or, inconclusive, when its last unit is recorded. A unit whose game was aborted is
recorded void: it counts for nothing and another takes its place (within `max_games`).

Pure: the standard library, msgspec and the model.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from shared.messages.codec import EventCodec
from shared.messages.common import Event
from shared.model import evaluation, sprt

KIND = "evaluation"
"""The kind of an evaluation's stream."""
IN_FLIGHT = 2
"""The most units an evaluation plays at a time: it stops soon after its verdict."""
INDEX = "evaluations"
"""The stream listing every evaluation, in order of creation."""
MAX_GAMES = 100_000
"""The most games an evaluation may ask for."""

EvaluationStatus = Literal["running", "finished", "cancelled"]
Outcome = Literal["H1", "H0", "inconclusive"]


class Contestant(msgspec.Struct, frozen=True, kw_only=True):
    """A registered bot version an evaluation seats, as the registry held it."""

    bot: str
    version: str
    kind: Literal["builtin", "external", "webhook"] = "builtin"
    strategy: str = ""
    """A built-in bot's strategy (empty for a client bot)."""
    account: str = "host"
    """The account that owns the bot."""

    @property
    def key(self) -> str:
        """Returns `bot@version`."""
        return f"{self.bot}@{self.version}"


class EvaluationDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """What an evaluation plays: candidate against baseline at a table of `table_size`, the
    SPRT's parameters, the most games and the seed of its deals."""

    game: str
    candidate: Contestant
    baseline: Contestant
    ruleset: str | None = None
    table_size: int = 2
    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: Annotated[int, msgspec.Meta(ge=1)] = 1000
    seed: str = "0"
    account: str = "host"
    """Who asked for it (an account's name, or `host`)."""
    created_at: str = ""

    @property
    def parameters(self) -> sprt.Parameters:
        """Returns the test's parameters."""
        return sprt.Parameters(self.elo0, self.elo1, self.alpha, self.beta)


class EvaluationEvent(Event, frozen=True, kw_only=True):
    """Base of an evaluation stream's events."""


class EvaluationStarted(EvaluationEvent, frozen=True, kw_only=True):
    """An evaluation was defined."""

    definition: EvaluationDefinition


class UnitStarted(EvaluationEvent, frozen=True, kw_only=True):
    """Unit `unit`'s games are to be played (created by the platform, once per key)."""

    unit: int


class UnitRecorded(EvaluationEvent, frozen=True, kw_only=True):
    """Unit `unit`'s games all ended: their ids and the unit's score for the candidate in
    half points (its bin); `void` when a game was aborted (then no score counts)."""

    unit: int
    games: list[str]
    score: int = 0
    void: bool = False


class EvaluationFinished(EvaluationEvent, frozen=True, kw_only=True):
    """The evaluation ended: its verdict, the LLR and its bounds, units and games counted."""

    verdict: Outcome
    llr: float
    lower: float
    upper: float
    units: int
    games: int


class EvaluationCancelled(EvaluationEvent, frozen=True, kw_only=True):
    """The evaluation stopped with no verdict: `account_suspended` (a contestant's account was
    suspended: nothing seats its bots). A unit still in flight counts for nothing."""

    reason: str


class EvaluationListed(EvaluationEvent, frozen=True, kw_only=True):
    """An evaluation was created (on the index stream `INDEX`): its id and whose it is."""

    evaluation_id: str
    account: str


AnyEvaluationEvent = (
    EvaluationStarted
    | UnitStarted
    | UnitRecorded
    | EvaluationFinished
    | EvaluationCancelled
    | EvaluationListed
)
CODEC: EventCodec[EvaluationEvent] = EventCodec(AnyEvaluationEvent)


class EvaluationState(msgspec.Struct, kw_only=True):
    """An evaluation folded: its definition, units started and recorded, the unit scores'
    frequencies, the LLR after each counted unit and its end."""

    definition: EvaluationDefinition
    started: int = 0
    recorded: dict[int, UnitRecorded] = msgspec.field(default_factory=dict)
    counts: list[int] = msgspec.field(default_factory=list)
    llrs: list[float] = msgspec.field(default_factory=list)
    finished: EvaluationFinished | None = None
    cancelled: EvaluationCancelled | None = None

    @property
    def status(self) -> EvaluationStatus:
        """Returns `running`, `finished` or `cancelled`."""
        if self.cancelled is not None:
            return "cancelled"
        return "running" if self.finished is None else "finished"

    @property
    def in_flight(self) -> list[int]:
        """Returns the units started and not recorded, in order."""
        return [unit for unit in range(self.started) if unit not in self.recorded]

    @property
    def test(self) -> sprt.Status:
        """Returns the SPRT's status on the units counted."""
        return sprt.status(self.counts, self.definition.parameters)

    @property
    def games(self) -> int:
        """Returns the games of the units counted."""
        return sum(self.counts) * self.definition.table_size


def stream_id(evaluation_id: str) -> str:
    """Returns the id of an evaluation's event stream."""
    return f"evaluation:{evaluation_id}"


def game_key(evaluation_id: str, unit: int, turn: int) -> str:
    """Returns the creation key of game `turn` of unit `unit` (its id derives from it)."""
    return f"{evaluation_id}:unit:{unit}:{turn}"


def evolve(state: EvaluationState | None, event: EvaluationEvent) -> EvaluationState:
    """Returns the state after `event` (the first event is EvaluationStarted)."""
    if isinstance(event, EvaluationStarted):
        size = event.definition.table_size
        return EvaluationState(definition=event.definition, counts=[0] * evaluation.bins(size))
    if state is None:
        raise ValueError("an evaluation's stream starts with EvaluationStarted")
    if isinstance(event, UnitStarted):
        state.started = max(state.started, event.unit + 1)
    elif isinstance(event, UnitRecorded):
        state.recorded[event.unit] = event
        if not event.void and state.status == "running":
            state.counts[event.score] += 1
            state.llrs.append(state.test.llr)
    elif isinstance(event, EvaluationFinished):
        state.finished = event
    elif isinstance(event, EvaluationCancelled):
        state.cancelled = event
    return state


def fold(events: list[EvaluationEvent]) -> EvaluationState:
    """Returns the state of an evaluation's events."""
    state: EvaluationState | None = None
    for event in events:
        state = evolve(state, event)
    if state is None:
        raise ValueError("an evaluation's stream is empty")
    return state


def _budget(state: EvaluationState) -> int:
    """Returns how many more units may start: every unit started (counted, void or in
    flight) and the next must fit in `max_games`."""
    d = state.definition
    return max(0, d.max_games // d.table_size - state.started)


def advance(state: EvaluationState) -> list[EvaluationEvent]:
    """Returns what follows `state` (not changed): EvaluationFinished once a bound is crossed,
    or when no unit is in flight and none may start; else the units to start, keeping
    `IN_FLIGHT` in flight."""
    if state.status != "running":
        return []
    test = state.test
    if test.verdict is not None or (not state.in_flight and _budget(state) == 0):
        verdict: Outcome = test.verdict or "inconclusive"
        units = round(sum(state.counts))
        return [
            EvaluationFinished(
                verdict=verdict,
                llr=test.llr,
                lower=test.lower,
                upper=test.upper,
                units=units,
                games=state.games,
            )
        ]
    room = min(IN_FLIGHT - len(state.in_flight), _budget(state))
    return [UnitStarted(unit=state.started + i) for i in range(max(0, room))]
