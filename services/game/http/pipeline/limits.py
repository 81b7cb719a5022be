"""A bot token's rate limits: which budget a request is charged to, and the headers that say
where the token stands.

Two token buckets per bot token (`shared.ports.ratelimit`): its `requests`
(CARDARENA_RATE_LIMIT per CARDARENA_RATE_WINDOW) and its `turns` (CARDARENA_TURN_RATE_LIMIT
per CARDARENA_RATE_WINDOW). Most routes charge `requests` before they run (the app guard;
429 when it is empty). A route flagged `CHARGED_ON_ANSWER` (an action, a seat's view and
turn, the bot's turns poll) may serve a turn, which only its answer tells, so it is charged
once answered: a move (an action applied, not replayed) costs nothing; a read that serves a
turn (a view with legal actions, a turns poll that found one) costs one of `turns`, else of
`requests` when `turns` is empty; anything else (an error, a view with nothing to do) one of
`requests`, else of `turns` when `requests` is empty. When neither can pay, the answer is
replaced by a 429 (its work done, nothing returned; an action that was not a move changed
nothing). A read route is refused before it runs when both buckets are empty; the action
route never is, so a move always lands, however the token spent its budgets. Whatever a
token does beside moving thus stays within the two budgets, and its moves within its games.

Every answer to a bot token on a route that exists carries `RateLimit-Limit`,
`RateLimit-Remaining` and `RateLimit-Reset` (IETF draft httpapi-ratelimit-headers; Reset in
seconds until the bucket is full again) of the bucket its request was charged to
(`requests` for a move), and a 429 `Retry-After`. Answers to the admin and to anonymous
callers carry none: they have no bucket.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio.to_thread
import msgspec
from litestar import Response
from litestar.datastructures import MutableScopeHeaders
from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from services.game.http.pipeline.problems import MEDIA_TYPE, TITLES, TYPE_PREFIX, Problem
from services.game.http.schemas import SeatView
from shared.ports.ratelimit import RateDecision, RateLimiter

Charge = Literal["move", "turn", "other"]
"""What an answered request was: a move, a read that served a turn, anything else."""
OnAnswer = Literal["reads", "moves"]
"""How a `CHARGED_ON_ANSWER` route is checked before it runs: "reads" refuses it when both
buckets are empty; "moves" (the action route) never, so that a move always lands: a
non-move answer then is replaced by the 429."""

_CHARGES: dict[str, Charge] = {"move": "move", "turn": "turn"}

BOT_BODY_SIZE = 16 * 1024
"""The largest body a bot's own writes read (16 KiB: a move with its 1 KiB note escaped
sixfold, a challenge, joining a ladder or an arena); a larger one is 413 before it is read
whole. (The app's default for the host's writes is 1 MiB.)"""

CHARGED_ON_ANSWER = "cardarena.charged_on_answer"
"""A route handler's `opt` key: its request is charged once answered (see the module); the
value, an `OnAnswer`, says how it is checked before it runs."""
CHARGE_HEADER = "x-cardarena-charge"
"""The header by which a route's `after_request` hook says what its answer was; the
middleware removes it before the answer leaves."""
CALLER_KEY = "cardarena.caller"
"""Where a request keeps its identified caller (`services.game.http.pipeline.auth.caller_of`)."""
TICKET_KEY = "cardarena.rate_ticket"
"""Where a bot token's request keeps its `Ticket` in the request's state."""


class RateLimited(Exception):
    """A bot token's bucket is empty; retry after `retry_after` s (`decision`: its state)."""

    def __init__(self, message: str, retry_after: int, decision: RateDecision | None = None):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.decision = decision


@dataclass
class Ticket:
    """A bot token's request: the token's id, its two buckets, who it is, and once charged
    the decision its headers show."""

    token_id: str
    requests: RateLimiter
    turns: RateLimiter
    who: str = ""
    decision: RateDecision | None = None

    @property
    def requests_key(self) -> str:
        """Returns the key of the token's `requests` bucket."""
        return f"token:{self.token_id}"

    @property
    def turns_key(self) -> str:
        """Returns the key of the token's `turns` bucket."""
        return f"turns:{self.token_id}"

    def enter(self, who: str, on_answer: OnAnswer | None) -> None:
        """Charges the request as it comes in (`on_answer` "reads": only checks that a bucket
        is not empty; "moves": nothing); raises RateLimited (the decision kept) when it may
        not run."""
        self.who = who
        if on_answer == "moves":
            return
        if on_answer is None:
            self.decision = self.requests.hit(self.requests_key)
            if not self.decision.allowed:
                raise self._refused(self.decision.retry_after)
            return
        ordinary = self.requests.hit(self.requests_key, 0)
        if ordinary.remaining >= 1 or self.requests.limit == 0:
            return
        turns = self.turns.hit(self.turns_key, 0)
        if turns.remaining >= 1 or self.turns.limit == 0:
            return
        self.decision = ordinary
        raise self._refused(min(ordinary.retry_after, turns.retry_after))

    def settle(self, charge: Charge) -> RateLimited | None:
        """Charges an answered request as `charge` says (see the module) and keeps the
        decision its headers show; returns the refusal that replaces the answer when
        neither bucket could pay for it (never for a move)."""
        if charge == "move":
            self.decision = self.requests.hit(self.requests_key, 0)
            return None
        turns_first = charge == "turn"
        first, first_key = (self.turns, self.turns_key) if turns_first else self._ordinary
        second, second_key = self._ordinary if turns_first else (self.turns, self.turns_key)
        paid = first.hit(first_key)
        self.decision = paid
        if paid.allowed:
            return None
        other = second.hit(second_key)
        if other.allowed:
            if turns_first:
                self.decision = other
            return None
        return self._refused(min(paid.retry_after, other.retry_after))

    @property
    def _ordinary(self) -> tuple[RateLimiter, str]:
        """Returns the `requests` bucket and its key."""
        return self.requests, self.requests_key

    def _refused(self, retry_after: int) -> RateLimited:
        """Returns the refusal of this request."""
        limit, window = self.requests.limit, self.requests.window_s
        return RateLimited(
            f"{self.who} made more requests than its budget of {limit} per {window} s allows"
            f" (and of {self.turns.limit} reads of its turns); retry after {retry_after} s",
            retry_after,
            self.decision,
        )


def view_charge(body: Any) -> Charge:
    """Returns how a seat's view is charged: a turn when it waits for the seat."""
    return "turn" if isinstance(body, SeatView) and body.legal_actions else "other"


def headers_of(decision: RateDecision) -> dict[str, str]:
    """Returns the rate-limit headers of a decision (none for an unlimited bucket)."""
    if decision.limit == 0:
        return {}
    return {
        "RateLimit-Limit": str(decision.limit),
        "RateLimit-Remaining": str(decision.remaining),
        "RateLimit-Reset": str(decision.reset),
    }


def charged_as(
    classify: Callable[[Any], Charge],
) -> Callable[[Response[Any]], Awaitable[Response[Any]]]:
    """Returns the `after_request` hook of a `CHARGED_ON_ANSWER` route: it marks the answer
    with what `classify` says its body was."""

    async def mark(response: Response[Any]) -> Response[Any]:
        response.headers[CHARGE_HEADER] = classify(response.content)
        return response

    return mark


class RateLimitMiddleware(ASGIMiddleware):
    """Charges an answered `CHARGED_ON_ANSWER` request of a bot token (its answer replaced by
    a 429 when neither bucket can pay), and adds the rate-limit headers to every answer to a
    bot token (none to anyone else)."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, identify_late: Callable[[Scope], None] | None = None) -> None:
        self.identify_late = identify_late
        """Identifies the caller of a request answered before anything did (blocking)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        replaced = False

        async def with_headers(message: Message) -> None:
            nonlocal replaced
            if replaced:
                return
            if message["type"] == "http.response.start":
                headers = MutableScopeHeaders(message)
                charge = headers.get(CHARGE_HEADER)
                if charge is not None:
                    del headers[CHARGE_HEADER]
                ticket = await self._ticket(scope)
                if ticket is not None:
                    if ticket.decision is None:
                        kind = _CHARGES.get(charge or "", "other")
                        refused = await anyio.to_thread.run_sync(ticket.settle, kind)
                        if refused is not None:
                            replaced = True
                            await _send_refusal(send, refused)
                            return
                    if ticket.decision is not None:
                        for name, value in headers_of(ticket.decision).items():
                            headers[name] = value
            await send(message)

        await next_app(scope, receive, with_headers)

    async def _ticket(self, scope: Scope) -> Ticket | None:
        """Returns the request's ticket, identifying its caller first if nothing did."""
        state = scope.get("state") or {}
        unknown = CALLER_KEY not in state and scope.get("route_handler") is not None
        if unknown and self.identify_late is not None:
            await anyio.to_thread.run_sync(self.identify_late, scope)
        ticket = state.get(TICKET_KEY)
        return ticket if isinstance(ticket, Ticket) else None


async def _send_refusal(send: Send, refused: RateLimited) -> None:
    """Sends the 429 problem that replaces an answer its token's buckets could not pay for."""
    body = msgspec.json.encode(
        Problem(
            type=f"{TYPE_PREFIX}rate-limited",
            title=TITLES.get("rate-limited") or "Too Many Requests",
            status=429,
            detail=refused.message,
        )
    )
    headers = {
        "content-type": MEDIA_TYPE,
        "content-length": str(len(body)),
        "retry-after": str(refused.retry_after),
        **(headers_of(refused.decision) if refused.decision is not None else {}),
    }
    raw = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    await send({"type": "http.response.start", "status": 429, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})
