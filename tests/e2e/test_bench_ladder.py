"""The ladder benchmark's smoke run: `bench/ladder.py --quick` seats simulated external bots on
a ladder paired by beat on real servers, and the ladder's log holds its invariants."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.stack import ROOT


def test_the_quick_ladder_run_seats_every_bot_within_its_caps_and_every_paired_game_ends(
    redis_url: str, database_url: str
) -> None:
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, "-m", "bench.ladder", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for figure in ("free -> seated p50 / p99", "most frequent opponent's share"):
        assert figure in done.stdout, done.stdout
    for invariant in (
        "peak games at once per bot 1, cap 1: PASS",
        "paired games not created 0, not ended 0, target 0: PASS",
        "bots never seated 0, target 0: PASS",
    ):
        assert invariant in done.stdout, done.stdout
