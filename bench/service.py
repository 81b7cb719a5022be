"""One `cardarena serve game` for a benchmark: on Redis (a namespace of its own), with a
temporary PostgreSQL database (for `/ready`) and an admin key; and the figures' helpers the
benchmarks beside it share (`bench.spectators`, `bench.floods`)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.load import clean_redis, cpu_seconds, free_port, temporary_database
from services.cli.dev import Launcher, cardarena, service_ready, stack_environment
from services.ops.migrate import migrate

HANG_SECONDS = 120.0
"""How long anything may take before it counts as a hang."""


class ServiceDidNotStart(Exception):
    """The game service exited or was not ready in `HANG_SECONDS`."""


@dataclass(frozen=True)
class Service:
    """A running game service: its base URL and the launcher of its process."""

    url: str
    launcher: Launcher

    def cpu_seconds(self) -> float:
        """Returns the CPU seconds (user + system) its process used so far."""
        return cpu_seconds([self.launcher], "game")


@contextlib.contextmanager
def game_service(name: str, admin_key: str, settings: Mapping[str, str]) -> Iterator[Service]:
    """Runs one game service (its `settings` over the environment's, the admin key
    `admin_key`) on a namespace and a temporary database named after `name` while the block
    runs. Raises ServiceDidNotStart."""
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    server_url = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    namespace = f"bench-{name}:{uuid.uuid4().hex[:8]}:"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with temporary_database(server_url, f"bench_{name}") as database_url:
        migrate(database_url)
        env = {
            **stack_environment(os.environ, redis_url, database_url, "127.0.0.1", port),
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_ADMIN_KEY": admin_key,
            "CARDARENA_LOG_JSON": "false",
            **settings,
        }
        try:
            with tempfile.TemporaryDirectory() as logs, Launcher(env, logs=Path(logs)) as launcher:
                launcher.start("game", cardarena("serve", "game"))
                deadline = time.monotonic() + HANG_SECONDS
                while not service_ready(url):
                    if time.monotonic() > deadline or launcher.exited():
                        raise ServiceDidNotStart(url)
                    time.sleep(0.2)
                yield Service(url, launcher)
        finally:
            clean_redis(redis_url, namespace, "cardarena")


def register_bots(url: str, admin_key: str, names: Sequence[str]) -> list[str]:
    """Registers the external Autobus bots `names` (version 1); returns their tokens."""
    admin = {"Authorization": f"Bearer {admin_key}"}
    tokens = []
    with httpx.Client(base_url=url, headers=admin, timeout=HANG_SECONDS) as host:
        for name in names:
            bot = host.post("/v1/bots", json={"name": name, "game": "autobus", "kind": "external"})
            bot.raise_for_status()
            tokens.append(bot.json()["token"])
    return tokens


def create_game(url: str, admin_key: str, bots: Sequence[str]) -> str:
    """Creates an Autobus game seating the external bots `bots` in order; returns its id."""
    admin = {"Authorization": f"Bearer {admin_key}"}
    seats = [{"kind": "external", "bot": name, "version": "1"} for name in bots]
    with httpx.Client(base_url=url, headers=admin, timeout=HANG_SECONDS) as host:
        created = host.post("/v1/games", json={"game": "autobus", "seats": seats})
        created.raise_for_status()
        game_id: str = created.json()["game_id"]
        return game_id


def percentile(values: list[float], share: float) -> float:
    """Returns the `share` quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]
