"""Bodies of the account routes: an account to make, an account (with its key once), the
calling account's bots, an invite code, a suspension."""

from __future__ import annotations

from typing import Annotated

import msgspec

from shared.model.accounts import Account as AccountModel
from shared.model.registry import RegisteredBot

AccountName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class NewAccountRequest(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An account to make: its name and, where registration is by invitation, the host's code."""

    name: AccountName
    """The account's name: 3 to 32 lower-case letters, digits, `_` or `-`, starting with a
    letter; not reserved (`host`, `admin`, a built-in strategy's name...) nor taken."""
    invite: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    """An unused invite code the host issued (`issueInvite`); needed when
    CARDARENA_REGISTRATION is `invite`, works once."""


class Account(msgspec.Struct, frozen=True):
    """An account: it registers and manages its own bots with its key."""

    name: str
    """The account's name (`host`: the host's own)."""
    created_at: str
    """When it was made (ISO 8601, UTC; empty for the host's)."""
    suspended: bool = False
    """Whether the host suspended it: its key changes nothing, its bots play nowhere."""
    key: str | msgspec.UnsetType = msgspec.UNSET
    """The account key (`Authorization: Bearer <key>`): shown once, in the answer that made
    the account; the platform keeps only its SHA-256."""

    @classmethod
    def of(cls, account: AccountModel, key: str | None = None) -> Account:
        """Returns the account's representation, with its new key if given."""
        return cls(
            account.name,
            account.created_at,
            account.suspended,
            key=key if key is not None else msgspec.UNSET,
        )


class AccountBot(msgspec.Struct, frozen=True):
    """One bot of the account (no secret: a token is shown once, when issued)."""

    name: str
    """The bot's name."""
    version: str
    """The bot's version label."""
    key: str
    """`name@version`: what ratings follow."""
    game: str
    """The game it plays."""
    kind: str
    """`builtin`, `external` or `webhook`."""
    registered_at: str
    """When it was registered (ISO 8601, UTC)."""
    suspended: bool = False
    """Whether its account is suspended."""

    @classmethod
    def of(cls, bot: RegisteredBot) -> AccountBot:
        """Returns the bot's line."""
        return cls(
            bot.name, bot.version, bot.key, bot.game, bot.kind, bot.registered_at, bot.suspended
        )


class AccountBots(msgspec.Struct, frozen=True):
    """The bots of an account, in registration order."""

    account: str
    """The account's name."""
    bots: list[AccountBot]
    """Its bots, in registration order."""


class Invite(msgspec.Struct, frozen=True):
    """A one-time invite code: whoever holds it may make one account (shown once)."""

    invite: str
    """The code, for `createAccount`'s `invite`; the platform keeps only its SHA-256."""
    issued_at: str
    """When it was issued (ISO 8601, UTC)."""


class Suspension(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Why the host suspends an account (kept in the registry's log)."""

    reason: Annotated[str, msgspec.Meta(max_length=500)] = ""
    """Why, for the record (at most 500 characters)."""


class Suspended(msgspec.Struct, frozen=True):
    """A suspended account, and the running games of its bots that the suspension aborted."""

    account: Account
    """The account, now suspended."""
    aborted_games: list[str]
    """The running games of its bots aborted (a tournament's ends with its tournament)."""
