"""The bot registry's use cases: registering a bot, rotating and revoking its token, and
reading the registry's stream (`registry:bots`); the fold and its events are
`shared.model.registry`.

Every change is appended at the version the registry was read at, so a name and version
are registered once across every process; `RegistryIndex` keeps one process's fold current.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence

import msgspec

from shared.catalog import game_names, get_game
from shared.errors import GameNotFound, InvalidRequest
from shared.messages.codec import encode, encode_all
from shared.messages.envelope import RecordedEvent
from shared.model.accounts import (
    HOST,
    RESERVED_BOT_NAMES,
    Account,
    AccountExists,
    NotOwned,
    RegistrationRefused,
    TooManyBots,
    UnknownAccount,
)
from shared.model.registry import (
    CODEC,
    KIND,
    MAX_URL,
    NAME,
    RESERVED_NAMES,
    STREAM,
    TOKEN_PREFIX,
    BotExists,
    BotRegistered,
    BotSpec,
    BotTokenIssued,
    BotTokenRevoked,
    Credentials,
    RegisteredBot,
    Registration,
    Registry,
    RegistryEvent,
    UnknownBot,
    WebhookSecretIssued,
    bot_of,
    token_digest,
)
from shared.ports.leases import ReadLeases
from shared.ports.webhook_urls import WebhookUrlRefused, check_webhook_url
from shared.store.port import ConcurrencyConflict, EventStore


def _new_token() -> tuple[str, str]:
    """Returns a new token's id and the token: 64 random bits of id, 256 of secret."""
    token_id = secrets.token_hex(8)
    return token_id, f"{TOKEN_PREFIX}{token_id}.{secrets.token_urlsafe(32)}"


def read_registry(store: EventStore) -> Registry:
    """Returns the registry folded from its stream."""
    registry = Registry()
    for recorded in store.read(STREAM):
        registry.apply(CODEC.decode(recorded))
        registry.version = recorded.version
    return registry


class RegistryIndex:
    """The registry kept current in this process: each look-up folds in only the new events.

    So a token rotated or revoked through any process stops working at this one's next
    look-up. While a follower keeps the fold current and holds a read lease for it (`trust`,
    `services.game.http.pipeline.follower.RegistryFollower`), look-ups read nothing: a change
    waits for every lease before it answers (`settle`). Safe to share between threads.
    """

    def __init__(self, store: EventStore, clock: Callable[[], float] = time.monotonic) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        self._registry = Registry()
        self._trusted_until = 0.0

    def refresh(self, *, force: bool = False) -> None:
        """Folds in the events appended since the last look-up (read outside the lock, so
        that look-ups of several threads do not queue behind one round trip); nothing to read
        while the fold is trusted, unless `force`.
        """
        with self._lock:
            if not force and self._clock() < self._trusted_until:
                return
            after = self._registry.version
        self.fold(self._store.read(STREAM, after=after))

    def fold(self, recorded: Sequence[RecordedEvent]) -> None:
        """Folds in those of `recorded` (the registry's events, in order) that come next."""
        with self._lock:
            for item in recorded:
                if item.version == self._registry.version + 1:
                    self._registry.apply(CODEC.decode(item))
                    self._registry.version = item.version

    def trust(self, until: float) -> None:
        """Lets look-ups answer from the fold without reading until `until` (this index's
        clock, `time.monotonic` by default): the follower's lease lasts at least that long."""
        with self._lock:
            self._trusted_until = until

    @property
    def trusted(self) -> bool:
        """Returns whether look-ups answer from the fold without reading."""
        with self._lock:
            return self._clock() < self._trusted_until

    def bot_of_token(self, token: str) -> RegisteredBot | None:
        """Returns the bot whose live token `token` is, None for anything else."""
        self.refresh()
        with self._lock:
            return self._registry.bot_of_token(token)

    def account_of_key(self, key: str) -> Account | None:
        """Returns the account whose key `key` is (suspended or not), None for anything else."""
        self.refresh()
        with self._lock:
            return self._registry.book.account_of_key(key)

    def bot(self, name: str, version: str) -> RegisteredBot | None:
        """Returns the bot registered as `name@version`, None when there is none."""
        self.refresh()
        with self._lock:
            return self._registry.bots.get((name, version))

    def live(self, token_id: str, *, look: bool = True) -> bool:
        """Returns whether the token with id `token_id` is live (not rotated or revoked),
        first folding in the registry's new events unless `look` is false."""
        if look:
            self.refresh()
        with self._lock:
            return token_id in self._registry.tokens

    @property
    def version(self) -> int:
        """Returns the version of the registry's stream folded so far (no look-up)."""
        with self._lock:
            return self._registry.version


LEASES = "registry"
"""The name of the registry's read leases (`shared.ports.leases`)."""


def settle(
    store: EventStore, leases: ReadLeases | None, wait_ms: int, poll_s: float = 0.005
) -> list[str]:
    """Waits until every process answering from its own fold of the registry has folded it
    up to its version now, or stopped trusting its fold (no live lease behind it), for at
    most `wait_ms`; returns the holders still behind (empty: settled; none without leases).

    A change to the registry calls it before it answers, so that a token rotated or revoked
    no longer works on any process once the change is acknowledged. A lease outlives a
    process that stops by its time to live at most, which bounds the wait.
    """
    if leases is None:
        return []
    version = store.version(STREAM)
    deadline = time.monotonic() + wait_ms / 1000
    while True:
        behind = leases.behind(version)
        if not behind or time.monotonic() >= deadline:
            return behind
        time.sleep(poll_s)


def _check_url(url: str, *, allow_private: bool) -> None:
    """Raises InvalidRequest (field `url`) unless the workers may call `url`: an absolute
    http(s) URL, and (unless `allow_private`) one of a globally reachable host (see
    `shared.ports.webhook_urls`)."""
    if len(url) > MAX_URL:
        raise InvalidRequest("url", f"a webhook URL has at most {MAX_URL} characters")
    try:
        check_webhook_url(url, allow_private=allow_private)
    except WebhookUrlRefused as refused:
        raise InvalidRequest("url", str(refused)) from None


def _check(spec: BotSpec, *, allow_private_urls: bool) -> None:
    """Raises InvalidRequest naming the field of `spec` that cannot be registered."""
    for name, value in (("name", spec.name), ("version", spec.version)):
        if not NAME.match(value):
            raise InvalidRequest(
                name, f"{value!r} is not 1-63 lower-case letters, digits, '_', '.' or '-'"
            )
    if spec.name in RESERVED_NAMES:
        raise InvalidRequest("name", f"{spec.name!r} is reserved")
    try:
        game = get_game(spec.game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {spec.game!r}") from None
    if spec.kind == "builtin":
        if spec.strategy not in game.bots:
            names = ", ".join(game.bots)
            raise InvalidRequest(
                "strategy", f"{game.title} has no strategy {spec.strategy!r}: {names}"
            )
    elif spec.strategy:
        raise InvalidRequest("strategy", f"a {spec.kind} bot plays itself; it has no strategy")
    elif not game.has_decisions:
        raise InvalidRequest("game", f"{game.title} has no decisions; only built-in bots play it")
    if spec.kind == "webhook":
        _check_url(spec.url, allow_private=allow_private_urls)
    elif spec.url:
        raise InvalidRequest("url", f"only a webhook bot has a url, not a {spec.kind} one")
    if spec.kind != "webhook" and spec.accept_challenges != "host":
        raise InvalidRequest(
            "accept_challenges",
            f"only a webhook bot has accept_challenges: a {spec.kind} bot "
            + ("answers each challenge itself" if spec.kind == "external" else "accepts all"),
        )
    if len(spec.description) > 500:
        raise InvalidRequest("description", "at most 500 characters")


def registered_bots(store: EventStore) -> list[RegisteredBot]:
    """Returns every registered bot, in registration order."""
    return list(read_registry(store).bots.values())


def find_bot(store: EventStore, name: str, version: str) -> RegisteredBot | None:
    """Returns the bot registered as `name@version`, None when there is none."""
    return read_registry(store).bots.get((name, version))


def signing_secret(store: EventStore, name: str, version: str) -> str | None:
    """Returns the signing secret of the webhook bot `name@version`, None if it has none."""
    return read_registry(store).signing_secrets.get((name, version))


def _credentials(bot: RegisteredBot, at: str) -> tuple[list[RegistryEvent], Credentials]:
    """Returns the events issuing a new token (and a webhook's new secret), and them shown."""
    token_id, token = _new_token()
    events: list[RegistryEvent] = [
        BotTokenIssued(
            name=bot.name,
            version=bot.version,
            token_id=token_id,
            token_hash=token_digest(token),
            issued_at=at,
        )
    ]
    secret = ""
    if bot.kind == "webhook":
        secret = f"whsec_{secrets.token_urlsafe(32)}"
        events.append(
            WebhookSecretIssued(name=bot.name, version=bot.version, secret=secret, issued_at=at)
        )
    return events, Credentials(token, secret)


def register(
    store: EventStore,
    spec: BotSpec,
    registered_at: str = "",
    *,
    allow_private_urls: bool = False,
    account: str = HOST,
    max_bots: int = 0,
) -> Registration:
    """Registers `spec` for `account` (default: the host's); an external or webhook bot gets
    its credentials, shown only here.

    Registering the same bot again returns it unchanged and without credentials; the same
    name and version with anything else is refused (BotExists). A webhook URL that is, or
    resolves to, a loopback or private address is refused unless `allow_private_urls`. Every
    version of a name belongs to the account that registered its first (AccountExists, field
    `name`, for any other). An account other than the host's registers no reserved name
    (a built-in strategy's, `host`, ...), only while it is not suspended
    (RegistrationRefused), and at most `max_bots` bot versions (TooManyBots; 0: no cap):
    decided on the registry as read at the version appended after, so two racing
    registrations never pass the cap together.
    """
    _check(spec, allow_private_urls=allow_private_urls)
    if account != HOST:
        check_owned_name(spec.name)
    while True:
        registry = read_registry(store)
        _check_owner(registry, spec.name, account)
        known = registry.bots.get((spec.name, spec.version))
        if known is not None:
            given = (spec.game, spec.strategy, spec.description, spec.kind, spec.url)
            held = (known.game, known.strategy, known.description, known.kind, known.url)
            if (*held, known.accept_challenges) == (*given, spec.accept_challenges):
                return Registration(known, new=False)
            raise BotExists(
                "version", f"{spec.name}@{spec.version} is registered already; use a new version"
            )
        if account != HOST and max_bots and len(registry.bots_of(account)) >= max_bots:
            raise TooManyBots(account, max_bots)
        event = BotRegistered(
            name=spec.name,
            version=spec.version,
            game=spec.game,
            strategy=spec.strategy,
            description=spec.description,
            registered_at=registered_at,
            kind=spec.kind,
            url=spec.url,
            accept_challenges=spec.accept_challenges,
            account=msgspec.UNSET if account == HOST else account,
        )
        bot = bot_of(event)
        events: list[RegistryEvent] = [event]
        credentials = None
        if bot.kind != "builtin":
            issued, credentials = _credentials(bot, registered_at)
            events += issued
        try:
            store.append(STREAM, KIND, registry.version, encode_all(events))
        except ConcurrencyConflict:
            continue
        return Registration(bot, new=True, credentials=credentials)


def check_owned_name(name: str) -> None:
    """Raises InvalidRequest (field `name`) for a bot name no account but the host's may take:
    a built-in strategy's of any game, or a reserved one (`host`, `admin`, ...)."""
    if name in RESERVED_BOT_NAMES or name in strategy_names():
        raise InvalidRequest("name", f"{name!r} is reserved (a built-in strategy's or the host's)")


def strategy_names() -> frozenset[str]:
    """Returns the name of every built-in strategy of every game the platform hosts."""
    return frozenset(bot for game in game_names() for bot in get_game(game).bots)


def _check_owner(registry: Registry, name: str, account: str) -> None:
    """Raises unless `account` may register a version of `name` now: AccountExists when
    another account registered the name; for an account other than the host's,
    UnknownAccount or RegistrationRefused (suspended)."""
    owner = next((b.account for b in registry.bots.values() if b.name == name), account)
    if owner != account:
        raise AccountExists("name", f"the bot name {name!r} belongs to another account")
    if account == HOST:
        return
    if account not in registry.book.accounts:
        raise UnknownAccount(account)
    if registry.book.suspended(account):
        raise RegistrationRefused(f"the account {account} is suspended", field="account")


def register_bot(
    store: EventStore, spec: BotSpec, registered_at: str = "", *, allow_private_urls: bool = False
) -> tuple[RegisteredBot, bool]:
    """Registers `spec`; returns the bot and whether it is new (see `register`, which also
    returns the credentials of a new external or webhook bot).
    """
    registration = register(store, spec, registered_at, allow_private_urls=allow_private_urls)
    return registration.bot, registration.new


def _token_holder(
    registry: Registry, name: str, version: str, account: str | None = None
) -> RegisteredBot:
    """Returns the bot `name@version`; raises UnknownBot, NotOwned when `account` is given
    and is not the bot's, RegistrationRefused when the bot's account is suspended, or
    InvalidRequest for a built-in one."""
    bot = registry.bots.get((name, version))
    if bot is None:
        raise UnknownBot(name, version)
    if account is not None and bot.account != account:
        raise NotOwned(account, bot.key)
    if bot.suspended:
        raise RegistrationRefused(
            f"{bot.key} belongs to the suspended account {bot.account}", field="account"
        )
    if bot.kind == "builtin":
        raise InvalidRequest("kind", f"{bot.key} is a built-in strategy; it has no token")
    return bot


def rotate_token(
    store: EventStore, name: str, version: str, issued_at: str = "", account: str | None = None
) -> tuple[RegisteredBot, Credentials]:
    """Issues the bot a new token (and a webhook bot a new signing secret); the old token
    stops working at once. Returns the bot and the new credentials, shown only here.

    Raises UnknownBot, NotOwned (a bot not of `account`, when given), RegistrationRefused (a
    suspended account's bot), or InvalidRequest (field `kind`) for a built-in bot.
    """
    while True:
        registry = read_registry(store)
        bot = _token_holder(registry, name, version, account)
        events: list[RegistryEvent] = []
        live = registry.active.get((name, version))
        if live is not None:
            events.append(
                BotTokenRevoked(name=name, version=version, token_id=live, revoked_at=issued_at)
            )
        issued, credentials = _credentials(bot, issued_at)
        try:
            store.append(STREAM, KIND, registry.version, encode_all([*events, *issued]))
        except ConcurrencyConflict:
            continue
        return bot, credentials


def revoke_token(
    store: EventStore, name: str, version: str, revoked_at: str = "", account: str | None = None
) -> bool:
    """Revokes the bot's token; returns whether it had one. A webhook's secret stays.

    Raises UnknownBot, NotOwned (a bot not of `account`, when given), RegistrationRefused (a
    suspended account's bot: its token is dead already), or InvalidRequest (field `kind`)
    for a built-in bot.
    """
    while True:
        registry = read_registry(store)
        _token_holder(registry, name, version, account)
        live = registry.active.get((name, version))
        if live is None:
            return False
        event = BotTokenRevoked(name=name, version=version, token_id=live, revoked_at=revoked_at)
        try:
            store.append(STREAM, KIND, registry.version, [encode(event)])
        except ConcurrencyConflict:
            continue
        return True
