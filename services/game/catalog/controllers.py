"""REST v1 catalogue: the games this service hosts (`shared.catalog`), public and cacheable, so
that pages and clients list games from it rather than by hand."""

from __future__ import annotations

from litestar import Controller, get
from litestar.datastructures import CacheControlHeader

from services.game.catalog.schemas import CatalogGame, GameCatalog
from services.game.http.pipeline.problems import responses
from shared.catalog import game_names, get_game

CATALOG_MAX_AGE_S = 300
"""How long a client or a cache may keep the catalogue (it changes only with a deployment)."""


class CatalogController(Controller):
    """The hosted games."""

    path = "/v1/catalog"
    tags = ("catalog",)

    @get(
        "",
        operation_id="getCatalog",
        summary="List the hosted games",
        description=(
            "Every game this service hosts, sorted by name: its name and title, the seats it"
            " takes, its default ruleset and presets, whether it has decisions (a game"
            " without them is never rated) and its built-in bots. Public; a client may cache"
            " it for the `max-age` of its `Cache-Control` (it changes only with a deployment)."
        ),
        sync_to_thread=False,
        cache_control=CacheControlHeader(max_age=CATALOG_MAX_AGE_S, public=True),
        responses=responses(503),
    )
    def read(self) -> GameCatalog:
        """Returns every hosted game."""
        return GameCatalog([CatalogGame.of(get_game(name)) for name in game_names()])
