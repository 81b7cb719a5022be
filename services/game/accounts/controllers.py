"""REST v1 accounts: make an account, read the calling account and its bots, issue invite
codes, suspend an account."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog
from litestar import Controller, Request, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody

from services.game.accounts.schemas import (
    Account,
    AccountBot,
    AccountBots,
    Invite,
    NewAccountRequest,
    Suspended,
    Suspension,
)
from services.game.http.params import AccountName
from services.game.http.pipeline.auth import (
    BEARER,
    BEARER_OPTIONAL,
    Access,
    Caller,
    Forbidden,
    Unauthorized,
    host_only,
)
from services.game.http.pipeline.owners import HANDLERS as OWNERS
from services.game.http.pipeline.owners import AccountSuspended, charge_registration
from services.game.http.pipeline.problems import responses
from services.game.http.waiters import streams_of
from shared.app.accounts import (
    abort_games,
    account_bots,
    create_account,
    issue_invite,
    suspend_account,
)
from shared.app.games import abort_game
from shared.app.starting import play_bots
from shared.model.accounts import HOST, RegistrationRefused
from shared.model.accounts import Account as AccountModel
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore

log = structlog.get_logger(__name__)


def _now() -> str:
    """Returns the current UTC time, ISO 8601 to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _calling(store: EventStore, caller: Caller) -> AccountModel:
    """Returns the account `caller` is: its key's, or the host's for the admin key (and
    anyone in open mode); raises Forbidden for a bot token, Unauthorized for anyone else."""
    if caller.account is not None:
        return caller.account
    if caller.host:
        return AccountModel(HOST)
    if caller.bot is not None:
        raise Forbidden(f"{caller.bot.key} is a bot: send its account's key")
    raise Unauthorized("send Authorization: Bearer <account key>")


class AccountsController(Controller):
    """Accounts: who owns bots."""

    path = "/v1/accounts"
    tags = ("accounts",)
    exception_handlers = OWNERS

    @post(
        operation_id="createAccount",
        summary="Make an account; its key is in this answer only",
        description=(
            "Who may call it is the host's choice (CARDARENA_REGISTRATION): `closed` (the"
            " default: the admin key only; anyone else 403 `registration-refused`), `invite`"
            " (with an unused `invite` code the host issued, which works once: else 422 field"
            " `invite`) or `open` (anyone). The answer holds the account `key`, shown once"
            " (the platform keeps only its SHA-256): with it, `Authorization: Bearer <key>`"
            " registers the account's own bots (`registerBot`), rotates and revokes their"
            " tokens, and lists them (`listAccountBots`). A `name` that is not 3-32"
            " lower-case letters, digits, `_` or `-` starting with a letter, or is reserved"
            " (`host`, `admin`, a built-in strategy's name...), is 422 naming `name`; a name"
            " taken is 409 `name-taken`. A client address makes at most"
            " CARDARENA_REGISTRATION_RATE_LIMIT registrations per rate window (429)."
        ),
        sync_to_thread=True,
        status_code=201,
        security=BEARER_OPTIONAL,
        responses=responses(400, 403, 409, 422, 503),
    )
    def create(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        data: JSONBody[NewAccountRequest],
    ) -> Account:
        if caller.account is not None and caller.account.suspended:
            raise AccountSuspended(caller.account.name)
        mode = "open" if caller.host else access.registration
        if mode == "closed":
            raise RegistrationRefused(
                "registration is closed on this deployment: the host registers bots",
                field="CARDARENA_REGISTRATION",
            )
        if not caller.host:
            charge_registration(request, access)
        made = create_account(store, data.name, mode=mode, invite=data.invite, created_at=_now())
        access.settle_registry()
        log.info("account created", account=made.account.name)
        return Account.of(made.account, made.key)

    @get(
        "/me",
        operation_id="getCallingAccount",
        summary="The account whose key the request carries (the admin key: the host's)",
        sync_to_thread=True,
        security=BEARER,
        responses=responses(403, 503),
    )
    def me(self, store: NamedDependency[EventStore], caller: NamedDependency[Caller]) -> Account:
        account = _calling(store, caller)
        return Account.of(account)

    @get(
        "/me/bots",
        operation_id="listAccountBots",
        summary="The bots of the account whose key the request carries",
        sync_to_thread=True,
        security=BEARER,
        responses=responses(403, 503),
    )
    def bots(
        self, store: NamedDependency[EventStore], caller: NamedDependency[Caller]
    ) -> AccountBots:
        account = _calling(store, caller)
        found = account_bots(store, account.name)
        return AccountBots(account.name, [AccountBot.of(bot) for bot in found])

    @post(
        "/{account:str}/suspend",
        operation_id="suspendAccount",
        summary="Suspend an account: its key, its bots' tokens and its bots stop",
        description=(
            "A hosting operation. Once it answers, on every process: the account's key"
            " changes nothing (403 `account-suspended`), its bots' tokens are refused (401),"
            " nothing seats its bots (games, challenges and tournaments naming one: 422), and"
            " the running games of its bots that are no tournament's are aborted (reason"
            " `account_suspended`; a tournament's game ends with its tournament, its"
            " suspended seats forfeiting on their clock). Suspending it again changes"
            " nothing. 404 `unknown-account`; the host's own account is 422 (field `account`)."
        ),
        sync_to_thread=True,
        status_code=200,
        guards=[host_only],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def suspend(
        self,
        request: Request[Any, Any, Any],
        store: NamedDependency[EventStore],
        access: NamedDependency[Access],
        dispatcher: NamedDependency[BotTurnDispatcher],
        account: AccountName,
        data: JSONBody[Suspension | None] = None,
    ) -> Suspended:
        reason = data.reason if data is not None else ""
        suspended, bots = suspend_account(store, account, reason, suspended_at=_now())
        access.settle_registry()
        index = streams_of(request).index(store)
        index.refresh()
        running = sorted({game for bot in bots for game in index.running(bot.key)})
        aborted = abort_games(
            running,
            lambda game_id: abort_game(store, game_id, "account_suspended"),
            lambda game_id: log.info("game not aborted", game_id=game_id, account=account),
        )
        for game_id in aborted:  # an evaluation's game: its evaluation is cancelled
            play_bots(store, dispatcher, game_id)
        log.info("account suspended", account=account, aborted=len(aborted))
        return Suspended(Account.of(suspended), aborted)


class InvitesController(Controller):
    """Invite codes: one account each, where registration is by invitation."""

    path = "/v1/invites"
    tags = ("accounts",)

    @post(
        operation_id="issueInvite",
        summary="Issue a one-time invite code for making an account",
        description=(
            "A hosting operation. The code is in this answer only (the platform keeps its"
            " SHA-256); whoever holds it makes one account with it (`createAccount`) where"
            " CARDARENA_REGISTRATION is `invite` (or `open`, where it is not needed)."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[host_only],
        security=BEARER,
        responses=responses(401, 403, 503),
    )
    def issue(self, store: NamedDependency[EventStore], access: NamedDependency[Access]) -> Invite:
        at = _now()
        code = issue_invite(store, issued_at=at)
        access.settle_registry()
        log.info("invite issued")
        return Invite(code, at)
