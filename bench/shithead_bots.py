"""Shithead bots head to head: heuristic against random, mc against heuristic.

Each pairing plays N seeded two-player classic games with the seats alternated (game i
deals with seed i, the first bot in seat i % 2). A game stopped by the move cap counts by
its places: place 1 wins. Targets: heuristic wins >= 80% against random, mc >= 70% against
heuristic (issue 20), judged on the measured rate, with the Wilson 95% interval printed.

mc's budget is a number of simulated decisions (`MonteCarloBot.steps`), so its play is
reproducible; what a decision costs in time is printed in machine-independent units: the
mean time of an mc decision over the time of a game of the plain Beggar loop of
`bench.engines` (measured in the same processes, between games). Issue 20 holds mc to the
time per decision it took before the engines got faster (`BUDGET`), and asks it to win more.

    uv run python -m bench.shithead_bots [--games 1000] [--processes 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.engines import reference_game
from bench.verdict import win_rate_lines
from shared.catalog import get_game
from shared.games import beggar

PAIRINGS = (("heuristic", "random", 0.80), ("mc", "heuristic", 0.70))
"""(first bot, second bot, the first bot's target win rate)."""


BUDGET = 235.0
"""The mean time of an mc decision, in games of the reference Beggar loop, before issue 20
(main on 2026-12-03, 60 mc-heuristic games): mc may take at most that."""

REFERENCE_DEALS = [beggar.deal(beggar.BeggarRuleset(), 2, seed=i).packs for i in range(100)]
"""The deals of the reference loop timed between games."""


@dataclass(frozen=True)
class Outcome:
    """A pairing's tally: games played, wins of each bot, and the time of the first bot's
    decisions against the reference loop's."""

    games: int
    first_wins: int
    second_wins: int
    seconds: float
    first_seconds: float = 0.0
    first_decisions: int = 0
    reference_seconds: float = 0.0
    reference_games: int = 0

    @property
    def budget(self) -> float:
        """Returns the first bot's mean decision time in reference Beggar games."""
        if not self.first_decisions or not self.reference_games:
            return 0.0
        per_game = self.reference_seconds / self.reference_games
        return self.first_seconds / self.first_decisions / per_game


Played = tuple[int, int, float, int, float]
"""A game's places of the first and second bot, the first bot's seconds and decisions, and
the seconds of one pass of the reference loop."""


def play(first: str, second: str, game: int) -> Played:
    """Returns the places of `first` and `second` in the classic game dealt with seed `game`,
    the time `first` took over its decisions, and a timing of the reference loop."""
    start = time.perf_counter()
    for packs in REFERENCE_DEALS:
        reference_game(packs)
    reference = time.perf_counter() - start
    spec = get_game("shithead")
    seats = [first, second] if game % 2 == 0 else [second, first]
    bots = [spec.bots[name] for name in seats]
    mine = game % 2
    state = spec.fold([spec.deal(spec.presets["classic"], 2, game)])
    decision, spent, decided = 0, 0.0, 0
    while not spec.is_over(state):
        for seat in spec.to_move(state):
            legal = spec.legal_actions(state, seat)
            view = spec.view(state, seat)
            start = time.perf_counter()
            action = bots[seat].choose(view, legal, f"{game}:{decision}")
            if seat == mine:
                spent += time.perf_counter() - start
                decided += 1
            state, _ = spec.apply(state, seat, action)
            decision += 1
    result = spec.result(state)
    assert result is not None
    return result.places[mine], result.places[1 - mine], spent, decided, reference


def _play_task(task: tuple[str, str, int]) -> Played:
    """Unpacks a (first, second, game) task for the pool."""
    return play(*task)


def run_pairing(first: str, second: str, games: int, processes: int) -> Outcome:
    """Plays `games` games of `first` against `second` on `processes` spawned processes."""
    tasks = [(first, second, game) for game in range(games)]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        played = pool.map(_play_task, tasks, chunksize=max(1, games // (processes * 20)))
    seconds = time.perf_counter() - start
    return Outcome(
        games,
        sum(p[0] == 1 for p in played),
        sum(p[1] == 1 for p in played),
        seconds,
        sum(p[2] for p in played),
        sum(p[3] for p in played),
        sum(p[4] for p in played),
        len(REFERENCE_DEALS) * games,
    )


def report(first: str, second: str, target: float, outcome: Outcome) -> str:
    """Returns one pairing's lines: the tally, the win rate with its interval, the verdict."""
    lines = (
        f"{first} vs {second}: {outcome.games} games, {first} {outcome.first_wins} wins, "
        f"{second} {outcome.second_wins} wins\n"
    ) + win_rate_lines(first, outcome.first_wins, outcome.games, target, outcome.seconds)
    if first == "mc":
        verdict = "PASS" if outcome.budget <= BUDGET * 1.05 else "MISS"
        lines += (
            f"\nmc budget: {outcome.budget:.0f} reference Beggar games per decision "
            f"(mean of {outcome.first_decisions}; before issue 20: {BUDGET:.0f}, at most that): "
            f"{verdict}"
        )
    return lines


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
