"""`cardarena dev`: the whole stack as local processes, started, used and stopped."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg import sql

from services.projection.queries import get_game_row
from tests.support.stack import ROOT, free_port, wait_for

STOP_SECONDS = 45
"""How long `cardarena dev` may take to stop after SIGINT (its grace period is 10 s)."""


class Dev:
    """A running `cardarena dev` and every line it has printed."""

    def __init__(self, process: subprocess.Popen[str], base_url: str) -> None:
        self.process = process
        self.base_url = base_url
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        self.lines.extend(line.rstrip("\n") for line in self.process.stdout)

    def output(self) -> str:
        """Returns the output so far."""
        return "\n".join(list(self.lines))

    def child_pids(self) -> dict[str, int]:
        """Returns the pid of each child the output says was started."""
        found = re.findall(r"started (\w+) \(pid (\d+)\)", self.output())
        return {name: int(pid) for name, pid in found}


def live_members(group: int) -> list[int]:
    """Returns the pids of the live (not zombie) processes in the process group `group`."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[2]) == group:
                members.append(int(stat.parent.name))
    return members


@pytest.fixture
def fresh_database_url(admin_database_url: str) -> Iterator[str]:
    """Returns the URL of a database that does not exist yet; dropped afterwards."""
    name = f"cardarena_dev_{uuid.uuid4().hex[:12]}"
    yield psycopg.conninfo.make_conninfo(admin_database_url, dbname=name)
    with (
        contextlib.suppress(psycopg.Error),
        psycopg.connect(admin_database_url, autocommit=True) as admin,
    ):
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@pytest.fixture
def dev(redis_url: str, namespace: str, fresh_database_url: str, tmp_path: Path) -> Iterator[Dev]:
    """Starts `cardarena dev` on a free port and waits until it says it is ready."""
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "DATABASE_URL": fresh_database_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_QUEUE": f"{namespace}bots",
        "CARDARENA_HEARTBEAT_DIR": str(tmp_path),
        "CARDARENA_PROJECTION_METRICS_PORT": "0",
        "CARDARENA_WORKERS_METRICS_PORT": "0",
        "PYTHONUNBUFFERED": "1",
    }
    command = [sys.executable, "-m", "services.cli.main", "dev", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--workers-concurrency", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    started = Dev(process, f"http://127.0.0.1:{port}")
    try:
        wait_for(
            lambda: "ready; Ctrl-C" in started.output() or process.poll() is not None,
            300,  # four processes start under whatever load the machine has: only a hang fails
            "cardarena dev to be ready",
        )
        assert process.poll() is None, started.output()
        yield started
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        started.reader.join(timeout=10)
        assert process.stdout is not None
        process.stdout.close()
        for pid in started.child_pids().values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_dev_serves_a_game_of_bots_to_its_end_and_stops_cleanly_on_ctrl_c(
    dev: Dev, fresh_database_url: str
) -> None:
    output = dev.output()
    assert f"API:           {dev.base_url}/v1" in output
    assert f"{dev.base_url}/schema" in output
    assert f"{dev.base_url}/replay/" in output
    assert "created the database" in output
    assert set(dev.child_pids()) == {"game", "projection", "workers", "beat"}
    assert re.search(r"^game +\| cardarena game service on ", output, re.MULTILINE), output

    created = httpx.post(
        f"{dev.base_url}/v1/games", json={"game": "beggar", "players": 4, "seed": 2}, timeout=10
    )
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]

    def finished() -> dict[str, Any] | None:
        body: dict[str, Any] = httpx.get(f"{dev.base_url}/v1/games/{game_id}", timeout=10).json()
        return body if body["status"] != "playing" else None

    game = wait_for(finished, 120, "the dev stack's worker to finish the game")

    def projected() -> dict[str, Any] | None:
        with psycopg.connect(fresh_database_url) as conn:
            row = get_game_row(conn, game_id)
        return row if row and row["version"] == game["version"] else None

    row = wait_for(projected, 60, "the dev stack's projection to catch up")
    assert (row["status"], row["result"]) == (game["status"], game["result"])

    pids = dev.child_pids()
    started = time.monotonic()
    dev.process.send_signal(signal.SIGINT)
    assert dev.process.wait(timeout=STOP_SECONDS) == 0, dev.output()
    assert time.monotonic() - started < STOP_SECONDS
    dev.reader.join(timeout=10)
    assert "dev        | stopped" in dev.output()
    left = {name: live_members(pid) for name, pid in pids.items()}
    assert left == {name: [] for name in pids}, left


def test_dev_stops_everything_and_fails_naming_a_child_that_died(dev: Dev) -> None:
    pids = dev.child_pids()
    os.killpg(pids["beat"], signal.SIGKILL)

    assert dev.process.wait(timeout=STOP_SECONDS) == 1, dev.output()
    dev.reader.join(timeout=10)
    assert "beat exited unexpectedly" in dev.output()
    left = {name: live_members(pid) for name, pid in pids.items()}
    assert left == {name: [] for name in pids}, left
