"""REST v1 bots: register a built-in strategy under a name and a version label, list them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import msgspec
from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.exceptions import NotFoundException
from litestar.params import JSONBody, PathParameter, QueryParameter

from services.game.problems import responses
from shared.games.base import game_names
from shared.handlers import InvalidRequest
from shared.registry import BotSpec, RegisteredBot, register_bot, registered_bots
from shared.store.port import EventStore

GameFilter = Annotated[
    str | None,
    QueryParameter(description="Only the bots of this game.", required=False, max_length=40),
]


class Bot(msgspec.Struct, frozen=True):
    """A registered bot; ratings and leaderboards follow its `key` (`name@version`)."""

    name: str
    version: str
    key: str
    game: str
    strategy: str
    description: str
    registered_at: str

    @classmethod
    def of(cls, bot: RegisteredBot) -> Bot:
        """Returns the bot's representation."""
        return cls(
            bot.name,
            bot.version,
            bot.key,
            bot.game,
            bot.strategy,
            bot.description,
            bot.registered_at,
        )


class Bots(msgspec.Struct, frozen=True):
    """Registered bots, in registration order."""

    bots: list[Bot]


class BotsController(Controller):
    """The bot registry."""

    path = "/v1/bots"
    tags = ("bots",)

    @post(
        operation_id="registerBot",
        summary="Register a built-in strategy under a name and a version label",
        description=(
            "A registered bot plays one game with one of its built-in strategies; tournaments "
            "enter it by name and version, and ratings are kept per `name@version`. Registering "
            "the same bot again returns it (200); the same name and version with another game, "
            "strategy or description is refused (422, field `version`)."
        ),
        sync_to_thread=True,
        status_code=201,
        responses=responses(400, 422, 503),
    )
    def register(
        self, store: NamedDependency[EventStore], data: JSONBody[BotSpec]
    ) -> Response[Bot]:
        now = datetime.now(UTC).isoformat(timespec="milliseconds")
        bot, new = register_bot(store, data, registered_at=now)
        headers = {"Location": f"/v1/bots/{bot.name}/{bot.version}"}
        return Response(Bot.of(bot), status_code=201 if new else 200, headers=headers)

    @get(
        operation_id="listBots",
        summary="The registered bots",
        sync_to_thread=True,
        responses=responses(400, 503),
    )
    def list_bots(self, store: NamedDependency[EventStore], game: GameFilter = None) -> Bots:
        if game is not None and game not in game_names():
            raise InvalidRequest("game", f"unknown game {game!r}")
        bots = [Bot.of(bot) for bot in registered_bots(store) if game in (None, bot.game)]
        return Bots(bots)

    @get(
        "/{name:str}/{version:str}",
        operation_id="getBot",
        summary="One registered bot",
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        name: Annotated[str, PathParameter(description="The bot's name.")],
        version: Annotated[str, PathParameter(description="The bot's version label.")],
    ) -> Bot:
        for bot in registered_bots(store):
            if (bot.name, bot.version) == (name, version):
                return Bot.of(bot)
        raise NotFoundException(f"no bot {name}@{version} is registered")
