"""Accounts: who owns bots, and the host's invitations to make one.

Every registered bot belongs to one account. The host's own account is `host` (reserved):
the admin's bots, and every bot registered before accounts existed (its `BotRegistered`
names no account), are the host's. Where the host opens registration (`closed`, `invite`
or `open`), anyone (or anyone holding an invite code the host issued) makes an account: a
name and an account key (`caa_<id>.<secret>`), shown once; the registry keeps only its
SHA-256, under the key's id, as it keeps bot tokens. An invite code (`cai_<id>.<secret>`) is
kept the same way and works once. The host may suspend an account: its key may no longer
change anything, its bots' tokens stop working and its bots are seated nowhere.

Account events are events of the registry's stream (`registry:bots`), folded with its bots
(`shared.model.registry.Registry`), so that a change holds in every process before it
answers, exactly as a token's rotation does. One owner never feeds itself: `same_account` is
the one predicate the ratings, the duplicate format and any pairing ask.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from shared.errors import InvalidRequest
from shared.messages.common import Event

HOST = "host"
"""The host's own account: the admin's bots, and the bots registered before accounts."""
ACCOUNT_KEY_PREFIX = "caa_"
"""Every account key starts with this; then its id, a dot and its secret part."""
INVITE_PREFIX = "cai_"
"""Every invite code starts with this; then its id, a dot and its secret part."""
ACCOUNT_NAME = re.compile(r"^[a-z][a-z0-9_-]{2,31}$")
"""Account names: 3 to 32 lower-case letters, digits, `_` and `-`, starting with a letter."""
RESERVED_ACCOUNT_NAMES = frozenset(
    {HOST, "admin", "me", "root", "system", "cardarena", "platform", "anonymous", "builtin"}
)
"""Names no account may take (the built-in strategies' names are reserved too)."""
RESERVED_BOT_NAMES = frozenset({"me", HOST, "admin", "builtin", "cardarena"})
"""Names no account's bot may take, beside every built-in strategy's name."""

RegistrationMode = Literal["closed", "invite", "open"]
"""Who may make an account: nobody (the admin registers every bot), the holder of an invite
code the host issued, or anyone."""


class AccountCreated(Event, frozen=True, kw_only=True):
    """An account was made: its name and its key's id and digest (the key itself is shown once
    and never stored); `invite_id` the invite it used (empty: none)."""

    name: str
    key_id: str
    key_hash: str
    """SHA-256 of the whole account key, hex."""
    invite_id: str = ""
    created_at: str = ""


class InviteIssued(Event, frozen=True, kw_only=True):
    """The host issued an invite code (one account, once); only its digest is kept."""

    invite_id: str
    code_hash: str
    """SHA-256 of the whole invite code, hex."""
    issued_at: str = ""


class AccountSuspended(Event, frozen=True, kw_only=True):
    """The host suspended an account: its key changes nothing more, its bots' tokens stop
    working and its bots are seated nowhere."""

    name: str
    reason: str = ""
    suspended_at: str = ""


AccountEvent = AccountCreated | InviteIssued | AccountSuspended


class Account(msgspec.Struct, frozen=True):
    """An account: its name, when it was made, whether the host suspended it."""

    name: str
    created_at: str = ""
    suspended: bool = False
    suspended_reason: str = ""


class AccountExists(InvalidRequest):
    """A name is taken already (an account's, or another account's bot's); 409."""


class RegistrationRefused(Exception):
    """Registration is closed, or the account may not register (suspended); 403."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class TooManyBots(Exception):
    """An account holds as many bot versions as it may (CARDARENA_MAX_BOTS_PER_ACCOUNT)."""

    def __init__(self, account: str, limit: int) -> None:
        super().__init__(
            f"the account {account} holds {limit} bot versions, the most an account may hold"
        )
        self.account = account
        self.limit = limit


class NotOwned(Exception):
    """An account asked to change a bot of another account; 403."""

    def __init__(self, account: str, bot: str) -> None:
        super().__init__(f"{bot} is not a bot of the account {account}")
        self.message = str(self)


class UnknownAccount(LookupError):
    """No account has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no account {name!r}")
        self.name = name


def digest(secret: str) -> str:
    """Returns the hex SHA-256 of `secret`: what the registry keeps of a key or a code."""
    return hashlib.sha256(secret.encode()).hexdigest()


def secret_id(secret: str, prefix: str) -> str | None:
    """Returns the id a `<prefix><id>.<secret>` credential carries, None if it is not one."""
    head, dot, rest = secret.partition(".")
    if not dot or not rest or not head.startswith(prefix):
        return None
    return head.removeprefix(prefix) or None


def same_account(first: str | None, second: str | None) -> bool:
    """Returns whether two bots' owners (account names; None or empty: no account recorded)
    are one account that must never feed itself: the same account, other than the host's
    (the host's own bots are the host's tournaments, rated as always)."""
    return bool(first) and first == second and first != HOST


def shared_account(owners: Sequence[str | None]) -> tuple[int, int] | None:
    """Returns the first pair of indices (in order) of `owners` that are `same_account`, None
    when no two are."""
    for second, owner in enumerate(owners):
        for first in range(second):
            if same_account(owners[first], owner):
                return first, second
    return None


def recorded_owner(account: str) -> str | msgspec.UnsetType:
    """Returns what a seat or an entrant records of its bot's account: the name of an account
    other than the host's, else unset (not encoded: the host's games keep their bytes)."""
    return account if account and account != HOST else msgspec.UNSET


def check_account_name(name: str, reserved: Iterable[str] = ()) -> None:
    """Raises InvalidRequest (field `name`) for a name an account may not take."""
    if not ACCOUNT_NAME.match(name):
        raise InvalidRequest(
            "name",
            f"{name[:40]!r} is not 3-32 lower-case letters, digits, '_' or '-' starting with"
            " a letter",
        )
    if name in RESERVED_ACCOUNT_NAMES or name in set(reserved):
        raise InvalidRequest("name", f"{name!r} is reserved")


@dataclass
class _Secret:
    owner: str
    digest: str


@dataclass
class AccountBook:
    """The accounts folded from the registry's stream: accounts, live key digests, invites."""

    accounts: dict[str, Account] = field(default_factory=dict)
    keys: dict[str, _Secret] = field(default_factory=dict)
    """Account keys by id."""
    invites: dict[str, str] = field(default_factory=dict)
    """Unused invite codes' digests by id."""

    def apply(self, event: AccountEvent) -> None:
        """Folds one account event in."""
        match event:
            case AccountCreated():
                self.accounts[event.name] = Account(event.name, event.created_at)
                self.keys[event.key_id] = _Secret(event.name, event.key_hash)
                self.invites.pop(event.invite_id, None)
            case InviteIssued():
                self.invites[event.invite_id] = event.code_hash
            case AccountSuspended():
                known = self.accounts.get(event.name, Account(event.name))
                self.accounts[event.name] = msgspec.structs.replace(
                    known, suspended=True, suspended_reason=event.reason
                )

    def account_of_key(self, key: str) -> Account | None:
        """Returns the account whose key `key` is, None for anything else."""
        key_id = secret_id(key, ACCOUNT_KEY_PREFIX)
        known = self.keys.get(key_id) if key_id else None
        if known is None or not hmac.compare_digest(known.digest, digest(key)):
            return None
        return self.accounts.get(known.owner)

    def invite_of(self, code: str) -> str | None:
        """Returns the id of the unused invite whose code `code` is, None for anything else."""
        invite_id = secret_id(code, INVITE_PREFIX)
        known = self.invites.get(invite_id) if invite_id else None
        if known is None or not hmac.compare_digest(known, digest(code)):
            return None
        return invite_id

    def suspended(self, name: str) -> bool:
        """Returns whether the account `name` is suspended (the host's never is)."""
        known = self.accounts.get(name)
        return known is not None and known.suspended
