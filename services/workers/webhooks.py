"""Webhook bots: the signed POST of a turn to the bot's URL, and the play of that turn.

The request: `POST <url>` with a JSON body `{game_id, game, seat, version, deadline, view,
legal_actions}` (`deadline`: ms since the epoch) and the headers

    X-Cardarena-Timestamp: <unix seconds>
    X-Cardarena-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>." + raw body)>

The timestamp is signed with the body, so a receiver that checks the signature and refuses
timestamps older than a few minutes (`verify_signature`, default 300 s) cannot be fed an
old request again. The answer: a 2xx with the JSON body `{"action": {...}}`, one of
`legal_actions`, with an optional private `"note"` (`shared.model.notes`; a note that cannot
be one makes the whole answer `invalid_answer`). It is checked like any client's action; a
timeout, a connection error, a status other than 2xx or an answer that is no legal action
is recorded as `WebhookFailed` and the call is retried (with a growing pause) until the
seat's deadline, after which the clock's rules apply: the default action and a strike. Each
call's timeout is at most the time left to the deadline (less 0.2 s to record a failure);
redirects are not followed; answers over 64 KiB are refused.

Before each call the URL is checked again (`shared.ports.webhook_urls`: DNS may have changed since
registration): a host that is, or resolves to, a loopback, private, link-local or otherwise
non-global address is not called, unless private webhooks are allowed; the refusal is
recorded as `WebhookFailed` (reason `url_refused`) and handled like a connection error. The
HTTP client resolves the host again to connect, so a name that changes in between (DNS
rebinding) may still slip through: restrict the workers' egress at the network layer too
(a Kubernetes NetworkPolicy, a firewall).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable

import httpx
import msgspec

from shared.app import stalls
from shared.app.deadlines import (
    WebhookRefused,
    apply_webhook_answer,
    now_ms,
    record_webhook_failure,
    webhook_turn,
)
from shared.app.loading import load
from shared.app.registry import read_registry
from shared.messages.common import Seat
from shared.ports.webhook_urls import Resolver, WebhookUrlRefused, check_webhook_url, resolve_host
from shared.store.port import EventStore

SIGNATURE_HEADER = "X-Cardarena-Signature"
TIMESTAMP_HEADER = "X-Cardarena-Timestamp"
MAX_ANSWER_BYTES = 64 * 1024
MAX_CALL_SECONDS = 30.0
"""A call never waits longer than this, however far the deadline."""
RECORD_MARGIN_SECONDS = 0.2
"""A call gives up this long before the deadline, leaving time to record its failure."""
MIN_CALL_SECONDS = 0.05
FIRST_PAUSE_SECONDS = 0.2
"""The pause after a failed call; it doubles after each further failure of the turn."""

_json = msgspec.json.Decoder()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """Returns the signature header's value: `sha256=` and the hex HMAC-SHA256, keyed by
    `secret`, of the timestamp, a dot and the raw body."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


def verify_signature(
    secret: str,
    timestamp: str,
    body: bytes,
    signed: str,
    now: float | None = None,
    tolerance_seconds: int = 300,
) -> bool:
    """Returns whether `signed` is the signature of `body` at `timestamp` (the headers as
    received) and the timestamp is within `tolerance_seconds` of `now`: what a webhook bot
    checks before it trusts a request."""
    try:
        sent = int(timestamp)
    except ValueError:
        return False
    current = time.time() if now is None else now
    if abs(current - sent) > tolerance_seconds:
        return False
    return hmac.compare_digest(signature(secret, sent, body), signed)


class CallFailed(Exception):
    """A webhook call brought no answer: `reason` and `detail` as `WebhookFailed` says."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def call_webhook(
    client: httpx.Client, url: str, secret: str, body: bytes, timeout: float
) -> object:
    """POSTs `body` signed with `secret` to `url` and returns the decoded JSON answer;
    raises CallFailed (timeout, connection error, non-2xx status, unreadable answer)."""
    timestamp = int(time.time())
    headers = {
        "content-type": "application/json",
        "user-agent": "cardarena-webhook/1",
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret, timestamp, body),
    }
    try:
        with client.stream(
            "POST", url, content=body, headers=headers, timeout=timeout, follow_redirects=False
        ) as response:
            if not response.is_success:
                raise CallFailed("http_status", str(response.status_code))
            answer = b""
            for chunk in response.iter_bytes():
                answer += chunk
                if len(answer) > MAX_ANSWER_BYTES:
                    raise CallFailed("invalid_answer", f"over {MAX_ANSWER_BYTES} bytes")
    except httpx.TimeoutException as error:
        raise CallFailed("timeout", type(error).__name__) from None
    except httpx.HTTPError as error:
        raise CallFailed("connection_error", f"{type(error).__name__}: {error}") from None
    try:
        return _json.decode(answer)
    except msgspec.DecodeError as error:
        raise CallFailed("invalid_answer", f"not JSON: {error}") from None


def check_target(url: str, *, allow_private: bool, resolve: Resolver = resolve_host) -> None:
    """Raises CallFailed (`url_refused`) unless the workers may call `url` now."""
    try:
        check_webhook_url(url, allow_private=allow_private, resolve=resolve)
    except WebhookUrlRefused as refused:
        raise CallFailed("url_refused", str(refused)) from None


def webhook_target(store: EventStore, seat: Seat) -> tuple[str, str] | None:
    """Returns the URL and signing secret of the webhook bot a seat is bound to, from the
    registry; None when it is not a registered webhook bot with both."""
    if seat.kind != "webhook" or not seat.name:
        return None
    registry = read_registry(store)
    key = (seat.name, seat.version)
    bot = registry.bots.get(key)
    secret = registry.signing_secrets.get(key, "")
    if bot is None or bot.kind != "webhook" or not bot.url or not secret:
        return None
    return bot.url, secret


def play_webhook_turn(
    store: EventStore,
    game_id: str,
    turn_version: int,
    seat: int,
    *,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
    allow_private: bool = False,
    resolve: Resolver = resolve_host,
) -> str:
    """Calls `seat`'s webhook for its turn begun at `turn_version` until an answer is played
    or the deadline passes; returns `played`, `moved_on` (the turn ended otherwise),
    `deadline` (the deadline passed), `no_webhook` (the seat has no registered webhook) or
    `stalled` (legal answers that `stalls.MAX_IDLE_TRIES` times in a row neither landed nor
    found the game moved: reported, and the clock's deadline still applies).

    Each call's URL is checked first (`check_target`, resolving with `resolve`); with
    `allow_private`, loopback and private addresses are called too.
    """
    loaded = load(store, game_id)
    target = webhook_target(store, loaded.created.seats[seat])
    own_client = client is None
    http = httpx.Client() if client is None else client
    try:
        attempt = idle = 0
        while True:
            turn = webhook_turn(loaded, seat, turn_version)
            if turn is None:
                return "moved_on"
            left = (turn.deadline - now_ms()) / 1000
            if left <= 0:
                return "deadline"
            if target is None:
                record_webhook_failure(
                    store, loaded, seat, f"{turn_version}:0", "no_webhook", "no URL or secret"
                )
                return "no_webhook"
            url, secret = target
            try:
                check_target(url, allow_private=allow_private, resolve=resolve)
                left = (turn.deadline - now_ms()) / 1000  # resolving took some of it
                timeout = max(MIN_CALL_SECONDS, min(left - RECORD_MARGIN_SECONDS, MAX_CALL_SECONDS))
                answer = call_webhook(http, url, secret, msgspec.json.encode(turn), timeout)
                if apply_webhook_answer(store, loaded, seat, turn_version, answer):
                    return "played"
                idle = idle + 1 if store.version(game_id) == loaded.version else 0
                if idle >= stalls.MAX_IDLE_TRIES:
                    stalls.report(stalls.Stall("webhook", game_id, loaded.version, idle))
                    return "stalled"
            except (CallFailed, WebhookRefused) as failure:
                attempt += 1
                record_webhook_failure(
                    store,
                    loaded,
                    seat,
                    f"{turn_version}:{attempt}",
                    failure.reason,
                    failure.detail,
                )
                left = (turn.deadline - now_ms()) / 1000
                sleep(max(0.0, min(FIRST_PAUSE_SECONDS * 2 ** (attempt - 1), left)))
            loaded = load(store, game_id)
    finally:
        if own_client:
            http.close()
