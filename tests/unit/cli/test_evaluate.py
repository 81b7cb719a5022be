"""`cardarena evaluate`: an SPRT of a candidate against a baseline on duplicate deals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from services.cli.evaluate import Evaluation, check, evaluate, report_lines
from services.cli.main import main
from shared.bots.generic import FirstLegalBot
from shared.catalog import hosting
from shared.games.base import GameSpec
from shared.messages.common import Action, Event, GameCreated, Result
from shared.model import sprt
from tests.support.local_bots import PYTHON_EXAMPLE, program

KEYS = {
    "verdict",
    "llr",
    "bounds",
    "games",
    "pairs",
    "elo",
    "elo_interval",
    "los",
    "results",
    "game",
    "ruleset",
    "table_size",
    "candidate",
    "baseline",
    "elo0",
    "elo1",
    "alpha",
    "beta",
    "max_games",
    "seed",
    "games_per_second",
    "forfeits",
    "interrupted",
}


class FirstSeatRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Test-first-seat has nothing to choose."""


class FirstSeatWins(Event, frozen=True):
    """The deal of test-first-seat: over at once, seat 0 first and every other seat second."""

    players: int


FIRST_SEAT: GameSpec[Result, FirstSeatRules, Result, Action] = GameSpec(
    name="test-first-seat",
    title="Test first seat",
    min_players=2,
    max_players=4,
    has_decisions=False,
    ruleset_type=FirstSeatRules,
    presets={"classic": FirstSeatRules()},
    action_type=Action,
    event_type=GameCreated | FirstSeatWins,
    deal=lambda rules, players, seed: FirstSeatWins(players),
    evolve=lambda state, event: Result("finished", [1] + [2] * (event.players - 1)),  # type: ignore[attr-defined]
    decide=lambda state, seat, action: [],
    view=lambda state, seat: state,
    legal_actions=lambda state, seat: [],
    to_move=lambda state: [],
    is_over=lambda state: True,
    result=lambda state: state,
    validate=lambda rules, players: None,
    bots={"a": FirstLegalBot(), "b": FirstLegalBot()},
)
"""A game the first seat always wins, whoever plays it."""


@pytest.fixture(autouse=True)
def _hosted() -> Iterator[None]:
    """Hosts test-first-seat beside the built-in games for each test of this module."""
    with hosting(FIRST_SEAT):
        yield


def evaluated(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """Runs `cardarena evaluate argv... --json`; returns the one JSON object it printed."""
    code = main(["evaluate", *argv, "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    report: dict[str, Any] = json.loads(out)
    return report


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Runs `cardarena evaluate argv...`; returns its one line of error (a usage error)."""
    code = main(["evaluate", *argv])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_heuristic_beats_random_at_shithead_and_the_test_says_h1_within_a_few_hundred_games(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = evaluated(
        capsys, "--game", "shithead", "--candidate", "heuristic", "--baseline", "random"
    )

    assert report["verdict"] == "H1"
    assert report["llr"] > report["bounds"][1]
    assert report["games"] <= 400
    assert report["elo_interval"][0] > 0
    assert report["forfeits"] == {"candidate": 0, "baseline": 0}


def test_random_against_itself_with_tight_bounds_and_few_games_is_not_found_better(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--candidate", "random", "--baseline", "random"]
    report = evaluated(capsys, *argv, "--elo0", "0", "--elo1", "5", "--max-games", "40")

    assert report["verdict"] in {"inconclusive", "H0"}
    assert report["games"] <= 40
    assert report["bounds"][0] < report["llr"] < report["bounds"][1] or report["verdict"] == "H0"


def test_the_json_report_has_the_verdict_the_llr_and_its_bounds_the_games_and_the_elo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--candidate", "heuristic", "--baseline", "random"]
    report = evaluated(capsys, *argv, "--max-games", "10", "--seed", "3", "--alpha", "0.01")

    assert set(report) == KEYS
    assert report["verdict"] == "inconclusive"
    assert (report["games"], report["pairs"], report["max_games"]) == (10, 5, 10)
    assert len(report["results"]) == 5
    assert sum(report["results"]) == 5
    lower, upper = report["bounds"]
    assert lower == pytest.approx(-2.9857, abs=1e-4)  # ln(0.05 / 0.99)
    assert upper == pytest.approx(4.5539, abs=1e-4)  # ln(0.95 / 0.01)
    assert report["elo_interval"][0] <= report["elo"] <= report["elo_interval"][1]
    assert (report["elo0"], report["elo1"], report["alpha"]) == (0.0, 10.0, 0.01)
    assert (report["ruleset"], report["table_size"], report["seed"]) == ("classic", 2, "3")


def test_the_same_request_plays_the_same_games_and_reaches_the_same_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--candidate", "heuristic", "--baseline", "random"]
    once = evaluated(capsys, *argv, "--seed", "9", "--max-games", "40")
    again = evaluated(capsys, *argv, "--seed", "9", "--max-games", "40")

    assert {**once, "games_per_second": 0} == {**again, "games_per_second": 0}


def test_a_larger_table_rotates_the_candidate_through_every_seat_of_each_deal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "autobus", "--candidate", "heuristic", "--baseline", "random"]
    report = evaluated(capsys, *argv, "--table-size", "3", "--max-games", "20")

    assert report["verdict"] == "inconclusive"
    assert (report["games"], report["pairs"]) == (18, 6)
    assert len(report["results"]) == 13


@pytest.mark.parametrize("size", ["2", "4"])
def test_a_seat_that_always_wins_is_cancelled_by_the_rotation(
    capsys: pytest.CaptureFixture[str], size: str
) -> None:
    argv = ["--game", "test-first-seat", "--candidate", "a", "--baseline", "b"]
    report = evaluated(capsys, *argv, "--table-size", size, "--max-games", "40")

    middle = len(report["results"]) // 2
    assert report["results"][middle] == report["pairs"] > 0
    assert report["elo"] == 0
    assert report["verdict"] in {"inconclusive", "H0"}


def test_the_text_report_says_the_verdict_first_then_the_llr_the_games_and_the_elo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--candidate", "heuristic", "--baseline", "random"]
    code = main(["evaluate", *argv, "--max-games", "6"])
    out, _ = capsys.readouterr()

    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "inconclusive: no bound crossed within 6 games"
    assert lines[1].startswith("LLR ")
    assert "bounds -2.94, 2.94" in lines[1]
    assert lines[2].startswith("games 6 (3 pairs) of shithead (classic, 2 seats)")
    assert lines[3].startswith("Elo +")
    assert "95% interval" in lines[3]


def test_a_local_program_plays_as_simulate_plays_it(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--game", "shithead", "--candidate", PYTHON_EXAMPLE, "--baseline", "random"]
    report = evaluated(capsys, *argv, "--max-games", "6")

    assert report["forfeits"] == {"candidate": 0, "baseline": 0}
    assert (report["games"], report["pairs"], report["candidate"]) == (6, 3, PYTHON_EXAMPLE)


def test_a_program_that_forfeits_every_game_scores_nothing_and_its_forfeits_are_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--candidate", "random", "--baseline", program("writes_garbage")]
    report = evaluated(capsys, *argv, "--max-games", "4")

    assert report["forfeits"] == {"candidate": 0, "baseline": 4}
    assert report["results"] == [0, 0, 0, 0, 2]


BASE = ["--game", "shithead", "--candidate", "heuristic", "--baseline", "random"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--game", "chess", "--candidate", "a", "--baseline", "b"], "--game: unknown game"),
        ([*BASE, "--table-size", "11"], "--table-size: Shithead takes 2 to 10 players, not 11"),
        ([*BASE, "--table-size", "1"], "--table-size:"),
        ([*BASE[:3], "nobody", *BASE[4:]], "--candidate: unknown bot 'nobody'"),
        ([*BASE[:5], "nobody"], "--baseline: unknown bot 'nobody'"),
        ([*BASE, "--ruleset", "nonsense"], "--ruleset:"),
        ([*BASE, "--alpha", "0"], "--alpha: must lie strictly between 0 and 0.5"),
        ([*BASE, "--alpha", "0.5"], "--alpha:"),
        ([*BASE, "--beta", "-0.1"], "--beta:"),
        ([*BASE, "--beta", "nan"], "--beta:"),
        ([*BASE, "--elo0", "5", "--elo1", "5"], "--elo1: must be more than elo0 (5), not 5"),
        ([*BASE, "--elo0", "5", "--elo1", "-5"], "--elo1:"),
        ([*BASE, "--elo1", "inf"], "--elo1:"),
        ([*BASE, "--max-games", "1"], "--max-games: must be at least 2"),
        ([*BASE, "--table-size", "3", "--max-games", "2"], "--max-games: must be at least 3"),
        ([*BASE[:5], "exec: "], "--baseline: 'exec:' names no command"),
        ([*BASE[:5], "exec:/no/such/bot"], "--baseline: 'exec:/no/such/bot' cannot start"),
        ([*BASE[:5], PYTHON_EXAMPLE, "--move-seconds", "0"], "--move-seconds: must be more"),
        (["--game", "beggar", "--candidate", "exec:x", "--baseline", "turner"], "--candidate:"),
    ],
)
def test_a_bad_argument_exits_2_with_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    err = refused(capsys, *argv)

    assert err.startswith(f"cardarena: error: {named}"), err


def test_an_interrupted_evaluation_reports_the_pairs_it_finished() -> None:
    request = check(Evaluation("shithead", "classic", "heuristic", "random", max_games=100))

    def interrupt(games: int, status: sprt.Status) -> None:
        if games == 6:
            raise KeyboardInterrupt

    outcome = evaluate(request, interrupt)

    assert (outcome.interrupted, outcome.verdict, outcome.games) == (True, "inconclusive", 6)
    assert sum(outcome.counts) == outcome.status.units == 3
    assert report_lines(outcome)[0] == "inconclusive: interrupted after 6 games, no bound crossed"
