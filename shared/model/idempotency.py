"""Idempotency keys: a client's and the platform's live in separate namespaces.

A client's `Idempotency-Key` header only ever reaches the store (or an id derived from
it) as `client:<caller>:<key>`: a `ClientKey`, which `client_key` alone makes (and
`shared.app.games.act` takes no other), scoped to its caller; the store keeps a game's
records per game, so an action's key is scoped to its game too. The platform's keys (a
`PlatformKey`) start with one of `PLATFORM_KINDS`, never with `client`: so no client key
equals a platform key, whatever its text, and none can answer "replayed" to a platform
append, nor take a game id the platform derives from its key.

The platform's other creation keys keep their text: a challenge's game `challenge:<id>`
(`shared.model.challenges`) and a tournament game's schedule key `<tournament id>:<round>:<index>`
(a tournament id is a hex digest or a uuid, never `client`).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Literal, NewType, get_args

ClientKey = NewType("ClientKey", str)
"""A client's key as the store holds it: `client:<caller>:<key>`."""
PlatformKey = NewType("PlatformKey", str)
"""A key of the platform's own appends: `<kind>:<parts>`, the kind one of PLATFORM_KINDS."""

PlatformKind = Literal[
    "bot", "timeout", "webhook", "webhook-failed", "challenge", "create", "record", "abort"
]
PLATFORM_KINDS: frozenset[str] = frozenset(get_args(PlatformKind))
CLIENT = "client"
"""The first segment of every client key, and of no platform key."""

HOST = "host"
"""The caller of a hosting credential (the admin key, or anyone in open mode)."""


def client_key(caller: str, key: str) -> ClientKey:
    """Returns the store's key of a client's `key` sent by `caller` (`host`, a bot's
    `name@version`, or `anyone`); raises ValueError for a caller holding `:`."""
    if not caller or ":" in caller:
        raise ValueError(f"a caller identity holds no ':' and is not empty: {caller!r}")
    return ClientKey(f"{CLIENT}:{caller}:{key}")


def scoped(caller: str, key: str | None) -> ClientKey | None:
    """Returns `client_key(caller, key)`, None when the request sent no key."""
    return None if key is None else client_key(caller, key)


def platform_key(kind: PlatformKind, *parts: int | str) -> PlatformKey:
    """Returns the key of a platform append of `kind` (e.g. `bot:<version>`)."""
    if kind not in PLATFORM_KINDS:
        raise ValueError(f"not a platform key kind: {kind!r}")
    return PlatformKey(":".join([kind, *(str(part) for part in parts)]))


def bot_turn(version: int) -> PlatformKey:
    """Returns the key of the built-in bot move appended at `version` (`platform_key("bot",
    version)`, written out: one for every bot move)."""
    return PlatformKey(f"bot:{version}")


def timeout(turn_version: int) -> PlatformKey:
    """Returns the key of the timeouts of the waits begun at `turn_version`."""
    return platform_key("timeout", turn_version)


def webhook_answer(turn_version: int, seat: int) -> PlatformKey:
    """Returns the key of `seat`'s webhook answer to its turn begun at `turn_version`."""
    return platform_key("webhook", turn_version, seat)


def webhook_failure(attempt: str, seat: int) -> PlatformKey:
    """Returns the key of the failure of `seat`'s webhook call `attempt`."""
    return platform_key("webhook-failed", attempt, seat)


def abort(version: int) -> PlatformKey:
    """Returns the key of the platform's abort of a game at `version`."""
    return platform_key("abort", version)


def tournament_created(tournament_id: str) -> PlatformKey:
    """Returns the key of a tournament's creation on its stream."""
    return platform_key("create", tournament_id)


def game_recorded(game_key: str) -> PlatformKey:
    """Returns the key of a tournament's record of its game `game_key`."""
    return platform_key("record", game_key)


def game_id_for(idempotency_key: str | None) -> str:
    """Returns a new game id; a creation retried with the same key gets the same id."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    return hashlib.sha256(f"create:{idempotency_key}".encode()).hexdigest()[:32]
