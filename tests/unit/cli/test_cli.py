"""The `cardarena` command line, called through its `main`."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run


def test_beggar_play_prints_the_counts_of_a_fixed_deal_as_one_json_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "beggar", "play", "--a", "2A", "--b", "34567")
    assert code == 0
    assert out.count("\n") == 1
    assert json.loads(out) == {"status": "finished", "cards": 7, "tricks": 1, "winner": 0}


def test_beggar_play_reports_a_loop_without_a_winner(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "beggar", "play", "--a", "J23", "--b", "4J5")
    assert code == 0
    assert json.loads(out) == {"status": "loop", "cards": 8, "tricks": 3, "winner": None}


def test_beggar_play_plays_a_shuffled_deal_the_same_way_for_the_same_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = run(capsys, "beggar", "play", "--players", "3", "--seed", "9")
    again = run(capsys, "beggar", "play", "--players", "3", "--seed", "9")
    assert first == again
    assert json.loads(first[1])["status"] in {"finished", "loop", "capped"}


@pytest.mark.parametrize(
    "argv",
    [
        ["--a", "2Z", "--b", "3"],
        ["--a", "23"],
        ["--players", "5"],
        ["--players", "2", "--max-cards", "0"],
    ],
)
def test_beggar_play_refuses_bad_input_with_exit_code_2_and_no_traceback(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, "beggar", "play", *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("cardarena: error:")
    assert "Traceback" not in err
