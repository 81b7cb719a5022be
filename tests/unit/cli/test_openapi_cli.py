"""`cardarena openapi` prints the document the service serves, without serving it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from services.cli.main import main
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client


def served_document() -> object:
    """Returns the body of `/schema/openapi.json` of the embedded service."""
    store = InMemoryEventStore()
    with app_client(store) as client:
        return client.get("/schema/openapi.json").json()


def test_the_printed_document_is_the_served_one(capsys: pytest.CaptureFixture[str]) -> None:
    threads = threading.active_count()
    assert main(["openapi"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == served_document()
    assert printed["paths"]["/v1/games/{game_id}/actions"]["post"]["operationId"] == "postAction"
    assert threading.active_count() == threads  # nothing was started


def test_the_document_is_written_to_a_file(tmp_path: Path) -> None:
    target = tmp_path / "openapi.json"
    assert main(["openapi", "--output", str(target)]) == 0
    assert json.loads(target.read_text(encoding="utf-8")) == served_document()


def test_an_unwritable_file_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["openapi", "-o", str(tmp_path / "missing" / "openapi.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cardarena: error: cannot write")
    assert err.count("\n") == 1
