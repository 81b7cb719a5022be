"""The game service as a process of a test's own (`cardarena serve game` on Redis, bot turns
in-process), and the server-sent events read from it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from services.ops.migrate import migrate
from tests.support.api import KEY
from tests.support.stack import ROOT, free_port, wait_until_healthy


@contextlib.contextmanager
def served_game(
    redis_url: str, namespace: str, database_url: str, **settings: str
) -> Iterator[str]:
    """Runs `cardarena serve game` on Redis (bot turns in-process) over a migrated database
    (the bots' streams read the projection's views), with `settings` (environment variables)
    over the test's; returns its base URL."""
    migrate(database_url)
    port = free_port()
    env = {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "inprocess",
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_PORT": str(port),
        "CARDARENA_ADMIN_KEY": KEY,
        "CARDARENA_RATE_LIMIT": "0",
        **settings,
    }
    command = [sys.executable, "-m", "services.cli.main", "serve", "game"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(base_url, "the game service")
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def sse(lines: Iterator[str]) -> Iterator[tuple[str, str, Any]]:
    """Yields (event, id, data) of each server-sent event read from `lines`."""
    fields: dict[str, str] = {}
    for line in lines:
        if not line:
            if "event" in fields:
                yield fields["event"], fields.get("id", ""), json.loads(fields["data"])
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value
