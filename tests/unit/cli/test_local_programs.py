"""Bots as local programs (`exec:<command>`): the protocol, each way a program fails, and
`cardarena simulate` and `cardarena tournament` playing them beside the built-in bots.

The programs are real subprocesses: the examples in Python and JavaScript (Node.js) and the
misbehaving ones of tests/support/programs/.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from services.cli.main import main
from services.cli.programs import Program, ProgramFailed, split_note
from services.cli.simulate import check, simulate
from tests.support.local_bots import PYTHON_EXAMPLE, javascript_example, node, program
from tests.support.stack import ROOT

TURN = {"game_id": "g", "game": "shithead", "seat": 0, "version": 3, "legal_actions": [{}]}


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """Runs `cardarena *argv --json`; returns the JSON it printed (it must succeed)."""
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Runs `cardarena *argv`; returns its error message (it must be a usage error)."""
    code = main(list(argv))
    _, err = capsys.readouterr()
    assert code == 2, err
    return err


def test_a_program_gets_each_turn_as_a_json_line_and_stays_up_between_turns() -> None:
    echo = Program(program("echoes"))
    try:
        first = echo.ask(TURN)
        second = echo.ask({**TURN, "version": 4})
    finally:
        echo.stop()

    assert first["fields"] == sorted(TURN)
    assert first["pid"] == second["pid"]


@pytest.mark.parametrize(
    ("name", "reason", "detail"),
    [
        ("hangs", "timeout", "no answer within 0.5 s of its turn"),
        ("writes_garbage", "malformed_output", "not JSON: 'I play the ace of spades'"),
        ("writes_a_list", "malformed_output", "not a JSON object: '[1, 2, 3]'"),
    ],
)
def test_a_program_that_fails_its_turn_is_stopped_with_the_reason(
    name: str, reason: str, detail: str
) -> None:
    # The one that hangs waits out its limit; the others answer (wrongly) well within theirs
    # however busy the machine, so their reason is never a timeout.
    bot = Program(program(name), move_seconds=0.5 if name == "hangs" else 10)
    with pytest.raises(ProgramFailed) as failed:
        bot.ask(TURN)

    assert (failed.value.reason, failed.value.detail) == (reason, detail)
    assert bot._process is None  # stopped: its next turn starts it afresh


def test_a_program_that_exits_is_reported_with_its_code_and_last_words_and_starts_again() -> None:
    bot = Program(program("crashes_on_third_turn"))
    try:
        pids = [bot.ask(TURN), bot.ask(TURN)]
        with pytest.raises(ProgramFailed) as failed:
            bot.ask(TURN)
        again = bot.ask(TURN)  # a fresh process: its first turn again
    finally:
        bot.stop()

    assert pids == [{}, {}]
    assert failed.value.reason == "crashed"
    assert failed.value.detail == "the program exited with code 3: out of ideas"
    assert again == {}


def test_a_program_that_writes_more_than_one_line_a_turn_fails_its_next_turn() -> None:
    """A second line would otherwise be read as the answer to the next turn."""
    bot = Program(program("writes_two_lines"))
    try:
        first = bot.ask(TURN)
        time.sleep(0.3)  # its second line comes in
        with pytest.raises(ProgramFailed) as failed:
            bot.ask(TURN)
    finally:
        bot.stop()

    assert first == {}
    assert failed.value.reason == "malformed_output"
    assert failed.value.detail == "more than one line for its last turn: 'debug: that was easy'"


def test_a_program_that_cannot_start_fails_its_turn() -> None:
    with pytest.raises(ProgramFailed) as failed:
        Program("exec:/no/such/program --flag").ask(TURN)

    assert failed.value.reason == "crashed"
    assert "cannot start '/no/such/program'" in failed.value.detail


def test_the_examples_in_python_and_javascript_play_a_simulation_beside_a_built_in_bot(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bots = [PYTHON_EXAMPLE, javascript_example(), "heuristic"]
    for game in ("shithead", "autobus"):
        report = run_json(
            capsys, "simulate", "--game", game, "--bots", ",".join(bots), "--games", "6"
        )

        assert report["forfeits"] == []
        assert {name: tally["games"] for name, tally in report["bots"].items()} == dict.fromkeys(
            bots, 6
        )
        assert sum(tally["wins"] for tally in report["bots"].values()) >= 6


def test_the_documented_bots_are_complete_programs_that_play_without_a_forfeit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    readme = (ROOT / "docs" / "how-to" / "local-programs.md").read_text(encoding="utf-8")
    bots = []
    for language, suffix, run in (("python", "py", sys.executable), ("javascript", "js", None)):
        found = re.search(rf"```{language}\n((?:#|//) a complete bot.*?)```", readme, re.S)
        assert found, f"docs/how-to/local-programs.md has no complete {language} bot"
        path = tmp_path / f"bot.{suffix}"
        path.write_text(found.group(1), encoding="utf-8")
        command = shlex.quote(run or node())
        bots.append(f"exec:{command} {path}")

    report = run_json(
        capsys, "simulate", "--game", "shithead", "--bots", ",".join(bots), "--games", "4"
    )

    assert report["forfeits"] == []
    assert sum(tally["games"] for tally in report["bots"].values()) == 8


def test_programs_that_hang_or_write_garbage_forfeit_every_game_and_the_run_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hangs, garbage = program("hangs"), program("writes_garbage")
    bots = ",".join([PYTHON_EXAMPLE, hangs, garbage])
    report = run_json(
        capsys,
        "simulate",
        "--game",
        "shithead",
        "--bots",
        bots,
        "--games",
        "3",
        "--move-seconds",
        "2",
    )

    tallies = report["bots"]
    assert tallies[PYTHON_EXAMPLE] == {"games": 3, "wins": 3, "mean_place": 1.0, "forfeits": 0}
    assert tallies[hangs]["forfeits"] == tallies[garbage]["forfeits"] == 3
    reasons = {(f["game"], f["bot"]): f["reason"] for f in report["forfeits"]}
    for game in range(3):
        assert reasons[(game, hangs)] == "timeout: no answer within 2 s of its turn"
        assert reasons[(game, garbage)] == "malformed_output: not JSON: 'I play the ace of spades'"


def test_an_illegal_action_or_a_crash_forfeits_that_game_and_the_program_plays_the_next(
    capsys: pytest.CaptureFixture[str],
) -> None:
    illegal, crash = program("plays_illegally"), program("crashes_on_third_turn")
    bots = ",".join([illegal, crash, PYTHON_EXAMPLE])
    report = run_json(capsys, "simulate", "--game", "shithead", "--bots", bots, "--games", "3")

    tallies = report["bots"]
    assert tallies[PYTHON_EXAMPLE] == {"games": 3, "wins": 3, "mean_place": 1.0, "forfeits": 0}
    assert tallies[illegal]["forfeits"] == tallies[crash]["forfeits"] == 3
    reasons = {(f["game"], f["bot"]): f["reason"] for f in report["forfeits"]}
    swap = "illegal_action: swap_phase: before play every seat swaps, then declares Ready"
    for game in range(3):
        assert reasons[(game, illegal)] == swap
        # Started afresh for each game, it crashes at its third turn of each.
        assert reasons[(game, crash)] == "crashed: the program exited with code 3: out of ideas"


def test_an_action_of_another_game_is_refused_as_invalid(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Shithead action answered in Hospodský autobus is no action of the game at all."""
    illegal = program("plays_illegally")
    bots = f"{illegal},{PYTHON_EXAMPLE}"
    report = run_json(capsys, "simulate", "--game", "autobus", "--bots", bots, "--games", "2")

    assert [f["reason"] for f in report["forfeits"]] == [
        "invalid_action: Invalid value 'PlayCards' - at `$.type`"
    ] * 2
    assert report["bots"][PYTHON_EXAMPLE]["wins"] == 2


def test_programs_play_alike_in_one_process_and_in_several() -> None:
    bots = [PYTHON_EXAMPLE, "random", program("writes_garbage")]
    request = check("shithead", "classic", bots, 6, "5")

    alone, parallel = simulate(request).to_json(), simulate(request, processes=2).to_json()

    assert alone["bots"] == parallel["bots"]
    assert alone["forfeits"] == parallel["forfeits"]
    assert len(alone["forfeits"]) == 6


def test_simulate_names_what_keeps_a_program_from_playing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["simulate", "--games", "1"]
    beggar = refused(capsys, *base, "--game", "beggar", "--bots", f"{PYTHON_EXAMPLE},random")
    empty = refused(capsys, *base, "--game", "shithead", "--bots", "exec: ,random")
    instant = refused(
        capsys,
        *base,
        "--game",
        "shithead",
        "--bots",
        f"{PYTHON_EXAMPLE},random",
        "--move-seconds",
        "0",
    )

    assert "Beggar-my-neighbour has no decisions" in beggar
    assert "names no command" in empty
    assert "move-seconds must be more than 0" in instant


def test_a_tournament_seats_programs_beside_built_in_bots_and_records_each_forfeit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    hangs = program("hangs")
    bots = ",".join([PYTHON_EXAMPLE, javascript_example(), hangs, "heuristic"])
    report = run_json(
        capsys,
        "tournament",
        "--game",
        "shithead",
        "--bots",
        bots,
        "--table-size",
        "2",
        "--move-seconds",
        "2",
    )

    standings = {line["name"]: line for line in report["standings"]}
    assert set(standings) == set(bots.split(","))
    assert all(line["games"] == 3 for line in standings.values())  # a round robin of 4
    assert standings[hangs]["points"] == 0
    assert len({f["game_id"] for f in report["forfeits"]}) == 3
    assert {(f["bot"], f["reason"]) for f in report["forfeits"]} == {
        (hangs, "timeout: no answer within 2 s of its turn")
    }
    assert report["winner"] is not None


def test_tournament_names_what_keeps_a_program_from_playing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["tournament", "--table-size", "2"]
    beggar = refused(capsys, *base, "--game", "beggar", "--bots", f"{PYTHON_EXAMPLE},random")
    unknown = refused(capsys, *base, "--game", "chess", "--bots", f"{PYTHON_EXAMPLE},random")
    empty = refused(capsys, *base, "--game", "shithead", "--bots", "exec: ,random")

    assert "beggar has no decisions" in beggar
    assert "unknown game 'chess'" in unknown
    assert "names no command" in empty


def test_a_program_s_answer_may_carry_a_note_and_a_bad_note_fails_its_turn() -> None:
    assert split_note({"type": "Ready", "note": "a\tb"}) == ({"type": "Ready"}, "a\tb")
    assert split_note({"type": "Ready"}) == ({"type": "Ready"}, None)
    for bad in ("x" * 1025, "bell\x07", 3):
        with pytest.raises(ProgramFailed) as failed:
            split_note({"type": "Ready", "note": bad})
        assert failed.value.reason == "invalid_action"
        assert str(failed.value).startswith("invalid_action: note: ")


def test_programs_that_take_notes_play_and_one_whose_note_cannot_be_one_forfeits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    notes, bad = program("takes_notes"), f"{program('takes_notes')} bad"
    bots = ",".join([notes, bad])
    report = run_json(capsys, "simulate", "--game", "shithead", "--bots", bots, "--games", "2")

    assert report["bots"][notes]["forfeits"] == 0
    assert report["bots"][bad]["forfeits"] == 2
    reasons = {f["reason"] for f in report["forfeits"]}
    says = "a note holds no control character but newline and tab; it holds U+0007 at 4"
    assert reasons == {f"invalid_action: note: {says}"}
