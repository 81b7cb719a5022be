"""The whole stack with RabbitMQ as its Celery broker (`CELERY_BROKER_URL=amqp://...`, a
virtual host of the test's own): the game service, the projection, beat and two workers on
one machine, each with its metrics port, start and stay up; the workers play the bots,
beat's reconciliation reaches them, and both metrics endpoints read the queue's depth from
RabbitMQ."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
import redis

from services.cli.dev import Child, Launcher, cardarena, stack_environment
from tests.support.stack import ROOT, free_port, wait_for, wait_until_healthy

WAIT_S = 120
"""How long a wait lasts before it counts as a hang."""


@dataclass
class AmqpStack:
    """The running processes, the game service's address, the environment they share and
    each worker's metrics port."""

    launcher: Launcher
    base_url: str
    env: dict[str, str]
    worker_ports: dict[str, int]


@pytest.fixture
def amqp_stack(
    amqp_url: str, redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[AmqpStack]:
    """Runs every service of the stack over RabbitMQ, two workers with their own metrics
    ports; stops them afterwards."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="cardarena-heartbeats-") as heartbeats:
        env = {
            **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", port),
            "CELERY_BROKER_URL": amqp_url,
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_QUEUE": f"{namespace}bots",
            "CARDARENA_HEARTBEAT_DIR": heartbeats,
            "CARDARENA_PROJECTION_METRICS_PORT": str(free_port()),
            "CARDARENA_RECONCILE_SECONDS": "1",
        }
        worker_ports = {"worker-a": free_port(), "worker-b": free_port()}
        with Launcher(env, cwd=ROOT, grace=30) as launcher:
            launcher.start("game", cardarena("serve", "game"))
            launcher.start("projection", cardarena("serve", "projection"))
            launcher.start("beat", cardarena("serve", "beat", "--max-interval", "1"))
            for name, metrics_port in worker_ports.items():
                launcher.env["CARDARENA_WORKERS_METRICS_PORT"] = str(metrics_port)
                launcher.start(name, cardarena("serve", "workers", "--concurrency", "2"))
            wait_until_healthy(f"http://127.0.0.1:{port}", "the game service")
            yield AmqpStack(launcher, f"http://127.0.0.1:{port}", env, worker_ports)


def probe(env: dict[str, str], service: str) -> bool:
    """Returns whether `cardarena probe <service> --ready` passes in `env`."""
    command = [sys.executable, "-m", "services.cli.main", "probe", service, "--ready"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)
    return done.returncode == 0


def started(child: Child) -> bool:
    """Returns whether the worker `child` said it is ready, or has exited."""
    return child.saw(" ready.") or child.process.poll() is not None


def assert_all_running(stack: AmqpStack) -> None:
    """Asserts that no process of the stack has exited."""
    for child in stack.launcher.children:
        assert child.process.poll() is None, f"{child.name} exited: {child.tail(30)}"


def test_every_service_runs_over_rabbitmq_and_the_metrics_read_its_queue_depth(
    amqp_stack: AmqpStack, namespace: str
) -> None:
    workers = {c.name: c for c in amqp_stack.launcher.children if c.name.startswith("worker")}
    for child in workers.values():
        wait_for(functools.partial(started, child), WAIT_S, f"{child.name} to start or stop")
    assert_all_running(amqp_stack)
    for service in ("game", "projection", "workers"):
        ready = functools.partial(probe, amqp_stack.env, service)
        wait_for(ready, WAIT_S, f"{service} to be ready")

    base = amqp_stack.base_url
    body = {"game": "beggar", "players": 2, "seed": 3}
    created = httpx.post(f"{base}/v1/games", json=body, timeout=10)
    assert created.status_code == 201, created.text
    game = f"{base}/v1/games/{created.json()['game_id']}"

    def over() -> bool:
        return bool(httpx.get(game, timeout=10).json()["status"] != "playing")

    wait_for(over, WAIT_S, "the workers to play the game of bots to its end")

    def reconciled() -> bool:
        line = "Task cardarena.reconcile_tournaments["
        return any(child.saw(line) for child in workers.values())

    wait_for(reconciled, WAIT_S, "beat's reconciliation to reach a worker")

    depth = f'cardarena_queue_depth{{queue="{namespace}bots"}} '
    assert depth in httpx.get(f"{base}/metrics", timeout=10).text
    for name, port in amqp_stack.worker_ports.items():
        scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        assert depth in scraped, f"{name}'s metrics have no queue depth"
    assert_all_running(amqp_stack)
