"""`--bots` and `exec:` programs checked before the first game: an empty name, or a program
that cannot start, is a usage error (exit 2) in one line, in simulate, tournament and
connect; a program that starts and then misbehaves forfeits as before
(tests/unit/cli/test_local_programs.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from services.cli.main import main
from services.cli.programs import check_program
from tests.support.local_bots import PYTHON_EXAMPLE

SIMULATE = ["simulate", "--game", "shithead", "--games", "2", "--json", "--bots"]
TOURNAMENT = ["tournament", "--game", "shithead", "--table-size", "2", "--json", "--bots"]
CONNECT = ["connect", "--server", "http://127.0.0.1:9", "--token", "t", "--bot"]


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Runs `cardarena *argv`; returns its one line of error (it must exit 2, print nothing)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    (line,) = err.splitlines()
    return line


@pytest.mark.parametrize("command", [SIMULATE, TOURNAMENT])
@pytest.mark.parametrize(
    ("bots", "place"), [("random,,random", 2), (",random", 1), ("random, ", 2)]
)
def test_an_empty_bot_name_is_refused(
    capsys: pytest.CaptureFixture[str], command: list[str], bots: str, place: int
) -> None:
    line = refused(capsys, *command, bots)
    assert line == f"cardarena: error: --bots: name {place} of {bots!r} is empty; one name per seat"


@pytest.mark.parametrize("command", [SIMULATE, TOURNAMENT, CONNECT])
def test_a_program_that_is_not_on_the_path_is_refused_before_the_first_game(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    bot = "exec:cardarena-no-such-program --fast"
    bots = bot if command is CONNECT else f"random,{bot}"
    line = refused(capsys, *command, bots)
    assert line.endswith(
        f"{bot!r} cannot start: 'cardarena-no-such-program' is not a command on PATH"
    )


@pytest.mark.parametrize("command", [SIMULATE, TOURNAMENT, CONNECT])
def test_a_program_file_that_is_missing_or_not_executable_is_refused(
    capsys: pytest.CaptureFixture[str], command: list[str], tmp_path: Path
) -> None:
    script = tmp_path / "bot.py"
    script.write_text("print('{}')\n")
    for bot, why in [
        (f"exec:{tmp_path / 'gone.py'}", f"there is no file {tmp_path / 'gone.py'}"),
        (f"exec:{script}", f"{script} is not executable (chmod +x)"),
    ]:
        bots = bot if command is CONNECT else f"random,{bot}"
        assert refused(capsys, *command, bots).endswith(f"cannot start: {why}")


def test_a_program_that_exits_before_its_first_turn_fails_its_check_with_its_last_words() -> None:
    says = "import sys; print('loading...', file=sys.stderr); sys.exit('no model file')"
    bot = f"exec:{shlex.quote(sys.executable)} -c {shlex.quote(says)}"
    with pytest.raises(
        ValueError, match="exited before its first turn, with code 1: no model file"
    ):
        check_program(bot, grace=120)  # returns as soon as the program exits


def test_a_program_that_waits_for_its_turn_passes_its_check() -> None:
    check_program(PYTHON_EXAMPLE, grace=0.1)


def test_an_unclosed_quote_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, *SIMULATE, "random,exec:python 'bot.py")
    assert "is not a command line: No closing quotation" in line
