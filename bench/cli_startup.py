"""The command line's start-up: `cardarena --help` against a bare interpreter, as one ratio.

Runs `python -m services.cli --help` and `python -c pass` with this interpreter, taking turns,
`--runs` times each, and prints the median wall time of each and their ratio. Target: the
help costs at most three bare interpreters (building the parser imports argparse, not the
services' frameworks: `services.cli.parsers`). PASS or MISS; the exit code is 0 either way
(a benchmark reports, the structural test `tests/unit/cli/test_startup.py` guards).

    uv run python -m bench.cli_startup [--runs 30] [--script .venv/bin/cardarena]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

TARGET = 3.0
"""The most `cardarena --help` may cost, in bare interpreter starts."""
ROOT = Path(__file__).resolve().parents[1]


def seconds(command: Sequence[str]) -> float:
    """Returns the wall time of one run of `command`, which must succeed."""
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure(cli: Sequence[str], bare: Sequence[str], runs: int) -> tuple[float, float]:
    """Returns the median seconds of `cli` and of `bare` over `runs` runs each, taking turns
    (a machine busier for a while slows both alike); one run of each first, uncounted, warms
    the file cache and the bytecode."""
    seconds(cli)
    seconds(bare)
    cli_times: list[float] = []
    bare_times: list[float] = []
    for _ in range(runs):
        cli_times.append(seconds(cli))
        bare_times.append(seconds(bare))
    return statistics.median(cli_times), statistics.median(bare_times)


def main(argv: Sequence[str] | None = None) -> int:
    """Measures and prints the ratio with its verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs of each command")
    parser.add_argument(
        "--script", help="an installed `cardarena` script to run instead of `-m services.cli`"
    )
    args = parser.parse_args(argv)
    cli = [args.script] if args.script else [sys.executable, "-m", "services.cli"]
    cli_s, bare_s = measure([*cli, "--help"], [sys.executable, "-c", "pass"], args.runs)
    ratio = cli_s / bare_s
    verdict = "PASS" if ratio <= TARGET else "MISS"
    print(f"cli start-up: {' '.join(cli[-2:])} --help, median of {args.runs} runs each")
    print(f"  cardarena --help {cli_s * 1000:.1f} ms, python -c pass {bare_s * 1000:.1f} ms")
    print(f"  ratio {ratio:.2f}, target <= {TARGET:g}: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
