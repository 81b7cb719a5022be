"""The newcomer's walk (docs/tutorials/walk-into-the-arena.md) on the real stack: the game
service on Redis, a Celery worker, beat sending the ladders' pairing and the projection into
PostgreSQL, registration open. The page's `sh` blocks run in order in one bash (the host's
box with the admin key, every other block with nothing but `URL`); then the outcomes are
checked through the API and PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis

from services.projection.queries import get_game_row
from tests.support.accounts import make_account
from tests.support.api import bearer
from tests.support.stack import ADMIN_KEY, ROOT, Stack, running_stack, wait_for

PAGE = ROOT / "docs" / "tutorials" / "walk-into-the-arena.md"
HOST_BOX = '!!! note "For the host'
"""The title of the page's box whose blocks the host runs, with its admin key."""
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>\S*)\s*$")
WALK_SECONDS = 480
"""How long the walk may take at most: a guard against a hang (it takes 2 to 4 minutes)."""
SHOWN = ("KEY", "TOKEN_V1", "LADDER", "GAME", "EVALUATION")
"""The walk's shell variables the checks read after it ran."""


def walk_blocks(page: str) -> list[tuple[bool, str]]:
    """Returns the page's `sh` blocks in order, each with whether the host runs it (a block
    inside the "For the host" box), dedented."""
    blocks: list[tuple[bool, str]] = []
    lines = page.splitlines()
    box = False
    index = 0
    while index < len(lines):
        line = lines[index]
        if line and not line.startswith(" "):
            box = line.startswith(HOST_BOX)
        opened = FENCE.match(line)
        index += 1
        if opened is None or not opened["info"]:
            continue
        indent = opened["indent"]
        body: list[str] = []
        while lines[index] != f"{indent}```":
            body.append(lines[index].removeprefix(indent))
            index += 1
        index += 1
        if opened["info"] == "sh":
            blocks.append((box and bool(indent), "\n".join(body)))
    return blocks


def walk_script(blocks: list[tuple[bool, str]], shown: Path) -> str:
    """Returns one bash script running `blocks` in order: the host's in a subshell with
    `ADMIN_KEY`, the newcomer's as they are; at the end it writes the `SHOWN` variables to
    `shown`, one a line."""
    parts = ["set -euo pipefail"]
    for number, (host, block) in enumerate(blocks):
        parts.append(f'echo "### block {number} $(date +%T.%N)" >&2')
        parts.append(f"(\nexport ADMIN_KEY='{ADMIN_KEY}'\n{block}\n)" if host else block)
    parts.append("printf '%s\\n' " + " ".join(f'"${name}"' for name in SHOWN) + f" > '{shown}'")
    return "\n".join(parts) + "\n"


@contextlib.contextmanager
def process_group(args: list[str], **popen: Any) -> Iterator[subprocess.Popen[str]]:
    """Runs `args` in a session of its own; ends whatever of it is left on the way out (the
    walk's background bots included)."""
    with subprocess.Popen(args, start_new_session=True, text=True, **popen) as process:
        try:
            yield process
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)


@pytest.fixture
def arena(
    redis_url: str, redis_client: redis.Redis, namespace: str, database_url: str
) -> Iterator[Stack]:
    """The stack with beat, an admin key and open registration."""
    extra = {"CARDARENA_ADMIN_KEY": ADMIN_KEY, "CARDARENA_REGISTRATION": "open"}
    with running_stack(
        redis_url, redis_client, namespace, database_url, extra, beat=True
    ) as started:
        yield started


def test_the_page_marks_the_host_s_block_and_only_it() -> None:
    blocks = walk_blocks(PAGE.read_text())
    assert [host for host, _ in blocks].count(True) == 1
    assert all(("ADMIN_KEY" in block) == host for host, block in blocks)


@pytest.mark.slow  # 2-4 min: the hosted evaluation's games go move by move over the API
@pytest.mark.timeout(600)
def test_a_newcomer_walks_from_no_account_to_a_hosted_verdict(arena: Stack, tmp_path: Path) -> None:
    shown = tmp_path / "shown"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CARDARENA_")}
    env["URL"] = arena.base_url
    script = walk_script(walk_blocks(PAGE.read_text()), shown)
    with process_group(
        ["bash", "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as walk:
        try:
            out, err = walk.communicate(timeout=WALK_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(walk.pid, signal.SIGTERM)
            out, err = walk.communicate()
            pytest.fail(f"the walk did not end within {WALK_SECONDS} s:\n{out}\n{err}")
    print(err)  # the blocks' start times
    assert walk.returncode == 0, f"the walk failed:\n{out}\n{err}"
    key, token, ladder, game_id, evaluation = shown.read_text().splitlines()
    printed = [json.loads(line) for line in out.splitlines() if line.startswith("{")]

    with httpx.Client(base_url=arena.base_url, timeout=30) as http:
        owned = http.get("/v1/accounts/me/bots", headers=bearer(key)).json()
        assert {(b["name"], b["version"]) for b in owned["bots"]} == {
            ("ada-bot", "1"),
            ("ada-bot", "2"),
        }

        # its ladder games were rated, as the leaderboard the service reads from PostgreSQL
        recent = http.get(f"/v1/ladders/{ladder}").json()["recent"]
        own = [g["game_id"] for g in recent if "ada-bot@1" in g["bots"]]
        assert len(own) >= 2
        board = http.get("/v1/leaderboards/shithead").json()["entries"]
        (entry,) = [e for e in board if e["key"] == "ada-bot@1"]
        assert entry["games"] >= 2
        with psycopg.connect(arena.database_url) as conn:
            row = get_game_row(conn, game_id)
        assert row is not None
        assert row["status"] != "playing"
        assert http.get(f"/v1/games/{game_id}").json()["rated"] is True

        # its notes: for its account and its token, withheld from anyone else
        other = make_account(http, "bea")

        def notes(headers: dict[str, str]) -> list[str]:
            export = http.get(f"/v1/games/{game_id}/export", headers=headers)
            assert export.status_code == 200, export.text
            lines = [json.loads(line) for line in export.text.splitlines()[1:]]
            return [e["data"]["text"] for e in lines if e["type"] == "NoteTaken"]

        mine = notes(bearer(key))
        assert mine
        assert all(text.startswith("v1: ") for text in mine)
        assert notes(bearer(token)) == mine
        assert set(notes({})) == set(notes(bearer(other))) == {""}
        replayed = http.get(f"/v1/games/{game_id}/replay", headers=bearer(key)).json()
        assert [e["data"]["text"] for e in replayed["events"] if e["type"] == "NoteTaken"] == mine
        anonymous = http.get(f"/v1/games/{game_id}/replay").json()
        assert {e["data"]["text"] for e in anonymous["events"] if e["type"] == "NoteTaken"} == {""}

        # the local evaluation's verdict, and the platform's
        local = [p for p in printed if "verdict" in p and "status" not in p]
        assert [p["verdict"] for p in local] == ["H1"]
        hosted = http.get(f"/v1/evaluations/{evaluation}").json()
        assert (hosted["status"], hosted["verdict"]) == ("finished", "H1")
        assert [p for p in printed if "status" in p] == [
            {k: hosted[k] for k in ("status", "verdict", "games", "elo", "los")}
        ]

        played = set(hosted["game_ids"])  # a unit still in flight at the verdict plays on

        def projected() -> list[dict[str, Any]] | None:
            listed = http.get("/v1/games", params={"limit": 100}).json()["games"]
            done = [g for g in listed if g["game_id"] in played and g["status"] != "playing"]
            return done if len(done) >= hosted["games"] else None

        finished = wait_for(projected, 30, "the projection of the evaluation's games")
        assert {(g["rated"], g["unrated"]["code"]) for g in finished} == {(False, "evaluation")}
