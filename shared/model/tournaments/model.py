"""A tournament as an event-sourced process: its definition, events, state and next steps.

The process manager is `advance(state)`: given what has happened (rounds scheduled, games
recorded), it returns the events that follow: the next round's games, a round's end, the
tournament's end. Whoever runs the tournament (in-process, or the workers reacting to
`GameFinished`) appends those events and creates the scheduled games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, InvalidRuleset
from shared.messages.codec import EventCodec
from shared.messages.common import Clock, Event
from shared.model.registry import BotKind, RegisteredBot, resolve_bot
from shared.model.tournaments import formats, tiebreaks
from shared.model.tournaments.formats import PlannedGame, Table
from shared.model.tournaments.schedule import InvalidSchedule, Schedule, validate_schedule

Format = Literal["round_robin", "swiss", "duplicate", "knockout"]


class Entrant(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A bot entered in a tournament: a registered bot's name and version, or a built-in
    strategy's name under a version label. Ratings follow `bot@version`.

    `strategy` and `kind` are filled in when the tournament is created (the registered
    bot's, or `bot` itself as a built-in strategy), so later registrations never change a
    recorded tournament. The seats of an `external` or `webhook` entrant are bound to it.
    """

    bot: str
    """A registered bot's name, or a built-in strategy's."""
    version: str = "1"
    """The version label (default "1"); ratings follow `bot@version`."""
    name: str = ""
    """A display name (default: `bot`)."""
    strategy: str = ""
    """The strategy it plays, filled in at creation."""
    kind: BotKind | None = None
    """How it plays (`builtin`, `external`, `webhook`), filled in at creation."""

    @property
    def label(self) -> str:
        """Returns the entrant's display name: its name, else `bot@version`."""
        return self.name or f"{self.bot}@{self.version}"


class TournamentDefinition(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a host asks for: game, ruleset, entrants, table size, format and seed."""

    game: str
    """The game to play."""
    entrants: list[Entrant]
    """The bots entered, in entrant order."""
    name: str | None = None
    """The tournament's name (1 to 100 characters, not blank); none: the game's title and the
    format, e.g. "Shithead Swiss"."""
    description: str | None = None
    """What it is for, in a few words (1 to 2000 characters, not blank); optional."""
    table_size: int
    """Seats per table."""
    format: Format = "round_robin"
    """`round_robin`, `swiss`, `knockout` or `duplicate`."""
    ruleset: str | dict[str, Any] | None = None
    """A preset's name or the ruleset's fields; none: the classic preset."""
    games_per_table: int = 1
    """Round robin, Swiss and knockout: the games each table plays, its seats rotating from
    one to the next (a knockout table's winner: the most points over them); duplicate: cycles
    of one deal per entrant (each deal at every table the field fills, nobody at two of
    them)."""
    rounds: int = 3
    """Swiss: the number of rounds."""
    seed: str = ""
    """The games' seed: the same definition and seed on the same deployment deal the same
    cards (empty: a random seed, drawn when the tournament is created). Withheld, as empty,
    while the tournament runs."""
    schedule: Schedule | None = None
    """When to run it: once `at` a time or on a `cron` expression; None runs it now."""
    clock: Clock | None = None
    """The clock of every game (it times only external and webhook seats), overriding the
    ruleset's; None: the ruleset's clock, if it sets one, else untimed."""


class InvalidTournament(InvalidRequest):
    """A tournament definition cannot be run; `field` names the offending field."""


NAME_LENGTH = 100
"""The longest tournament name."""
DESCRIPTION_LENGTH = 2000
"""The longest tournament description."""
FORMAT_TITLES: dict[str, str] = {
    "round_robin": "round robin",
    "swiss": "Swiss",
    "duplicate": "duplicate",
    "knockout": "knockout",
}


def display_name(definition: TournamentDefinition) -> str:
    """Returns the tournament's name: the host's, else the game's title and the format."""
    if definition.name:
        return definition.name
    try:
        title = get_game(definition.game).title
    except GameNotFound:
        title = definition.game
    return f"{title} {FORMAT_TITLES.get(definition.format, definition.format)}"


class TournamentWarning(msgspec.Struct, frozen=True, kw_only=True):
    """Something the host should know about a valid tournament."""

    code: str
    """What it is, for a program: `version-entered-twice` (games where one bot version
    sits in two seats are not rated)."""
    message: str
    """What it is, in words."""


def warnings(definition: TournamentDefinition) -> list[TournamentWarning]:
    """Returns what the host should know of a valid definition: each bot version entered
    twice or more, whose games at one table are never rated (`shared.ports.views.fold`: a
    rating key on one seat only)."""
    if not get_game(definition.game).has_decisions:
        return []
    entries: dict[str, list[int]] = {}
    for index, entrant in enumerate(definition.entrants):
        entries.setdefault(f"{entrant.bot}@{entrant.version}", []).append(index)
    return [
        TournamentWarning(
            code="version-entered-twice",
            message=(
                f"{key} is entered {len(indexes)} times (entrants"
                f" {', '.join(map(str, indexes))}): a game in which it sits in two seats is"
                " not rated (one bot version playing itself has no rating update); enter"
                " distinct versions to rate every game"
            ),
        )
        for key, indexes in entries.items()
        if len(indexes) > 1
    ]


def _check_text(definition: TournamentDefinition) -> None:
    """Raises InvalidTournament (`name`, `description`) for a blank or too long text."""
    for name, value, longest in (
        ("name", definition.name, NAME_LENGTH),
        ("description", definition.description, DESCRIPTION_LENGTH),
    ):
        if value is None:
            continue
        if not value.strip():
            raise InvalidTournament(name, "must not be blank (leave it out instead)")
        if len(value) > longest:
            raise InvalidTournament(
                name, f"is {len(value)} characters long; at most {longest} are allowed"
            )


MAX_GAMES = 20_000
"""The most games one tournament may plan: a hosting request (or a schedule, each run) may
not make the platform play an unbounded number of games. Split bigger events."""


def planned_games(definition: TournamentDefinition) -> int:
    """Returns how many games the tournament plays at most (a knockout: fewer than its
    entrants; Swiss: every entrant at a table in every round)."""
    entrants, size = len(definition.entrants), definition.table_size
    if definition.format in ("round_robin", "duplicate"):
        return _games_per_cycle(definition) * definition.games_per_table
    if definition.format == "swiss":
        return definition.rounds * (entrants // max(1, size)) * definition.games_per_table
    return entrants * definition.games_per_table


def _check_size(definition: TournamentDefinition) -> None:
    """Raises InvalidTournament (naming the field that makes it so) for a tournament of more
    than MAX_GAMES games."""
    planned = planned_games(definition)
    if planned <= MAX_GAMES:
        return
    if definition.format == "swiss":
        field = "rounds" if definition.games_per_table == 1 else "games_per_table"
    elif definition.format == "knockout":
        field = "entrants" if definition.games_per_table == 1 else "games_per_table"
    elif _games_per_cycle(definition) > MAX_GAMES:
        field = "entrants"
    else:
        field = "games_per_table"
    raise InvalidTournament(
        field, f"the tournament would play {planned} games; at most {MAX_GAMES} are allowed"
    )


def _games_per_cycle(definition: TournamentDefinition) -> int:
    """Returns the games the field alone makes, whatever `games_per_table`: its tables (round
    robin), or one cycle of deals (duplicate)."""
    entrants, size = len(definition.entrants), definition.table_size
    if definition.format == "duplicate":
        return entrants * formats.duplicate_tables(entrants, size)
    return math.comb(entrants, size) if 0 <= size <= entrants else 0


def duplicate_minimum(table_size: int) -> int:
    """Returns the smallest field of a duplicate tournament at tables of `table_size`: two
    tables of disjoint entrants, so that each seat of a deal is compared across tables and
    nobody plays the deal twice."""
    return 2 * table_size


def _check_duplicate(definition: TournamentDefinition, bots: Sequence[RegisteredBot]) -> None:
    """Raises InvalidTournament (`entrants`) for a duplicate field too small to play each deal
    at two tables of disjoint entrants, or (`entrants[i].bot`) when one external or webhook
    bot (one token) is entered twice: it would see a deal at two tables."""
    needed = duplicate_minimum(definition.table_size)
    if len(definition.entrants) < needed:
        raise InvalidTournament(
            "entrants",
            f"a duplicate tournament at tables of {definition.table_size} needs at least"
            f" {needed} entrants (each deal at two tables, nobody at both),"
            f" not {len(definition.entrants)}",
        )
    seen: set[str] = set()
    for index, entrant in enumerate(resolve_entrants(definition, bots).entrants):
        key = f"{entrant.bot}@{entrant.version}"
        if entrant.kind in {"external", "webhook"}:
            if key in seen:
                raise InvalidTournament(
                    f"entrants[{index}].bot",
                    f"{key} is entered twice: in a duplicate tournament a bot with a token"
                    " plays each deal once, so it may hold one entry",
                )
            seen.add(key)


class TournamentEvent(Event, frozen=True, kw_only=True):
    """Base of a tournament stream's events."""


class TournamentCreated(TournamentEvent, frozen=True, kw_only=True):
    """A tournament was defined."""

    definition: TournamentDefinition


class ScheduledGame(msgspec.Struct, frozen=True, kw_only=True):
    """A game of a round: the key its game is created with, its table and its deal seed."""

    key: str
    table: Table
    seed: str
    deal: str = ""


class RoundScheduled(TournamentEvent, frozen=True, kw_only=True):
    """A round's games were fixed; `byes` sit it out."""

    round: int
    games: list[ScheduledGame]
    byes: list[int] = []


class GameRecorded(TournamentEvent, frozen=True, kw_only=True):
    """A game of the tournament ended: the places of its table's entrants, in seat order."""

    round: int
    key: str
    game_id: str
    places: list[int]
    status: str


class RoundCompleted(TournamentEvent, frozen=True, kw_only=True):
    """Every game of a round has been recorded."""

    round: int


class TournamentFinished(TournamentEvent, frozen=True, kw_only=True):
    """The tournament is over; `winner` is the knockout's last entrant, else the first of the
    final standings (`ranking`). A stream written before that rule named no winner of a
    round robin, Swiss or duplicate: folding it names the standings' first all the same."""

    winner: int | None = None


class TournamentCancelled(TournamentEvent, frozen=True, kw_only=True):
    """A host cancelled the tournament; games already running finish but count for nothing."""

    reason: str = ""


AnyTournamentEvent = (
    TournamentCreated
    | RoundScheduled
    | GameRecorded
    | RoundCompleted
    | TournamentFinished
    | TournamentCancelled
)


class TournamentState(msgspec.Struct, frozen=True):
    """What has happened so far."""

    definition: TournamentDefinition
    rounds: tuple[RoundScheduled, ...] = ()
    records: tuple[GameRecorded, ...] = ()
    completed: int = 0
    status: Literal["running", "finished", "cancelled"] = "running"
    winner: int | None = None


def validate(definition: TournamentDefinition, bots: Sequence[RegisteredBot] = ()) -> None:
    """Raises InvalidTournament naming the field a definition gets wrong.

    Entrants may name the `bots` registered, or the game's built-in strategies.
    """
    try:
        spec = get_game(definition.game)
    except GameNotFound:
        raise InvalidTournament("game", f"unknown game {definition.game!r}") from None
    size = definition.table_size
    if not spec.min_players <= size <= spec.max_players:
        raise InvalidTournament(
            "table_size", f"{spec.title} seats {spec.min_players} to {spec.max_players}, not {size}"
        )
    if len(definition.entrants) < size:
        raise InvalidTournament(
            "entrants", f"{len(definition.entrants)} entrants cannot fill a table of {size}"
        )
    _check_text(definition)
    resolve_entrants(definition, bots)
    if definition.format == "duplicate":
        _check_duplicate(definition, bots)
    if definition.games_per_table < 1:
        raise InvalidTournament("games_per_table", "must be at least 1")
    if definition.format == "swiss" and definition.rounds < 1:
        raise InvalidTournament("rounds", "must be at least 1")
    _check_size(definition)
    try:
        spec.validate(spec.ruleset(definition.ruleset), size)
    except InvalidRuleset as error:
        raise InvalidTournament(f"ruleset.{error.field}", error.message) from None
    if definition.schedule is not None:
        try:
            validate_schedule(definition.schedule)
        except InvalidSchedule as error:
            raise InvalidTournament(f"schedule.{error.field}", error.message) from None


def resolve_entrants(
    definition: TournamentDefinition, bots: Sequence[RegisteredBot] = ()
) -> TournamentDefinition:
    """Returns `definition` with each entrant's strategy filled in; raises InvalidTournament."""
    entrants = []
    spec = get_game(definition.game)
    for index, entrant in enumerate(definition.entrants):
        field = f"entrants[{index}]"
        key = f"{entrant.bot}@{entrant.version}"
        try:
            kind, strategy = resolve_bot(definition.game, entrant.bot, entrant.version, bots, field)
        except InvalidRequest as error:
            raise InvalidTournament(f"{field}.bot", error.message) from None
        if entrant.strategy and entrant.strategy != strategy:
            raise InvalidTournament(f"{field}.strategy", f"{key} plays {strategy or kind}")
        if entrant.kind is not None and entrant.kind != kind:
            raise InvalidTournament(f"{field}.kind", f"{key} is a {kind} bot")
        if kind != "builtin" and not spec.has_decisions:
            raise InvalidTournament(
                f"{field}.bot", f"{spec.title} has no decisions; only built-in bots play it"
            )
        entrants.append(msgspec.structs.replace(entrant, strategy=strategy, kind=kind))
    return msgspec.structs.replace(definition, entrants=entrants)


def evolve(state: TournamentState | None, event: Event) -> TournamentState:
    """Returns the state after `event`."""
    if isinstance(event, TournamentCreated):
        return TournamentState(definition=event.definition)
    assert state is not None
    if isinstance(event, RoundScheduled):
        return msgspec.structs.replace(state, rounds=(*state.rounds, event))
    if isinstance(event, GameRecorded):
        return msgspec.structs.replace(state, records=(*state.records, event))
    if isinstance(event, RoundCompleted):
        return msgspec.structs.replace(state, completed=event.round)
    if isinstance(event, TournamentFinished):
        winner = event.winner
        if winner is None and state.definition.format != "knockout":
            winner = ranking(state)[0]
        return msgspec.structs.replace(state, status="finished", winner=winner)
    if isinstance(event, TournamentCancelled):
        return msgspec.structs.replace(state, status="cancelled")
    raise TypeError(f"a tournament has no event {type(event).__name__}")


def fold(events: Sequence[Event]) -> TournamentState:
    """Returns the state after folding a tournament's events."""
    state: TournamentState | None = None
    for event in events:
        state = evolve(state, event)
    assert state is not None
    return state


def pending(state: TournamentState) -> list[ScheduledGame]:
    """Returns the scheduled games of the current round that have no result yet."""
    if not state.rounds:
        return []
    done = {record.key for record in state.records}
    return [game for game in state.rounds[-1].games if game.key not in done]


def advance(state: TournamentState, tournament_id: str) -> list[TournamentEvent]:
    """Returns what follows from `state`: a round to schedule, a round's end, the end."""
    if state.status != "running":
        return []
    if not state.rounds:
        return [_schedule(state, tournament_id, 1)]
    current = state.rounds[-1].round
    if pending(state) or state.completed == current:
        return []
    events: list[TournamentEvent] = [RoundCompleted(round=current)]
    after = evolve(state, events[0])
    finished, winner = _is_over(after)
    if finished:
        events.append(TournamentFinished(winner=winner))
    else:
        events.append(_schedule(after, tournament_id, current + 1))
    return events


def _schedule(state: TournamentState, tournament_id: str, round_no: int) -> RoundScheduled:
    """Returns round `round_no`'s games under the tournament's format."""
    d = state.definition
    n = len(d.entrants)
    byes: list[int] = []
    if d.format == "round_robin":
        planned = formats.round_robin(n, d.table_size, d.games_per_table, d.seed)
    elif d.format == "duplicate":
        planned = formats.duplicate(n, d.table_size, d.games_per_table, d.seed)
    elif d.format == "swiss":
        history = [game.table for rnd in state.rounds for game in rnd.games]
        byes_had: dict[int, int] = {}
        for rnd in state.rounds:
            for entrant in rnd.byes:
                byes_had[entrant] = byes_had.get(entrant, 0) + 1
        planned, byes = formats.swiss_round(
            n, d.table_size, round_no, _points(state), history, byes_had, d.seed,
            d.games_per_table,
        )  # fmt: skip
    else:
        planned, byes = formats.knockout_round(
            _alive(state), d.table_size, round_no, d.seed, d.games_per_table
        )
    games = [_scheduled(tournament_id, round_no, i, game) for i, game in enumerate(planned)]
    return RoundScheduled(round=round_no, games=games, byes=byes)


def _scheduled(tournament_id: str, round_no: int, index: int, game: PlannedGame) -> ScheduledGame:
    """Returns a planned game with the key its game is created under."""
    return ScheduledGame(
        key=f"{tournament_id}:{round_no}:{index}", table=game.table, seed=game.seed, deal=game.deal
    )


def _bye_games(definition: TournamentDefinition) -> int:
    """Returns how many games a bye stands for: a table's games (Swiss, knockout)."""
    return definition.games_per_table if definition.format in ("swiss", "knockout") else 1


def _points(state: TournamentState) -> dict[int, float]:
    """Returns each entrant's points so far (table size minus place; a bye as a win of each
    game its round's tables play)."""
    size = state.definition.table_size
    points: dict[int, float] = {}
    for entrant, place in _results(state):
        points[entrant] = points.get(entrant, 0.0) + (size - place)
    bye = (size - 1) * _bye_games(state.definition)
    for rnd in state.rounds[: state.completed]:
        for entrant in rnd.byes:
            points[entrant] = points.get(entrant, 0.0) + bye
    return points


def _results(state: TournamentState) -> list[tuple[int, int]]:
    """Returns (entrant, place) of every recorded game."""
    tables = {game.key: game.table for rnd in state.rounds for game in rnd.games}
    return [
        (entrant, place)
        for record in state.records
        for entrant, place in zip(tables[record.key], record.places, strict=True)
    ]


def tiebreak_field(state: TournamentState) -> tiebreaks.Field:
    """Returns what the tie-breaks read of the tournament: its recorded games in schedule
    order, the byes of its completed rounds, and its format's own (duplicate scores,
    knockout stages)."""
    d = state.definition
    records = {record.key: record for record in state.records}
    games = [
        tiebreaks.Played(rnd.round, game.table, tuple(records[game.key].places))
        for rnd in state.rounds
        for game in rnd.games
        if game.key in records
    ]
    scores = _duplicate_fractions(state) if d.format == "duplicate" else {}
    return tiebreaks.Field(
        entrants=len(d.entrants),
        table_size=d.table_size,
        format=d.format,
        seed=d.seed,
        rounds=d.rounds,
        games=games,
        byes={rnd.round: list(rnd.byes) for rnd in state.rounds[: state.completed]},
        games_per_bye=_bye_games(d),
        scores=scores,
        stages=_stages(state) if d.format == "knockout" else {},
    )


def ranked(state: TournamentState) -> tuple[list[int], list[tiebreaks.Values]]:
    """Returns every entrant, best first, under its format's tie-breaks
    (`tiebreaks.ORDER`), and each one's tie-break values (in entrant order)."""
    return tiebreaks.rank(tiebreak_field(state))


def ranking(state: TournamentState) -> list[int]:
    """Returns every entrant, best first, under its format's order (`tiebreaks.ORDER`): never
    the order of entry, a tie on every count going to the seeded drawing of lots. The
    standings list their lines in this order; a finished round robin, Swiss or duplicate
    names its first as the winner, a knockout the entrant that came through every round."""
    return ranked(state)[0]


def duplicate_scores(state: TournamentState) -> dict[int, float]:
    """Returns each entrant's duplicate score: over its recorded games, its points minus the
    mean points of the same seat on the same deal at the deal's other recorded tables (a
    deal recorded at one table only compares nothing)."""
    return {entrant: float(score) for entrant, score in _duplicate_fractions(state).items()}


def _duplicate_fractions(state: TournamentState) -> dict[int, Fraction]:
    """Returns `duplicate_scores` exactly, as fractions."""
    size = state.definition.table_size
    records = {record.key: record for record in state.records}
    by_seat: dict[tuple[int, str, int], list[tuple[int, Fraction]]] = {}
    for rnd in state.rounds:
        for game in rnd.games:
            record = records.get(game.key)
            if record is None:
                continue
            for seat, (entrant, place) in enumerate(zip(game.table, record.places, strict=True)):
                by_seat.setdefault((rnd.round, game.deal, seat), []).append(
                    (entrant, Fraction(size - place))
                )
    scores: dict[int, Fraction] = {}
    for results in by_seat.values():
        total = sum((points for _, points in results), Fraction(0))
        for entrant, points in results:
            others = len(results) - 1
            compared = points - (total - points) / others if others else Fraction(0)
            scores[entrant] = scores.get(entrant, Fraction(0)) + compared
    return scores


def table_winners(state: TournamentState, rnd: RoundScheduled) -> list[int]:
    """Returns the winner of each table of a knockout round, in table order: the most points
    over the table's games, a tie going to the seeded drawing of lots (never a seat)."""
    d = state.definition
    by_key = {record.key: record for record in state.records}
    totals: dict[frozenset[int], dict[int, int]] = {}
    for game in rnd.games:
        table = totals.setdefault(frozenset(game.table), {})
        for entrant, place in zip(game.table, by_key[game.key].places, strict=True):
            table[entrant] = table.get(entrant, 0) + d.table_size - place
    drawn = tiebreaks.lots(len(d.entrants), d.seed)
    return [max(table, key=lambda e: (table[e], -drawn[e])) for table in totals.values()]


def _alive(state: TournamentState) -> list[int]:
    """Returns the knockout's entrants still in: the field, then each round's winners and byes."""
    if not state.rounds:
        return list(range(len(state.definition.entrants)))
    last = state.rounds[-1]
    return table_winners(state, last) + list(last.byes)


def _stages(state: TournamentState) -> dict[int, int]:
    """Returns how many completed knockout rounds each entrant came through: read from the
    next round's schedule (its tables and byes), and for the last round from its winners."""
    stages: dict[int, int] = {}
    completed = state.rounds[: state.completed]
    for index, rnd in enumerate(completed):
        if index + 1 < len(state.rounds):
            following = state.rounds[index + 1]
            through = [e for game in following.games for e in game.table] + list(following.byes)
        else:
            through = table_winners(state, rnd) + list(rnd.byes)
        for entrant in dict.fromkeys(through):
            stages[entrant] = stages.get(entrant, 0) + 1
    return stages


def _is_over(state: TournamentState) -> tuple[bool, int | None]:
    """Returns whether the tournament is over after its last completed round, and any winner."""
    d = state.definition
    if d.format in ("round_robin", "duplicate"):
        return True, ranking(state)[0]
    if d.format == "swiss":
        over = state.completed >= d.rounds
        return over, ranking(state)[0] if over else None
    alive = _alive(state)
    return (len(alive) == 1, alive[0] if len(alive) == 1 else None)


KIND = "tournament"


CODEC: EventCodec[TournamentEvent] = EventCodec(AnyTournamentEvent)


def stream_id(tournament_id: str) -> str:
    """Returns the id of a tournament's event stream."""
    return f"tournament:{tournament_id}"
