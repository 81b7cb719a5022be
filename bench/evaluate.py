"""`cardarena evaluate` beside `cardarena simulate`: games per second of the same matchups.

For each case (a game, a table size, the candidate and the baseline), the evaluation plays
`--games` games of duplicate deals, updating its LLR and Elo estimate after every unit as the
command does (with alpha = beta = 1e-30 its bounds are about +-69, so no verdict stops it
early and every unit's statistics are computed); `cardarena simulate` then plays as many
games of the same bots at the same table, the candidate in one seat and the baseline in the
others, seats rotating (other deals: simulate deals game i from `<seed>:<i>`). So that the
deals' luck does not blur the ratio, the evaluation's own games are also played by
`simulate`'s game loop alone (`services.cli.simulate.play`: the same deals, seats and
choices, no statistics): the ratio to that is the evaluation's own cost. All run in this
process, without a progress bar (the `--json` path), `--repeats` times alternately; the best
of each is kept. Each is timed by this process's CPU time (`time.process_time`: the runs are
single-threaded and start no program), not the wall clock, so that what other processes do
on a shared machine does not enter the ratios. Prints games per second of each and the
ratios. Target (issue 31): evaluate at least 0.8 of simulate.

    uv run python -m bench.evaluate [--games 400] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from services.cli.evaluate import Evaluation, check, evaluate
from services.cli.simulate import Simulation, play, simulate
from shared.catalog import get_game
from shared.model import evaluation as model
from shared.model import sprt

CASES = [
    ("shithead", 2, "heuristic", "random"),
    ("shithead", 4, "heuristic", "random"),
    ("autobus", 2, "heuristic", "random"),
]
"""Game, table size, candidate, baseline."""
NEVER_STOPS = sprt.Parameters(elo0=0, elo1=10, alpha=1e-30, beta=1e-30)
"""A test whose bounds no run of the bench's length reaches."""


def rate(games: int, run: Callable[[], object]) -> float:
    """Returns `games` per CPU second of this process that `run()` takes."""
    started = time.process_time()
    run()
    return games / (time.process_time() - started)


def evaluation_rate(game: str, size: int, a: str, b: str, games: int) -> float:
    """Returns the games per second of an evaluation of `a` against `b` over `games` games."""
    request = check(Evaluation(game, "classic", a, b, size, NEVER_STOPS, games, "bench"))

    def run() -> None:
        outcome = evaluate(request)
        assert outcome.status.verdict is None, "the bench's test stopped early"
        assert outcome.games == games

    return rate(games, run)


def same_games_rate(game: str, size: int, a: str, b: str, games: int) -> float:
    """Returns the games per second of simulate's game loop over the evaluation's own games."""
    spec = get_game(game)
    rules = spec.ruleset("classic")

    def run() -> None:
        for unit in range(games // size):
            seed = model.deal_seed("bench", unit)
            for turn, roles in enumerate(model.seatings(size)):
                seats = [a if role == model.CANDIDATE else b for role in roles]
                play(spec, rules, seats, seed, None, f"evaluate:bench:{unit}:{turn}")

    return rate(games, run)


def simulation_rate(game: str, size: int, a: str, b: str, games: int) -> float:
    """Returns the games per second of `cardarena simulate` over the same bots and games."""
    bots = (a,) + (b,) * (size - 1)
    return rate(games, lambda: simulate(Simulation(game, "classic", bots, games, "bench")))


def main() -> None:
    """Runs every case and prints the rates and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per run")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each, best kept")
    args = parser.parse_args()
    ratios = []
    header = ("evaluate", "simulate", "ratio", "same games", "ratio")
    print(f"{'case (games per second)':<34}", *(f"{h:>10}" for h in header))
    for game, size, a, b in CASES:
        games = args.games - args.games % size
        evaluated = simulated = same = 0.0
        for _ in range(args.repeats):
            evaluated = max(evaluated, evaluation_rate(game, size, a, b, games))
            simulated = max(simulated, simulation_rate(game, size, a, b, games))
            same = max(same, same_games_rate(game, size, a, b, games))
        ratios += [evaluated / simulated, evaluated / same]
        case = f"{game}, {size} seats, {a} vs {b}"
        figures = (evaluated, simulated, evaluated / simulated, same, evaluated / same)
        print(f"{case:<34}", *(f"{figure:>10.2f}" for figure in figures))
    least = min(ratios)
    verdict = "meets" if least >= 0.8 else "misses"
    print(f"lowest ratio {least:.2f}: {verdict} the target of 0.8")


if __name__ == "__main__":
    main()
