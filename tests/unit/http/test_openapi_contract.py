"""The OpenAPI document is the whole contract: it validates, every game's actions, views and
events are schemas with discriminated unions, no body keeps a bare object, the problem types
each answer lists exist and include what the service really answers, every event name a
stream sends has a schema, and the webhook call is in `webhooks`."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from litestar import Litestar
from litestar.testing import TestClient
from openapi_spec_validator import validate

from services.game.http.openapi.document import is_bare_object, walk_schemas
from services.game.http.openapi.operations import illegal_action_rules
from services.game.http.pipeline.problems import STATUSES, TITLES, TYPE_PREFIX
from services.game.streams.notices import CHALLENGE_EVENTS, TOURNAMENT_EVENTS
from services.game.streams.sse_events import BOT_STREAM, GAME_STREAM, TOURNAMENT_STREAM
from services.game.streams.tournament_feed import EVENTS as FEED_EVENTS
from shared.catalog import game_names, get_game
from shared.messages.common import PLATFORM_ACTIONS

Document = dict[str, Any]
REF = "#/components/schemas/"
ROOT = Path(__file__).resolve().parents[3]


def schemas(document: Document) -> dict[str, Any]:
    found: dict[str, Any] = document["components"]["schemas"]
    return found


def operation(document: Document, operation_id: str) -> dict[str, Any]:
    return next(
        op
        for item in document["paths"].values()
        for op in item.values()
        if op["operationId"] == operation_id
    )


def test_the_document_validates_as_openapi_3_1(document: Document) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_a_posted_action_is_any_game_s_union_discriminated_by_type(document: Document) -> None:
    found = schemas(document)
    assert found["PostAction"]["properties"]["action"]["$ref"] == f"{REF}GameAction"
    arms = [arm["$ref"] for arm in found["GameAction"]["anyOf"]]
    assert arms == [f"{REF}{name.title()}Action" for name in game_names()]
    for name in game_names():
        spec, union = get_game(name), found[f"{name.title()}Action"]
        mapping = union["discriminator"]["mapping"]
        assert union["discriminator"]["propertyName"] == "type"
        assert sorted(mapping.values()) == sorted(arm["$ref"] for arm in union["oneOf"])
        for tag, ref in mapping.items():
            member = found[ref.removeprefix(REF)]
            assert member["properties"]["type"]["enum"] == [tag]
        platform = {cls.__struct_config__.tag for cls in PLATFORM_ACTIONS}
        assert (platform <= set(mapping)) == spec.has_decisions, name


def test_classes_two_games_share_a_name_of_get_their_game_s_prefix(document: Document) -> None:
    found = schemas(document)
    for name in ("ShitheadGameStarted", "AutobusGameStarted", "BeggarGameStarted"):
        assert found[name]["properties"]["type"]["enum"] == ["GameStarted"]
    assert "GameStarted" not in found
    # The service's own `Ready` (readiness) keeps its name; Shithead's action is prefixed.
    assert "degraded" in found["Ready"]["properties"]
    assert found["ShitheadReady"]["properties"]["type"]["enum"] == ["Ready"]


def test_every_game_field_of_a_body_is_typed_and_no_bare_object_is_left(
    document: Document,
) -> None:
    found = schemas(document)
    typed = {
        ("SeatView", "view"): "GameView",
        ("Game", "view"): "GameView",
        ("Replay", "ruleset"): "GameRuleset",
        ("EventItem", "data"): "GameEvent",
        ("WebhookTurn", "view"): "GameView",
        ("DefaultActionPlayed", "action"): "GameAction",
        ("GameCreated", "ruleset"): "GameRuleset",
    }
    for (name, prop), union in typed.items():
        typing = found[name]["properties"][prop]
        arms = typing.get("oneOf", [typing])  # an optional field: a oneOf of its one type
        assert [arm["$ref"] for arm in arms] == [f"{REF}{union}"], (name, prop)
    items = found["SeatView"]["properties"]["legal_actions"]["items"]
    assert items["$ref"] == f"{REF}GameAction"
    assert found["Turn"]["properties"]["legal_actions"]["items"]["$ref"] == f"{REF}GameAction"
    for name, prop in (("Replay", "state"), ("Replay", "view")):
        arms = found[name]["properties"][prop]["oneOf"]
        assert {"type": "null"} in arms, (name, prop)
        assert any("$ref" in arm for arm in arms), (name, prop)
    bare = [
        (path, key)
        for path, schema in enumerate(walk_schemas(document))
        for key, prop in schema["properties"].items()
        if is_bare_object(prop) or is_bare_object(prop.get("items"))
    ]
    assert bare == []


def test_every_game_has_its_view_state_ruleset_and_events_as_schemas(document: Document) -> None:
    found = schemas(document)
    views = {arm["$ref"] for arm in found["GameView"]["anyOf"]}
    assert len(views) == len(game_names())
    events = [arm["$ref"] for arm in found["GameEvent"]["anyOf"]]
    assert events == [f"{REF}{name.title()}Event" for name in game_names()]
    for name in game_names():
        mapping = found[f"{name.title()}Event"]["discriminator"]["mapping"]
        assert {"GameCreated", "GameFinished", "TurnTimedOut", "WebhookFailed"} <= set(mapping)


def test_cards_and_ranks_refer_to_their_documented_schemas(document: Document) -> None:
    found = schemas(document)
    assert re.fullmatch(found["Card"]["pattern"], "TD")
    assert re.fullmatch(found["Card"]["pattern"], "??")
    assert not re.fullmatch(found["Card"]["pattern"], "10H")
    cards = found["PlayCards"]["properties"]["cards"]["items"]
    assert cards["$ref"] == f"{REF}Card"
    assert found["PlayStarted"]["properties"]["rank"]["anyOf"][0]["$ref"] == f"{REF}Rank"
    assert found["CardPlayed"]["properties"]["rank"]["$ref"] == f"{REF}RankNumber"


def test_status_fields_are_enums(document: Document) -> None:
    found = schemas(document)
    assert found["Game"]["properties"]["status"]["enum"][0] == "playing"
    assert set(found["Tournament"]["properties"]["status"]["enum"]) == {
        "running",
        "finished",
        "cancelled",
    }
    assert "expired" in found["Challenge"]["properties"]["status"]["enum"]
    open_strings = [
        (name, prop)
        for name, schema in found.items()
        for prop, typed in schema.get("properties", {}).items()
        if prop == "status" or prop.endswith("_status")
        for arm in [typed, *typed.get("oneOf", []), *typed.get("anyOf", [])]
        if arm.get("type") == "string" and "enum" not in arm and "const" not in arm
    ]
    assert open_strings == []


@pytest.mark.parametrize("game", game_names())
def test_a_game_played_to_its_end_has_a_status_of_the_enum(
    client: TestClient[Litestar], document: Document, game: str
) -> None:
    created = client.post("/v1/games", json={"game": game, "players": 2, "seed": 11}).json()
    statuses = schemas(document)["Game"]["properties"]["status"]["enum"]
    for _ in range(500):
        status = client.get(f"/v1/games/{created['game_id']}").json()["status"]
        if status != "playing":
            break
    assert status in statuses


def test_every_problem_answered_in_the_code_is_a_listed_type_with_its_status() -> None:
    answered = re.compile(r'problem\(\s*(\d+),\s*"([a-z-]+)"')
    found = {
        (int(status), slug)
        for path in (ROOT / "services").rglob("*.py")
        for status, slug in answered.findall(path.read_text())
    }
    assert len(found) > 20
    for status, slug in found:
        assert STATUSES.get(slug) == status, slug
        assert slug in TITLES, slug


def test_every_listed_problem_type_exists(document: Document) -> None:
    for item in document["paths"].values():
        for op in item.values():
            for status, response in op["responses"].items():
                for listed in response.get("x-problem-types", []):
                    slug = listed.removeprefix(TYPE_PREFIX)
                    assert STATUSES[slug] == int(status), (op["operationId"], listed)


def _listed(document: Document, operation_id: str, status: int) -> list[str]:
    listed: list[str] = operation(document, operation_id)["responses"][str(status)][
        "x-problem-types"
    ]
    return listed


def test_real_error_answers_carry_a_type_their_operation_lists(
    client: TestClient[Litestar], document: Document
) -> None:
    game = client.post("/v1/games", json={"game": "shithead", "players": 2, "seed": 2}).json()
    seat_zero = {"seat": 0, "expected_version": game["version"]}
    illegal = {**seat_zero, "action": {"type": "PlayCards", "cards": ["AS"]}}
    samples = [
        ("postAction", client.post(f"/v1/games/{game['game_id']}/actions", json=illegal)),
        ("getGame", client.get("/v1/games/no-such-game")),
        ("createGame", client.post("/v1/games", json={"game": "shithead", "colour": 1})),
        ("createGame", client.post("/v1/games", json={"game": "chess", "players": 2})),
        ("getTournament", client.get("/v1/tournaments/no-such-tournament")),
        ("postAction", client.post(f"/v1/games/{game['game_id']}/actions", json={})),
    ]
    for operation_id, response in samples:
        body = response.json()
        assert body["type"] in _listed(document, operation_id, response.status_code), body
    rule = samples[0][1].json()["rule"]
    rules = operation(document, "postAction")["responses"]["422"]["x-illegal-action-rules"]
    assert rule in rules["shithead"] or rule in rules["platform"]


def test_illegal_action_rules_are_read_from_every_engine() -> None:
    rules = illegal_action_rules()
    assert set(rules) == {"platform", *game_names()}
    assert {"not_your_turn", "card_not_held"} <= set(rules["shithead"])
    assert "joker_rank" in rules["autobus"]
    assert "bot_seat" in rules["platform"]


def test_every_event_a_stream_sends_is_in_the_registry_and_the_document(
    document: Document,
) -> None:
    # The notices name their event in a variable, one of notices' two tuples.
    names: set[str] = {*CHALLENGE_EVENTS, *TOURNAMENT_EVENTS}
    for path in (ROOT / "services/game/streams").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "sse_event":
                first = node.args[0]
                if path.name == "notices.py" and isinstance(first, ast.Name):
                    continue
                if path.name == "tournament_stream.py":  # names from tournament_feed.EVENTS
                    continue
                assert isinstance(first, ast.Constant), f"{path.name}: a computed event name"
                assert isinstance(first.value, str)
                names.add(first.value)
    assert names == set(GAME_STREAM) | set(BOT_STREAM)
    assert list(TOURNAMENT_STREAM) == list(FEED_EVENTS)
    for operation_id, registry in (
        ("streamGame", GAME_STREAM),
        ("streamBotEvents", BOT_STREAM),
        ("streamTournament", TOURNAMENT_STREAM),
    ):
        content = operation(document, operation_id)["responses"]["200"]["content"]
        arms = content["text/event-stream"]["schema"]["oneOf"]
        assert [arm["properties"]["event"]["const"] for arm in arms] == list(registry)
        for arm in arms:
            data = arm["properties"]["data"]
            refs = [data.get("$ref")] if "$ref" in data else [a["$ref"] for a in data["oneOf"]]
            assert all(ref.removeprefix(REF) in schemas(document) for ref in refs)


def test_the_webhook_call_and_its_answer_are_in_webhooks(document: Document) -> None:
    call = document["webhooks"]["webhookTurn"]["post"]
    body = call["requestBody"]["content"]["application/json"]["schema"]
    assert body["$ref"] == f"{REF}WebhookTurn"
    answer = call["responses"]["200"]["content"]["application/json"]["schema"]
    action = schemas(document)[answer["$ref"].removeprefix(REF)]["properties"]["action"]
    assert action["$ref"] == f"{REF}GameAction"
    headers = {p["name"] for p in call["parameters"]}
    assert headers == {"X-Cardarena-Timestamp", "X-Cardarena-Signature"}


def test_a_real_seat_view_and_event_page_validate_against_their_schemas(
    client: TestClient[Litestar], document: Document
) -> None:
    for name in game_names():
        game = client.post("/v1/games", json={"game": name, "players": 2, "seed": 4}).json()
        view = client.get(f"/v1/games/{game['game_id']}/view", params={"seat": 0}).json()
        root = {**schemas(document)["SeatView"], "components": document["components"]}
        errors = list(Draft202012Validator(root).iter_errors(view))
        assert errors == [], (name, [e.message for e in errors][:3])
        events = client.get(f"/v1/games/{game['game_id']}/events").json()
        root = {**schemas(document)["EventPage"], "components": document["components"]}
        errors = list(Draft202012Validator(root).iter_errors(events))
        assert errors == [], (name, [e.message for e in errors][:3])


def test_every_property_of_every_schema_has_a_description(document: Document) -> None:
    undescribed = [
        key
        for schema in walk_schemas(document)
        for key, prop in schema["properties"].items()
        if not prop.get("description")
    ]
    assert len(walk_schemas(document)) > 100
    assert undescribed == []


def _validate(document: Document, schema: dict[str, Any], body: Any) -> list[str]:
    """Returns the errors of `body` against `schema` (refs into the document's components)."""
    root = {**schema, "components": document["components"]}
    return [error.message for error in Draft202012Validator(root).iter_errors(body)]


def test_the_main_operations_have_examples_that_validate_against_their_schemas(
    document: Document,
) -> None:
    main = [
        "createGame",
        "postAction",
        "getSeatView",
        "listGameEvents",
        "registerBot",
        "issueChallenge",
        "createTournament",
    ]
    for operation_id in main:
        op = operation(document, operation_id)
        if "requestBody" in op:
            body = op["requestBody"]["content"]["application/json"]
            assert _validate(document, body["schema"], body["example"]) == [], operation_id
        answered = [
            content
            for status, response in op["responses"].items()
            if status.startswith("2")
            for content in response.get("content", {}).values()
            if "example" in content
        ]
        assert answered, f"{operation_id} has no example answer"
        for content in answered:
            errors = _validate(document, content["schema"], content["example"])
            assert errors == [], (operation_id, errors[:3])


def test_a_broken_example_would_not_validate(document: Document) -> None:
    body = operation(document, "postAction")["requestBody"]["content"]["application/json"]
    broken = {**body["example"], "action": {"type": "Swap", "hand_card": "10H"}}
    assert _validate(document, body["schema"], broken) != []


def test_problem_types_are_scoped_to_the_handlers_that_answer_them(document: Document) -> None:
    challenge = f"{TYPE_PREFIX}challenge-refused"
    assert challenge in _listed(document, "issueChallenge", 403)
    assert challenge not in _listed(document, "getGame", 403)
    assert f"{TYPE_PREFIX}game-running" in _listed(document, "replayGame", 403)
    assert f"{TYPE_PREFIX}game-running" not in _listed(document, "getGame", 403)
    assert f"{TYPE_PREFIX}unknown-tournament" not in _listed(document, "getGame", 404)
    # unknown-route: a NotFoundException any handler may raise (the app's handler answers it).
    assert _listed(document, "getLeaderboard", 404) == [
        f"{TYPE_PREFIX}unknown-game",
        f"{TYPE_PREFIX}unknown-route",
    ]
