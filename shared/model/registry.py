"""The bot registry: named, versioned bots that tournaments enter and ratings follow.

A registered bot plays one game under a name and a version label (`mc-deep@2`); ratings
and leaderboards are kept per `name@version`, so a new version starts a new rating. A bot
is of one kind: `builtin` (one of the game's strategies, played by the platform),
`external` (a client playing through the API with its bot token) or `webhook` (the
platform POSTs each turn to its `url`, signed with its signing secret).

Registrations, tokens and signing secrets are events of one stream (`registry:bots`),
appended with optimistic concurrency, so a name and version are registered once across
every process. A token is shown once, when issued; the registry keeps only its SHA-256
digest (`BotTokenIssued`), under the token's id, which the token carries in the clear
(`cab_<id>.<secret>`) so that a look-up is one dictionary access. A webhook bot's signing
secret is stored in full (`WebhookSecretIssued`): the workers must sign with it.

A built-in strategy's own name (`heuristic`, `mc`) may enter a tournament without
registration, under any version label. This module is the pure fold and its events; the
use cases that read and append the stream are `shared.app.registry`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from shared.catalog import get_game
from shared.errors import InvalidRequest
from shared.messages.codec import EventCodec
from shared.messages.common import Event, Seat
from shared.model.accounts import (
    HOST,
    AccountBook,
    AccountCreated,
    AccountSuspended,
    InviteIssued,
    recorded_owner,
)

KIND = "registry"
STREAM = "registry:bots"
NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
"""Bot names and version labels: lower case letters, digits, `_`, `.` and `-`, up to 63."""
RESERVED_NAMES = frozenset({"me"})
"""Names no bot may take: `/v1/bots/me` is the calling bot."""
TOKEN_PREFIX = "cab_"  # noqa: S105 - a public prefix, not a secret
"""Every bot token starts with this; then its id, a dot and its secret part."""
MAX_URL = 2000

BotKind = Literal["builtin", "external", "webhook"]
AcceptChallenges = Literal["host", "registered", "none"]
"""Whose challenges seat a webhook bot (which cannot answer them): the host's only, any
registered bot's (and the host's), or nobody's."""
BotKey = tuple[str, str]
"""A bot's (name, version)."""


class BotRegistered(Event, frozen=True, kw_only=True):
    """A bot was registered: name, version, game, and how it plays (kind, strategy, url)."""

    name: str
    version: str
    game: str
    strategy: str
    """The built-in strategy of a `builtin` bot; empty for the other kinds."""
    description: str = ""
    registered_at: str = ""
    kind: BotKind = "builtin"
    url: str = ""
    """Where the platform POSTs a `webhook` bot's turns."""
    accept_challenges: AcceptChallenges = "host"
    """Whose challenges seat a `webhook` bot (earlier events: `host`)."""
    account: str | msgspec.UnsetType = msgspec.UNSET
    """The account that registered it; unset (earlier events, the admin's): the host's."""


class BotTokenIssued(Event, frozen=True, kw_only=True):
    """A bot was given an API token (it replaces any earlier one); only its digest is kept."""

    name: str
    version: str
    token_id: str
    token_hash: str
    """SHA-256 of the whole token, hex."""
    issued_at: str = ""


class BotTokenRevoked(Event, frozen=True, kw_only=True):
    """A bot's API token stopped working."""

    name: str
    version: str
    token_id: str
    revoked_at: str = ""


class WebhookSecretIssued(Event, frozen=True, kw_only=True):
    """A webhook bot's signing secret (it replaces any earlier one), stored so workers can sign."""

    name: str
    version: str
    secret: str
    issued_at: str = ""


RegistryEvent = (
    BotRegistered
    | BotTokenIssued
    | BotTokenRevoked
    | WebhookSecretIssued
    | AccountCreated
    | InviteIssued
    | AccountSuspended
)
CODEC: EventCodec[RegistryEvent] = EventCodec(RegistryEvent)


class BotSpec(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A registration request: a name, a version label, a game, and how the bot plays.

    A `builtin` bot names one of the game's `strategy`s; an `external` bot names neither a
    strategy nor a url; a `webhook` bot names its http(s) `url`, and whose challenges seat
    it (`accept_challenges`: the host's only, by default).
    """

    name: str
    """The bot's name: lowercase letters, digits, `_`, `.` and `-` (at most 63, not `me`)."""
    game: str
    """The game it plays."""
    strategy: str = ""
    """A `builtin` bot's strategy, one of the game's."""
    version: str = "1"
    """The version label (default "1"); ratings are kept per `name@version`."""
    description: str = ""
    """Free text about the bot."""
    kind: BotKind = "builtin"
    """`builtin` (a strategy run by the platform), `external` (a client with a token) or `webhook`
    (the platform calls its `url`)."""
    url: str = ""
    """A `webhook` bot's http(s) URL."""
    accept_challenges: AcceptChallenges = "host"
    """A webhook bot's: whose challenges seat it, `host` (default), `registered` (any registered
    bot's too) or `none`."""


class RegisteredBot(msgspec.Struct, frozen=True):
    """A bot in the registry; `key` (`name@version`) is what ratings are kept under."""

    name: str
    version: str
    game: str
    strategy: str
    description: str
    registered_at: str
    kind: BotKind = "builtin"
    url: str = ""
    accept_challenges: AcceptChallenges = "host"
    account: str = HOST
    """The account it belongs to (`host`: the admin's, and every bot registered before)."""
    suspended: bool = False
    """Whether its account is suspended: its token does not work and nothing seats it."""

    @property
    def key(self) -> str:
        """Returns `name@version`."""
        return f"{self.name}@{self.version}"


class Credentials(msgspec.Struct, frozen=True):
    """What a bot is shown once: its API token, and a webhook bot's signing secret."""

    token: str
    signing_secret: str = ""


class Registration(msgspec.Struct, frozen=True):
    """The outcome of a registration: the bot, whether it is new, and new credentials if any."""

    bot: RegisteredBot
    new: bool
    credentials: Credentials | None = None


class BotExists(InvalidRequest):
    """That name and version are registered already (for another game or strategy)."""


class UnknownBot(LookupError):
    """No bot is registered under that name and version."""

    def __init__(self, name: str, version: str) -> None:
        super().__init__(f"no bot {name}@{version} is registered")
        self.name = name
        self.version = version


def token_digest(token: str) -> str:
    """Returns the hex SHA-256 of `token`: what the registry keeps of it."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_id_of(token: str) -> str | None:
    """Returns the id a bot token carries (`cab_<id>.<secret>`), None if it is not one."""
    head, dot, secret = token.partition(".")
    if not dot or not secret or not head.startswith(TOKEN_PREFIX):
        return None
    return head.removeprefix(TOKEN_PREFIX) or None


@dataclass
class _Token:
    bot: BotKey
    digest: str


@dataclass
class Registry:
    """The registry folded from its stream: bots, live token digests, signing secrets."""

    bots: dict[BotKey, RegisteredBot] = field(default_factory=dict)
    tokens: dict[str, _Token] = field(default_factory=dict)
    """Live tokens by id; a bot has at most one."""
    active: dict[BotKey, str] = field(default_factory=dict)
    """Each bot's live token id."""
    signing_secrets: dict[BotKey, str] = field(default_factory=dict)
    book: AccountBook = field(default_factory=AccountBook)
    """The accounts and the invites."""
    version: int = 0
    """The version of the registry stream folded so far."""

    def apply(self, event: RegistryEvent) -> None:
        """Folds one registry event in; an account's suspension marks its bots suspended and
        ends their tokens."""
        match event:
            case AccountCreated() | InviteIssued():
                self.book.apply(event)
            case AccountSuspended():
                self.book.apply(event)
                for key, bot in list(self.bots.items()):
                    if bot.account == event.name:
                        self.bots[key] = msgspec.structs.replace(bot, suspended=True)
                        self.tokens.pop(self.active.pop(key, ""), None)
            case BotRegistered():
                bot = bot_of(event)
                if self.book.suspended(bot.account):
                    bot = msgspec.structs.replace(bot, suspended=True)
                self.bots[event.name, event.version] = bot
            case BotTokenIssued():
                key = (event.name, event.version)
                if self.bots.get(key) is not None and self.bots[key].suspended:
                    return
                self.tokens.pop(self.active.get(key, ""), None)
                self.tokens[event.token_id] = _Token(key, event.token_hash)
                self.active[key] = event.token_id
            case BotTokenRevoked():
                key = (event.name, event.version)
                self.tokens.pop(event.token_id, None)
                if self.active.get(key) == event.token_id:
                    del self.active[key]
            case WebhookSecretIssued():
                self.signing_secrets[event.name, event.version] = event.secret

    def bot_of_token(self, token: str) -> RegisteredBot | None:
        """Returns the bot whose live token `token` is, None for anything else."""
        token_id = token_id_of(token)
        known = self.tokens.get(token_id) if token_id else None
        if known is None or not hmac.compare_digest(known.digest, token_digest(token)):
            return None
        bot = self.bots.get(known.bot)
        return None if bot is None or bot.suspended else bot

    def bots_of(self, account: str) -> list[RegisteredBot]:
        """Returns the bots of `account`, in registration order."""
        return [bot for bot in self.bots.values() if bot.account == account]


def bot_of(event: BotRegistered) -> RegisteredBot:
    return RegisteredBot(
        event.name,
        event.version,
        event.game,
        event.strategy,
        event.description,
        event.registered_at,
        event.kind,
        event.url,
        event.accept_challenges,
        event.account if isinstance(event.account, str) and event.account else HOST,
    )


def resolve_bot(
    game: str, name: str, version: str, bots: Sequence[RegisteredBot], field: str
) -> tuple[BotKind, str]:
    """Returns how `name@version` plays `game`: its kind and its strategy (empty unless
    built-in). Raises InvalidRequest at `field`.

    A registered bot plays as registered (in its own game only); an unregistered name that
    is one of the game's built-in strategies plays itself.
    """
    spec = get_game(game)
    found = _registered_for(game, name, version, bots, field)
    if found is not None:
        return found.kind, found.strategy
    if name in spec.bots:
        return "builtin", name
    known = sorted({b.key for b in bots if b.game == game})
    hint = f"; registered: {', '.join(known)}" if known else ""
    raise InvalidRequest(
        field,
        f"unknown bot {name}@{version}: not registered, not a strategy of {spec.title} "
        f"({', '.join(spec.bots)}){hint}",
    )


def _registered_for(
    game: str, name: str, version: str, bots: Sequence[RegisteredBot], field: str
) -> RegisteredBot | None:
    """Returns the bot registered as `name@version`, None when there is none; raises
    InvalidRequest at `field` when it is registered for another game than `game`."""
    found = next((b for b in bots if (b.name, b.version) == (name, version)), None)
    if found is not None and found.game != game:
        titles = get_game(found.game).title, get_game(game).title
        raise InvalidRequest(field, f"{found.key} plays {titles[0]}, not {titles[1]}")
    if found is not None and found.suspended:
        raise InvalidRequest(
            field, f"{found.key} belongs to the suspended account {found.account}: it plays nowhere"
        )
    return found


def owner_of(
    game: str, name: str, version: str, bots: Sequence[RegisteredBot]
) -> str | msgspec.UnsetType:
    """Returns what a seat of `name@version` records of its owner (`recorded_owner`): a
    registered bot's account other than the host's, else unset."""
    found = next((b for b in bots if (b.name, b.version) == (name, version)), None)
    if found is None or found.game != game:
        return msgspec.UNSET
    return recorded_owner(found.account)


def bound_seat(
    game: str, kind: str, name: str, version: str, bots: Sequence[RegisteredBot], field: str
) -> Seat:
    """Returns a seat of `game` bound to the registered `kind` bot `name@version`.

    Raises InvalidRequest at `field.bot` for a bot that is not registered for `game` or is
    built-in, at `field.kind` for a bot of another kind.
    """
    found = _registered_for(game, name, version, bots, f"{field}.bot")
    if found is None:
        raise InvalidRequest(f"{field}.bot", f"no bot {name}@{version} is registered")
    if found.kind == "builtin":
        raise InvalidRequest(
            f"{field}.bot", f"{found.key} is a built-in strategy, not an external or webhook bot"
        )
    if found.kind != kind:
        raise InvalidRequest(f"{field}.kind", f"{found.key} is a {found.kind} bot, not {kind}")
    return Seat(
        kind=found.kind,
        name=found.name,
        version=found.version,
        account=recorded_owner(found.account),
    )
