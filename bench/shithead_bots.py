"""Shithead bots head to head: heuristic against random, mc against heuristic.

Each pairing plays N seeded two-player classic games with the seats alternated (game i
deals with seed i, the first bot in seat i % 2). A game stopped by the move cap counts by
its places: place 1 wins. Targets: heuristic wins >= 80% against random, mc >= 60%
against heuristic, judged on the measured rate, with the Wilson 95% interval printed.

    uv run python -m bench.shithead_bots [--games 1000] [--processes 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.verdict import win_rate_lines
from shared.catalog import get_game

PAIRINGS = (("heuristic", "random", 0.80), ("mc", "heuristic", 0.60))
"""(first bot, second bot, the first bot's target win rate)."""


@dataclass(frozen=True)
class Outcome:
    """A pairing's tally: games played and wins of each bot."""

    games: int
    first_wins: int
    second_wins: int
    seconds: float


def play(first: str, second: str, game: int) -> tuple[int, int]:
    """Returns the places of `first` and `second` in the classic game dealt with seed `game`."""
    spec = get_game("shithead")
    seats = [first, second] if game % 2 == 0 else [second, first]
    bots = [spec.bots[name] for name in seats]
    state = spec.fold([spec.deal(spec.presets["classic"], 2, game)])
    decision = 0
    while not spec.is_over(state):
        for seat in spec.to_move(state):
            legal = spec.legal_actions(state, seat)
            action = bots[seat].choose(spec.view(state, seat), legal, f"{game}:{decision}")
            state, _ = spec.apply(state, seat, action)
            decision += 1
    result = spec.result(state)
    assert result is not None
    return result.places[game % 2], result.places[1 - game % 2]


def _play_task(task: tuple[str, str, int]) -> tuple[int, int]:
    """Unpacks a (first, second, game) task for the pool."""
    return play(*task)


def run_pairing(first: str, second: str, games: int, processes: int) -> Outcome:
    """Plays `games` games of `first` against `second` on `processes` spawned processes."""
    tasks = [(first, second, game) for game in range(games)]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        places = pool.map(_play_task, tasks, chunksize=max(1, games // (processes * 20)))
    seconds = time.perf_counter() - start
    first_wins = sum(mine == 1 for mine, _ in places)
    second_wins = sum(theirs == 1 for _, theirs in places)
    return Outcome(games, first_wins, second_wins, seconds)


def report(first: str, second: str, target: float, outcome: Outcome) -> str:
    """Returns one pairing's lines: the tally, the win rate with its interval, the verdict."""
    return (
        f"{first} vs {second}: {outcome.games} games, {first} {outcome.first_wins} wins, "
        f"{second} {outcome.second_wins} wins\n"
    ) + win_rate_lines(first, outcome.first_wins, outcome.games, target, outcome.seconds)


def main(argv: Sequence[str] | None = None) -> None:
    """Runs every pairing and prints its report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--pairing", choices=[f"{a}-{b}" for a, b, _ in PAIRINGS])
    args = parser.parse_args(argv)
    for first, second, target in PAIRINGS:
        if args.pairing in (None, f"{first}-{second}"):
            outcome = run_pairing(first, second, args.games, args.processes)
            print(report(first, second, target, outcome), flush=True)


if __name__ == "__main__":
    main()
