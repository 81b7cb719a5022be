"""The load benchmark's smoke run: `bench/load.py --quick` completes against real servers."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.stack import ROOT


def test_the_quick_load_run_completes_and_prints_its_figures_with_no_errors(
    redis_url: str, database_url: str
) -> None:
    env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for figure in ("moves per second", "move p50 / p99 latency", "projection lag p50 / p99"):
        assert figure in done.stdout, done.stdout
    assert "errors 0, target 0: PASS" in done.stdout, done.stdout
