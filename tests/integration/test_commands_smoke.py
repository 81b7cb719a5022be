"""Smoke test of each command docker compose and k8s/ run: it starts against the real Redis
and PostgreSQL and answers its health check (`cardarena probe`, as the probes ask it)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.dev import Launcher, cardarena, stack_commands, stack_environment
from tests.support.stack import ROOT, free_port, wait_for, wait_until_healthy

COMMANDS = dict(stack_commands(concurrency=1))


@pytest.fixture
def env(redis_url: str, namespace: str, database_url: str, tmp_path: Path) -> dict[str, str]:
    """Returns the environment of one isolated stack: own keys, database, port, heartbeats."""
    return {
        **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", free_port()),
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_HEARTBEAT_DIR": str(tmp_path),
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
    }


@pytest.fixture
def launcher(env: dict[str, str]) -> Iterator[Launcher]:
    """Returns a launcher of children with `env`; they are stopped afterwards."""
    with Launcher(env, cwd=ROOT) as started:
        yield started


def probe(env: dict[str, str], service: str, *flags: str) -> bool:
    """Runs `cardarena probe service` as the probes do; returns whether it exits 0."""
    command = cardarena("probe", service, *flags)
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, timeout=30, check=False)
    return done.returncode == 0


def migrate(env: dict[str, str]) -> list[str]:
    """Runs `cardarena migrate` (the one-shot of compose and the k8s Job); returns its output."""
    with Launcher(env, cwd=ROOT) as launcher:
        child = launcher.start("migrate", cardarena("migrate"))
        assert child.process.wait(timeout=60) == 0, list(child.lines)
    return list(child.lines)


def test_migrate_applies_the_migrations_and_exits_0(env: dict[str, str]) -> None:
    applied = json.loads(migrate(env)[-1])["applied"]
    assert applied == sorted(p.name for p in (ROOT / "deploy" / "migrations").glob("*.sql"))
    assert json.loads(migrate(env)[-1])["applied"] == []


def test_serve_game_answers_health_and_its_probes(launcher: Launcher, env: dict[str, str]) -> None:
    migrate(env)
    child = launcher.start("game", COMMANDS["game"])
    wait_until_healthy(f"http://127.0.0.1:{env['CARDARENA_PORT']}", "the game service")
    assert wait_for(lambda: probe(env, "game", "--ready"), 30, "game to be ready")
    assert probe(env, "game")
    assert child.process.poll() is None


@pytest.mark.parametrize("service", ["projection", "workers", "beat"])
def test_a_background_service_starts_and_answers_its_probes(
    launcher: Launcher, env: dict[str, str], service: str
) -> None:
    child = launcher.start(service, COMMANDS[service])
    assert wait_for(lambda: probe(env, service), 60, f"{service} to be alive")
    assert wait_for(lambda: probe(env, service, "--ready"), 30, f"{service} to be ready")
    time.sleep(1)
    assert child.process.poll() is None, list(child.lines)
