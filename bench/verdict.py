"""The lines every head-to-head benchmark ends with: win rate, Wilson interval, verdict, speed."""

from __future__ import annotations

from shared.model.tournaments.standings import wilson


def win_rate_lines(name: str, wins: int, games: int, target: float, seconds: float) -> str:
    """Returns `name`'s win rate with its Wilson 95% interval, PASS/FAIL against `target`
    (judged on the measured rate), and games per second."""
    rate = wins / games
    low, high = wilson(wins, games)
    verdict = "PASS" if rate >= target else "FAIL"
    return (
        f"  {name} win rate {rate:.1%} (Wilson 95% {low:.1%}..{high:.1%}), "
        f"target >= {target:.0%}: {verdict}\n"
        f"  {games / seconds:.2f} games/s"
    )
