"""Who owns bots through the API: the guard of a bot's registration and its token (the host,
or an account for its own bots), the rate limit of registrations, and the problems of the
accounts' errors (see `shared.model.accounts`).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.handlers.base import BaseRouteHandler
from litestar.types import ExceptionHandlersMap

from services.game.http.pipeline.auth import Access, Caller, Forbidden, Unauthorized, caller_of
from services.game.http.pipeline.limits import RateLimited
from services.game.http.pipeline.problems import Problem, problem
from shared.model.accounts import (
    HOST,
    AccountExists,
    NotOwned,
    RegistrationRefused,
    TooManyBots,
    UnknownAccount,
)


def registrar(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Route guard of a bot's registration and its token: the admin key (anyone in open mode),
    or an account key of an account that is not suspended (its own bots; the handler checks
    whose the bot is). A bot token is 403, a suspended account's key 403 `account-suspended`."""
    caller = caller_of(connection)
    if caller.host:
        return
    if caller.account is not None:
        if caller.account.suspended:
            raise AccountSuspended(caller.account.name)
        return
    if caller.bot is not None:
        raise Forbidden(
            f"{caller.bot.key} is a bot; its registration needs its account's key or the admin key"
        )
    raise Unauthorized("send Authorization: Bearer <account key or admin key>")


def owner(caller: Caller) -> str:
    """Returns the account a `registrar` caller acts as: its own, or the host's."""
    return caller.account.name if caller.account is not None and not caller.host else HOST


def acting_for(caller: Caller) -> str | None:
    """Returns the account whose bots only `caller` may change (None: the host, any bot)."""
    return None if caller.host or caller.account is None else caller.account.name


class AccountSuspended(Exception):
    """The account key presented is a suspended account's: it changes nothing."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the account {name} is suspended: its key changes nothing")
        self.message = str(self)


def charge_registration(
    request: Request[Any, Any, Any], access: Access, account: str | None = None
) -> None:
    """Charges one registration to the client's address and, when given, to `account` (the
    host's never); raises RateLimited (429) when either bucket is empty (the address is
    charged first: a refused request takes nothing from the account's)."""
    limiter = access.registration_limiter
    address = request.client.host if request.client is not None else "unknown"
    keys = [f"registration:address:{address}"]
    if account is not None and account != HOST:
        keys.append(f"registration:account:{account}")
    for key in keys:
        decision = limiter.hit(key)
        if not decision.allowed:
            whose = "this client address" if "address" in key else f"the account {account}"
            raise RateLimited(
                f"{whose} made more than {limiter.limit} registrations in {limiter.window_s} s;"
                f" retry after {decision.retry_after} s",
                decision.retry_after,
            )


def _exists(_: Request[Any, Any, Any], error: AccountExists) -> Response[Problem]:
    return problem(409, "name-taken", error.message, field=error.field)


def _refused(_: Request[Any, Any, Any], error: RegistrationRefused) -> Response[Problem]:
    return problem(403, "registration-refused", error.message, field=error.field or "account")


def _suspended(_: Request[Any, Any, Any], error: AccountSuspended) -> Response[Problem]:
    return problem(403, "account-suspended", error.message, field="Authorization")


def _not_owned(_: Request[Any, Any, Any], error: NotOwned) -> Response[Problem]:
    return problem(403, "forbidden", error.message)


def _too_many(_: Request[Any, Any, Any], error: TooManyBots) -> Response[Problem]:
    detail = f"{error}; the host sets CARDARENA_MAX_BOTS_PER_ACCOUNT"
    return problem(409, "too-many-bots", detail, limit=error.limit)


def _unknown_account(_: Request[Any, Any, Any], error: UnknownAccount) -> Response[Problem]:
    return problem(404, "unknown-account", str(error), field="account")


HANDLERS: ExceptionHandlersMap = {
    AccountExists: _exists,
    RegistrationRefused: _refused,
    AccountSuspended: _suspended,
    NotOwned: _not_owned,
    TooManyBots: _too_many,
    UnknownAccount: _unknown_account,
}
"""The problems of the accounts' errors (a controller that raises them merges these)."""
