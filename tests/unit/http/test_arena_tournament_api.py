"""The arena format through the API (embedded default): create it, join it late and withdraw
from it with a bot's own token or the admin key, and every refusal names its field or rule
and changes nothing. Its entrants are external bots, so no game plays by itself here."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ADMIN, KEY, Client, bearer, forbidden, problem, register, unauthorized

pytestmark = pytest.mark.service(admin_key=KEY)


def arena_body(*bots: str, **changes: Any) -> dict[str, Any]:
    """Returns an arena of Shithead at tables of two for 60 seconds."""
    return {
        "game": "shithead",
        "entrants": [{"bot": bot} for bot in bots],
        "table_size": 2,
        "format": "arena",
        "duration_seconds": 60,
        "seed": "arena",
        **changes,
    }


def tokens(client: Client, *names: str) -> dict[str, str]:
    """Registers external Shithead bots; returns each one's token."""
    return {name: register(client, name)["token"] for name in names}


@pytest.fixture
def arena(client: Client) -> tuple[str, dict[str, str]]:
    """Returns a running arena of three external bots (one waits) and the tokens of those and
    of a fourth bot, `dee`, not entered."""
    keys = tokens(client, "ann", "bob", "cid", "dee")
    created = client.post("/v1/tournaments", json=arena_body("ann", "bob", "cid"), headers=ADMIN)
    assert created.status_code == 201, created.text
    return created.json()["tournament_id"], keys


def test_an_arena_is_created_running_with_its_end_and_its_first_pairing(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, _ = arena
    body = client.get(f"/v1/tournaments/{tournament_id}").json()
    assert body["status"] == "running"
    assert body["definition"]["duration_seconds"] == 60
    assert body["started_at"] < body["ends_at"]
    (pairing,) = body["rounds"]
    assert len(pairing["games"]) == 1
    standings = client.get(f"/v1/tournaments/{tournament_id}/standings").json()
    assert standings["order"] == ["points", "wins", "sonneborn_berger", "lot"]


def test_a_bot_joins_itself_with_its_token_and_is_paired_with_the_one_waiting(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, keys = arena
    joined = client.post(f"/v1/tournaments/{tournament_id}/entrants", headers=bearer(keys["dee"]))
    assert joined.status_code == 201, joined.text
    body = joined.json()
    assert body["entrants"][-1] == "dee@1"
    latest = body["rounds"][-1]["games"][0]["entrants"]
    assert 3 in latest


def test_the_admin_enters_a_built_in_strategy(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, _ = arena
    url = f"/v1/tournaments/{tournament_id}/entrants"
    joined = client.post(url, json={"bot": "heuristic", "version": "7"}, headers=ADMIN)
    assert joined.status_code == 201, joined.text
    assert joined.json()["entrants"][-1] == "heuristic@7"


def test_a_join_refused_names_its_field_or_rule_and_changes_nothing(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, keys = arena
    url = f"/v1/tournaments/{tournament_id}/entrants"
    before = client.get(f"/v1/tournaments/{tournament_id}").json()
    twice = client.post(url, headers=bearer(keys["ann"]))
    assert problem(twice, 422, "invalid-request")["field"] == "bot"
    unknown = client.post(url, json={"bot": "genius"}, headers=ADMIN)
    assert problem(unknown, 422, "invalid-request")["field"] == "bot"
    nameless = client.post(url, json={}, headers=ADMIN)
    assert problem(nameless, 422, "invalid-request")["field"] == "bot"
    forbidden(client.post(url, json={"bot": "ann"}, headers=bearer(keys["dee"])))
    unauthorized(client.post(url, json={"bot": "dee"}))
    assert client.post(url, json={"bot": "dee", "colour": 1}, headers=ADMIN).status_code == 400
    assert client.get(f"/v1/tournaments/{tournament_id}").json() == before
    problem(client.post("/v1/tournaments/nope/entrants", headers=ADMIN), 404)


def test_a_withdrawal_of_no_entrant_number_is_422_naming_it_and_of_no_tournament_404(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, _ = arena
    before = client.get(f"/v1/tournaments/{tournament_id}").json()
    for bad in ("x", "-1", "1.0", "1234567", "99"):
        gone = client.delete(f"/v1/tournaments/{tournament_id}/entrants/{bad}", headers=ADMIN)
        assert problem(gone, 422, "invalid-request")["field"] == "entrant", bad
    missing = client.delete("/v1/tournaments/%00/entrants/%00", headers=ADMIN)
    assert problem(missing, 404)["field"] == "tournament_id"
    assert client.get(f"/v1/tournaments/{tournament_id}").json() == before


def test_no_join_nor_withdrawal_once_the_arena_is_over_or_for_another_format(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, keys = arena
    cancelled = client.post(f"/v1/tournaments/{tournament_id}/cancel", headers=ADMIN)
    assert cancelled.status_code == 200
    late = client.post(f"/v1/tournaments/{tournament_id}/entrants", headers=bearer(keys["dee"]))
    assert problem(late, 409, "tournament-over")["field"] == "tournament_id"
    gone = client.delete(f"/v1/tournaments/{tournament_id}/entrants/0", headers=ADMIN)
    assert problem(gone, 409, "tournament-over")["field"] == "tournament_id"
    robin = {
        "game": "autobus",
        "entrants": [{"bot": "random"}, {"bot": "heuristic"}],
        "table_size": 2,
    }
    other = client.post("/v1/tournaments", json=robin, headers=ADMIN).json()["tournament_id"]
    refused = client.post(
        f"/v1/tournaments/{other}/entrants", json={"bot": "random", "version": "2"}, headers=ADMIN
    )
    assert problem(refused, 422, "invalid-request")["field"] == "format"


def test_a_bot_withdraws_itself_and_is_never_paired_again(
    client: Client, arena: tuple[str, dict[str, str]]
) -> None:
    tournament_id, keys = arena
    url = f"/v1/tournaments/{tournament_id}/entrants"
    forbidden(client.delete(f"{url}/0", headers=bearer(keys["bob"])))
    forbidden(client.delete(f"{url}/0", headers=bearer(keys["dee"])))
    unauthorized(client.delete(f"{url}/0"))
    out = client.delete(f"{url}/0", headers=bearer(keys["ann"]))
    assert out.status_code == 200, out.text
    assert out.json()["withdrawn"] == [0]
    again = client.delete(f"{url}/0", headers=ADMIN)
    assert again.json() == out.json()
    missing = client.delete(f"{url}/9", headers=ADMIN)
    assert problem(missing, 422, "invalid-request")["field"] == "entrant"
    rejoin = client.post(url, headers=bearer(keys["ann"]))
    assert problem(rejoin, 422, "invalid-request")["field"] == "bot"
    client.post(url, headers=bearer(keys["dee"]))
    body = client.get(f"/v1/tournaments/{tournament_id}").json()
    assert all(0 not in game["entrants"] for game in body["rounds"][-1]["games"])


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"duration_seconds": 59}, "duration_seconds"),
        ({"duration_seconds": 86_401}, "duration_seconds"),
        ({"rounds": 4}, "rounds"),
        ({"games_per_table": 3}, "games_per_table"),
        ({"format": "swiss"}, "duration_seconds"),
    ],
)
def test_a_bad_arena_definition_is_422_naming_the_field(
    client: Client, changes: dict[str, Any], field: str
) -> None:
    response = client.post(
        "/v1/tournaments", json=arena_body("random", "heuristic", **changes), headers=ADMIN
    )
    assert problem(response, 422, "invalid-request")["field"] == field


def test_an_arena_without_a_duration_is_422_and_a_null_one_400(client: Client) -> None:
    body = arena_body("random", "heuristic")
    del body["duration_seconds"]
    response = client.post("/v1/tournaments", json=body, headers=ADMIN)
    assert problem(response, 422, "invalid-request")["field"] == "duration_seconds"
    null = client.post("/v1/tournaments", json={**body, "duration_seconds": None}, headers=ADMIN)
    assert problem(null, 400, "bad-request")["field"] == "duration_seconds"
