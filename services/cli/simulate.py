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
from typing import Any

from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

from services.cli.common import Subparsers, fail
from shared.catalog import game_names, get_game
from shared.errors import GameNotFound, InvalidRuleset
from shared.games.base import AnyGame
from shared.messages.common import Result

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


@dataclass
class Tally:
    """One bot's games, wins (first places) and the sum of its places."""

    games: int = 0
    wins: int = 0
    places: int = 0

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


@dataclass(frozen=True)
class Report:
    """The outcome of a run: per-bot tallies (one per bot name) and the wall time."""

    simulation: Simulation
    seconds: float
    bots: dict[str, Tally] = field(default_factory=dict)

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
                }
                for name, tally in sorted(self.bots.items())
            },
        }


def check(game: str, preset: str, bots: Sequence[str], games: int, seed: str) -> Simulation:
    """Returns the request as a Simulation; raises SimulationError naming what is wrong."""
    try:
        spec = get_game(game)
    except GameNotFound:
        raise SimulationError(f"unknown game {game!r}; one of {', '.join(game_names())}") from None
    if games < 1:
        raise SimulationError(f"games must be at least 1, not {games}")
    if not spec.min_players <= len(bots) <= spec.max_players:
        raise SimulationError(
            f"{spec.title} takes {spec.min_players} to {spec.max_players} players, not {len(bots)}"
        )
    for name in bots:
        if name not in spec.bots:
            known = ", ".join(sorted(spec.bots))
            raise SimulationError(f"unknown bot {name!r} for {spec.name}; one of {known}")
    try:
        spec.validate(spec.ruleset(preset), len(bots))
    except InvalidRuleset as error:
        if error.field == "ruleset":
            raise SimulationError(error.message) from None
        why = f"{len(bots)} bots cannot play the preset {preset!r}"
        raise SimulationError(f"{why}: {error.field}: {error.message}") from None
    return Simulation(spec.name, preset, tuple(bots), games, seed)


def seating(bots: Sequence[str], index: int) -> list[str]:
    """Returns the bot of each seat in game `index`: the `j`th bot sits at `(j + index) % n`."""
    count = len(bots)
    return [bots[(seat - index) % count] for seat in range(count)]


def play(spec: AnyGame, rules: Any, seats: Sequence[str], seed: str) -> Result:
    """Plays one game from the deal of `seed` with the bot of each seat; returns its result."""
    state = spec.fold([spec.deal(rules, len(seats), seed)])
    for decision in range(MAX_DECISIONS):
        if spec.is_over(state):
            result: Result | None = spec.result(state)
            assert result is not None
            return result
        seat = spec.to_move(state)[0]
        legal = spec.legal_actions(state, seat)
        action = spec.bots[seats[seat]].choose(
            spec.view(state, seat), legal, f"{seed}:{decision}:{seat}"
        )
        state, _ = spec.apply(state, seat, action)
    raise RuntimeError(f"{spec.name} game {seed!r} did not end in {MAX_DECISIONS} decisions")


def play_range(simulation: Simulation, start: int, stop: int) -> dict[str, Tally]:
    """Plays games `start` to `stop - 1` of a simulation; returns the tallies per bot name."""
    spec = get_game(simulation.game)
    rules = spec.ruleset(simulation.preset)
    tallies: dict[str, Tally] = {}
    for index in range(start, stop):
        seats = seating(simulation.bots, index)
        result = play(spec, rules, seats, f"{simulation.seed}:{index}")
        for name, place in zip(seats, result.places, strict=True):
            tallies.setdefault(name, Tally()).add(Tally(1, int(place == 1), place))
    return tallies


def _chunks(games: int, size: int) -> Iterator[tuple[int, int]]:
    """Yields the (start, stop) ranges that cover `games` games, `size` at a time."""
    for start in range(0, games, size):
        yield start, min(start + size, games)


def _merge(into: dict[str, Tally], tallies: Mapping[str, Tally]) -> None:
    """Adds `tallies` to `into`, bot by bot."""
    for name, tally in tallies.items():
        into.setdefault(name, Tally()).add(tally)


def simulate(
    simulation: Simulation, processes: int = 1, progress: Callable[[int], None] | None = None
) -> Report:
    """Plays a simulation in `processes` processes; `progress(n)` hears of each `n` games done."""
    if processes < 1:
        raise SimulationError(f"processes must be at least 1, not {processes}")
    advance = progress or (lambda _: None)
    tallies: dict[str, Tally] = {}
    started = time.perf_counter()
    if processes == 1:
        for start, stop in _chunks(simulation.games, 1):
            _merge(tallies, play_range(simulation, start, stop))
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
                _merge(tallies, future.result())
                advance(futures[future])
    return Report(simulation, time.perf_counter() - started, tallies)


def add_parser(commands: Subparsers) -> None:
    """Adds `simulate` to the `cardarena` subcommands."""
    sim = commands.add_parser("simulate", help="play seeded games between built-in bots")
    sim.add_argument("--game", required=True, help="the game, e.g. shithead")
    sim.add_argument("--preset", default="classic", help="the ruleset preset")
    sim.add_argument(
        "--bots", required=True, help="one bot per seat, e.g. heuristic,random,random,random"
    )
    sim.add_argument("--games", type=int, default=1000, help="how many games")
    sim.add_argument("--seed", default="0", help="game i is dealt from the seed '<seed>:<i>'")
    sim.add_argument("--processes", type=int, default=1, help="worker processes")
    sim.add_argument("--json", action="store_true", help="print one JSON object, no progress")
    sim.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plays seeded games between built-in bots; prints a table (or one JSON object) per bot."""
    bots = [name.strip() for name in args.bots.split(",")]
    try:
        request = check(args.game, args.preset, bots, args.games, args.seed)
        if args.processes < 1:
            raise SimulationError(f"processes must be at least 1, not {args.processes}")
    except SimulationError as error:
        return fail(str(error))
    if args.json:
        print(json.dumps(simulate(request, args.processes).to_json()))
        return 0
    columns = (*Progress.get_default_columns(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{request.game} ({request.preset})", total=request.games)
        report = simulate(request, args.processes, lambda n: progress.advance(task, n))
    table = Table(title=f"{request.games} games of {request.game} ({request.preset})")
    for header in ("bot", "games", "wins", "win rate", "mean place"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for name, tally in sorted(report.bots.items()):
        rate, place = f"{tally.win_rate:.1%}", f"{tally.mean_place:.2f}"
        table.add_row(name, str(tally.games), str(tally.wins), rate, place)
    table.caption = f"{report.games_per_second:.1f} games per second"
    Console().print(table)
    return 0
