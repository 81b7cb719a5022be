"""`cardarena simulate`: seeded games between built-in bots, played here: places and wins per bot.

Game `i` of a run with seed `s` is dealt from the seed `f"{s}:{i}"` and seats the bots
rotated by `i` (the bot listed `j`th plays seat `(j + i) % n`), so that over a multiple of
`n` games every bot has played every seat equally often and the luck of a seat cancels.
A run is deterministic: the same request gives the same tallies, in one process or many.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.util import Finalize
from typing import Any

from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from services.cli.common import MOVE_SECONDS, fail
from services.cli.programs import (
    Program,
    ProgramFailed,
    Programs,
    bot_names,
    check_program,
    command_of,
    is_program,
    refusal,
    split_note,
    turn_line,
)
from shared.app.loading import parse_action
from shared.catalog import game_names, get_game
from shared.errors import GameNotFound, IllegalAction, InvalidRequest, InvalidRuleset
from shared.games.base import AnyGame
from shared.messages.common import Event, Resign, Result, Seat
from shared.model import clocks, endings

MAX_DECISIONS = 1_000_000
"""A game still running after this many decisions is an engine bug, not a long game."""


class SimulationError(ValueError):
    """A simulation cannot run as asked; the message says why, in one line."""


@dataclass(frozen=True)
class Simulation:
    """A checked request: which game and preset, the bots in seat order, how many games."""

    game: str
    preset: str
    bots: tuple[str, ...]
    games: int
    seed: str
    move_seconds: float = MOVE_SECONDS
    """A local program's time limit per move."""


@dataclass
class Tally:
    """One bot's games, wins (first places), the sum of its places and its forfeits."""

    games: int = 0
    wins: int = 0
    places: int = 0
    forfeits: int = 0

    @property
    def mean_place(self) -> float:
        """Returns the bot's mean place (1 is best)."""
        return self.places / self.games

    @property
    def win_rate(self) -> float:
        """Returns the share of the bot's games it won."""
        return self.wins / self.games

    def add(self, other: Tally) -> None:
        """Adds `other`'s counts to this tally."""
        self.games += other.games
        self.wins += other.wins
        self.places += other.places
        self.forfeits += other.forfeits


@dataclass(frozen=True)
class Forfeit:
    """A local program's seat that forfeited a game: the game's index, the bot, its seat and
    why (`ProgramFailed`'s reason and detail)."""

    game: int
    bot: str
    seat: int
    reason: str


@dataclass(frozen=True)
class Report:
    """The outcome of a run: per-bot tallies (one per bot name) and the wall time."""

    simulation: Simulation
    seconds: float
    bots: dict[str, Tally] = field(default_factory=dict)
    forfeits: list[Forfeit] = field(default_factory=list)

    @property
    def games_per_second(self) -> float:
        """Returns the games played per second of wall time."""
        return self.simulation.games / self.seconds if self.seconds > 0 else float("inf")

    def to_json(self) -> dict[str, Any]:
        """Returns the report as one JSON-ready object, bots sorted by name."""
        return {
            "game": self.simulation.game,
            "preset": self.simulation.preset,
            "games": self.simulation.games,
            "games_per_second": round(self.games_per_second, 2),
            "bots": {
                name: {
                    "games": tally.games,
                    "wins": tally.wins,
                    "mean_place": round(tally.mean_place, 4),
                    "forfeits": tally.forfeits,
                }
                for name, tally in sorted(self.bots.items())
            },
            "forfeits": [
                {"game": f.game, "bot": f.bot, "seat": f.seat, "reason": f.reason}
                for f in sorted(self.forfeits, key=lambda f: (f.game, f.seat))
            ],
        }


def check(
    game: str,
    preset: str,
    bots: Sequence[str],
    games: int,
    seed: str,
    move_seconds: float = MOVE_SECONDS,
) -> Simulation:
    """Returns the request as a Simulation; raises SimulationError naming what is wrong."""
    spec = game_of(game)
    if games < 1:
        raise SimulationError(f"games must be at least 1, not {games}")
    check_players(spec, len(bots))
    for name in bots:
        check_bot(spec, name, move_seconds)
    check_preset(spec, preset, len(bots))
    return Simulation(spec.name, preset, tuple(bots), games, seed, move_seconds)


def game_of(game: str) -> AnyGame:
    """Returns the game named `game`; raises SimulationError naming the games there are."""
    try:
        return get_game(game)
    except GameNotFound:
        raise SimulationError(f"unknown game {game!r}; one of {', '.join(game_names())}") from None


def check_players(spec: AnyGame, players: int) -> None:
    """Raises SimulationError unless `spec` seats `players` players."""
    if not spec.min_players <= players <= spec.max_players:
        raise SimulationError(
            f"{spec.title} takes {spec.min_players} to {spec.max_players} players, not {players}"
        )


def check_bot(spec: AnyGame, bot: str, move_seconds: float = MOVE_SECONDS) -> None:
    """Raises SimulationError unless `bot` (a built-in strategy of `spec`, or
    `exec:<command>`) can play `spec`."""
    if is_program(bot):
        _check_program(spec, bot, move_seconds)
    elif bot not in spec.bots:
        known = ", ".join(sorted(spec.bots))
        raise SimulationError(
            f"unknown bot {bot!r} for {spec.name}; one of {known}, or exec:<command>"
        )


def check_preset(spec: AnyGame, preset: str, players: int) -> None:
    """Raises SimulationError unless `players` players can play `spec`'s preset `preset`."""
    try:
        spec.validate(spec.ruleset(preset), players)
    except InvalidRuleset as error:
        if error.field == "ruleset":
            raise SimulationError(error.message) from None
        why = f"{players} bots cannot play the preset {preset!r}"
        raise SimulationError(f"{why}: {error.field}: {error.message}") from None


def _check_program(spec: AnyGame, bot: str, move_seconds: float) -> None:
    """Raises SimulationError unless `bot` (`exec:<command>`) can play `spec`."""
    if not spec.has_decisions:
        raise SimulationError(
            f"{spec.title} has no decisions: the platform plays its seats, not {bot!r}"
        )
    try:
        command_of(bot)
    except ValueError as error:
        raise SimulationError(str(error)) from None
    if not move_seconds > 0:
        raise SimulationError(f"move-seconds must be more than 0, not {move_seconds:g}")


def seating(bots: Sequence[str], index: int) -> list[str]:
    """Returns the bot of each seat in game `index`: the `j`th bot sits at `(j + index) % n`."""
    count = len(bots)
    return [bots[(seat - index) % count] for seat in range(count)]


def play(
    spec: AnyGame,
    rules: Any,
    seats: Sequence[str],
    seed: str,
    programs: Programs | None = None,
    game_id: str | None = None,
) -> tuple[Result, list[tuple[int, str]]]:
    """Plays one game from the deal of `seed` with the bot of each seat (`programs` runs the
    local programs among them); returns its result and the seats that forfeited, with why.
    A program reads the game as `game_id` (default `simulate:<seed>`); a built-in bot's
    choices are seeded from `seed`, the decision's index and its seat.

    A program's failed turn (`ProgramFailed`) forfeits its seat as a resignation does: the
    platform plays its default actions from then on and it places last.
    """
    state = spec.fold([spec.deal(rules, len(seats), seed)])
    bots = [None if is_program(name) else spec.bots[name] for name in seats]
    kinds = [Seat(kind="external") if bot is None else Seat(kind="bot") for bot in bots]
    forfeits: list[int] = []
    reasons: list[tuple[int, str]] = []
    version = 1
    for decision in range(MAX_DECISIONS):
        if spec.is_over(state):
            result: Result | None = spec.result(state)
            assert result is not None
            return clocks.place_forfeits_last(result, forfeits, forfeits), reasons
        seat = spec.to_move(state)[0]
        bot = bots[seat]
        events: Sequence[Event]
        if seat in forfeits:
            events = clocks.forced_move(spec, state, seat, "forfeited")
            state = spec.fold(events, state)
        elif bot is None:
            assert programs is not None, "a program's seat needs the run's programs"
            try:
                state, events = _program_move(
                    spec, state, seat, game_id or f"simulate:{seed}", version, programs[seats[seat]]
                )
            except ProgramFailed as failure:
                reasons.append((seat, str(failure)))
                events = endings.resignation(spec, state, kinds, seat, forfeits, forfeits)
                forfeits.append(seat)
                state = spec.fold(events, state)
        else:
            legal = spec.legal_actions(state, seat)
            action = bot.choose(spec.view(state, seat), legal, f"{seed}:{decision}:{seat}")
            state, events = spec.apply(state, seat, action)
        version += len(events)
    raise RuntimeError(f"{spec.name} game {seed!r} did not end in {MAX_DECISIONS} decisions")


def _program_move(
    spec: AnyGame, state: Any, seat: int, game_id: str, version: int, program: Program
) -> tuple[Any, Sequence[Event]]:
    """Returns the game `game_id` after the move `program` answers for `seat`, and its events;
    raises ProgramFailed for no answer, or one that is no legal action (a `Resign` is one)."""
    turn = turn_line(game_id, spec, state, seat, version)
    answer, _ = split_note(program.ask(turn))  # checked; kept nowhere (no log is written)
    try:
        action = parse_action(spec, answer)
        if isinstance(action, Resign):
            raise ProgramFailed("resigned", "the program resigned")
        events = spec.decide(state, seat, action)
    except (InvalidRequest, IllegalAction) as error:
        raise refusal(error) from None
    return spec.fold(events, state), events


def play_range(
    simulation: Simulation, start: int, stop: int, programs: Programs | None = None
) -> tuple[dict[str, Tally], list[Forfeit]]:
    """Plays games `start` to `stop - 1` of a simulation (its local programs on `programs`,
    else on this process's own); returns the tallies per bot name and the forfeits."""
    spec = get_game(simulation.game)
    rules = spec.ruleset(simulation.preset)
    programs = programs or _process_programs(simulation)
    tallies: dict[str, Tally] = {}
    forfeits: list[Forfeit] = []
    for index in range(start, stop):
        seats = seating(simulation.bots, index)
        result, reasons = play(spec, rules, seats, f"{simulation.seed}:{index}", programs)
        forfeited = {seat for seat, _ in reasons}
        for seat, (name, place) in enumerate(zip(seats, result.places, strict=True)):
            lost = int(seat in forfeited)
            tallies.setdefault(name, Tally()).add(Tally(1, int(place == 1), place, lost))
        forfeits += [Forfeit(index, seats[seat], seat, why) for seat, why in reasons]
    return tallies, forfeits


_programs: dict[tuple[tuple[str, ...], float], Programs] = {}
"""A worker process's programs, per simulation's bots and time limit (stopped at its exit)."""


def _process_programs(simulation: Simulation) -> Programs:
    """Returns this process's programs for `simulation`, started at their first turns and
    stopped when the process exits."""
    key = (simulation.bots, simulation.move_seconds)
    if key not in _programs:
        programs = _programs[key] = Programs(simulation.bots, simulation.move_seconds)
        Finalize(programs, programs.close, exitpriority=10)
    return _programs[key]


def _chunks(games: int, size: int) -> Iterator[tuple[int, int]]:
    """Yields the (start, stop) ranges that cover `games` games, `size` at a time."""
    for start in range(0, games, size):
        yield start, min(start + size, games)


def _merge(
    into: dict[str, Tally],
    forfeits: list[Forfeit],
    played: tuple[Mapping[str, Tally], Sequence[Forfeit]],
) -> None:
    """Adds a range's tallies to `into`, bot by bot, and its forfeits to `forfeits`."""
    tallies, lost = played
    for name, tally in tallies.items():
        into.setdefault(name, Tally()).add(tally)
    forfeits.extend(lost)


def simulate(
    simulation: Simulation, processes: int = 1, progress: Callable[[int], None] | None = None
) -> Report:
    """Plays a simulation in `processes` processes; `progress(n)` hears of each `n` games done."""
    if processes < 1:
        raise SimulationError(f"processes must be at least 1, not {processes}")
    advance = progress or (lambda _: None)
    tallies: dict[str, Tally] = {}
    forfeits: list[Forfeit] = []
    started = time.perf_counter()
    if processes == 1:
        with Programs(simulation.bots, simulation.move_seconds) as programs:
            for start, stop in _chunks(simulation.games, 1):
                _merge(tallies, forfeits, play_range(simulation, start, stop, programs))
                advance(stop - start)
    else:
        size = max(1, min(50, simulation.games // (processes * 8)))
        context = get_context("spawn")
        with ProcessPoolExecutor(processes, mp_context=context) as pool:
            futures = {
                pool.submit(play_range, simulation, start, stop): stop - start
                for start, stop in _chunks(simulation.games, size)
            }
            for future in as_completed(futures):
                _merge(tallies, forfeits, future.result())
                advance(futures[future])
    return Report(simulation, time.perf_counter() - started, tallies, forfeits)


def run(args: argparse.Namespace) -> int:
    """Plays seeded games between built-in bots; prints a table (or one JSON object) per bot."""
    try:
        bots = bot_names(args.bots)
        request = check(args.game, args.preset, bots, args.games, args.seed, args.move_seconds)
        if args.processes < 1:
            raise SimulationError(f"processes must be at least 1, not {args.processes}")
        for bot in dict.fromkeys(filter(is_program, bots)):
            check_program(bot)
    except ValueError as error:  # SimulationError among them
        return fail(str(error))
    if args.json:
        print(json.dumps(simulate(request, args.processes).to_json()))
        return 0
    columns = (*Progress.get_default_columns(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{request.game} ({request.preset})", total=request.games)
        report = simulate(request, args.processes, lambda n: progress.advance(task, n))
    table = Table(title=f"{request.games} games of {request.game} ({request.preset})")
    for header in ("bot", "games", "wins", "win rate", "mean place", "forfeits"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for name, tally in sorted(report.bots.items()):
        rate, place = f"{tally.win_rate:.1%}", f"{tally.mean_place:.2f}"
        table.add_row(name, str(tally.games), str(tally.wins), rate, place, str(tally.forfeits))
    table.caption = f"{report.games_per_second:.1f} games per second"
    console = Console()
    console.print(table)
    for forfeit in sorted(report.forfeits, key=lambda f: (f.game, f.seat)):
        where = f"game {forfeit.game}, seat {forfeit.seat}"
        console.print(f"forfeit: {forfeit.bot} ({where}): {forfeit.reason}", markup=False)
    return 0
