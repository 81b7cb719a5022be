"""Identity and access: who calls (the admin, a bot, anyone), what they may do, how often.

Callers present `Authorization: Bearer <credential>`: the admin key (setting
`CARDARENA_ADMIN_KEY`), a bot token (`cab_<id>.<secret>`, see `shared.model.registry`) or an
account key (`caa_<id>.<secret>`, see `shared.model.accounts`: it registers and manages its own
bots, never hosts nor plays a seat). The app
guard `authenticate` resolves every request's `Caller` once (401 for a credential that is
neither, 429 for a bot token over its rate limits, see `services.game.http.pipeline.limits`);
handlers take it as the dependency `caller`. Hosting operations carry the guard
`host_only`; seat access is `check_seat`.

With no admin key the service runs in open mode: a caller without credentials is the host
(as the admin). A bot token is that bot in either mode, and only a bound seat's bot token
may act for it.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio.to_thread
from litestar import Request, Response
from litestar.connection import ASGIConnection
from litestar.di import Provide
from litestar.handlers import HTTPRouteHandler
from litestar.handlers.base import BaseRouteHandler
from litestar.openapi.spec import Reference, SecurityRequirement, SecurityScheme
from litestar.types import ExceptionHandlersMap, Scope

from services.game.http.pipeline.follower import RegistryFollower
from services.game.http.pipeline.limits import (
    CALLER_KEY,
    CHARGED_ON_ANSWER,
    TICKET_KEY,
    RateLimited,
    Ticket,
)
from services.game.http.pipeline.problems import Problem, problem
from services.settings import GameSettings, Settings
from shared.app.registry import RegistryIndex
from shared.app.starting import GameCap
from shared.messages.common import Clock, Seat
from shared.model.accounts import ACCOUNT_KEY_PREFIX, Account, RegistrationMode
from shared.model.clocks import entrant_clock
from shared.model.registry import RegisteredBot, token_id_of
from shared.ports.game_slots import GameSlots, InMemoryGameSlots
from shared.ports.ratelimit import InMemoryRateLimiter, RateLimiter
from shared.store.port import EventStore

STATE_KEY = "access"
"""Where the app's `Access` lives in `app.state`."""
SECURITY_SCHEME = "bearer"
SECURITY_SCHEMES: dict[str, SecurityScheme | Reference] = {
    SECURITY_SCHEME: SecurityScheme(
        type="http",
        scheme="bearer",
        description=(
            "The admin key for hosting operations, a bot's token for its seats, or an"
            " account key for the account's own bots."
        ),
    )
}
"""The OpenAPI security schemes of the service."""
BEARER: list[SecurityRequirement] = [{SECURITY_SCHEME: []}]
"""The `security` of an operation that needs credentials."""
BEARER_OPTIONAL: list[SecurityRequirement] = [{}, {SECURITY_SCHEME: []}]
"""The `security` of an operation anyone may call that answers more to some credentials (a
seat's bot token, the admin key): a public read."""

_log = logging.getLogger(__name__)

Role = Literal["admin", "bot", "account", "anonymous"]


@dataclass(frozen=True)
class Caller:
    """Who makes a request: the admin, a bot (`bot`), or anyone; `host` may host games."""

    role: Role
    bot: RegisteredBot | None = None
    host: bool = False
    token_id: str | None = None
    """The id of the bot token presented (see `services.game.http.pipeline.credentials`)."""
    account: Account | None = None
    """The account whose key was presented (suspended or not), None for anyone else."""

    @property
    def key(self) -> str | None:
        """Returns the calling bot's `name@version`, None for the admin and anyone."""
        return self.bot.key if self.bot is not None else None


class Unauthorized(Exception):
    """No credentials, or credentials that are neither the admin key nor a live bot token."""

    def __init__(self, message: str, *, invalid_token: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.invalid_token = invalid_token


class Forbidden(Exception):
    """Valid credentials that do not allow this request."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Access:
    """The admin key, the registry to check bot tokens in, the rate limiters of bot tokens
    (`limiter`: their requests; `turn_limiter`: their reads of their own turns), the game
    cap, whether webhook URLs may reach loopback and private addresses, the rate limit of
    anonymous streams (per client address), the cap on a bot's open challenges (the
    slots of `challenges`, 0: none), and what keeps the registry current (`follower`)."""

    admin_key: str
    registry: RegistryIndex
    limiter: RateLimiter
    slots: GameSlots
    max_games_per_bot: int
    webhook_allow_private: bool = False
    spectator_limiter: RateLimiter = field(default_factory=lambda: InMemoryRateLimiter(0, 60))
    challenges: GameSlots = field(default_factory=InMemoryGameSlots)
    max_open_challenges: int = 0
    follower: RegistryFollower | None = None
    """Keeps `registry` current without a read per token check (None: each reads)."""
    entrant_clock: Clock | None = None
    """The default clock of a tournament's or challenge's external and webhook entrants when
    it sets none (CARDARENA_ENTRANT_MOVE_SECONDS; None: untimed)."""
    turn_limiter: RateLimiter = field(default_factory=lambda: InMemoryRateLimiter(0, 60))
    """The budget of their reads of their own turns (CARDARENA_TURN_RATE_LIMIT)."""
    registration: RegistrationMode = "closed"
    """Who may make an account (CARDARENA_REGISTRATION)."""
    max_bots_per_account: int = 20
    """The bot versions an account other than the host's may hold (0: no cap)."""
    registration_limiter: RateLimiter = field(default_factory=lambda: InMemoryRateLimiter(0, 60))
    """The budget of registrations (accounts, an account's bots) per client address and per
    account (CARDARENA_REGISTRATION_RATE_LIMIT)."""

    @classmethod
    def embedded(cls, store: EventStore, settings: GameSettings | None = None) -> Access:
        """Returns access over `store` with the in-memory limiter and slots (one process)."""
        settings = settings or Settings()
        return cls(
            admin_key=settings.admin_key,
            registry=RegistryIndex(store),
            limiter=InMemoryRateLimiter(settings.rate_limit, settings.rate_window),
            turn_limiter=InMemoryRateLimiter(settings.turn_rate_limit, settings.rate_window),
            slots=InMemoryGameSlots(),
            max_games_per_bot=settings.max_games_per_bot,
            webhook_allow_private=settings.webhook_allow_private,
            spectator_limiter=InMemoryRateLimiter(
                settings.spectator_rate_limit, settings.rate_window
            ),
            max_open_challenges=settings.max_open_challenges,
            entrant_clock=entrant_clock(
                settings.entrant_move_seconds, settings.entrant_bank_seconds
            ),
            registration=settings.registration,
            max_bots_per_account=settings.max_bots_per_account,
            registration_limiter=InMemoryRateLimiter(
                settings.registration_rate_limit, settings.rate_window
            ),
        )

    def settle_registry(self) -> None:
        """Returns once every process holding a read lease of the registry has folded the
        change just made to it, or stopped trusting its fold (see `RegistryFollower`)."""
        if self.follower is not None:
            behind = self.follower.settle()
            if behind:
                _log.warning("the registry's leases of %s did not settle", ", ".join(behind))

    def close(self) -> None:
        """Stops following the registry (the app's shutdown)."""
        if self.follower is not None:
            self.follower.stop()

    @property
    def game_cap(self) -> GameCap:
        """Returns the cap on each bound bot's running games, with the slots counting them."""
        return GameCap(self.slots, self.max_games_per_bot)

    @property
    def open(self) -> bool:
        """Returns whether the service runs in open mode (no admin key)."""
        return not self.admin_key

    def looks_up(self, authorization: str | None) -> bool:
        """Returns whether identifying `authorization` takes a look-up in the store: a
        bearer credential that is not the admin key."""
        try:
            credential = _bearer(authorization)
        except Unauthorized:
            return False
        return credential is not None and not self._is_admin(credential)

    def _is_admin(self, credential: str) -> bool:
        """Returns whether `credential` is the admin key (never, in open mode)."""
        admin = self.admin_key.encode()
        return bool(self.admin_key) and hmac.compare_digest(credential.encode(), admin)

    def identify(self, authorization: str | None) -> Caller:
        """Returns the caller presenting `authorization` (an Authorization header, or None).

        Raises Unauthorized for a credential that is neither the admin key nor a live bot
        token. (Charging a bot token's rate limits is `caller_of`'s.)
        """
        credential = _bearer(authorization)
        if credential is None:
            return Caller("anonymous", host=self.open)
        if self._is_admin(credential):
            return Caller("admin", host=True)
        if credential.startswith(ACCOUNT_KEY_PREFIX):
            account = self.registry.account_of_key(credential)
            if account is not None:
                return Caller("account", account=account)
        bot = self.registry.bot_of_token(credential)
        if bot is None:
            raise Unauthorized(
                "the credential is neither the admin key, a live bot token nor an account key",
                invalid_token=True,
            )
        return Caller("bot", bot=bot, token_id=token_id_of(credential))

    def ticket(self, caller: Caller) -> Ticket | None:
        """Returns the rate-limit ticket of a bot token's request, None for anyone else."""
        if caller.token_id is None:
            return None
        return Ticket(caller.token_id, self.limiter, self.turn_limiter)


def _bearer(authorization: str | None) -> str | None:
    """Returns the credential of a bearer `authorization` header, None for no header (or a
    blank one); raises Unauthorized for any other scheme or an empty credential."""
    if authorization is None or not authorization.strip():
        return None
    scheme, _, credential = authorization.strip().partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential:
        raise Unauthorized("send Authorization: Bearer <admin key or bot token>")
    return credential


def caller_of(connection: ASGIConnection[Any, Any, Any, Any]) -> Caller:
    """Returns the caller of `connection`, identified once per request (see Access.identify);
    a bot token's request is charged to its rate limits there (`services.game.http.pipeline.limits`:
    RateLimited, 429, when it may not run)."""
    state = connection.state
    known = state.get(CALLER_KEY)
    if isinstance(known, Caller):
        return known
    access: Access = connection.app.state[STATE_KEY]
    caller = access.identify(connection.headers.get("authorization"))
    state[CALLER_KEY] = caller
    ticket = access.ticket(caller)
    if ticket is not None and caller.bot is not None:
        state[TICKET_KEY] = ticket
        handler = connection.scope.get("route_handler")
        ticket.enter(caller.bot.key, handler.opt.get(CHARGED_ON_ANSWER) if handler else None)
    return caller


def identify_late(scope: Scope) -> None:
    """Identifies (and so charges) the caller of a request answered before its handler
    identified it (a route `IDENTIFIED_BY_HANDLER` whose input was refused at the door), so
    that its answer carries the rate-limit headers; a credential that is not one changes
    nothing (the answer stands)."""
    state = scope.get("state")
    if state is None or CALLER_KEY in state or scope.get("route_handler") is None:
        return
    with contextlib.suppress(Unauthorized, RateLimited):
        caller_of(ASGIConnection(scope))


IDENTIFIED_BY_HANDLER = "cardarena.identified_by_handler"
"""A route handler's `opt` flag: the handler runs in a worker thread and identifies its
caller there first (`caller_of`), so that a bot token's look-up takes no thread of its own."""


async def authenticate(
    connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler
) -> None:
    """App guard: identifies the caller of every request (401 and 429 happen here).

    A credential that needs no look-up (none, the admin key, a malformed one) is checked at
    once; a bot token (a registry look-up, a rate-limit hit) in a worker thread, or by the
    handler of a route flagged `IDENTIFIED_BY_HANDLER` in the thread it runs in anyway; a move
    (charged nothing as it comes in) here, once, when that reads nothing (the registry's fold
    is trusted: `follower`), so that a stranger's body is never read. Guards run
    before the route's input is checked and its body read: a request without credentials to
    an operation that needs them is 401 here, so a stranger's body is never read (nor its
    parameters judged).
    """
    access: Access = connection.app.state[STATE_KEY]
    authorization = connection.headers.get("authorization")
    if not access.looks_up(authorization):
        caller = caller_of(connection)
        if caller.role == "anonymous" and not caller.host and needs_credentials(handler):
            raise Unauthorized(
                "this operation needs Authorization: Bearer <admin key, account key or bot token>"
            )
    elif not handler.opt.get(IDENTIFIED_BY_HANDLER):
        await anyio.to_thread.run_sync(caller_of, connection)
    elif access.registry.trusted and handler.opt.get(CHARGED_ON_ANSWER) == "moves":
        caller_of(connection)  # no read: the followed fold answers, a move charges nothing yet


def needs_credentials(handler: BaseRouteHandler) -> bool:
    """Returns whether every `security` requirement of `handler`'s operation names the bearer
    scheme (`BEARER`, not `BEARER_OPTIONAL`): a request without credentials is then 401 at the
    door, before its input is checked or its body read. (Litestar resolves a handler's
    security once and keeps it.)"""
    if not isinstance(handler, HTTPRouteHandler):
        return False
    security = handler.resolve_security()
    return bool(security) and all(SECURITY_SCHEME in s for s in security)


def host_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Route guard of hosting operations: the admin key (anyone in open mode); a bot is 403."""
    caller = caller_of(connection)
    if caller.host:
        return
    if caller.bot is not None:
        raise Forbidden(f"{caller.bot.key} is a bot; hosting operations need the admin key")
    if caller.account is not None:
        raise Forbidden(
            f"an account key ({caller.account.name}) manages its own bots; hosting operations"
            " need the admin key"
        )
    raise Unauthorized("hosting operations need Authorization: Bearer <admin key>")


def provide_caller(request: Request[Any, Any, Any]) -> Caller:
    """Returns the request's caller: the dependency `caller` (the app guard identified it
    already, so this reads it from the request's state: no I/O, no worker thread)."""
    return caller_of(request)


CALLER = Provide(provide_caller, sync_to_thread=False)
"""The dependency `caller` (a handler takes `caller: NamedDependency[Caller]`)."""


def calling_bot(caller: Caller, what: str = "this is a bot's resource") -> str:
    """Returns the calling bot's `name@version`; raises Forbidden for the admin (`what` says
    why) and Unauthorized for anyone without a bot token."""
    if caller.bot is not None:
        return caller.bot.key
    if caller.role in ("admin", "account"):
        raise Forbidden(f"{what}: send its bot token, not the {caller.role} key")
    raise Unauthorized("send Authorization: Bearer <bot token>")


def check_seat(caller: Caller, seats: list[Seat], index: int, *, act: bool = False) -> None:
    """Raises Unauthorized or Forbidden unless `caller` may read seat `index` of `seats`
    (its view, its redacted events) or, with `act`, post its actions.

    A seat bound to a bot is read by that bot or the host, and played by that bot only;
    any other seat (host-played, or a built-in bot's) is the host's.
    """
    owner = seats[index].bound_bot
    if caller.bot is not None:
        if owner == caller.bot.key:
            return
        whose = f"played by {owner}" if owner else "played by the host"
        raise Forbidden(f"{caller.bot.key} may not use seat {index}: it is {whose}")
    if owner is None:
        if caller.host:
            return
        raise Unauthorized(f"seat {index} is the host's: send the admin key")
    if caller.host and not act:
        return
    if caller.role in ("admin", "account"):
        raise Forbidden(f"seat {index} is played by {owner}: only its token acts for it")
    raise Unauthorized(f"seat {index} is played by {owner}: send its bot token")


def warn_if_open(settings: GameSettings, log: logging.Logger = _log) -> bool:
    """Logs a warning when the real stack (Redis store) runs with no admin key; returns
    whether it did.
    """
    if settings.store != "redis" or settings.admin_key:
        return False
    log.warning(
        "CARDARENA_ADMIN_KEY is not set: the game service runs in open mode, where anyone "
        "may create games and tournaments, register bots and play host-played seats"
    )
    return True


def _unauthorized(_: Request[Any, Any, Any], error: Unauthorized) -> Response[Problem]:
    challenge = 'Bearer realm="cardarena"'
    if error.invalid_token:
        challenge += ', error="invalid_token"'
    return problem(401, "unauthorized", error.message, headers={"WWW-Authenticate": challenge})


def _forbidden(_: Request[Any, Any, Any], error: Forbidden) -> Response[Problem]:
    return problem(403, "forbidden", error.message)


def _rate_limited(_: Request[Any, Any, Any], error: RateLimited) -> Response[Problem]:
    headers = {"Retry-After": str(error.retry_after)}  # RateLimit-*: the middleware's
    return problem(429, "rate-limited", error.message, headers=headers)


HANDLERS: ExceptionHandlersMap = {
    Unauthorized: _unauthorized,
    Forbidden: _forbidden,
    RateLimited: _rate_limited,
}
"""The problem responses of the access errors (merged into the app's handlers)."""
