"""Definitions that say what they do (issue 30): a name and a description, `games_per_table`
in every format, a warning for a bot version entered twice, standings with their tie-breaks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import Client, problem

BODY: dict[str, Any] = {
    "game": "autobus",
    "entrants": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "heuristic", "version": "2"}],
    "table_size": 2,
    "format": "swiss",
    "rounds": 2,
    "seed": "5",
}


def listed(client: Client, tournament_id: str) -> tuple[str, str | None]:
    """Returns the name and description the list of tournaments (`listTournaments`) answers
    for the tournament."""
    answer = client.get("/v1/tournaments")
    assert answer.status_code == 200, answer.text
    (line,) = [t for t in answer.json()["tournaments"] if t["tournament_id"] == tournament_id]
    return line["name"], line["description"]


def test_a_tournament_without_a_name_is_named_after_its_game_and_format(client: Client) -> None:
    created = client.post("/v1/tournaments", json=BODY)
    assert created.status_code == 201, created.text
    tournament = created.json()
    assert tournament["name"] == "Hospodský autobus Swiss"
    assert tournament["description"] is None
    assert "name" not in tournament["definition"]  # left out, it is not stored
    assert tournament["warnings"] == []
    assert listed(client, tournament["tournament_id"]) == ("Hospodský autobus Swiss", None)


def test_a_name_and_a_description_show_in_the_answers(client: Client) -> None:
    body = {**BODY, "name": "Friday cup", "description": "Heuristic against its next version."}
    tournament = client.post("/v1/tournaments", json=body).json()
    assert (tournament["name"], tournament["description"]) == (body["name"], body["description"])
    again = client.get(f"/v1/tournaments/{tournament['tournament_id']}").json()
    assert (again["name"], again["description"]) == (body["name"], body["description"])
    assert listed(client, tournament["tournament_id"]) == (body["name"], body["description"])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": "   "}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"description": "\t"}, "description"),
        ({"description": "x" * 2001}, "description"),
    ],
)
def test_a_blank_or_too_long_name_or_description_is_422_naming_it(
    client: Client, changes: dict[str, Any], field: str
) -> None:
    refused = problem(client.post("/v1/tournaments", json={**BODY, **changes}), 422)
    assert refused["field"] == field


def test_the_longest_name_and_description_are_taken(client: Client) -> None:
    body = {**BODY, "name": "n" * 100, "description": "d" * 2000}
    assert client.post("/v1/tournaments", json=body).status_code == 201


@pytest.mark.parametrize("fmt", ["swiss", "knockout", "round_robin"])
def test_games_per_table_is_played_at_every_table_with_the_seats_rotating(
    client: Client, fmt: str
) -> None:
    entrants = [{"bot": "heuristic", "version": str(v)} for v in range(4)]
    body = {**BODY, "format": fmt, "entrants": entrants, "games_per_table": 3}
    tournament = client.post("/v1/tournaments", json=body).json()
    assert tournament["status"] == "finished"
    for rnd in tournament["rounds"]:
        tables: dict[frozenset[int], list[list[int]]] = {}
        for game in rnd["games"]:
            tables.setdefault(frozenset(game["entrants"]), []).append(game["entrants"])
        for seatings in tables.values():
            assert len(seatings) == 3
            first = seatings[0]
            assert seatings[1] == first[1:] + first[:1]  # the seats rotate
    if fmt == "swiss":
        assert tournament["games_played"] == 2 * 2 * 3  # rounds x tables x games per table


def test_a_bot_version_entered_twice_is_warned_at_creation_and_on_reading(client: Client) -> None:
    body = {**BODY, "entrants": [{"bot": "heuristic"}, {"bot": "random"}, {"bot": "heuristic"}]}
    created = client.post("/v1/tournaments", json=body).json()
    (warning,) = created["warnings"]
    assert warning["code"] == "version-entered-twice"
    assert "heuristic@1" in warning["message"]
    assert "not rated" in warning["message"]
    read = client.get(f"/v1/tournaments/{created['tournament_id']}").json()
    assert read["warnings"] == created["warnings"]


def test_standings_answer_rank_tiebreaks_and_their_order(client: Client) -> None:
    tournament = client.post("/v1/tournaments", json={**BODY, "rounds": 1}).json()
    answer = client.get(f"/v1/tournaments/{tournament['tournament_id']}/standings").json()
    assert answer["order"] == [
        "points",
        "buchholz",
        "median_buchholz",
        "sonneborn_berger",
        "direct_encounter",
        "lot",
    ]
    lines = answer["standings"]
    assert [line["rank"] for line in lines] == [1, 2, 3]
    assert sorted(line["tiebreaks"]["lot"] for line in lines) == [1, 2, 3]
    assert all(line["tiebreaks"]["buchholz"] is not None for line in lines)
    (bye,) = tournament["rounds"][0]["byes"]
    (idle,) = [line for line in lines if line["entrant"] == bye]
    assert idle["games"] == 0
    assert (idle["mean_place"], idle["win_rate_low"], idle["win_rate_high"]) == (None, None, None)
    assert lines[0]["entrant"] == tournament["winner"]
