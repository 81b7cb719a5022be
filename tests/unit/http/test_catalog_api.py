"""GET /v1/catalog: every hosted game, public and cacheable, a test's own game included."""

from __future__ import annotations

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from shared import catalog
from shared.catalog import game_names, get_game
from shared.store.memory import InMemoryEventStore
from tests.support.api import KEY, app_client
from tests.support.toy_game import HIGH_CARD

pytestmark = pytest.mark.service(admin_key=KEY)


def test_the_catalogue_lists_every_hosted_game_with_its_seats_rulesets_and_decisions(
    client: TestClient[Litestar],
) -> None:
    response = client.get("/v1/catalog")  # no credentials: the catalogue is public
    assert response.status_code == 200
    games = response.json()["games"]
    assert [game["name"] for game in games] == game_names()
    for game in games:
        spec = get_game(game["name"])
        assert game["title"] == spec.title
        assert (game["min_players"], game["max_players"]) == (spec.min_players, spec.max_players)
        assert game["has_decisions"] is spec.has_decisions
        assert game["ruleset"] == msgspec.to_builtins(spec.ruleset_type())
        assert sorted(game["presets"]) == sorted(spec.presets)
        assert game["bots"] == list(spec.bots)
    beggar = next(game for game in games if game["name"] == "beggar")
    assert beggar["has_decisions"] is False


def test_the_catalogue_may_be_cached_by_anyone(client: TestClient[Litestar]) -> None:
    cache = client.get("/v1/catalog").headers["cache-control"]
    assert "public" in cache
    assert "max-age=300" in cache


def test_a_game_hosted_through_the_catalogue_is_listed_without_a_line_of_the_service() -> None:
    with catalog.hosting(HIGH_CARD), app_client(InMemoryEventStore()) as served:
        games = {game["name"]: game for game in served.get("/v1/catalog").json()["games"]}
    toy = games[HIGH_CARD.name]
    assert toy["title"] == "High card"
    assert (toy["min_players"], toy["max_players"]) == (2, 4)
    assert toy["has_decisions"] is True
    assert toy["ruleset"] == {"cards": 2}


def test_the_catalogue_is_in_the_openapi_document(client: TestClient[Litestar]) -> None:
    document = client.get("/schema/openapi.json").json()
    operation = document["paths"]["/v1/catalog"]["get"]
    assert operation["operationId"] == "getCatalog"
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/GameCatalog"}
    assert "CatalogGame" in document["components"]["schemas"]
