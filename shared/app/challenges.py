"""Challenges' use cases: issue, answer, cancel and start a challenge, each reading its stream
(`challenge:<id>`) and appending at the version read; the events and the fold are
`shared.model.challenges`.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from shared.app.games import create_game
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, InvalidRuleset
from shared.messages.codec import encode_all
from shared.messages.common import Clock, Seat
from shared.model import clocks
from shared.model.accounts import recorded_owner
from shared.model.challenges import (
    CODEC,
    DEFAULT_EXPIRY_S,
    KIND,
    Challenge,
    ChallengeAccepted,
    ChallengeCancelled,
    ChallengeClosed,
    ChallengeDeclined,
    ChallengeEvent,
    ChallengeExpired,
    ChallengeIssued,
    ChallengeStarted,
    NotYours,
    Opponent,
    Refused,
    TooManyOpen,
    UnknownChallenge,
    fold,
    iso,
    stream_id,
)
from shared.model.registry import RegisteredBot, resolve_bot
from shared.ports.game_slots import GameSlots
from shared.store.port import ConcurrencyConflict, EventStore


def read(store: EventStore, challenge_id: str, now: datetime) -> tuple[Challenge, ChallengeIssued]:
    """Returns the challenge and its issuing event; raises UnknownChallenge."""
    recorded = store.read(stream_id(challenge_id)) if _plausible(challenge_id) else []
    if not recorded or recorded[0].kind != KIND:
        raise UnknownChallenge(challenge_id)
    events = CODEC.decode_all(recorded)
    first = events[0]
    assert isinstance(first, ChallengeIssued)
    return fold(events, recorded[-1].version, now), first


def _plausible(challenge_id: str) -> bool:
    """Returns whether `challenge_id` looks like an id this module makes (32 hex digits)."""
    return len(challenge_id) == 32 and all(c in "0123456789abcdef" for c in challenge_id)


def _seat(bot: RegisteredBot) -> Seat:
    """Returns the seat a registered bot plays (bound to it unless it is built-in)."""
    account = recorded_owner(bot.account)
    if bot.kind == "builtin":
        return Seat(
            kind="bot", bot=bot.strategy, name=bot.name, version=bot.version, account=account
        )
    return Seat(kind=bot.kind, name=bot.name, version=bot.version, account=account)


def _players(
    game: str,
    challenger: RegisteredBot | None,
    opponents: Sequence[Opponent],
    bots: Sequence[RegisteredBot],
) -> list[RegisteredBot]:
    """Returns the bots to seat, challenger first; raises InvalidRequest naming the field."""
    known = {(b.name, b.version): b for b in bots}
    seated: list[RegisteredBot] = [] if challenger is None else [challenger]
    if challenger is not None and challenger.game != game:
        raise InvalidRequest(
            "game", f"{challenger.key} plays {get_game(challenger.game).title}, not {game}"
        )
    for index, opponent in enumerate(opponents):
        field = f"opponents[{index}]"
        found = known.get((opponent.bot, opponent.version))
        if found is None:
            found = _strategy(game, opponent, bots, field)
        if found.game != game:
            title = get_game(found.game).title
            raise InvalidRequest(field, f"{found.key} plays {title}, not {game}")
        if any(b.key == found.key for b in seated):
            raise InvalidRequest(field, f"{found.key} is seated already")
        if found.suspended:
            raise InvalidRequest(
                field, f"{found.key} belongs to the suspended account {found.account}"
            )
        if found.kind == "webhook":
            _consents(found, challenger, field)
        seated.append(found)
    return seated


def _strategy(
    game: str, opponent: Opponent, bots: Sequence[RegisteredBot], field: str
) -> RegisteredBot:
    """Returns the built-in strategy `opponent` names (not a registered bot): it plays as
    `strategy@version`, played by the platform. Raises InvalidRequest at `field`, listing
    the game's strategies and registered bots, when it names none of them."""
    _, strategy = resolve_bot(game, opponent.bot, opponent.version, bots, field)
    return RegisteredBot(
        name=opponent.bot,
        version=opponent.version,
        game=game,
        strategy=strategy,
        description="",
        registered_at="",
    )


def _consents(bot: RegisteredBot, challenger: RegisteredBot | None, field: str) -> None:
    """Raises Refused unless the webhook `bot` is seated by challenges of `challenger` (None:
    the host), as its `accept_challenges` says."""
    rule = bot.accept_challenges
    if rule == "registered" or (rule == "host" and challenger is None):
        return
    whose = "nobody's" if rule == "none" else "the host's only"
    raise Refused(
        field,
        f"{bot.key} is seated by {whose} challenges (accept_challenges: {rule})",
        f"accept_challenges: {rule}",
    )


def hold_open(slots: GameSlots, store: EventStore, bot: str, cap: int, now: datetime) -> str:
    """Reserves one of `bot`'s `cap` places of open challenges (0: no cap, the places only
    say which challenges it issued, for its event stream's expiries); returns the
    reservation, for `slots.confirm(bot, reservation, challenge_id)` once issued (else
    `slots.cancel`). Raises TooManyOpen. When full (without a cap: past `_SWEEP` places),
    the places of challenges that closed are given back first (see `give_back_closed`)."""
    reservation = f"reserved:{uuid.uuid4().hex}"
    limit = cap or _SWEEP
    if slots.reserve(bot, reservation, limit, _RESERVATION_MS):
        return reservation
    expiring = give_back_closed(slots, store, bot, now)
    if slots.reserve(bot, reservation, limit, _RESERVATION_MS):
        return reservation
    if cap == 0 and slots.reserve(bot, reservation, _UNBOUNDED, _RESERVATION_MS):
        return reservation
    soonest = min(expiring, default=now + timedelta(seconds=1))
    raise TooManyOpen(bot, cap, max(1, math.ceil((soonest - now).total_seconds())))


def give_back_closed(
    slots: GameSlots, store: EventStore, bot: str, now: datetime
) -> list[datetime]:
    """Gives back `bot`'s places of challenges that closed (started, declined, cancelled,
    expired: an expiry not recorded yet is recorded first, so that the challenger's stream
    tells of it); returns when each open one expires."""
    expiring: list[datetime] = []
    closed: list[str] = []
    for challenge_id in slots.games(bot):
        try:
            challenge = expire(store, challenge_id, now)
        except UnknownChallenge:
            closed.append(challenge_id)
            continue
        if challenge.status == "open":
            expiring.append(datetime.fromisoformat(challenge.expires_at))
        else:
            closed.append(challenge_id)
    slots.release(bot, closed)
    return expiring


_RESERVATION_MS = 60_000
"""How long a place reserved for a challenge outlives an issuer that never confirmed it."""
_SWEEP = 100
"""Without a cap: how many places a bot holds before the closed ones are given back."""
_UNBOUNDED = 2**31
"""Without a cap: the bound of a reservation made after the sweep (none is ever refused)."""


def expire(store: EventStore, challenge_id: str, now: datetime) -> Challenge:
    """Records the expiry of a challenge that passed its `expires_at` unanswered
    (`ChallengeExpired`, once: a recorded one is not recorded again); returns the challenge.
    Raises UnknownChallenge."""

    def step(challenge: Challenge) -> ChallengeEvent | None:
        if challenge.status != "expired" or _expiry_recorded(store, challenge):
            return None
        return ChallengeExpired(at=iso(now))

    return _append(store, challenge_id, now, step)


def _expiry_recorded(store: EventStore, challenge: Challenge) -> bool:
    """Returns whether the last event of an expired challenge's stream is its ChallengeExpired
    (nothing follows an expiry: a closed challenge takes no other event)."""
    last = store.read(stream_id(challenge.challenge_id), challenge.version - 1, 1)
    return bool(last) and last[0].type == "ChallengeExpired"


def issue(
    store: EventStore,
    *,
    game: str,
    ruleset: str | dict[str, Any] | None,
    opponents: Sequence[Opponent],
    bots: Sequence[RegisteredBot],
    challenger: RegisteredBot | None,
    now: datetime,
    clock: Clock | None = None,
    expires_in: int = DEFAULT_EXPIRY_S,
    entrant_clock: Clock | None = None,
) -> Challenge:
    """Issues a challenge and returns it (not yet started); raises InvalidRequest naming
    the field at fault, with nothing stored. A challenge that sets no clock (nor its
    ruleset) and seats an external or webhook bot records `entrant_clock` as its clock."""
    try:
        spec = get_game(game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {game!r}") from None
    if not opponents:
        raise InvalidRequest(
            "opponents", "name at least one registered bot or built-in strategy to challenge"
        )
    seated = _players(game, challenger, opponents, bots)
    if not spec.min_players <= len(seated) <= spec.max_players:
        raise InvalidRequest(
            "opponents",
            f"{spec.title} seats {spec.min_players} to {spec.max_players} players, "
            f"not {len(seated)}",
        )
    try:
        rules = spec.ruleset(ruleset)
        spec.validate(rules, len(seated))
    except InvalidRuleset as error:
        field = "ruleset" if error.field == "ruleset" else f"ruleset.{error.field}"
        raise InvalidRequest(field, error.message) from None
    clock = clocks.with_default(clock, rules, (b.kind for b in seated), entrant_clock)
    challenge_id = uuid.uuid4().hex
    challenger_key = "" if challenger is None else challenger.key
    pending = [b.key for b in seated if b.kind == "external" and b.key != challenger_key]
    issued = ChallengeIssued(
        challenge_id=challenge_id,
        game=spec.name,
        ruleset=ruleset,
        seats=[_seat(b) for b in seated],
        bots=[b.key for b in seated],
        challenger=challenger_key,
        pending=pending,
        issued_at=iso(now),
        expires_at=iso(now + timedelta(seconds=expires_in)),
        clock=clock,
    )
    store.append(stream_id(challenge_id), KIND, 0, encode_all([issued]))
    return fold([issued], 1, now)


def _append(
    store: EventStore,
    challenge_id: str,
    now: datetime,
    step: Callable[[Challenge], ChallengeEvent | None],
) -> Challenge:
    """Appends what `step` makes of the current challenge (None: nothing), retrying on a
    concurrent append; returns the challenge after it."""
    while True:
        challenge, _ = read(store, challenge_id, now)
        event = step(challenge)
        if event is None:
            return challenge
        try:
            store.append(stream_id(challenge_id), KIND, challenge.version, encode_all([event]))
        except ConcurrencyConflict:
            continue
        return read(store, challenge_id, now)[0]


def answer(
    store: EventStore, challenge_id: str, bot: str, *, accept: bool, now: datetime, reason: str = ""
) -> Challenge:
    """Records `bot`'s acceptance or decline; returns the challenge after it.

    Raises UnknownChallenge, NotYours for a bot the challenge does not wait for, and
    ChallengeClosed when it is not open. Accepting twice is a no-op.
    """

    def step(challenge: Challenge) -> ChallengeEvent | None:
        if accept and bot in challenge.accepted and challenge.status in {"open", "started"}:
            return None
        if challenge.status != "open":
            raise ChallengeClosed(challenge)
        if bot not in challenge.pending:
            if bot in challenge.accepted:
                raise ChallengeClosed(challenge)
            raise NotYours(f"challenge {challenge_id} does not wait for {bot}")
        if accept:
            return ChallengeAccepted(bot=bot, at=iso(now))
        return ChallengeDeclined(bot=bot, reason=reason, at=iso(now))

    return _append(store, challenge_id, now, step)


def cancel(store: EventStore, challenge_id: str, by: str, now: datetime) -> Challenge:
    """Withdraws an open challenge (`by`: its challenger's key, "" for the host); returns it.

    Raises NotYours when `by` is another bot, ChallengeClosed when it is not open; cancelling
    a cancelled challenge is a no-op.
    """

    def step(challenge: Challenge) -> ChallengeEvent | None:
        if by and by != challenge.challenger:
            raise NotYours(f"only {challenge.challenger or 'the host'} may cancel it")
        if challenge.status == "cancelled":
            return None
        if challenge.status != "open":
            raise ChallengeClosed(challenge)
        return ChallengeCancelled(by=by, at=iso(now))

    return _append(store, challenge_id, now, step)


def start(store: EventStore, challenge_id: str, now: datetime) -> Challenge:
    """Creates the game of a challenge every bot accepted and records it; returns the
    challenge (unchanged when it is not ready). Safe to repeat: the creation is idempotent."""
    challenge, issued = read(store, challenge_id, now)
    if not challenge.ready:
        return challenge
    outcome = create_game(
        store,
        issued.game,
        ruleset=issued.ruleset,
        seats=issued.seats,
        idempotency_key=f"challenge:{challenge_id}",
        created_at=iso(now),
        clock=issued.clock,
    )

    def step(current: Challenge) -> ChallengeEvent | None:
        return ChallengeStarted(game_id=outcome.game_id, at=iso(now)) if current.ready else None

    return _append(store, challenge_id, now, step)
