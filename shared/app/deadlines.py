"""Use cases of the clock and of webhook seats, and the in-process twin of the workers' timers.

Each use case loads a game, decides with `shared.model.clocks` and appends at the version it
loaded, keyed so that a repeated run (a task delivered twice) appends nothing twice:

- `enforce_deadline` times out the waits that began at a given turn version once their
  deadline is past (key `timeout:<turn version>`); it does nothing once the game moved on.
- `webhook_turn` is the request a webhook seat is sent; `apply_webhook_answer` plays its
  answer like any action (`parse_action`, then the rules); `record_webhook_failure`
  appends a `WebhookFailed`, which does not restart the seat's wait.

Who runs them: with `CARDARENA_DISPATCH=celery` the workers (`services/workers/tasks.py`,
a deadline task with an ETA per wait and a webhook task per webhook turn); in the embedded
default, `shared.app.runtime.TimerWatcher`: a timer thread per wait and a thread per webhook
call, which end with the process.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from shared.app import stalls
from shared.app.loading import LoadedGame, decided, load, parse_action
from shared.errors import IllegalAction, InvalidRequest
from shared.messages.codec import encode_all
from shared.messages.common import Event, WebhookFailed
from shared.model import clocks, deals, idempotency, notes
from shared.store.port import ConcurrencyConflict, EventStore

log = logging.getLogger(__name__)

WebhookRunner = Callable[[EventStore, str, int, int], str]
"""Plays a webhook seat's turn: (store, game id, turn version, seat) -> how it ended."""


def now_ms() -> int:
    """Returns this machine's time in ms since the epoch (the stores' clocks should agree)."""
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Watch:
    """What the platform must watch in a game's current wait: the earliest deadline of its
    timed seats (None: none is timed) and the webhook seats to call."""

    game_id: str
    turn_version: int
    deadline_ms: int | None
    webhook_seats: tuple[int, ...]


def watch_of(loaded: LoadedGame) -> Watch | None:
    """Returns what to watch in the game's current wait, None when there is nothing."""
    spec, state, clock = loaded.spec, loaded.state, loaded.clock
    if spec.is_over(state):
        return None
    seats = loaded.created.seats
    webhooks = tuple(
        seat
        for seat in spec.to_move(state)
        if seats[seat].kind == "webhook" and seat not in loaded.forfeits
    )
    deadline = clocks.next_deadline_ms(spec, state, clock)
    if deadline is None and not webhooks:
        return None
    turn_version = loaded.version if clock is None else clock.turn_version
    return Watch(loaded.game_id, turn_version, deadline, webhooks)


@dataclass(frozen=True)
class DeadlineCheck:
    """What `enforce_deadline` did: `timed_out` (it appended), `moved_on` (the wait is over,
    nothing to do), `early` (no deadline is past yet; check again at `retry_at_ms`) or
    `stalled` (its appends made no progress: reported, left to reconciliation)."""

    status: Literal["timed_out", "moved_on", "early", "stalled"]
    retry_at_ms: int | None = None


def enforce_deadline(
    store: EventStore, game_id: str, turn_version: int, now: int, attempts: int = 5
) -> DeadlineCheck:
    """Times out every wait of `game_id` begun at `turn_version` whose deadline is past at
    `now` (ms): a strike, a forfeit at the last one, the default action, in one append.

    An append answered as a replay wrote nothing: the game is looked at again (a twin run
    appended it: the wait is over); `stalls.MAX_IDLE_TRIES` such answers are a stall."""
    idle = 0
    for _ in range(attempts):
        loaded = load(store, game_id)
        clock, spec = loaded.clock, loaded.spec
        if clock is None or clock.turn_version != turn_version or spec.is_over(loaded.state):
            return DeadlineCheck("moved_on")
        expired = clocks.expire(spec, loaded.state, clock, now, loaded.resigned)
        events = deals.reveal(loaded.created, expired)
        if not events:
            retry = clocks.next_deadline_ms(spec, loaded.state, clock)
            return DeadlineCheck("moved_on") if retry is None else DeadlineCheck("early", retry)
        key = idempotency.timeout(turn_version)
        try:
            result = store.append(game_id, spec.name, loaded.version, encode_all(events), key)
        except ConcurrencyConflict:
            continue  # a webhook failure was recorded, or the seat moved: look again
        if not result.replayed:
            return DeadlineCheck("timed_out")
        idle += 1
        if idle >= stalls.MAX_IDLE_TRIES:
            stalls.report(stalls.Stall("deadline", game_id, loaded.version, idle))
            return DeadlineCheck("stalled")
    return DeadlineCheck("moved_on")


class WebhookTurn(msgspec.Struct, frozen=True):
    """The body POSTed to a webhook seat's URL: the seat's view, its legal actions, the
    version they hold at and the deadline (ms since the epoch) to answer by."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name."""
    seat: int
    """The seat the game waits for."""
    version: int
    """The game's version the turn is at."""
    deadline: int
    """When the seat's time runs out, in ms since the epoch: answer before."""
    view: dict[str, Any]
    """What the seat may know of the game, in its game's view schema."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may take now; answer one of them."""


def webhook_turn(loaded: LoadedGame, seat: int, turn_version: int) -> WebhookTurn | None:
    """Returns the request for `seat`'s turn begun at `turn_version`, None once it is over."""
    spec, state, clock = loaded.spec, loaded.state, loaded.clock
    waiting = clocks.timed_waits(spec, state, clock)
    if clock is None or clock.turn_version != turn_version or seat not in waiting:
        return None
    return WebhookTurn(
        game_id=loaded.game_id,
        game=spec.name,
        seat=seat,
        version=loaded.version,
        deadline=clock.deadline_ms(seat),
        view=msgspec.to_builtins(spec.view(state, seat)),
        legal_actions=msgspec.to_builtins(spec.legal_actions(state, seat)),
    )


class WebhookRefused(Exception):
    """A webhook's answer is no legal action: `reason` and `detail` as `WebhookFailed` says."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def answer_events(loaded: LoadedGame, seat: int, answer: Any) -> list[Event]:
    """Returns the events of a webhook's answer `{"action": {...}}` (with an optional private
    `"note"`, see `shared.model.notes`: its `NoteTaken` first), checked like any action;
    raises WebhookRefused (a note that cannot be one: `invalid_answer`, nothing played)."""
    if not isinstance(answer, dict) or "action" not in answer:
        raise WebhookRefused("invalid_answer", 'the answer is not {"action": {...}}')
    note = answer.get("note")
    reason = "a note is a string" if not isinstance(note, str | None) else notes.problem(note or "")
    if reason is not None:
        raise WebhookRefused("invalid_answer", f"note: {reason}")
    try:
        text = notes.checked(note)
        action = parse_action(loaded.spec, answer["action"])
        return notes.noted(seat, text, decided(loaded, seat, action))
    except InvalidRequest as error:
        raise WebhookRefused("invalid_answer", error.message[:500]) from None
    except IllegalAction as error:
        raise WebhookRefused("illegal_action", f"{error.rule}: {error.message}"[:500]) from None


def apply_webhook_answer(
    store: EventStore, loaded: LoadedGame, seat: int, turn_version: int, answer: Any
) -> bool:
    """Appends the webhook's answer for `seat` at the version it was sent; returns whether
    it did: False when the game moved on first, or the append was answered as a replay
    (written by an earlier run, or by nobody: the caller looks at the game again).
    Raises WebhookRefused for an answer that is no legal action."""
    events = answer_events(loaded, seat, answer)
    key = idempotency.webhook_answer(turn_version, seat)
    try:
        result = store.append(
            loaded.game_id, loaded.spec.name, loaded.version, encode_all(events), key
        )
    except ConcurrencyConflict:
        return False
    return not result.replayed


def record_webhook_failure(
    store: EventStore, loaded: LoadedGame, seat: int, attempt: str, reason: str, detail: str = ""
) -> None:
    """Appends a `WebhookFailed` for `seat` (once per turn and attempt); does nothing when
    the game moved on first."""
    event = WebhookFailed(seat=seat, reason=reason, detail=detail[:500])
    key = idempotency.webhook_failure(attempt, seat)
    try:
        store.append(loaded.game_id, loaded.spec.name, loaded.version, encode_all([event]), key)
    except ConcurrencyConflict:
        return
