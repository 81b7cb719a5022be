"""Challenges: one bot (or the host) invites registered bots to a game; it starts once all accept.

A challenge names a game, a ruleset, an optional clock and the registered bots to seat:
the challenger (when a bot issues it) in seat 0, then the opponents in the order given. An
`external` opponent answers with its token (accept or decline); `builtin` and `webhook`
opponents are played by the platform and accept at once. When the last answer is an
acceptance the game is created, with the seats bound to the bots, and the challenge
records its id; a decline or a cancellation closes it, and an open challenge expires at
`expires_at` (its time alone closes it; `ChallengeExpired` records that afterwards, so the
challenger's event stream tells of it once, at a feed position).

Each challenge is a stream of events (`challenge:<id>`, kind `challenge`), appended with
optimistic concurrency, so concurrent answers are folded one after the other. The game's
id derives from the challenge's (`game_id_for("challenge:<id>")`), and its creation is
idempotent: an answer that crashed between the acceptance and `ChallengeStarted` is
completed by the next `start` (any later answer or read through `settle`). This module is
the events and the pure fold; the use cases are `shared.app.challenges`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec

from shared.messages.codec import EventCodec
from shared.messages.common import Clock, Event, Seat
from shared.model.idempotency import game_id_for

KIND = "challenge"
STREAM_PREFIX = "challenge:"
DEFAULT_EXPIRY_S = 600
"""An open challenge expires this long after it was issued unless it says otherwise."""

Status = Literal["open", "started", "declined", "cancelled", "expired"]
ExpirySeconds = Annotated[int, msgspec.Meta(ge=10, le=86_400)]


class ChallengeIssued(Event, frozen=True, kw_only=True):
    """A challenge was issued: the game, its ruleset and clock, the bots seated in order,
    who issued it ("" for the host) and which bots must still accept."""

    challenge_id: str
    game: str
    ruleset: str | dict[str, Any] | None
    seats: list[Seat]
    bots: list[str]
    """`name@version` of the bot in each seat."""
    challenger: str
    pending: list[str]
    """The external bots whose acceptance the game waits for."""
    issued_at: str
    expires_at: str
    clock: Clock | None = None


class ChallengeAccepted(Event, frozen=True, kw_only=True):
    """`bot` accepted the challenge."""

    bot: str
    at: str = ""


class ChallengeDeclined(Event, frozen=True, kw_only=True):
    """`bot` declined the challenge (`reason`, if it gave one); the challenge is closed."""

    bot: str
    reason: str = ""
    at: str = ""


class ChallengeCancelled(Event, frozen=True, kw_only=True):
    """The challenger (or the host, `by` = "") withdrew the challenge; it is closed."""

    by: str
    at: str = ""


class ChallengeStarted(Event, frozen=True, kw_only=True):
    """Every bot accepted and the game `game_id` was created."""

    game_id: str
    at: str = ""


class ChallengeExpired(Event, frozen=True, kw_only=True):
    """The challenge passed its `expires_at` unanswered: the record of an expiry that its
    time already made (appended once, by the first reader that needs it recorded: the
    challenger's event stream, or the challenger issuing more)."""

    at: str = ""


ChallengeEvent = (
    ChallengeIssued
    | ChallengeAccepted
    | ChallengeDeclined
    | ChallengeCancelled
    | ChallengeStarted
    | ChallengeExpired
)
CODEC: EventCodec[ChallengeEvent] = EventCodec(ChallengeEvent)


class Challenge(msgspec.Struct, frozen=True, omit_defaults=True):
    """A challenge as folded from its stream (its `status` as of `now` when it was read)."""

    challenge_id: str
    """The challenge's id."""
    game: str
    """The game to play."""
    ruleset: str | dict[str, Any] | None
    """A preset's name or the ruleset's fields; null: the classic preset."""
    bots: list[str]
    """`name@version` of the bot in each seat, in seat order."""
    challenger: str
    """The bot that issued it; "" when the host did."""
    status: Status
    """`open` (waiting for answers), `started` (its game began), `declined`, `cancelled` or
    `expired`."""
    pending: list[str]
    """The bots whose answer the challenge still waits for."""
    accepted: list[str]
    """The bots (`name@version`) that accepted so far."""
    issued_at: str
    """When it was issued (ISO 8601, UTC)."""
    expires_at: str
    """When it expires unless every bot accepted (ISO 8601, UTC)."""
    game_id: str
    """The game it starts (the id is known from the start; the game exists once started)."""
    version: int
    """The challenge's stream version."""
    clock: Clock | None = None
    """The game's clock; null: the ruleset's."""
    declined_by: str = ""
    """The bot that declined it, if one did."""
    reason: str = ""
    """Why it was declined or cancelled, if given."""

    @property
    def ready(self) -> bool:
        """Returns whether every bot accepted but the start is not recorded yet."""
        return self.status == "open" and not self.pending

    def involves(self, bot: str) -> bool:
        """Returns whether `bot` issued the challenge or is seated by it."""
        return bot == self.challenger or bot in self.bots


class UnknownChallenge(LookupError):
    """No challenge has that id."""

    def __init__(self, challenge_id: str) -> None:
        super().__init__(f"no challenge {challenge_id!r}")
        self.challenge_id = challenge_id


class ChallengeClosed(Exception):
    """The challenge is no longer open (started, declined, cancelled or expired)."""

    def __init__(self, challenge: Challenge) -> None:
        message = f"challenge {challenge.challenge_id} is {challenge.status}"
        if challenge.status == "declined":
            message += f" (by {challenge.declined_by})"
        super().__init__(message)
        self.challenge = challenge
        self.message = message


class Refused(Exception):
    """A webhook bot named in a challenge is not seated by this challenger (`rule`)."""

    def __init__(self, field: str, message: str, rule: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.rule = rule


class TooManyOpen(Exception):
    """The challenger has `limit` open challenges already; one closes in `retry_after` s at
    the latest (it expires)."""

    def __init__(self, bot: str, limit: int, retry_after: int) -> None:
        message = (
            f"{bot} has {limit} open challenges, the most a bot may hold; cancel one, or"
            f" retry after {retry_after} s"
        )
        super().__init__(message)
        self.message = message
        self.limit = limit
        self.retry_after = retry_after


class NotYours(Exception):
    """The caller may not do this to the challenge (it is not the bot it concerns)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def stream_id(challenge_id: str) -> str:
    """Returns the stream of a challenge."""
    return f"{STREAM_PREFIX}{challenge_id}"


def game_of(challenge_id: str) -> str:
    """Returns the id of the game a challenge starts."""
    return game_id_for(f"challenge:{challenge_id}")


def iso(moment: datetime) -> str:
    return moment.isoformat()


def fold(events: Sequence[ChallengeEvent], version: int, now: datetime) -> Challenge:
    """Returns the challenge folded from its events, its status as of `now`."""
    issued = events[0]
    if not isinstance(issued, ChallengeIssued):
        raise ValueError("a challenge's stream starts with ChallengeIssued")
    pending = list(issued.pending)
    accepted: list[str] = []
    status: Status = "open"
    declined_by = reason = ""
    for event in events[1:]:
        match event:
            case ChallengeAccepted():
                if event.bot in pending:
                    pending.remove(event.bot)
                    accepted.append(event.bot)
            case ChallengeDeclined():
                status, declined_by, reason = "declined", event.bot, event.reason
            case ChallengeCancelled():
                status = "cancelled"
            case ChallengeStarted():
                status = "started"
            case ChallengeExpired():
                status = "expired"
    if status == "open" and pending and now >= datetime.fromisoformat(issued.expires_at):
        status = "expired"
    return Challenge(
        challenge_id=issued.challenge_id,
        game=issued.game,
        ruleset=issued.ruleset,
        bots=list(issued.bots),
        challenger=issued.challenger,
        status=status,
        pending=pending,
        accepted=accepted,
        issued_at=issued.issued_at,
        expires_at=issued.expires_at,
        game_id=game_of(issued.challenge_id),
        version=version,
        clock=issued.clock,
        declined_by=declined_by,
        reason=reason,
    )


class Opponent(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A bot to challenge: a registered bot's name, or one of the game's built-in strategies
    (`heuristic`, `random`, ...: played by the platform, it accepts at once), and a version
    label (default "1"; a strategy plays and is rated as `strategy@version`)."""

    bot: str
    """A registered bot's name, or a built-in strategy of the game when no bot is registered
    under `bot@version`."""
    version: str = "1"
    """The registered bot's version label (a strategy's label is free)."""
