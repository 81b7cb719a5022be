"""Hospodský autobus bots head to head: heuristic against random.

N seeded two-player classic games with the seats alternated: game i deals with seed i,
the heuristic sits in seat i % 2. A game is a heuristic win when it places first alone;
a game where both share place 1 (a draw by the no-play rule or the turn cap with equal
main piles) is a draw, and counts as not a win. Target: the heuristic wins >= 80%,
judged on the measured rate, with the Wilson 95% interval printed.

    uv run python -m bench.autobus_bots [--games 1000] [--processes 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.verdict import win_rate_lines
from shared.catalog import get_game

TARGET = 0.80
"""The heuristic's target win rate against random."""


@dataclass(frozen=True)
class Tally:
    """Games played, the heuristic's wins, draws and losses, and the wall time."""

    games: int
    wins: int
    draws: int
    losses: int
    seconds: float


def play(game: int) -> str:
    """Returns "win", "draw" or "loss" for the heuristic in the classic game of seed `game`."""
    spec = get_game("autobus")
    mine = game % 2
    bots = [spec.bots["heuristic"], spec.bots["random"]]
    if mine == 1:
        bots.reverse()
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
    if result.places[mine] > 1:
        return "loss"
    return "draw" if result.places[1 - mine] == 1 else "win"


def run(games: int, processes: int) -> Tally:
    """Plays `games` games on `processes` spawned processes and tallies the heuristic's results."""
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        outcomes = pool.map(play, range(games), chunksize=max(1, games // (processes * 20)))
    seconds = time.perf_counter() - start
    wins, draws = outcomes.count("win"), outcomes.count("draw")
    return Tally(games, wins, draws, games - wins - draws, seconds)


def report(tally: Tally) -> str:
    """Returns the tally, the win rate with its interval, the verdict and the speed."""
    return (
        f"heuristic vs random: {tally.games} games, {tally.wins} wins, "
        f"{tally.draws} draws, {tally.losses} losses\n"
    ) + win_rate_lines("heuristic", tally.wins, tally.games, TARGET, tally.seconds)


def main(argv: Sequence[str] | None = None) -> None:
    """Runs the match and prints its report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args(argv)
    print(report(run(args.games, args.processes)), flush=True)


if __name__ == "__main__":
    main()
