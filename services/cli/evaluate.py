"""`cardarena evaluate`: is a candidate better than a baseline? An SPRT on duplicate deals,
played here.

The candidate (A) and the baseline (B), each a built-in bot or a local program
(`exec:<command>`), play units of games as `shared.model.evaluation` seats them (a deal
played twice with the seats swapped; at a larger table, once with A in every seat), each game
played as `cardarena simulate` plays it (`services.cli.simulate.play`). After every unit the
log-likelihood ratio of `shared.model.sprt` is updated; the run stops as soon as it crosses a
bound (H1: A is better by elo1 or more; H0: A is not better than elo0), or, inconclusive,
before a unit would take it past `--max-games` (or at Ctrl-C: the units played so far are
reported, the one under way is dropped). A run is deterministic: the same request plays the
same games and reaches the same verdict.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from services.cli.common import MOVE_SECONDS, fail
from services.cli.programs import Programs, check_program, is_program
from services.cli.simulate import (
    SimulationError,
    check_bot,
    check_players,
    check_preset,
    game_of,
    play,
)
from shared.catalog import get_game
from shared.errors import InvalidRequest
from shared.model import evaluation as model
from shared.model import sprt

MAX_FORFEITS_SHOWN = 10
"""How many forfeits the report lists (it counts them all)."""


class EvaluationError(ValueError):
    """An evaluation cannot run as asked; the message names the argument and says why."""


@dataclass(frozen=True)
class Evaluation:
    """A checked request: the game, its preset and table size, A and B, the test's
    parameters, the most games to play, the seed of the deals and a program's time limit."""

    game: str
    preset: str
    candidate: str
    baseline: str
    table_size: int = 2
    parameters: sprt.Parameters = field(default_factory=sprt.Parameters)
    max_games: int = 100_000
    seed: str = "0"
    move_seconds: float = MOVE_SECONDS


@dataclass(frozen=True)
class Forfeit:
    """A local program's seat that forfeited a game: the game's index in the run, the role
    (`candidate` or `baseline`), the seat and why."""

    game: int
    role: model.Role
    seat: int
    reason: str


@dataclass(frozen=True)
class Outcome:
    """Where an evaluation ended: the test's status, the unit scores' frequencies, the games
    played, the wall time and the forfeits."""

    evaluation: Evaluation
    status: sprt.Status
    counts: tuple[int, ...]
    games: int
    seconds: float
    forfeits: tuple[Forfeit, ...] = ()
    interrupted: bool = False
    """Whether Ctrl-C stopped the run before its test decided or its games ran out."""

    @property
    def verdict(self) -> str:
        """Returns `H1`, `H0`, or `inconclusive` (no bound crossed)."""
        return self.status.verdict or "inconclusive"

    @property
    def games_per_second(self) -> float:
        """Returns the games played per second of wall time."""
        return self.games / self.seconds if self.seconds > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        """Returns the outcome as one JSON-ready object."""
        e, s = self.evaluation, self.status
        p = e.parameters
        return {
            "verdict": self.verdict,
            "llr": _rounded(s.llr, 4),
            "bounds": [_rounded(s.lower, 4), _rounded(s.upper, 4)],
            "games": self.games,
            "pairs": s.units,
            "elo": _rounded(s.estimate.elo, 2),
            "elo_interval": [_rounded(s.estimate.lower, 2), _rounded(s.estimate.upper, 2)],
            "los": _rounded(s.estimate.los, 4),
            "results": list(self.counts),
            "game": e.game,
            "ruleset": e.preset,
            "table_size": e.table_size,
            "candidate": e.candidate,
            "baseline": e.baseline,
            "elo0": p.elo0,
            "elo1": p.elo1,
            "alpha": p.alpha,
            "beta": p.beta,
            "max_games": e.max_games,
            "seed": e.seed,
            "games_per_second": round(self.games_per_second, 2),
            "forfeits": {
                role: sum(f.role == role for f in self.forfeits)
                for role in (model.CANDIDATE, model.BASELINE)
            },
            "interrupted": self.interrupted,
        }


def _rounded(value: float, digits: int) -> float:
    """Returns `value` rounded to `digits` decimals, a negative zero made zero."""
    return round(value, digits) + 0.0


def check(evaluation: Evaluation) -> Evaluation:
    """Returns `evaluation`; raises EvaluationError naming the argument that cannot run (it
    starts no program: `run` checks that they start)."""
    try:
        spec = game_of(evaluation.game)
    except SimulationError as error:
        raise EvaluationError(f"--game: {error}") from None
    steps: list[tuple[str, Callable[[], object]]] = [
        ("--table-size", lambda: check_players(spec, evaluation.table_size)),
        ("--move-seconds", lambda: _check_move_seconds(evaluation.move_seconds)),
        ("--candidate", lambda: check_bot(spec, evaluation.candidate, evaluation.move_seconds)),
        ("--baseline", lambda: check_bot(spec, evaluation.baseline, evaluation.move_seconds)),
        ("--ruleset", lambda: check_preset(spec, evaluation.preset, evaluation.table_size)),
    ]
    for option, step in steps:
        try:
            step()
        except SimulationError as error:
            raise EvaluationError(f"{option}: {error}") from None
    try:
        sprt.check(evaluation.parameters)
    except InvalidRequest as error:
        raise EvaluationError(f"--{error.field}: {error.message}") from None
    if evaluation.max_games < evaluation.table_size:
        least = f"at least {evaluation.table_size} (one deal played at every seat)"
        raise EvaluationError(f"--max-games: must be {least}, not {evaluation.max_games}")
    return evaluation


def _check_move_seconds(move_seconds: float) -> None:
    """Raises SimulationError unless a program's time limit is a positive number of seconds."""
    if not move_seconds > 0:
        raise SimulationError(f"must be more than 0, not {move_seconds:g}")


def evaluate(
    evaluation: Evaluation, progress: Callable[[int, sprt.Status], None] | None = None
) -> Outcome:
    """Plays a checked evaluation unit by unit until its test decides, its games run out or
    KeyboardInterrupt stops it; `progress(games, status)` hears of each unit played."""
    spec = get_game(evaluation.game)
    rules = spec.ruleset(evaluation.preset)
    size, parameters = evaluation.table_size, evaluation.parameters
    layouts = [
        (roles, [_bot(evaluation, role) for role in roles], model.candidate_seat(roles))
        for roles in model.seatings(size)
    ]
    counts = [0] * model.bins(size)
    status = sprt.status(counts, parameters)
    games, unit = 0, 0
    forfeits: list[Forfeit] = []
    started = time.perf_counter()
    bots = (evaluation.candidate, evaluation.baseline)
    interrupted = False
    with Programs(bots, evaluation.move_seconds) as programs:
        try:
            while status.verdict is None and games + size <= evaluation.max_games:
                seed = model.deal_seed(evaluation.seed, unit)
                total = 0
                lost: list[Forfeit] = []
                for turn, (roles, seats, seat) in enumerate(layouts):
                    game_id = f"evaluate:{evaluation.seed}:{unit}:{turn}"
                    result, reasons = play(spec, rules, seats, seed, programs, game_id)
                    total += model.half_points(result.places, seat)
                    lost += [Forfeit(games + turn, roles[s], s, why) for s, why in reasons]
                counts[total] += 1
                forfeits += lost
                games, unit = games + size, unit + 1
                status = sprt.status(counts, parameters)
                if progress is not None:
                    progress(games, status)
        except KeyboardInterrupt:  # whenever it comes: the units counted are the outcome
            interrupted = True
            games = sum(counts) * size
            forfeits = [forfeit for forfeit in forfeits if forfeit.game < games]
            status = sprt.status(counts, parameters)
    seconds = time.perf_counter() - started
    played = (tuple(counts), games, seconds, tuple(forfeits), interrupted)
    return Outcome(evaluation, status, *played)


def _bot(evaluation: Evaluation, role: model.Role) -> str:
    """Returns the bot that plays `role`."""
    return evaluation.candidate if role == model.CANDIDATE else evaluation.baseline


def of_arguments(args: argparse.Namespace) -> Evaluation:
    """Returns the evaluation the arguments ask for (not yet checked)."""
    parameters = sprt.Parameters(args.elo0, args.elo1, args.alpha, args.beta)
    return Evaluation(
        game=args.game,
        preset=args.preset,
        candidate=args.candidate.strip(),
        baseline=args.baseline.strip(),
        table_size=args.table_size,
        parameters=parameters,
        max_games=args.max_games,
        seed=str(args.seed),
        move_seconds=args.move_seconds,
    )


def run(args: argparse.Namespace) -> int:
    """Runs an evaluation; prints its verdict, LLR, games and Elo (or one JSON object)."""
    try:
        evaluation = check(of_arguments(args))
        for option, bot in (("--candidate", evaluation.candidate), ("--baseline", args.baseline)):
            if is_program(bot):
                _started(option, bot)
    except EvaluationError as error:
        return fail(str(error))
    if args.json:
        print(json.dumps(evaluate(evaluation).to_json()))
        return 0
    # No time left shown: the test may stop long before its last game.
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=Console(stderr=True)) as bar:
        task = bar.add_task(_progress_line(evaluation, None), total=evaluation.max_games)

        def advance(games: int, status: sprt.Status) -> None:
            bar.update(task, completed=games, description=_progress_line(evaluation, status))

        outcome = evaluate(evaluation, advance)
    console = Console()
    for line in report_lines(outcome):
        console.print(line, markup=False, highlight=False)
    return 0


def _started(option: str, bot: str) -> None:
    """Raises EvaluationError naming `option` unless the program `bot` starts."""
    try:
        check_program(bot)
    except ValueError as error:
        raise EvaluationError(f"{option}: {error}") from None


def _progress_line(evaluation: Evaluation, status: sprt.Status | None) -> str:
    """Returns the progress bar's description: the LLR between its bounds."""
    lower, upper = sprt.bounds(evaluation.parameters.alpha, evaluation.parameters.beta)
    llr = 0.0 if status is None else status.llr
    return f"LLR {llr:+.2f} [{lower:.2f}, {upper:.2f}]"


def report_lines(outcome: Outcome) -> list[str]:
    """Returns the report of an evaluation for a person: the verdict, the LLR and its bounds,
    the games and the Elo difference with its 95% interval (and any forfeits)."""
    e, s = outcome.evaluation, outcome.status
    p = e.parameters
    a, b = e.candidate, e.baseline
    verdict = {
        "H1": f"H1: {a} is better than {b} (by elo1 = {p.elo1:g} or more)",
        "H0": f"H0: {a} is not better than {b} (by more than elo0 = {p.elo0:g})",
    }.get(outcome.verdict, f"inconclusive: no bound crossed within {e.max_games} games")
    if outcome.interrupted:
        verdict = f"inconclusive: interrupted after {outcome.games} games, no bound crossed"
    units = "pairs" if e.table_size == 2 else f"deals, each played {e.table_size} times"
    elo, low, high = (_rounded(v, 1) for v in (s.estimate.elo, s.estimate.lower, s.estimate.upper))
    lines = [
        verdict,
        f"LLR {s.llr:.2f} (bounds {s.lower:.2f}, {s.upper:.2f};"
        f" elo0 {p.elo0:g}, elo1 {p.elo1:g}, alpha {p.alpha:g}, beta {p.beta:g})",
        f"games {outcome.games} ({s.units} {units}) of {e.game} ({e.preset},"
        f" {e.table_size} seats), {outcome.games_per_second:.1f} games per second",
        f"Elo {elo:+.1f} (95% interval {low:+.1f} to {high:+.1f}), LOS {s.estimate.los:.1%}",
    ]
    for forfeit in outcome.forfeits[:MAX_FORFEITS_SHOWN]:
        bot = _bot(e, forfeit.role)
        where = f"game {forfeit.game}, seat {forfeit.seat}"
        lines.append(f"forfeit: {forfeit.role} {bot} ({where}): {forfeit.reason}")
    if len(outcome.forfeits) > MAX_FORFEITS_SHOWN:
        lines.append(f"... and {len(outcome.forfeits) - MAX_FORFEITS_SHOWN} more forfeits")
    return lines
