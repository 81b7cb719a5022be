"""REST v1 bots: register bots (built-in strategies, external clients, webhooks), list them,
rotate and revoke their tokens.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import JSONBody, QueryParameter

from services.game.bots.schemas import Bot, Bots
from services.game.http.params import BotName, BotVersion
from services.game.http.pipeline.auth import BEARER, Access, Caller, Forbidden, Unauthorized
from services.game.http.pipeline.owners import HANDLERS as OWNERS
from services.game.http.pipeline.owners import acting_for, charge_registration, owner, registrar
from services.game.http.pipeline.problems import Problem, check_game_filter, problem, responses
from shared.app.registry import find_bot, register, registered_bots, revoke_token, rotate_token
from shared.model.registry import (
    BotSpec,
    UnknownBot,
)
from shared.store.port import EventStore

GameFilter = Annotated[
    str | None,
    QueryParameter(description="Only the bots of this game.", required=False, max_length=40),
]


def _now() -> str:
    """Returns the current UTC time, ISO 8601 to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _unknown_bot(_: Request[Any, Any, Any], error: UnknownBot) -> Response[Problem]:
    return problem(404, "unknown-bot", str(error))


class BotsController(Controller):
    """The bot registry."""

    path = "/v1/bots"
    tags = ("bots",)
    exception_handlers = {UnknownBot: _unknown_bot, **OWNERS}

    @post(
        operation_id="registerBot",
        summary="Register a bot under a name and a version label",
        description=(
            "Needs the admin key (in open mode, nothing): the bot is the host's; or an account "
            "key (see `createAccount`): the bot is that account's, which it may hold at most "
            "CARDARENA_MAX_BOTS_PER_ACCOUNT versions of (more: 409 `too-many-bots`), under a name"
            " no other account registered (409 `name-taken`, field `name`) that is not reserved "
            "(a built-in strategy's, `host`, `admin`...: 422), at most "
            "CARDARENA_REGISTRATION_RATE_LIMIT registrations per rate window per account and per "
            "client address (429); a suspended account's key is 403 `account-suspended`. A "
            "registered bot plays one game: `kind` `builtin` with one of its `strategy`s, "
            "`external` through the API, or `webhook` at its http(s) `url`. Tournaments enter it "
            "by name and version, and ratings are kept per `name@version`. An external or webhook"
            " bot gets its `token` in this answer only (the registry keeps its SHA-256), a "
            "webhook bot also its `signing_secret`. Registering the same bot again returns it "
            "(200) without them; the same name and version with anything else is refused (422, "
            "field `version`). A webhook `url` that is, or resolves to, a loopback, private, "
            "link-local or otherwise non-global address is refused (422, field `url`) unless the "
            "service allows private webhooks (`CARDARENA_WEBHOOK_ALLOW_PRIVATE`). A `name` or "
            "`version` is 1-63 lower-case letters, digits, `_`, `.` or `-`, starting with a "
            "letter or digit (`me` is reserved); an unknown game or strategy, a `strategy` for a "
            "bot that plays itself, an external or webhook bot of a game without decisions, a "
            "`url` for anything but a webhook or a `description` over 500 characters is 422 "
            "naming the field. A webhook bot cannot answer challenges, so `accept_challenges` "
            "says whose challenges seat it: `host` (the default: only the admin key's), "
            "`registered` (any registered bot's too) or `none`; another kind with it is 422."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[registrar],
        security=BEARER,
        responses={
            200: ResponseSpec(Bot, description="Registered already: the bot, without secrets"),
            **responses(400, 401, 403, 409, 422, 503),
        },
    )
    def register(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        data: JSONBody[BotSpec],
    ) -> Response[Bot]:
        account = owner(caller)
        if acting_for(caller) is not None:
            charge_registration(request, access, account)
        registration = register(
            store,
            data,
            registered_at=_now(),
            allow_private_urls=access.webhook_allow_private,
            account=account,
            max_bots=access.max_bots_per_account,
        )
        access.settle_registry()
        bot = Bot.of(registration.bot, host=True, credentials=registration.credentials)
        headers = {"Location": f"/v1/bots/{bot.name}/{bot.version}"}
        return Response(bot, status_code=201 if registration.new else 200, headers=headers)

    @get(
        operation_id="listBots",
        summary="The registered bots",
        sync_to_thread=True,
        responses=responses(400, 503),
    )
    def list_bots(
        self,
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
        game: GameFilter = None,
    ) -> Bots:
        check_game_filter(game)
        return Bots(
            [
                Bot.of(bot, host=caller.host)
                for bot in registered_bots(store)
                if game in (None, bot.game)
            ]
        )

    @get(
        "/me",
        operation_id="getCallingBot",
        summary="The bot whose token the request carries",
        sync_to_thread=True,
        security=BEARER,
        responses=responses(403, 503),
    )
    def me(self, caller: NamedDependency[Caller]) -> Bot:
        if caller.bot is not None:
            return Bot.of(caller.bot)
        if caller.role in ("admin", "account"):
            raise Forbidden(
                f"this is a bot's resource: send its bot token, not the {caller.role} key"
            )
        raise Unauthorized("send Authorization: Bearer <bot token>")

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
        caller: NamedDependency[Caller],
        name: BotName,
        version: BotVersion,
    ) -> Bot:
        bot = find_bot(store, name, version)
        if bot is None:
            raise UnknownBot(name, version)
        return Bot.of(bot, host=caller.host)

    @post(
        "/{name:str}/{version:str}/token",
        operation_id="rotateBotToken",
        summary="Issue a bot a new token; the old one stops working at once",
        description=(
            "The admin key, or the key of the account the bot belongs to (another account's"
            " bot: 403). The answer holds the new `token` (and, for a webhook bot, "
            "a new `signing_secret`), shown only here. A built-in bot has no token (422, "
            "field `kind`); a suspended account's bot gets none (403)."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[registrar],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def rotate(
        self,
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        name: BotName,
        version: BotVersion,
    ) -> Bot:
        bot, credentials = rotate_token(
            store, name, version, issued_at=_now(), account=acting_for(caller)
        )
        access.settle_registry()
        return Bot.of(bot, host=True, credentials=credentials)

    @delete(
        "/{name:str}/{version:str}/token",
        operation_id="revokeBotToken",
        summary="Revoke a bot's token",
        description=(
            "The admin key, or the key of the account the bot belongs to (another account's"
            " bot: 403): the token stops working at once; a new one comes from "
            "`POST .../token`. A webhook bot keeps its signing secret. Revoking a bot that "
            "has no token changes nothing (204 as well)."
        ),
        sync_to_thread=True,
        guards=[registrar],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def revoke(
        self,
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        name: BotName,
        version: BotVersion,
    ) -> None:
        """Revokes the bot's token; 204."""
        revoke_token(store, name, version, revoked_at=_now(), account=acting_for(caller))
        access.settle_registry()
