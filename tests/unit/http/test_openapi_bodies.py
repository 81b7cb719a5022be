"""The OpenAPI document states what the request bodies and parameters accept: no unknown
fields where the service refuses them, the closed sets (games, presets, strategies) as
enums, and the 0 bounds of optional numbers; and the service still accepts what it did."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import pytest
from litestar import Litestar, post
from litestar.params import JSONBody
from litestar.testing import TestClient

from services.game.http.openapi.openapi import AcceptedValues, preset_names, strategy_names
from shared.catalog import game_names

Document = dict[str, Any]


def component(document: Document, reference: dict[str, Any]) -> dict[str, Any]:
    """Returns the component schema a `$ref` (or a `oneOf` of one and null) points to."""
    ref = next(arm for arm in reference.get("oneOf", [reference]) if "$ref" in arm)["$ref"]
    found: dict[str, Any] = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    return found


def parameter(document: Document, path: str, name: str) -> dict[str, Any]:
    """Returns the schema of the GET parameter `name` of `path`."""
    parameters = document["paths"][path]["get"]["parameters"]
    found: dict[str, Any] = next(p for p in parameters if p["name"] == name)["schema"]
    return found


def string_arm(schema: dict[str, Any]) -> dict[str, Any]:
    """Returns `schema` if it is a string's, else its string arm."""
    return next(arm for arm in schema.get("oneOf", [schema]) if arm.get("type") == "string")


def test_every_json_request_body_and_its_parts_refuse_unknown_fields(document: Document) -> None:
    bodies = [
        operation["requestBody"]["content"]["application/json"]["schema"]
        for path in document["paths"].values()
        for operation in path.values()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    ]
    assert len(bodies) >= 8
    for body in bodies:
        schema = component(document, body)
        assert schema["additionalProperties"] is False, schema["title"]
    parts = ["SeatSpec", "Clock", "Entrant", "Schedule", "Opponent"]
    for name in parts:
        assert document["components"]["schemas"][name]["additionalProperties"] is False, name


def test_a_response_that_may_grow_keeps_its_properties_open(document: Document) -> None:
    assert "additionalProperties" not in document["components"]["schemas"]["Game"]


def test_every_game_field_and_parameter_is_an_enum_of_the_registered_games(
    document: Document,
) -> None:
    schemas = document["components"]["schemas"]
    bodies = ["CreateGame", "TournamentDefinition", "BotSpec", "IssueChallenge", "Game"]
    for name in bodies:
        assert schemas[name]["properties"]["game"]["enum"] == game_names(), name
    for path in ("/v1/bots", "/v1/tournaments", "/v1/leaderboards/{game}"):
        assert string_arm(parameter(document, path, "game"))["enum"] == game_names(), path


def test_a_ruleset_named_by_a_string_is_one_of_the_presets(document: Document) -> None:
    ruleset = document["components"]["schemas"]["CreateGame"]["properties"]["ruleset"]
    assert string_arm(ruleset)["enum"] == preset_names()
    assert {"classic", "holland-kocsma"} <= set(preset_names())
    assert {"$ref": "#/components/schemas/GameRuleset"} in ruleset["oneOf"]


def test_a_strategy_is_one_of_the_built_in_strategies_or_none(document: Document) -> None:
    strategy = document["components"]["schemas"]["BotSpec"]["properties"]["strategy"]
    assert strategy["enum"] == strategy_names()
    assert strategy_names()[0] == ""
    assert {"random", "heuristic", "turner"} <= set(strategy_names())


def test_optional_numbers_bounded_by_zero_document_the_bound(document: Document) -> None:
    players = document["components"]["schemas"]["CreateGame"]["properties"]["players"]
    assert (players["minimum"], players["maximum"]) == (0, 64)
    assert parameter(document, "/v1/games/{game_id}/events", "seat")["minimum"] == 0
    assert parameter(document, "/v1/games/{game_id}/replay", "seat")["minimum"] == 0


def test_the_service_still_refuses_an_unknown_field_as_malformed(
    served: TestClient[Litestar],
) -> None:
    response = served.post("/v1/games", json={"game": "beggar", "players": 2, "colour": "red"})
    assert response.status_code == 400
    assert response.json()["field"] == "colour"


def test_the_service_still_refuses_a_game_outside_the_enum_as_a_bad_value(
    served: TestClient[Litestar],
) -> None:
    response = served.post("/v1/games", json={"game": "chess", "players": 2})
    assert response.status_code == 422
    assert response.json()["field"] == "game"


@pytest.mark.parametrize("game", game_names())
def test_every_game_of_the_enum_is_accepted(served: TestClient[Litestar], game: str) -> None:
    response = served.post("/v1/games", json={"game": game, "players": 2, "seed": 1})
    assert response.status_code == 201, response.text


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    count: Annotated[int, msgspec.Meta(ge=0)] | None = None


class _Open(msgspec.Struct):
    game: str


@post("/strict", sync_to_thread=False)
def _strict(data: JSONBody[_Strict]) -> _Open:
    return _Open(data.game)


def test_the_plugin_completes_a_strict_struct_and_leaves_an_open_one_open() -> None:
    app = Litestar([_strict], plugins=[AcceptedValues()])
    schemas = app.openapi_schema.to_schema()["components"]["schemas"]
    strict = next(schema for name, schema in schemas.items() if name.endswith("_Strict"))
    opened = next(schema for name, schema in schemas.items() if name.endswith("_Open"))
    assert strict["additionalProperties"] is False
    assert strict["properties"]["count"]["minimum"] == 0
    assert strict["properties"]["game"]["enum"] == game_names()
    assert "additionalProperties" not in opened
    assert opened["properties"]["game"]["enum"] == game_names()


def test_an_optional_parameter_is_typed_by_what_is_sent_never_null(document: Document) -> None:
    optional = [
        (path, parameter["name"], parameter["schema"])
        for path, item in document["paths"].items()
        for operation in item.values()
        for parameter in operation.get("parameters", [])
        if not parameter.get("required")
    ]
    assert len(optional) >= 16
    for path, name, schema in optional:
        arms = [schema, *schema.get("oneOf", [])]
        assert {"type": "null"} not in arms, (path, name)
    resume = parameter(document, "/v1/tournaments/{tournament_id}/stream", "Last-Event-ID")
    assert (resume["type"], resume["pattern"][:2]) == ("string", "^(")
    version = parameter(document, "/v1/games/{game_id}/stream", "Last-Event-ID")
    assert (version["type"], version["minimum"], "oneOf" in version) == ("integer", 0, False)
