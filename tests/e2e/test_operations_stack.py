"""Smoke test of operations on the whole stack: every process answers its probes and metrics."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import httpx
import pytest
import redis

from tests.support.stack import ROOT, Stack, free_port, running_stack, wait_for


class ProbedStack:
    """A running stack, the environment to probe it with and its metrics ports."""

    def __init__(self, stack: Stack, env: dict[str, str]) -> None:
        self.stack = stack
        self.env = env


@pytest.fixture
def probed(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[ProbedStack]:
    """Runs the stack with its own heartbeat directory and metrics ports."""
    with tempfile.TemporaryDirectory(prefix="cardarena-heartbeats-") as heartbeats:
        extra = {
            "CARDARENA_HEARTBEAT_DIR": heartbeats,
            "CARDARENA_PROJECTION_METRICS_PORT": str(free_port()),
            "CARDARENA_WORKERS_METRICS_PORT": str(free_port()),
        }
        with running_stack(redis_url, redis_client, namespace, database_url, extra) as stack:
            port = stack.base_url.rsplit(":", 1)[1]
            env = {
                **os.environ,
                **extra,
                "REDIS_URL": redis_url,
                "DATABASE_URL": database_url,
                "CARDARENA_PORT": port,
            }
            yield ProbedStack(stack, env)


def probe(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Runs `cardarena probe` with `args` in `env`."""
    command = [sys.executable, "-m", "services.cli.main", "probe", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def test_every_process_of_the_stack_is_ready_and_serves_metrics(probed: ProbedStack) -> None:
    env = probed.env
    for service in ("game", "projection", "workers"):

        def ready(service: str = service) -> bool:
            return probe(env, service, "--ready").returncode == 0

        wait_for(ready, 60, f"`cardarena probe {service} --ready` to pass")
        done = probe(env, service)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.startswith(f"{service}: alive: ")
        assert len(done.stdout.splitlines()) == 1

    base = probed.stack.base_url
    created = httpx.post(f"{base}/v1/games", json={"game": "beggar", "players": 2}, timeout=10)
    assert created.status_code == 201, created.text
    game_metrics = httpx.get(f"{base}/metrics", timeout=10).text
    assert 'cardarena_games_created_total{game="beggar"} 1.0' in game_metrics
    assert "cardarena_queue_depth" in game_metrics
    assert "cardarena_tournaments_running" in game_metrics

    projection = f"http://127.0.0.1:{env['CARDARENA_PROJECTION_METRICS_PORT']}/metrics"
    assert "cardarena_projection_lag_events" in httpx.get(projection, timeout=10).text

    workers = f"http://127.0.0.1:{env['CARDARENA_WORKERS_METRICS_PORT']}/metrics"

    def bot_turns_counted() -> bool:
        return 'cardarena_bot_turns_total{game="beggar"}' in httpx.get(workers, timeout=10).text

    wait_for(bot_turns_counted, 60, "the workers to count the bot turns")
    assert "cardarena_queue_depth" in httpx.get(workers, timeout=10).text
