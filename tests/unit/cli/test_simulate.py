"""`cardarena simulate`: seeded games between built-in bots, tallied per bot name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from services.cli.main import main
from services.cli.simulate import check, seating, simulate
from shared.bots.generic import FirstLegalBot
from shared.catalog import hosting
from shared.games.base import GameSpec
from shared.messages.common import Action, Event, GameCreated, Result


class SeatOrderRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Test-seat-order has nothing to choose."""


class SeatsRanked(Event, frozen=True):
    """The deal of test-seat-order: the game is over at once, seat `i` in place `i + 1`."""

    players: int


def _ranked(state: Result | None, event: Event) -> Result:
    """Returns the result of a test-seat-order game: places in seat order."""
    assert isinstance(event, SeatsRanked)
    return Result("finished", list(range(1, event.players + 1)))


SEAT_ORDER: GameSpec[Result, SeatOrderRules, Result, Action] = GameSpec(
    name="test-seat-order",
    title="Test seat order",
    min_players=2,
    max_players=4,
    has_decisions=False,
    ruleset_type=SeatOrderRules,
    presets={"classic": SeatOrderRules()},
    action_type=Action,
    event_type=GameCreated | SeatsRanked,
    deal=lambda rules, players, seed: SeatsRanked(players),
    evolve=_ranked,
    decide=lambda state, seat, action: [],
    view=lambda state, seat: state,
    legal_actions=lambda state, seat: [],
    to_move=lambda state: [],
    is_over=lambda state: True,
    result=lambda state: state,
    validate=lambda rules, players: None,
    bots={"a": FirstLegalBot(), "b": FirstLegalBot(), "c": FirstLegalBot()},
)
"""A game whose seat alone decides the places: the lower the seat, the better."""


@pytest.fixture(autouse=True)
def _hosted() -> Iterator[None]:
    """Hosts test-seat-order beside the built-in games for each test of this module."""
    with hosting(SEAT_ORDER):
        yield


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Runs `cardarena simulate argv...`; returns the exit code, stdout and stderr."""
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    """Runs `cardarena simulate argv... --json`; returns the one JSON object it printed."""
    code, out, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    report: dict[str, Any] = json.loads(out)
    return report


def test_json_output_is_one_object_with_the_run_its_speed_and_one_entry_per_bot_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "shithead", "--preset", "classic", "--bots", "random,random,random"]
    report = run_json(capsys, *argv, "--games", "4", "--seed", "1")
    assert set(report) == {"game", "preset", "games", "games_per_second", "bots", "forfeits"}
    assert report["forfeits"] == []
    assert (report["game"], report["preset"], report["games"]) == ("shithead", "classic", 4)
    assert report["games_per_second"] > 0
    assert list(report["bots"]) == ["random"]
    assert set(report["bots"]["random"]) == {"games", "wins", "mean_place", "forfeits"}
    assert report["bots"]["random"]["games"] == 12
    assert report["bots"]["random"]["wins"] >= 4
    assert 1 <= report["bots"]["random"]["mean_place"] <= 3


def test_a_beggar_run_tallies_each_bot_name_once_however_many_seats_it_plays(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = run_json(capsys, "--game", "beggar", "--bots", "turner,random,turner", "--games", "5")
    assert report["preset"] == "classic"
    assert list(report["bots"]) == ["random", "turner"]
    assert report["bots"]["random"]["games"] == 5
    assert report["bots"]["turner"]["games"] == 10


def test_an_autobus_run_counts_every_seat_of_every_game(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = run_json(capsys, "--game", "autobus", "--bots", "random,random", "--games", "6")
    assert report["game"] == "autobus"
    assert report["bots"]["random"]["games"] == 12
    assert 1 <= report["bots"]["random"]["mean_place"] <= 2


def test_the_same_seed_gives_the_same_tallies_in_one_process_or_two() -> None:
    request = check("shithead", "classic", ["random", "random", "random"], 6, "7")
    once = simulate(request).to_json()
    again = simulate(request).to_json()
    parallel = simulate(request, processes=2).to_json()
    assert once["bots"] == again["bots"] == parallel["bots"]


def test_seats_rotate_by_the_game_index_so_that_the_luck_of_a_seat_cancels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert seating(["a", "b", "c"], 0) == ["a", "b", "c"]
    assert seating(["a", "b", "c"], 1) == ["c", "a", "b"]
    assert seating(["a", "b", "c"], 4) == ["c", "a", "b"]
    two = run_json(capsys, "--game", "test-seat-order", "--bots", "a,b,c", "--games", "2")
    assert two["bots"] == {
        "a": {"games": 2, "wins": 1, "mean_place": 1.5, "forfeits": 0},
        "b": {"games": 2, "wins": 0, "mean_place": 2.5, "forfeits": 0},
        "c": {"games": 2, "wins": 1, "mean_place": 2.0, "forfeits": 0},
    }
    fair = run_json(capsys, "--game", "test-seat-order", "--bots", "a,b,c", "--games", "9")
    assert all(
        tally == {"games": 9, "wins": 3, "mean_place": 2.0, "forfeits": 0}
        for tally in fair["bots"].values()
    )


def test_the_table_lists_each_bot_once_with_the_games_per_second_and_progress_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "--game", "beggar", "--bots", "turner,random,random", "--games", "6", "--seed", "2"
    )
    assert code == 0
    assert out.count("turner") == 1
    assert out.count("random") == 1
    assert "games per second" in out
    assert "6/6" in err
    assert "6/6" not in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--game", "chess", "--bots", "random,random"], "unknown game 'chess'"),
        (["--game", "shithead", "--preset", "nope", "--bots", "random,random"], "preset"),
        (["--game", "shithead", "--bots", "random,wizard"], "unknown bot 'wizard'"),
        (["--game", "shithead", "--bots", "random"], "2 to 10 players"),
        (["--game", "beggar", "--bots", ",".join(["turner"] * 5)], "2 to 4 players"),
        (["--game", "shithead", "--bots", ",".join(["random"] * 10)], "decks"),
        (["--game", "shithead", "--bots", "random,random", "--games", "0"], "games"),
        (["--game", "shithead", "--bots", "random,random", "--processes", "0"], "processes"),
    ],
)
def test_bad_input_exits_with_code_2_and_one_line_naming_the_fault(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    for extra in ([], ["--json"]):
        code, out, err = run(capsys, *argv, *extra)
        assert (code, out) == (2, "")
        assert err.startswith("cardarena: error: ")
        assert err.count("\n") == 1
        assert message in err
