"""`cardarena export`, `replay` and `verify`: game logs from the service, checked offline."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from shared.messages.common import GameFinished
from shared.model import exported_log as export
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client
from tests.support.cli import run
from tests.support.dealt_logs import replaced
from tests.support.golden import golden

NAME = "autobus-classic-2p-heuristic"
URL = "http://cardarena.test"


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    """Returns the path of a golden game's export."""
    path = tmp_path / "game.jsonl"
    path.write_bytes(export.export_bytes("g1", golden(NAME)))
    return path


def test_replay_prints_every_turn_the_result_and_the_deals_check(
    capsys: pytest.CaptureFixture[str], log_file: Path
) -> None:
    code, out, err = run(capsys, "replay", str(log_file))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"game g1 (autobus), {len(golden(NAME))} events"
    assert lines[1].startswith("v1 GameCreated autobus")
    assert any(line.startswith("v3 seat 0: PlayToSequence") for line in lines)
    assert lines[-2] == "result: finished; places by seat 1, 2 (main_pile_emptied)"
    assert lines[-1].startswith("deal: ok")


def test_replay_of_a_tampered_log_exits_1_naming_the_first_bad_event(
    capsys: pytest.CaptureFixture[str], log_file: Path
) -> None:
    lines = log_file.read_bytes().splitlines(keepends=True)
    log_file.write_bytes(b"".join([*lines[:20], *lines[21:]]))
    code, out, err = run(capsys, "replay", str(log_file))
    assert code == 1
    assert err.startswith("bad log: v20: missing")
    assert "v3 seat 0: PlayToSequence" in out
    assert "result:" not in out


def test_replay_as_json_prints_the_report(
    capsys: pytest.CaptureFixture[str], log_file: Path
) -> None:
    code, out, _ = run(capsys, "replay", "--json", str(log_file))
    report = json.loads(out)
    assert (code, report["ok"], report["version"]) == (0, True, None)
    assert report["verification"]["status"] == "ok"


def test_replay_of_a_file_that_is_not_there_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "replay", str(tmp_path / "nothing.jsonl"))
    assert (code, out) == (2, "")
    assert err.startswith("cardarena: error: cannot read")


def test_verify_exits_0_for_a_deal_that_matches_its_commitment(
    capsys: pytest.CaptureFixture[str], log_file: Path
) -> None:
    code, out, _ = run(capsys, "verify", str(log_file))
    assert code == 0
    assert out.startswith("ok: ")
    assert "seed '6', salt 0000" in out


def test_verify_exits_1_for_a_changed_seed_naming_the_finish(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    events = golden(NAME)
    assert isinstance(events[-1], GameFinished)
    path = tmp_path / "changed.jsonl"
    path.write_bytes(export.export_bytes("g1", replaced(events, len(events) - 1, seed="7")))
    code, out, _ = run(capsys, "verify", "--json", str(path))
    checked = json.loads(out)
    assert code == 1
    assert (checked["status"], checked["version"]) == ("failed", len(events))


def test_verify_exits_1_for_a_log_it_cannot_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"format": "cardarena-game"}\n')
    code, _, err = run(capsys, "verify", str(path))
    assert code == 1
    assert "header" in err


@pytest.fixture
def service(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> Iterator[TestClient[Litestar]]:
    """Serves an in-memory game service at URL to the CLI's HTTP requests (the client's
    request log is off: the app's log thread would write to a captured stream gone by then)."""
    caplog.set_level(logging.WARNING, logger="httpx")
    store = InMemoryEventStore()
    with app_client(store) as client:

        def get(url: str, **_: Any) -> httpx.Response:
            assert url.startswith(URL)
            return client.get(url.removeprefix(URL))

        monkeypatch.setattr(httpx, "get", get)
        yield client


def test_export_writes_a_finished_games_log_to_a_file_or_stdout(
    capsys: pytest.CaptureFixture[str], service: TestClient[Litestar], tmp_path: Path
) -> None:
    game_id = service.post("/v1/games", json={"game": "beggar", "players": 2}).json()["game_id"]
    expected = service.get(f"/v1/games/{game_id}/export").content
    path = tmp_path / "out.jsonl"
    code, out, _ = run(capsys, "export", game_id, "--url", URL, "-o", str(path))
    assert (code, out) == (0, "")
    assert path.read_bytes() == expected
    code, out, _ = run(capsys, "export", game_id, "--url", f"{URL}/")
    assert code == 0
    assert out.encode() == expected
    assert run(capsys, "replay", str(path))[0] == 0


def test_export_of_a_running_or_unknown_game_exits_1_with_the_reason(
    capsys: pytest.CaptureFixture[str], service: TestClient[Litestar]
) -> None:
    body = {"game": "shithead", "seats": [{"kind": "external"}, {}]}
    game_id = service.post("/v1/games", json=body).json()["game_id"]
    code, out, err = run(capsys, "export", game_id, "--url", URL)
    assert (code, out) == (1, "")
    assert "403" in err
    assert "still running" in err
    code, _, err = run(capsys, "export", "nope", "--url", URL)
    assert code == 1
    assert "404" in err
