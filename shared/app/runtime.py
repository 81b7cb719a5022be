"""The embedded stack's threads, in one place: every runtime that runs beside a request.

- `InProcessDispatcher` plays bot turns in the caller's thread and drives tournaments and
  evaluations;
- `TimerWatcher` runs a timer thread per clock wait and a thread per webhook call;
- `InProcessScheduler` fires scheduled tournaments from a daemon thread;
- `OutboxDispatcher` sends through the broker, and its sender thread sends again what the
  broker could not take (kept in `shared.ports.outbox`);
- `LadderPairer` pairs the open ladders from a daemon thread.

The workers' counterparts (Celery tasks, redbeat) live in `services/workers/`.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import msgspec
import structlog

from shared.app import evaluations
from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import WebhookRunner, enforce_deadline, now_ms, watch_of
from shared.app.ladder import Pairing, pair_open_ladders
from shared.app.loading import load
from shared.app.tournaments import (
    after_game,
    ensure_tournament,
    load_tournament,
    start_pending_games,
    tick,
)
from shared.model.tournaments.model import TournamentDefinition
from shared.model.tournaments.schedule import run_id
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import BATCH, DispatchUnavailable, Outbox, Pending
from shared.ports.scheduler import ScheduledTournament, Scheduler, UnknownSchedule, run_definition
from shared.store.port import EventStore, StoreError

log = logging.getLogger(__name__)
_outbox_log = structlog.get_logger(__name__)


class InProcessDispatcher(BotTurnDispatcher):
    """Plays bot turns at once, in the caller's thread: the embedded default.

    Games started while one is being played (a tournament's next games) wait in a queue
    that the outermost call drains, so a tournament runs iteratively, not recursively.
    Clocks and webhook seats are watched by threads (`TimerWatcher`);
    `webhooks` plays a webhook seat's turn (None: webhooks are not called, the clock alone
    plays those seats).
    """

    def __init__(self, store: EventStore, webhooks: WebhookRunner | None = None) -> None:
        self._store = store
        self._local = threading.local()
        self._watcher = TimerWatcher(store, self.dispatch, webhooks)
        self._arena_lock = threading.Lock()
        self._arena_ends: list[threading.Timer] = []
        self._closed = False

    def dispatch(self, game_id: str) -> None:
        queue: deque[str] | None = getattr(self._local, "queue", None)
        if queue is not None:
            queue.append(game_id)
            return
        self._local.queue = queue = deque([game_id])
        try:
            while queue:
                current = queue.popleft()
                play_bot_turns(self._store, current)
                after_game(self._store, current, self.dispatch)
                evaluations.after_game(self._store, current, self.dispatch)
                self._watcher.watch(current)
        finally:
            self._local.queue = None

    def close(self) -> None:
        """Cancels the pending deadline timers of this dispatcher (and its arenas' ends)."""
        with self._arena_lock:
            self._closed = True
            ends = list(self._arena_ends)
        for timer in ends:
            timer.cancel()
        self._watcher.close()

    def dispatch_detached(self, game_id: str) -> None:
        threading.Thread(
            target=self.dispatch, args=(game_id,), name=f"play-{game_id}", daemon=True
        ).start()

    def start_tournament(self, definition: TournamentDefinition, tournament_id: str) -> None:
        """Records the tournament and starts its games; an arena's play in threads of their
        own (it lasts its duration), and a timer at its end lets it finish (`tick`) when no
        game of it is in progress then."""
        ensure_tournament(self._store, definition, tournament_id)
        if definition.format != "arena":
            start_pending_games(self._store, tournament_id, self.dispatch)
            return
        for game_id in start_pending_games(self._store, tournament_id, lambda _: None):
            self.dispatch_detached(game_id)
        state, _ = load_tournament(self._store, tournament_id)
        if state.ends_ms is None:
            return
        delay = max(0.0, (state.ends_ms - now_ms()) / 1000) + 0.1  # past it, never just before
        timer = threading.Timer(delay, self._arena_end, args=(tournament_id,))
        timer.daemon = True
        with self._arena_lock:
            if self._closed:
                return
            self._arena_ends.append(timer)
        timer.start()

    def _arena_end(self, tournament_id: str) -> None:
        """Lets an arena finish at its end (nothing if a game of it is still in progress:
        its record finishes it)."""
        try:
            tick(self._store, tournament_id, self.dispatch_detached)
        except Exception:  # a timer thread: log, never raise (the next game's end retries)
            log.exception("arena %s: its end could not be recorded", tournament_id)


class TimerWatcher:
    """The in-process twin of the workers' deadline and webhook tasks (the embedded default).

    A timer thread per wait calls `enforce_deadline` at its deadline, and a thread per
    webhook turn runs `webhooks`; after either appended, `dispatch` plays on. Threads are
    daemons: pending deadlines end with the process (a restarted embedded service starts
    with an empty in-memory store anyway).
    """

    def __init__(
        self,
        store: EventStore,
        dispatch: Callable[[str], None],
        webhooks: WebhookRunner | None = None,
    ) -> None:
        self._store = store
        self._dispatch = dispatch
        self._webhooks = webhooks
        self._lock = threading.Lock()
        self._watched: set[tuple[str, int]] = set()
        self._timers: dict[tuple[str, int], threading.Timer] = {}
        self._closed = False

    def watch(self, game_id: str) -> None:
        """Starts the timer and the webhook calls of the game's current wait, once per wait."""
        watch = watch_of(load(self._store, game_id))
        if watch is None:
            return
        key = (game_id, watch.turn_version)
        with self._lock:
            if self._closed or key in self._watched:
                return
            self._watched.add(key)
        if watch.deadline_ms is not None:
            self._arm(game_id, watch.turn_version, watch.deadline_ms)
        if self._webhooks is not None:
            for seat in watch.webhook_seats:
                threading.Thread(
                    target=self._call_webhook,
                    args=(game_id, watch.turn_version, seat),
                    name=f"webhook-{game_id}-{seat}",
                    daemon=True,
                ).start()

    def close(self, timeout: float = 10) -> None:
        """Cancels every pending timer and waits for those running; later waits are not
        watched."""
        with self._lock:
            self._closed = True
            timers = list(self._timers.values())
        for timer in timers:
            timer.cancel()
        for timer in timers:
            if timer is not threading.current_thread():
                timer.join(timeout)

    def _arm(self, game_id: str, turn_version: int, deadline_ms: int) -> None:
        """Starts a timer that checks the wait at `deadline_ms`."""
        delay = max(0.0, (deadline_ms - now_ms()) / 1000) + 0.01
        timer = threading.Timer(delay, self._on_deadline, (game_id, turn_version))
        timer.daemon = True
        with self._lock:
            if self._closed:
                return
            self._timers[game_id, turn_version] = timer
        timer.start()

    def _on_deadline(self, game_id: str, turn_version: int) -> None:
        """Enforces a deadline; never raises (an error is logged)."""
        current = threading.current_thread()
        try:
            check = enforce_deadline(self._store, game_id, turn_version, now_ms())
            if check.retry_at_ms is not None:
                self._arm(game_id, turn_version, check.retry_at_ms)
            elif check.status == "timed_out":
                self._dispatch(game_id)
        except Exception:
            log.exception("deadline of game %s at version %s", game_id, turn_version)
        finally:
            with self._lock:
                if self._timers.get((game_id, turn_version)) is current:
                    del self._timers[game_id, turn_version]

    def _call_webhook(self, game_id: str, turn_version: int, seat: int) -> None:
        """Plays a webhook turn; never raises (an error is logged)."""
        assert self._webhooks is not None
        try:
            if self._webhooks(self._store, game_id, turn_version, seat) == "played":
                self._dispatch(game_id)
        except Exception:
            log.exception("webhook of game %s, seat %s", game_id, seat)


def _utcnow() -> datetime:
    """Returns the current time, in UTC."""
    return datetime.now(UTC)


class InProcessScheduler(Scheduler):
    """The embedded twin: schedules held in this process, fired by a daemon thread.

    Each due run starts its tournament through `dispatcher` (in-process in the embedded
    default). A run's slot is recorded before it starts, so a slot runs at most once here;
    a process that stops loses its schedules.
    """

    def __init__(
        self, dispatcher: BotTurnDispatcher, clock: Callable[[], datetime] = _utcnow
    ) -> None:
        self._dispatcher = dispatcher
        self._clock = clock
        self._entries: dict[str, ScheduledTournament] = {}
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def add(self, schedule_id: str, definition: TournamentDefinition) -> ScheduledTournament:
        if definition.schedule is None:
            raise ValueError("only a definition with a schedule can be scheduled")
        with self._changed:
            known = self._entries.get(schedule_id)
            if known is not None:
                return known
            entry = ScheduledTournament(schedule_id, definition, self._clock())
            self._entries[schedule_id] = entry
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="cardarena-scheduler", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()
            return entry

    def get(self, schedule_id: str) -> ScheduledTournament:
        with self._changed:
            entry = self._entries.get(schedule_id)
        if entry is None:
            raise UnknownSchedule(schedule_id)
        return entry

    def list(self) -> list[ScheduledTournament]:
        with self._changed:
            entries = list(self._entries.values())
        return sorted(entries, key=lambda entry: (entry.since, entry.schedule_id))

    def remove(self, schedule_id: str) -> None:
        with self._changed:
            if self._entries.pop(schedule_id, None) is None:
                raise UnknownSchedule(schedule_id)
            self._changed.notify_all()

    def run_due(self, now: datetime | None = None) -> builtins.list[str]:
        """Starts every run due at `now` (default: the clock); returns their tournament ids."""
        now = now or self._clock()
        claimed: builtins.list[tuple[ScheduledTournament, datetime]] = []
        with self._changed:
            for schedule_id, entry in self._entries.items():
                slot = entry.due_slot(now)
                if slot is not None:
                    self._entries[schedule_id] = replace(entry, last_slot=slot)
                    claimed.append((entry, slot))
        started = []
        for entry, slot in claimed:
            tournament_id = run_id(entry.schedule_id, slot)
            try:
                self._dispatcher.start_tournament(run_definition(entry.definition), tournament_id)
            except Exception:
                log.exception("the run %s of schedule %s failed", slot, entry.schedule_id)
                continue
            started.append(tournament_id)
        return started

    def close(self) -> None:
        with self._changed:
            self._closed = True
            thread, self._thread = self._thread, None
            self._changed.notify_all()
        if thread is not None:
            thread.join(timeout=30)

    def _run(self) -> None:
        """The thread's loop: fire what is due, then sleep until the next run or a change."""
        while True:
            self.run_due()
            with self._changed:
                if self._closed:
                    return
                self._changed.wait(self._seconds_to_next())
                if self._closed:
                    return

    def _seconds_to_next(self) -> float:
        """Returns how long to sleep: until the earliest next run, at most a minute."""
        runs = [entry.next_run for entry in self._entries.values()]
        due = [run for run in runs if run is not None]
        if not due:
            return 60.0
        wait = (min(due) - self._clock()) / timedelta(seconds=1)
        return min(max(wait, 0.0), 60.0)


class OutboxDispatcher(BotTurnDispatcher):
    """Sends through `inner` (the broker's dispatcher); what the broker cannot take is kept
    in `outbox` and sent again by a thread of its own (`start`, `close`).

    After a failed send, and until the sender gets a record through, the broker counts as
    down: work goes to the outbox at once, so requests answer without waiting for the
    broker. A record the outbox cannot take either (its Redis down too) is kept in this
    process's memory, and sent the same way. The sender retries after `first_retry_s`,
    doubling up to `max_retry_s`; while the broker is up it looks at the outbox every
    `poll_s` (for the workers' records, and those a stopped process left).
    """

    def __init__(
        self,
        inner: BotTurnDispatcher,
        outbox: Outbox,
        *,
        first_retry_s: float = 0.1,
        max_retry_s: float = 2.0,
        poll_s: float = 1.0,
    ) -> None:
        self._inner = inner
        self._outbox = outbox
        self._first_retry_s = first_retry_s
        self._max_retry_s = max_retry_s
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._unsaved: dict[str, Pending] = {}
        self._down = threading.Event()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def broker_down(self) -> bool:
        """Returns whether the last send failed and no record got through since."""
        return self._down.is_set()

    def dispatch(self, game_id: str) -> None:
        self._send(Pending("game", game_id))

    def start_tournament(self, definition: TournamentDefinition, tournament_id: str) -> None:
        self._send(Pending("tournament", tournament_id, msgspec.to_builtins(definition)))

    def _send(self, pending: Pending) -> None:
        """Sends `pending`, or keeps it (the broker is down)."""
        if not self._down.is_set():
            try:
                self._deliver(pending)
            except DispatchUnavailable as error:
                _outbox_log.warning("broker unavailable: work kept in the outbox", error=str(error))
                self._down.set()
                self._wake.set()
            else:
                return
        self._keep(pending)

    def _deliver(self, pending: Pending) -> None:
        """Hands `pending` to the inner dispatcher; raises DispatchUnavailable."""
        if pending.kind == "game":
            self._inner.dispatch(pending.target)
            return
        definition = msgspec.convert(pending.definition, TournamentDefinition)
        self._inner.start_tournament(definition, pending.target)

    def _keep(self, pending: Pending) -> None:
        """Records `pending` in the outbox, else in this process's memory."""
        try:
            self._outbox.put(pending)
        except StoreError as error:
            _outbox_log.warning("outbox unavailable: work kept in memory", error=str(error))
            with self._lock:
                self._unsaved[pending.key] = pending
            self._wake.set()

    def flush(self) -> bool:
        """Sends every kept record once (up to a batch of the outbox's); returns whether
        all got through, with nothing left (False: the broker or the outbox failed, or
        more records wait)."""
        with self._lock:
            unsaved = list(self._unsaved.values())
        for pending in unsaved:
            self._deliver(pending)
            with self._lock:
                if self._unsaved.get(pending.key) is pending:
                    del self._unsaved[pending.key]
        entries = self._outbox.entries(BATCH)
        for entry in entries:
            self._deliver(entry.pending)
            self._outbox.done(entry)
        return len(entries) < BATCH

    def start(self) -> None:
        """Starts the sender thread (a daemon: it holds nothing a stop would lose)."""
        self._thread = threading.Thread(target=self._run, name="outbox-sender", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stops the sender thread; records left stay in the outbox."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        """Flushes after each wait: short, growing ones while flushes fail, else `poll_s`."""
        delay, failing = self._first_retry_s, False
        while not self._stop.is_set():
            self._wake.wait(delay if failing or self._down.is_set() else self._poll_s)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                drained = self.flush()
            except DispatchUnavailable as error:
                self._down.set()
                _outbox_log.debug("outbox not sent yet: broker", error=str(error), retry_s=delay)
            except StoreError as error:
                _outbox_log.warning("outbox not sent yet: store", error=str(error), retry_s=delay)
            except Exception:  # a bug: the sender must go on
                _outbox_log.exception("outbox not sent yet", retry_s=delay)
            else:
                if self._down.is_set():
                    _outbox_log.info("broker available again: the outbox was sent")
                self._down.clear()
                delay, failing = self._first_retry_s, False
                if not drained:
                    self._wake.set()
                continue
            if failing:
                delay = min(delay * 2, self._max_retry_s)
            failing = True


class LadderPairer:
    """The embedded twin of the workers' beat task: a daemon thread that pairs every open ladder
    (`shared.app.ladder.pair_open_ladders`) every `every` seconds, from `start` to `close`."""

    def __init__(self, store: EventStore, pairing: Pairing, every: float) -> None:
        self._store, self._pairing, self._every = store, pairing, every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Starts the thread (once; never when `every` is 0)."""
        if self._thread is None and self._every > 0:
            self._thread = threading.Thread(target=self._run, name="ladder-pairer", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stops the thread, waiting for a pairing in progress."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                pair_open_ladders(self._store, _utcnow(), self._pairing)
            except Exception:
                log.exception("a ladder pairing failed; the next one tries again")
