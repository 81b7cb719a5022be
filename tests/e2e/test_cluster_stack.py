"""The whole stack on a Redis Cluster of three primaries with RabbitMQ as its broker and two
projection services sharing the feed's partitions: a round robin played on the workers
gives the games and standings of the same definition run in this process, although a
projector and a worker are killed midway (the projector comes back), and the views equal
a rebuild, ratings included."""

from __future__ import annotations

import os
import signal
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import msgspec
import psycopg
import pytest

from services.cli.dev import Launcher, cardarena, stack_environment
from services.projection.views import PostgresTournamentViews
from shared.app.tournaments import run_in_process
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.standings import standings
from shared.ports.views.port import TournamentStandings
from shared.store.memory import InMemoryEventStore
from tests.support import deals
from tests.support.projection import assert_views_equal_a_rebuild
from tests.support.redis_cluster import LocalCluster
from tests.support.stack import ROOT, free_port, wait_for, wait_until_healthy

pytestmark = pytest.mark.cluster

BODY: dict[str, Any] = {
    "game": "autobus",
    "format": "round_robin",
    "entrants": [
        {"bot": "heuristic", "version": "h"},
        {"bot": "random", "version": "a"},
        {"bot": "random", "version": "b"},
        {"bot": "random", "version": "c"},
    ],
    "table_size": 2,
    "games_per_table": 2,
    "seed": "cluster-e2e",
}
"""Every pair of the four, twice with the seats swapped: twelve games."""
GAMES = 12


@dataclass
class ClusterStack:
    """The running processes, the game service's address and the cluster under them."""

    launcher: Launcher
    base_url: str
    cluster: LocalCluster
    namespace: str
    database_url: str


@pytest.fixture
def cluster_stack(
    redis_cluster: LocalCluster, amqp_url: str, database_url: str, redis_url: str
) -> Iterator[ClusterStack]:
    """Runs the game service, two projectors and two workers on the cluster over RabbitMQ
    (the schedules in the machine's Redis, under the namespace)."""
    namespace = f"e2e:{uuid.uuid4().hex[:8]}:"
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="cardarena-heartbeats-") as heartbeats:
        env = {
            **stack_environment(os.environ, redis_cluster.url, database_url, "127.0.0.1", port),
            "CARDARENA_REDIS_CLUSTER": "true",
            "CELERY_BROKER_URL": amqp_url,
            "CARDARENA_SCHEDULES_REDIS_URL": redis_url,  # beat's: a standalone Redis
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_QUEUE": f"{namespace}bots",
            "CARDARENA_HEARTBEAT_DIR": heartbeats,
            "CARDARENA_PROJECTION_METRICS_PORT": "0",
            "CARDARENA_WORKERS_METRICS_PORT": "0",
            "CARDARENA_PROJECTORS": "2",
            "CARDARENA_PROJECTION_LINGER_MS": "0",
        }
        with Launcher(env, cwd=ROOT, grace=30) as launcher:
            launcher.start("game", cardarena("serve", "game"))
            for index in (0, 1):
                launcher.env["CARDARENA_PROJECTOR_INDEX"] = str(index)
                launcher.start(f"projection-{index}", cardarena("serve", "projection"))
            for name in ("worker-a", "worker-b"):
                launcher.start(name, cardarena("serve", "workers", "--concurrency", "2"))
            wait_until_healthy(f"http://127.0.0.1:{port}", "the game service")
            yield ClusterStack(
                launcher, f"http://127.0.0.1:{port}", redis_cluster, namespace, database_url
            )
    for primary in redis_cluster.primaries():
        node = primary.client()
        for key in list(node.scan_iter(match=namespace + "*", count=1000)):
            node.delete(key)
        node.close()


def test_a_round_robin_on_the_cluster_survives_a_killed_projector_and_worker(
    cluster_stack: ClusterStack,
) -> None:
    stack = cluster_stack
    views = PostgresTournamentViews(stack.database_url)
    with httpx.Client(base_url=stack.base_url, timeout=10) as http:
        created = http.post("/v1/tournaments", json=BODY)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]

        def played(at_least: int) -> bool:
            shown = http.get(f"/v1/tournaments/{tournament_id}/standings")
            lines = shown.json().get("standings", []) if shown.status_code == 200 else []
            return bool(sum(line["games"] for line in lines) >= 2 * at_least)

        wait_for(lambda: played(2), 180, "two games to be played")
        children = {child.name: child for child in stack.launcher.children}
        for name in ("projection-1", "worker-a"):  # each leads a process group of its own
            os.killpg(children[name].process.pid, signal.SIGKILL)
        stack.launcher.env["CARDARENA_PROJECTOR_INDEX"] = "1"
        stack.launcher.start("projection-1-again", cardarena("serve", "projection"))

        def projected_finished() -> TournamentStandings | None:
            try:
                projected = views.standings(tournament_id)
            except psycopg.Error:
                return None
            return projected if projected and projected.status == "finished" else None

        projected = wait_for(projected_finished, 300, "the tournament to finish and be projected")

        def all_rated() -> bool:
            board = http.get("/v1/leaderboards/autobus").json()
            return bool(sum(entry["games"] for entry in board["entries"]) == 2 * GAMES)

        wait_for(all_rated, 120, "every game to be rated")

    definition = msgspec.convert(BODY, TournamentDefinition)
    same_deployment = deals.attached(InMemoryEventStore())  # the stack's deal secret
    in_process = run_in_process(same_deployment, definition, tournament_id)
    assert projected.standings == standings(in_process)
    assert sum(line.games for line in projected.standings) == 2 * GAMES
    assert assert_views_equal_a_rebuild(stack.database_url) == GAMES
