"""The TypeScript example bot (examples/typescript) plays a game to the end against the real
stack (game service, worker and projection over Redis and PostgreSQL), typed by a client that
openapi-typescript generates from the running service's OpenAPI document; each request it
sends and each answer it reads (through a recording proxy) validates against the document.

The test takes the machine's Node.js: it runs `npm ci` (the pinned package-lock.json) in
examples/typescript when node_modules is missing, then works in a temporary copy of the example
(the generated schema.d.ts and the compiled bot never land in the source tree). Without `node`
and `npm` it is skipped (a failure under CARDARENA_REQUIRE_SERVICES=1, as in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.openapi_check import Checker
from tests.support.recording_proxy import RecordingProxy
from tests.support.stack import ADMIN_KEY, ROOT, Stack, check_projected_and_archived

EXAMPLE = ROOT / "examples" / "typescript"
SOURCES = ("bot.ts", "tsconfig.json", "package.json")
"""What the temporary copy of the example takes from the source tree (node_modules is linked)."""
BOT_SEED = "7"
"""The seed of the bot's random choices: with the game's seed and the session's deal secret,
the game is the same on every run (before, `Math.random` capped about one run in a few)."""


def run(command: list[str], cwd: Path, timeout: float = 300, **env: str) -> str:
    """Runs `command` in `cwd`; returns its output, failing the test with it on an error."""
    done = subprocess.run(
        command,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{output}"
    return done.stdout


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """Returns the example's node_modules, installed from the lock file if missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        message = "the TypeScript bot's test needs Node.js and npm (apt-get install nodejs npm)"
        if os.environ.get("CARDARENA_REQUIRE_SERVICES") == "1":
            pytest.fail(message + " (CARDARENA_REQUIRE_SERVICES=1 turns this skip into a failure)")
        pytest.skip(message)
    installed = EXAMPLE / "node_modules"
    if not (installed / ".bin" / "tsc").exists():
        run(["npm", "ci", "--no-audit", "--no-fund"], EXAMPLE, timeout=600)
    return installed


def workspace(tmp_path: Path, node_modules: Path, document: dict[str, Any]) -> Path:
    """Returns a copy of the example with the service's document and the client generated
    from it (`npm run generate`: openapi-typescript)."""
    work = tmp_path / "typescript"
    work.mkdir()
    for name in SOURCES:
        shutil.copy(EXAMPLE / name, work / name)
    (work / "node_modules").symlink_to(node_modules)
    (work / "openapi.json").write_text(json.dumps(document), encoding="utf-8")
    run(["npm", "run", "--silent", "generate"], work)
    assert "postAction" in (work / "schema.d.ts").read_text(encoding="utf-8")
    return work


def type_errors(work: Path) -> str:
    """Returns what `tsc --noEmit` says of the workspace (empty: it type-checks)."""
    done = subprocess.run(
        [str(work / "node_modules" / ".bin" / "tsc"), "--noEmit", "-p", str(work)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


MISUSES = [
    ("expected_version: turn.version", "expected_version: String(turn.version)"),
    ("seat: turn.seat, action,", "seat: turn.seat, action: [action],"),
    ("`/v1/games/${gameId}`);", "`/v1/games/${gameId}`);\n        game.winner.toFixed();"),
    ('"/v1/bots/me/turns?wait=10");', '"/v1/bots/me/turns?wait=10");\n    turns[0]?.versoin;'),
]
"""Edits of the bot that misuse a generated type: each must fail the type check."""


def test_the_typescript_bot_type_checks_and_plays_a_game_to_the_end(
    secured_stack: Stack, node_modules: Path, tmp_path: Path
) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with httpx.Client(base_url=secured_stack.base_url, headers=admin, timeout=30) as host:
        document = host.get("/schema/openapi.json").json()
        work = workspace(tmp_path, node_modules, document)
        assert type_errors(work) == ""
        for original, misuse in MISUSES:
            source = (EXAMPLE / "bot.ts").read_text(encoding="utf-8")
            assert original in source, original
            (work / "bot.ts").write_text(source.replace(original, misuse, 1), encoding="utf-8")
            assert "bot.ts" in type_errors(work), f"tsc accepted {misuse!r}"
        shutil.copy(EXAMPLE / "bot.ts", work / "bot.ts")
        run([str(work / "node_modules" / ".bin" / "tsc"), "-p", str(work)], work)

        registered = host.post(
            "/v1/bots", json={"name": "ts-bot", "game": "shithead", "kind": "external"}
        )
        assert registered.status_code == 201, registered.text
        token = registered.json()["token"]
        seats = [{"kind": "external", "bot": "ts-bot"}, {"bot": "heuristic"}, {"bot": "random"}]
        body = {"game": "shithead", "seats": seats, "seed": 11}
        created = host.post("/v1/games", json=body)
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]

        with RecordingProxy(secured_stack.base_url) as proxy:
            output = run(
                ["node", str(work / "dist" / "bot.js"), "1"],
                work,
                timeout=240,
                CARDARENA_URL=proxy.url,
                CARDARENA_TOKEN=token,
                CARDARENA_CHOICE="random",
                CARDARENA_SEED=BOT_SEED,
            )
        summary = json.loads(output.strip().splitlines()[-1])
        assert summary["bot"] == "ts-bot@1"
        assert summary["finished"] == [game_id]
        assert summary["actions"] > 0

        game = host.get(f"/v1/games/{game_id}").json()
        assert game["status"] == "finished"
        assert sorted(game["result"]["places"]) == [1, 2, 3]  # the place of each seat
        events = host.get(f"/v1/games/{game_id}/events").json()["events"]
        by_the_bot = [e for e in events if e["data"].get("seat") == 0 and e["type"] != "Dealt"]
        assert len(by_the_bot) >= summary["actions"]
        assert not [e for e in events if e["type"] in {"TurnTimedOut", "DefaultActionPlayed"}]

    # Every request the bot sent and every answer it read agree with the document.
    checker = Checker(document)
    assert [error for exchange in proxy.exchanges for error in checker.errors(exchange)] == []
    assert {"getCallingBot", "waitBotTurns", "postAction", "getGame"} <= {
        name for name, _ in checker.checked
    }
    check_projected_and_archived(secured_stack, "shithead", game_id, game)
