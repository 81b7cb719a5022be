"""Verifiable deals: a game commits to its seed when it is created and reveals it at the end.

The commitment (`GameCreated.commitment`, public from the start) is the lowercase hex
SHA-256 of the UTF-8 bytes

    <seed>:<salt>

- `<seed>` is the seed as text (`seed_text`): an integer seed in decimal (`7`), a string
  seed as it was given (`7:12`). Every engine deals from the seed's text alone
  (`shared.games.cards.shuffled` shuffles by `str(seed)`), so dealing from the text deals
  the same cards as the seed did; a test holds every game to it.
  The platform deals every game from a deal key (`shared.model.deal_keys`), never from a host's
  seed itself, so the seed committed to and revealed is that key.
- `<salt>` is 64 lowercase hex digits (32 random bytes drawn for the game), so that the
  commitment tells nothing about the seed. The salt holds no `:` (the seed may).

For example, the seed 7 with a salt of 64 zeros (`0000...0000`) commits to
`a5a47a13b8aba1c7638b5d730c8c9d009e26cbae511b375d9066694901105b55`:

    python3 -c 'import hashlib; print(hashlib.sha256(b"7:" + b"0" * 64).hexdigest())'

The game's `GameCreated` also records the seed and salt (`deal_seed`, `salt`), withheld from
every reader while the game runs (`shared.app.loading.as_seen_by`); its `GameFinished` reveals
them (`seed`, `salt`; the platform fills them in with `reveal`). Anyone holding the finished
log can then check, with `verify`: the revealed seed and salt hash to the commitment, and
`spec.deal(ruleset, len(seats), seed)` equals the log's start event (version 2) card for card.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRuleset
from shared.messages.common import Event, GameCreated, GameFinished

_DIGEST = re.compile(r"[0-9a-f]{64}")
"""A commitment, and a salt: 64 lowercase hex digits."""

Status = Literal["ok", "failed", "no_commitment", "unrevealed"]


class Verification(msgspec.Struct, frozen=True, omit_defaults=True):
    """The check of a game's deal against its commitment.

    `status`: `ok` (the revealed seed and salt hash to the commitment and deal the logged
    cards), `failed` (`version` names the first bad event, `detail` says why),
    `no_commitment` (a game created before commitments existed, or a fork) or `unrevealed`
    (the game runs: its seed is revealed at its end).
    """

    status: Status
    """`ok`, `failed`, `no_commitment` or `unrevealed`."""
    detail: str
    """What was checked, or why it failed, for a person to read."""
    version: int | None = None
    """The first bad event's version, when `failed`."""
    commitment: str = ""
    """The commitment the game published at its creation."""
    seed: str = ""
    """The seed its finish revealed (empty until then)."""
    salt: str = ""
    """The salt its finish revealed (empty until then)."""


def seed_text(seed: int | str) -> str:
    """Returns the text of a seed, as committed to and revealed; the engines deal from it alone."""
    return str(seed)


def commitment(seed: int | str, salt: str) -> str:
    """Returns the commitment to a seed and salt: hex SHA-256 of the UTF-8 `<seed>:<salt>`."""
    return hashlib.sha256(f"{seed_text(seed)}:{salt}".encode()).hexdigest()


def reveal(created: GameCreated, events: Sequence[Event]) -> list[Event]:
    """Returns `events` with any GameFinished among them revealing the seed and salt of the
    game created by `created` (unchanged for a game created without a commitment)."""
    if not created.commitment:
        return list(events)
    return [
        msgspec.structs.replace(event, seed=created.deal_seed, salt=created.salt)
        if isinstance(event, GameFinished)
        else event
        for event in events
    ]


def difference(logged: Any, expected: Any, path: str = "") -> str | None:
    """Returns where two JSON-like values first differ (`packs[1][3]: 7H, not 5C`), None if
    they are equal."""
    if isinstance(logged, dict) and isinstance(expected, dict):
        for key in [*expected, *(k for k in logged if k not in expected)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in logged:
                return f"{where}: missing"
            if key not in expected:
                return f"{where}: not expected"
            found = difference(logged[key], expected[key], where)
            if found is not None:
                return found
        return None
    if isinstance(logged, list) and isinstance(expected, list):
        for index, (one, other) in enumerate(zip(logged, expected, strict=False)):
            found = difference(one, other, f"{path}[{index}]")
            if found is not None:
                return found
        if len(logged) != len(expected):
            return f"{path or 'value'}: {len(logged)} items, not {len(expected)}"
        return None
    if logged == expected and type(logged) is type(expected):
        return None
    return f"{path or 'value'}: {_short(logged)}, not {_short(expected)}"


def _short(value: Any) -> str:
    """Returns a value as compact JSON, cut to a readable length."""
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else f"{text[:77]}..."


def _failed(version: int, detail: str, created: GameCreated | None = None) -> Verification:
    """Returns a failed verification naming the first bad event."""
    published = created.commitment if created is not None else ""
    return Verification("failed", detail, version=version, commitment=published)


def verify(events: Sequence[Event]) -> Verification:
    """Returns the check of a game's deal: `events` is its log in version order (the event
    at index i has version i + 1), decoded. Pure: no store, no clock."""
    if not events or not isinstance(events[0], GameCreated):
        return _failed(1, "the log does not begin with GameCreated")
    created = events[0]
    found = [(i + 1, e) for i, e in enumerate(events) if isinstance(e, GameFinished)]
    finish_version, finished = found[0] if found else (0, None)
    if not created.commitment:
        if created.deal_seed or created.salt or (finished and (finished.seed or finished.salt)):
            return _failed(1, "GameCreated publishes no commitment, yet the log holds a seed")
        return Verification("no_commitment", _no_commitment(created))
    if not _DIGEST.fullmatch(created.commitment):
        return _failed(1, "the commitment is not 64 lowercase hex digits", created)
    if finished is None:
        detail = "the game is not over: its seed and salt are revealed when it ends"
        return Verification("unrevealed", detail, commitment=created.commitment)
    return _check_reveal(events, created, finish_version, finished)


def _no_commitment(created: GameCreated) -> str:
    """Returns why a game has no commitment."""
    if isinstance(created.forked_from, str):
        return (
            f"a fork of game {created.forked_from} after version {created.fork_version}:"
            " it was dealt there; verify that game"
        )
    return "the game was created without a commitment (before commitments existed)"


def _check_reveal(
    events: Sequence[Event], created: GameCreated, finish_version: int, finished: GameFinished
) -> Verification:
    """Returns the check of the reveal in `finished` against the commitment and the deal."""
    if not finished.seed or not finished.salt:
        return _failed(finish_version, "GameFinished does not reveal the seed and salt", created)
    if not _DIGEST.fullmatch(finished.salt):
        return _failed(finish_version, "the revealed salt is not 64 lowercase hex digits", created)
    if commitment(finished.seed, finished.salt) != created.commitment:
        detail = "the revealed seed and salt do not hash to the commitment"
        return _failed(finish_version, detail, created)
    if (created.deal_seed, created.salt) != (finished.seed, finished.salt):
        detail = "GameCreated's seed and salt are not those that GameFinished reveals"
        return _failed(1, detail, created)
    if len(events) < 2:
        return _failed(2, "the log holds no start event", created)
    try:
        spec = get_game(created.game)
        rules = spec.ruleset(created.ruleset)
        dealt = spec.deal(rules, len(created.seats), finished.seed)
    except GameNotFound:
        return _failed(1, f"unknown game {created.game!r}", created)
    except InvalidRuleset as error:
        return _failed(1, f"the ruleset cannot be dealt: {error}", created)
    mismatch = difference(msgspec.to_builtins(events[1]), msgspec.to_builtins(dealt))
    if mismatch is not None:
        detail = f"the start event is not the deal of the revealed seed: {mismatch}"
        return _failed(2, detail, created)
    detail = "the revealed seed and salt hash to the commitment and deal the logged cards"
    return Verification(
        "ok", detail, commitment=created.commitment, seed=finished.seed, salt=finished.salt
    )
