"""The `cardarena` command line called through its `main`, its output captured."""

from __future__ import annotations

import pytest

from services.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Runs `cardarena argv...`; returns the exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
