"""Hosted evaluation use cases over the event store: create one, start its units' games,
record a unit once its games end (the process manager's `after_game`), read one.

An evaluation's games are ordinary platform games on duplicate deals: each seat bound to the
candidate or the baseline (a built-in bot's strategy played by the platform, an external bot
over the API, a webhook bot at its URL) and marked with the evaluation (`Seat.evaluation`),
so it is never rated. Game `t` of unit `u` is created with the key
`evaluations.game_key(id, u, t)`, once however often its creation is retried.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Sequence

import msgspec

from shared.app.games import create_game
from shared.app.loading import load
from shared.app.registry import registered_bots
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, InvalidRuleset, UnknownGame
from shared.messages.codec import encode_all
from shared.messages.common import Seat
from shared.model import evaluation, sprt
from shared.model.accounts import HOST, recorded_owner
from shared.model.evaluations import (
    CODEC,
    INDEX,
    KIND,
    MAX_GAMES,
    Contestant,
    EvaluationCancelled,
    EvaluationDefinition,
    EvaluationEvent,
    EvaluationListed,
    EvaluationStarted,
    EvaluationState,
    UnitRecorded,
    UnitStarted,
    advance,
    evolve,
    fold,
    game_key,
    stream_id,
)
from shared.model.idempotency import game_id_for, platform_key
from shared.model.registry import RegisteredBot
from shared.ports import deal_secret
from shared.store.port import ConcurrencyConflict, EventStore


class UnknownEvaluation(LookupError):
    """No evaluation has that id."""

    def __init__(self, evaluation_id: str) -> None:
        super().__init__(f"no evaluation {evaluation_id!r}")
        self.evaluation_id = evaluation_id


class NotOwnBot(Exception):
    """An account asked to evaluate a bot that is not its own."""

    def __init__(self, field: str, key: str) -> None:
        super().__init__(f"{key} is not a bot of this account: an account evaluates its own bots")
        self.field = field
        self.message = str(self)


def contestant(
    game: str, bot: str, version: str, bots: Sequence[RegisteredBot], field: str, account: str
) -> Contestant:
    """Returns the registered bot `bot@version` of `game` as a contestant; raises
    InvalidRequest at `field.bot` when there is none (or it is suspended), NotOwnBot when
    `account` (not the host) does not own it."""
    found = next((b for b in bots if b.name == bot and b.version == version), None)
    if found is None or found.game != game:
        raise InvalidRequest(f"{field}.bot", f"no bot {bot}@{version} is registered for {game}")
    if account not in (HOST, found.account):
        raise NotOwnBot(f"{field}.bot", found.key)
    if found.suspended:
        raise InvalidRequest(f"{field}.bot", f"{found.key} belongs to a suspended account")
    return Contestant(
        bot=found.name,
        version=found.version,
        kind=found.kind,
        strategy=found.strategy if found.kind == "builtin" else "",
        account=found.account,
    )


def check(definition: EvaluationDefinition, bots: Sequence[RegisteredBot]) -> None:
    """Raises InvalidRequest naming the field an evaluation cannot run with (NotOwnBot for
    a bot of another account than `definition.account`, unless that is the host)."""
    try:
        spec = get_game(definition.game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {definition.game!r}") from None
    if not spec.has_decisions:
        raise InvalidRequest("game", f"{spec.title} has no decisions: nothing to evaluate")
    size = definition.table_size
    if not spec.min_players <= size <= spec.max_players:
        takes = f"{spec.title} takes {spec.min_players} to {spec.max_players} players"
        raise InvalidRequest("table_size", f"{takes}, not {size}")
    try:
        spec.validate(spec.ruleset(definition.ruleset), size)
    except InvalidRuleset as error:
        field = "ruleset" if error.field == "ruleset" else f"ruleset.{error.field}"
        raise InvalidRequest(field, error.message) from None
    sprt.check(definition.parameters)
    if not size <= definition.max_games <= MAX_GAMES:
        raise InvalidRequest(
            "max_games",
            f"must be from {size} (one unit) to {MAX_GAMES}, not {definition.max_games}",
        )
    for field, named in (("candidate", definition.candidate), ("baseline", definition.baseline)):
        contestant(definition.game, named.bot, named.version, bots, field, definition.account)
    if definition.candidate.key == definition.baseline.key:
        raise InvalidRequest("baseline.version", "must be another bot version than the candidate")


def create_evaluation(
    store: EventStore, definition: EvaluationDefinition, evaluation_id: str | None = None
) -> str:
    """Checks and records an evaluation with its first units (its contestants resolved from
    the registry); returns its id. Its games are not created: `start_pending` does."""
    bots = registered_bots(store)
    check(definition, bots)
    resolved = [
        contestant(definition.game, c.bot, c.version, bots, field, definition.account)
        for field, c in (("candidate", definition.candidate), ("baseline", definition.baseline))
    ]
    definition = msgspec.structs.replace(definition, candidate=resolved[0], baseline=resolved[1])
    evaluation_id = evaluation_id or uuid.uuid4().hex
    started = EvaluationStarted(definition=definition)
    events: list[EvaluationEvent] = [started, *advance(evolve(None, started))]
    key = platform_key("create", evaluation_id)
    store.append(stream_id(evaluation_id), KIND, 0, encode_all(events), key)
    listed = EvaluationListed(evaluation_id=evaluation_id, account=definition.account)
    while True:  # after its stream: a crash in between leaves it unlisted, never listed unmade
        try:
            store.append(INDEX, KIND, store.version(INDEX), encode_all([listed]), key)
        except ConcurrencyConflict:
            continue
        return evaluation_id


def listed(store: EventStore, account: str | None = None) -> list[str]:
    """Returns the ids of the evaluations `account` asked for (None: every one), newest
    first."""
    events = CODEC.decode_all(store.read(INDEX))
    return [
        e.evaluation_id
        for e in reversed(events)
        if isinstance(e, EvaluationListed) and account in (None, e.account)
    ]


def load_evaluation(store: EventStore, evaluation_id: str) -> tuple[EvaluationState, int]:
    """Returns an evaluation's state and its stream's version; raises UnknownEvaluation."""
    recorded = store.read(stream_id(evaluation_id))
    if not recorded or recorded[0].kind != KIND:
        raise UnknownEvaluation(evaluation_id)
    return fold(CODEC.decode_all(recorded)), recorded[-1].version


def unit_games(evaluation_id: str, state: EvaluationState, unit: int) -> list[str]:
    """Returns the ids of unit `unit`'s games, in turn order."""
    size = state.definition.table_size
    return [game_id_for(game_key(evaluation_id, unit, turn)) for turn in range(size)]


def _seat(who: Contestant, evaluation_id: str) -> Seat:
    """Returns the seat `who` plays in an evaluation's game: bound to it, never rated."""
    owner = recorded_owner(who.account)
    if who.kind == "builtin":
        return Seat(
            kind="bot",
            bot=who.strategy or who.bot,
            name=who.bot,
            version=who.version,
            account=owner,
            evaluation=evaluation_id,
        )
    return Seat(
        kind=who.kind, name=who.bot, version=who.version, account=owner, evaluation=evaluation_id
    )


def start_unit(
    store: EventStore, evaluation_id: str, state: EvaluationState, unit: int
) -> list[str]:
    """Creates unit `unit`'s games (once, whatever the retries); returns their ids."""
    d = state.definition
    seed = deal_secret.deal_key(store, "game", evaluation.deal_seed(d.seed, unit))
    started = []
    for turn, roles in enumerate(evaluation.seatings(d.table_size)):
        seats = [
            _seat(d.candidate if role == "candidate" else d.baseline, evaluation_id)
            for role in roles
        ]
        outcome = create_game(
            store,
            d.game,
            ruleset=d.ruleset,
            seats=seats,
            seed=seed,
            idempotency_key=game_key(evaluation_id, unit, turn),
        )
        started.append(outcome.game_id)
    return started


def start_pending(
    store: EventStore, evaluation_id: str, dispatch: Callable[[str], None]
) -> list[str]:
    """Creates the games of every unit in flight of a running evaluation and dispatches them;
    returns their ids. Safe to repeat (creation is idempotent per key)."""
    state, _ = load_evaluation(store, evaluation_id)
    if state.status != "running":
        return []
    started = [g for unit in state.in_flight for g in start_unit(store, evaluation_id, state, unit)]
    for game_id in started:
        dispatch(game_id)
    return started


def after_game(store: EventStore, game_id: str, dispatch: Callable[[str], None]) -> None:
    """The process manager's reaction to an ended game: when it is an evaluation's and its
    unit's games have all ended, record the unit, then start the units that follow."""
    try:
        loaded = load(store, game_id)
    except UnknownGame:
        return
    marks = [s.evaluation for s in loaded.created.seats if isinstance(s.evaluation, str)]
    if not marks or not loaded.spec.is_over(loaded.state):
        return
    evaluation_id = marks[0]
    with contextlib.suppress(UnknownEvaluation):
        start_units(store, evaluation_id, record(store, evaluation_id, game_id), dispatch)


def start_units(
    store: EventStore, evaluation_id: str, units: Sequence[int], dispatch: Callable[[str], None]
) -> list[str]:
    """Creates the games of `units` (just started) and dispatches them; returns their ids."""
    if not units:
        return []
    state, _ = load_evaluation(store, evaluation_id)
    started = [g for unit in units for g in start_unit(store, evaluation_id, state, unit)]
    for game_id in started:
        dispatch(game_id)
    return started


def record(store: EventStore, evaluation_id: str, game_id: str) -> list[int]:
    """Records the unit of `game_id` when its games have all ended (and the evaluation runs);
    returns the units that its record started (none: nothing appended, or none started)."""
    while True:
        state, version = load_evaluation(store, evaluation_id)
        if state.status != "running":
            return []
        unit = next(
            (u for u in state.in_flight if game_id in unit_games(evaluation_id, state, u)), None
        )
        if unit is None:
            return []
        recorded = _score(store, evaluation_id, state, unit)
        if recorded is None:
            return []
        events: list[EvaluationEvent] = [recorded, *advance(evolve(_copy(state), recorded))]
        if (why := _stopped(store, state.definition)) is not None:
            events = [recorded, EvaluationCancelled(reason=why)]
        try:
            store.append(
                stream_id(evaluation_id),
                KIND,
                version,
                encode_all(events),
                platform_key("record", evaluation_id, unit),
            )
        except ConcurrencyConflict:
            continue
        return [event.unit for event in events if isinstance(event, UnitStarted)]


def _stopped(store: EventStore, definition: EvaluationDefinition) -> str | None:
    """Returns why the evaluation may not go on (`account_suspended`: a contestant's account
    is suspended), None when it may."""
    keys = {definition.candidate.key, definition.baseline.key}
    if any(bot.suspended for bot in registered_bots(store) if bot.key in keys):
        return "account_suspended"
    return None


def _copy(state: EvaluationState) -> EvaluationState:
    """Returns a copy of `state` that `evolve` may change."""
    return EvaluationState(
        definition=state.definition,
        started=state.started,
        recorded=dict(state.recorded),
        counts=list(state.counts),
        llrs=list(state.llrs),
        finished=state.finished,
        cancelled=state.cancelled,
    )


def _score(
    store: EventStore, evaluation_id: str, state: EvaluationState, unit: int
) -> UnitRecorded | None:
    """Returns the record of unit `unit` once its games have all ended, else None."""
    games = unit_games(evaluation_id, state, unit)
    total, void = 0, False
    for game_id, roles in zip(games, evaluation.seatings(state.definition.table_size), strict=True):
        try:
            loaded = load(store, game_id)
        except UnknownGame:
            return None
        if not loaded.spec.is_over(loaded.state):
            return None
        result = loaded.spec.result(loaded.state)
        if loaded.aborted or result is None:
            void = True
            continue
        total += evaluation.half_points(result.places, evaluation.candidate_seat(roles))
    return UnitRecorded(unit=unit, games=games, score=0 if void else total, void=void)


def reconcile(
    store: EventStore,
    stall_ms: int,
    now: int,
    dispatch: Callable[[str], None],
    limit: int = 100,
) -> int:
    """Plays on the running evaluations (of the `limit` newest) that have appended nothing for
    `stall_ms` before `now` (the hook of a game's end lost with a killed worker): creates and
    dispatches a unit's missing games, records a unit whose games have all ended and starts
    what follows. Games waiting on the platform's move are `tournaments.reconcile_games`'
    (an evaluation's games belong to no tournament). Returns how many evaluations it moved
    on."""
    moved = 0
    for evaluation_id in listed(store)[:limit]:
        stream = stream_id(evaluation_id)
        last = store.read(stream, after=max(0, store.version(stream) - 1), limit=1)
        if not last or (last[0].recorded_at and now - last[0].recorded_at < stall_ms):
            continue
        state, _ = load_evaluation(store, evaluation_id)
        if state.status != "running":
            continue
        units = {unit: unit_games(evaluation_id, state, unit) for unit in state.in_flight}
        if any(store.version(game_id) == 0 for games in units.values() for game_id in games):
            start_pending(store, evaluation_id, dispatch)
            moved += 1
            continue
        before = store.version(stream)
        for games in units.values():
            start_units(store, evaluation_id, record(store, evaluation_id, games[0]), dispatch)
        moved += store.version(stream) != before
    return moved
