"""The accounts' use cases: making an account (open or by invite), issuing an invite code,
suspending an account; its bots are registered through `shared.app.registry.register` with
its name. The events are the registry's (`shared.model.accounts`), appended at the version
the registry was read at, so a name is taken once across every process.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence

import msgspec

from shared.app.registry import read_registry, strategy_names
from shared.errors import GameOver, IllegalAction, InvalidRequest, UnknownGame
from shared.messages.codec import encode
from shared.model.accounts import (
    ACCOUNT_KEY_PREFIX,
    HOST,
    INVITE_PREFIX,
    Account,
    AccountCreated,
    AccountExists,
    AccountSuspended,
    InviteIssued,
    RegistrationMode,
    RegistrationRefused,
    UnknownAccount,
    check_account_name,
    digest,
)
from shared.model.registry import KIND, STREAM, RegisteredBot
from shared.store.port import ConcurrencyConflict, EventStore

MAX_REASON = 500
"""The longest reason of a suspension."""


class NewAccount(msgspec.Struct, frozen=True):
    """An account just made, and its key: shown once, never stored."""

    account: Account
    key: str


def _secret(prefix: str) -> tuple[str, str]:
    """Returns a new credential's id and the credential: 64 random bits of id, 256 of secret."""
    secret_id = secrets.token_hex(8)
    return secret_id, f"{prefix}{secret_id}.{secrets.token_urlsafe(32)}"


def create_account(
    store: EventStore,
    name: str,
    *,
    mode: RegistrationMode,
    invite: str | None = None,
    created_at: str = "",
) -> NewAccount:
    """Makes the account `name`; returns it with its key (shown only here).

    Raises RegistrationRefused when `mode` is `closed`; InvalidRequest (field `invite`) when
    `mode` is `invite` and `invite` is not an unused code the host issued; InvalidRequest
    (field `name`) for a name that is not one or is reserved; AccountExists (field `name`)
    for a name taken. An invite code works once: two accounts racing on one code append at
    one registry version, and the second finds it used.
    """
    if mode == "closed":
        raise RegistrationRefused(
            "registration is closed on this deployment: the host registers bots",
            field="CARDARENA_REGISTRATION",
        )
    check_account_name(name, strategy_names())
    if mode == "invite" and not invite:
        raise InvalidRequest("invite", "registration is by invitation: send the host's code")
    while True:
        registry = read_registry(store)
        if name in registry.book.accounts:
            raise AccountExists("name", f"the account name {name!r} is taken")
        invite_id = ""
        if mode == "invite":
            found = registry.book.invite_of(invite or "")
            if found is None:
                raise InvalidRequest("invite", "not an unused invite code of this deployment")
            invite_id = found
        key_id, key = _secret(ACCOUNT_KEY_PREFIX)
        event = AccountCreated(
            name=name,
            key_id=key_id,
            key_hash=digest(key),
            invite_id=invite_id,
            created_at=created_at,
        )
        try:
            store.append(STREAM, KIND, registry.version, [encode(event)])
        except ConcurrencyConflict:
            continue
        return NewAccount(Account(name, created_at), key)


def issue_invite(store: EventStore, issued_at: str = "") -> str:
    """Issues a one-time invite code; returns it (shown only here; the registry keeps its
    SHA-256)."""
    invite_id, code = _secret(INVITE_PREFIX)
    event = InviteIssued(invite_id=invite_id, code_hash=digest(code), issued_at=issued_at)
    while True:
        try:
            store.append(STREAM, KIND, store.version(STREAM), [encode(event)])
        except ConcurrencyConflict:
            continue
        return code


def account_bots(store: EventStore, name: str) -> list[RegisteredBot]:
    """Returns the bots of the account `name`, in registration order."""
    return read_registry(store).bots_of(name)


def suspend_account(
    store: EventStore, name: str, reason: str = "", suspended_at: str = ""
) -> tuple[Account, list[RegisteredBot]]:
    """Suspends the account `name`: its key changes nothing more, its bots' tokens stop
    working, nothing seats its bots. Returns the account and its bots. Suspending it again
    changes nothing.

    Raises UnknownAccount, or InvalidRequest (field `account`) for the host's own account, or
    (field `reason`) for a reason over MAX_REASON characters.
    """
    if name == HOST:
        raise InvalidRequest("account", "the host's own account is never suspended")
    if len(reason) > MAX_REASON:
        raise InvalidRequest("reason", f"at most {MAX_REASON} characters")
    while True:
        registry = read_registry(store)
        known = registry.book.accounts.get(name)
        if known is None:
            raise UnknownAccount(name)
        if known.suspended:
            return known, registry.bots_of(name)
        event = AccountSuspended(name=name, reason=reason, suspended_at=suspended_at)
        try:
            store.append(STREAM, KIND, registry.version, [encode(event)])
        except ConcurrencyConflict:
            continue
        after = read_registry(store)
        return after.book.accounts[name], after.bots_of(name)


def abort_games(
    games: Sequence[str], abort: Callable[[str], object], on_error: Callable[[str], None]
) -> list[str]:
    """Aborts each of `games` with `abort`; returns those it aborted. A game over already,
    gone, or a tournament's (it ends with its tournament; a suspended bot's token no longer
    moves, so its clock forfeits it) is passed to `on_error` and skipped."""
    aborted = []
    for game_id in games:
        try:
            abort(game_id)
        except (GameOver, IllegalAction, UnknownGame, ConcurrencyConflict, KeyError):
            on_error(game_id)
            continue
        aborted.append(game_id)
    return aborted
