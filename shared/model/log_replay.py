"""The offline replay of an exported game log: every event checked by the rules.

`replay_log` checks a log with no server: it folds every event with the game's pure rules
and requires each decision's events to be exactly those `spec.decide` emits for the action
that its first event records (`GameSpec.action_of`), at a seat the game waits for; the
clock's events to follow `shared.model.clocks` (a timeout of a timed seat the game waits for, its
strike count, the forfeit at the last strike, a default action that is a legal action of
that seat followed by its events); a resignation to come from a client's seat still playing
(`shared.model.endings`), and to end the game when it leaves one seat playing; the platform's
`GameFinished` to place forfeited and resigned seats last and reveal the seed; a
`GameAborted` to give a reason the platform aborts for and to reveal the seed; the log to
end with the game over; and the deal to be the one the revealed seed deals and commits to
(`shared.model.deals.verify`). The first event that cannot follow from those before it is
named by its version. A log is only as checkable as its
rules: a changed card that leaves a legal game (another card the player held) is found
where the game stops adding up, not where it was changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound, IllegalAction, InvalidRuleset
from shared.games.base import AnyGame
from shared.messages.common import (
    Action,
    ClockEvent,
    DefaultActionPlayed,
    Event,
    GameAborted,
    GameCreated,
    NoteTaken,
    Result,
    SeatForfeited,
    SeatResigned,
    TurnTimedOut,
    WebhookFailed,
)
from shared.model import clocks, endings, notes
from shared.model.deals import Verification, difference, reveal, verify
from shared.model.exported_log import InvalidLog, read_events, read_header, read_log


class ReplayReport(msgspec.Struct, frozen=True):
    """What an offline replay found: `ok`, else the first bad event's `version` (None: the
    header) and why; the turn-by-turn account up to there, the result, the deal's check."""

    ok: bool
    game_id: str
    game: str
    events: int
    version: int | None
    reason: str
    turns: list[str]
    result: Result | None
    verification: Verification | None
    reading: str = ""
    """Empty when the log checks out under today's rules; else the earlier reading of its
    ruleset it checks out under (`GameSpec.earlier_readings`), as the fields that reading
    sets (`draw=quiet_round`): a log written before that rules change."""


class _Bad(Exception):
    """The replay found an event that cannot follow from those before it."""

    def __init__(self, version: int, reason: str) -> None:
        super().__init__(f"v{version}: {reason}")
        self.version = version
        self.reason = reason


@dataclass
class _Replay:
    """A replay in progress: the log, the state and clock after `at` events, the account."""

    spec: AnyGame
    created: GameCreated
    events: Sequence[Event]
    state: Any
    clock: clocks.ClockState | None
    at: int = 2
    """How many events are folded (the next one's index)."""
    turns: list[tuple[int, str]] = field(default_factory=list)
    """The account so far: (the first version of a step, its line)."""
    resigned: tuple[int, ...] = ()
    """The seats that resigned so far, in order (as `LoadedGame.resigned`)."""

    @property
    def forfeits(self) -> tuple[int, ...]:
        """Returns the seats that forfeited or resigned so far, in order (as
        `LoadedGame.forfeits`)."""
        return self.resigned if self.clock is None else self.clock.forfeits

    def inherited(self, version: int) -> bool:
        """Returns whether `version` was copied from the game a fork was made of (its clock
        events are that game's: seats and clocks may differ)."""
        fork_version = self.created.fork_version
        return isinstance(fork_version, int) and version <= fork_version

    def copied(self, expected: list[Event]) -> list[Event]:
        """Returns `expected`, the events due from the next one on, cut where a fork's copy
        of its original ends (a fork made before forks had to start between moves may start
        in the middle of a decision)."""
        fork_version = self.created.fork_version
        if isinstance(fork_version, int) and self.at < fork_version < self.at + len(expected):
            return expected[: fork_version - self.at]
        return expected

    def fold(self, count: int) -> None:
        """Folds the next `count` events into the state and the clock."""
        for index in range(self.at, self.at + count):
            event = self.events[index]
            if self.clock is not None:
                self.clock = clocks.after_event(
                    self.spec, self.clock, self.state, event, index + 1, 0
                )
            self.state = self.spec.step(self.state, event)
            if isinstance(event, SeatResigned):
                self.resigned = (*self.resigned, event.seat)
        self.at += count


def _describe(item: Action | Event) -> str:
    """Returns an action or event in brief: its type and its fields (cards joined by `,`)."""
    data = msgspec.to_builtins(item)
    parts = []
    for key, value in data.items():
        if key == "type" or value is None:
            continue
        shown = ",".join(map(str, value)) if isinstance(value, list) else value
        parts.append(f"{key}={shown}")
    name = type(item).__name__
    return f"{name}({', '.join(parts)})" if parts else name


def _span(first: int, count: int) -> str:
    """Returns the versions of `count` events from `first`: `v7` or `v7-9`."""
    return f"v{first}" if count == 1 else f"v{first}-{first + count - 1}"


def _expect(replay: _Replay, expected: Sequence[Event]) -> None:
    """Raises _Bad at the first logged event from `replay.at` on that differs from
    `expected`, the events the platform would have appended there."""
    for offset, wanted in enumerate(expected):
        index = replay.at + offset
        if index >= len(replay.events):
            raise _Bad(index + 1, f"missing: {type(wanted).__name__} is due here")
        logged = replay.events[index]
        mismatch = difference(msgspec.to_builtins(logged), msgspec.to_builtins(wanted))
        if mismatch is not None:
            name = type(logged).__name__
            raise _Bad(index + 1, f"{name} is not what the rules give here: {mismatch}")


def _outcome(
    replay: _Replay, seat: int, action: Action, forfeits: Sequence[int], version: int = 0
) -> list[Event]:
    """Returns the events the platform appends for `seat` taking `action` now; raises _Bad
    at `version` (default: the next event's) when the rules refuse it."""
    version = version or replay.at + 1
    try:
        events = replay.spec.decide(replay.state, seat, action)
    except IllegalAction as error:
        reason = f"illegal {_describe(action)} of seat {seat}: {error.message}"
        raise _Bad(version, reason) from None
    except Exception as error:  # a tampered log must not crash its check
        raise _Bad(version, f"{_describe(action)} cannot be played: {error!r}") from None
    return reveal(replay.created, clocks.forfeits_last(events, forfeits, replay.resigned))


def _decision(replay: _Replay) -> None:
    """Checks and folds the decision that begins at the next event."""
    spec, event, version = replay.spec, replay.events[replay.at], replay.at + 1
    waiting = spec.to_move(replay.state)
    found = _recover(replay) if spec.action_of is not None else _search(replay, waiting)
    if found is None:
        raise _Bad(version, f"{type(event).__name__} begins no decision of seats {waiting}")
    seat, action = found
    if seat not in waiting:
        raise _Bad(version, f"seat {seat} is not to move (the game waits for {waiting})")
    if seat in replay.forfeits:
        raise _Bad(version, f"seat {seat} forfeited: the platform plays its default actions")
    expected = replay.copied(_outcome(replay, seat, action, replay.forfeits))
    _expect(replay, expected)
    names = ", ".join(type(e).__name__ for e in expected)
    line = f"{_span(version, len(expected))} seat {seat}: {_describe(action)}: {names}"
    replay.turns.append((version, line))
    replay.fold(len(expected))


def _recover(replay: _Replay) -> tuple[int, Action] | None:
    """Returns the seat and action recorded by the next event, through `spec.action_of`."""
    assert replay.spec.action_of is not None
    try:
        return replay.spec.action_of(replay.events[replay.at])
    except Exception as error:  # a tampered log must not crash its check
        raise _Bad(replay.at + 1, f"no action can be read from it: {error!r}") from None


def _search(replay: _Replay, waiting: Sequence[int]) -> tuple[int, Action] | None:
    """Returns the legal action of a waiting seat whose events the log holds next (the
    longest such), for games without `action_of`. None when no action's events begin there;
    raises the mismatch of the action whose events match longest when none matches whole."""
    best: tuple[int, tuple[int, Action]] | None = None
    nearest: _Bad | None = None
    for seat in waiting:
        for action in replay.spec.legal_actions(replay.state, seat):
            try:
                expected = replay.copied(_outcome(replay, seat, action, replay.forfeits))
                _expect(replay, expected)
            except _Bad as bad:
                if nearest is None or bad.version > nearest.version:
                    nearest = bad
                continue
            if best is None or len(expected) > best[0]:
                best = (len(expected), (seat, action))
    if best is None and nearest is not None and nearest.version > replay.at + 1:
        raise nearest
    return None if best is None else best[1]


def _logged_action(replay: _Replay, played: DefaultActionPlayed, version: int) -> Action:
    """Returns the action a DefaultActionPlayed records, in the game's types."""
    try:
        action: Action = replay.spec.stored_action(played.action)
    except msgspec.ValidationError as error:
        raise _Bad(version, f"not an action of {replay.spec.name}: {error}") from None
    return action


def _forced(
    replay: _Replay, first: int, played: DefaultActionPlayed, forfeits: Sequence[int]
) -> list[Event]:
    """Returns what the platform appends when it plays the default action that `played` (the
    event at index `first`) records: the marker, then the action's events."""
    version = first + 1
    if played.seat not in replay.spec.to_move(replay.state):
        raise _Bad(version, f"seat {played.seat} is not to move")
    action = _logged_action(replay, played, version)
    encoded = msgspec.to_builtins(action)
    # An older log's action is checked in today's shape (`upgrade_action`) and kept as logged.
    if replay.spec.upgrade_action(played.action) == encoded:
        encoded = played.action
    marker = DefaultActionPlayed(seat=played.seat, action=encoded, reason=played.reason)
    return [marker, *_outcome(replay, played.seat, action, forfeits, version)]


def _timeout(replay: _Replay, timed_out: TurnTimedOut) -> list[Event]:
    """Returns the events of a timeout beginning with `timed_out` at the next event: the
    strike, the forfeit at the last one, the default action and its events."""
    version, clock, seat = replay.at + 1, replay.clock, timed_out.seat
    if clock is None:
        raise _Bad(version, "an untimed game has no timeouts")
    if seat not in clocks.timed_waits(replay.spec, replay.state, clock):
        raise _Bad(version, f"the game does not wait for seat {seat} on a clock")
    strikes = clock.strikes[seat] + 1
    block: list[Event] = [TurnTimedOut(seat=seat, strikes=strikes)]
    forfeits = replay.forfeits
    if strikes >= clock.clock.strikes_to_forfeit:
        block.append(SeatForfeited(seat=seat))
        forfeits = (*forfeits, seat)
    index = replay.at + len(block)
    after = replay.events[index] if index < len(replay.events) else None
    if not (isinstance(after, DefaultActionPlayed) and after.reason == "timeout"):
        _expect(replay, block)
        raise _Bad(index + 1, f"a timeout of seat {seat} is followed by its default action")
    return [*block, *_forced(replay, index, after, forfeits)]


def _resignation(replay: _Replay, resigned: SeatResigned) -> list[Event]:
    """Returns the events of the resignation that `resigned` (the next event) records: it, and
    the platform's GameFinished when it leaves at most one seat playing."""
    version, seats = replay.at + 1, replay.created.seats
    if not 0 <= resigned.seat < len(seats):
        raise _Bad(version, f"the game has no seat {resigned.seat}")
    try:
        events = endings.resignation(
            replay.spec, replay.state, seats, resigned.seat, replay.forfeits, replay.resigned
        )
    except IllegalAction as error:
        raise _Bad(version, f"seat {resigned.seat} cannot resign: {error.message}") from None
    return reveal(replay.created, events)


def _abort(replay: _Replay) -> None:
    """Checks and folds the platform's GameAborted at the next event: the game ends there."""
    event, version = replay.events[replay.at], replay.at + 1
    assert isinstance(event, GameAborted)
    reason = event.result.reason
    if reason not in endings.ABORT_REASONS:
        raise _Bad(version, f"GameAborted gives no reason the platform aborts for: {reason!r}")
    expected = reveal(replay.created, endings.abort(replay.spec, replay.state, reason))
    _expect(replay, expected)
    replay.turns.append((version, f"v{version} GameAborted(reason={reason})"))
    replay.fold(1)


def _clock_event(replay: _Replay) -> None:
    """Checks and folds the clock's events that begin at the next event."""
    event, version = replay.events[replay.at], replay.at + 1
    inherited = replay.inherited(version)
    expected: list[Event]
    if isinstance(event, WebhookFailed | TurnTimedOut | SeatForfeited | SeatResigned) and inherited:
        expected = [event]
    elif isinstance(event, SeatResigned):
        expected = _resignation(replay, event)
    elif isinstance(event, WebhookFailed):
        seats = replay.created.seats
        if not 0 <= event.seat < len(seats) or seats[event.seat].kind != "webhook":
            raise _Bad(version, f"seat {event.seat} is no webhook's")
        if event.seat not in replay.spec.to_move(replay.state):
            raise _Bad(version, f"the game does not wait for seat {event.seat}")
        expected = [event]
    elif isinstance(event, TurnTimedOut):
        expected = _timeout(replay, event)
    elif isinstance(event, DefaultActionPlayed) and (event.reason == "forfeited" or inherited):
        if event.seat not in replay.forfeits and not inherited:
            raise _Bad(version, f"seat {event.seat} has not forfeited")
        expected = _forced(replay, replay.at, event, replay.forfeits)
    else:
        raise _Bad(version, f"{type(event).__name__} follows no timeout")
    expected = replay.copied(expected)
    _expect(replay, expected)
    replay.turns.append((version, f"{_span(version, len(expected))} {_describe(event)}"))
    replay.fold(len(expected))


def _step(replay: _Replay) -> None:
    """Checks and folds the step that begins at the next event: a decision, the clock's, an
    abort, or a note (`shared.model.notes`) with the move it precedes, as one step."""
    event, version = replay.events[replay.at], replay.at + 1
    if isinstance(event, NoteTaken):
        after = replay.events[version] if version < len(replay.events) else None
        waiting = replay.spec.to_move(replay.state)
        if (wrong := notes.logged_problem(event, replay.created.seats, waiting, after)) is not None:
            raise _Bad(version, wrong)
        replay.fold(1)
        _step(replay)
        replay.turns[-1] = (version, f"v{version} note of seat {event.seat}; {replay.turns[-1][1]}")
        return
    step = _clock_event if isinstance(event, ClockEvent) else _decision
    (_abort if isinstance(event, GameAborted) else step)(replay)


def _start(events: Sequence[Event]) -> _Replay:
    """Returns the replay after the log's first two events: the creation and the deal."""
    if not events or not isinstance(events[0], GameCreated):
        raise _Bad(1, "the log does not begin with GameCreated")
    created = events[0]
    try:
        spec = get_game(created.game)
        rules = spec.ruleset(created.ruleset)
        spec.validate(rules, len(created.seats))
    except GameNotFound:
        raise _Bad(1, f"unknown game {created.game!r}") from None
    except InvalidRuleset as error:
        raise _Bad(1, f"the game cannot be dealt: {error}") from None
    if len(events) < 2:
        raise _Bad(2, "missing: the deal is due here")
    dealt, started = spec.deal(rules, len(created.seats), "0"), events[1]
    if type(started) is not type(dealt):
        raise _Bad(2, f"{type(started).__name__} is not the deal ({type(dealt).__name__})")
    try:
        state = spec.fold([started])
    except Exception as error:  # a tampered log must not crash its check
        raise _Bad(2, f"the deal cannot be played: {error!r}") from None
    replay = _Replay(spec, created, events, state, clocks.initial_clock(created))
    seats = ", ".join(seat.bot or seat.name or seat.kind for seat in created.seats)
    replay.turns += [(1, f"v1 GameCreated {created.game} ({seats})"), (2, "v2 deal")]
    return replay


def _run(events: Sequence[Event]) -> tuple[_Replay | None, _Bad | None]:
    """Returns the replay of `events` as far as it got, and the first bad event (None: the
    log is a whole, legal game)."""
    try:
        replay = _start(events)
    except _Bad as bad:
        return None, bad
    try:
        while replay.at < len(events):
            if replay.spec.is_over(replay.state):
                raise _Bad(replay.at + 1, "the game is over: nothing may follow")
            try:
                _step(replay)
            except _Bad:
                raise
            except Exception as error:  # a tampered log must not crash its check
                raise _Bad(replay.at + 1, f"cannot be replayed: {error!r}") from None
        if not replay.spec.is_over(replay.state):
            raise _Bad(len(events) + 1, "missing: the log ends before the game is over")
    except _Bad as bad:
        return replay, bad
    return replay, None


def step_ends(events: Sequence[Event]) -> list[int]:
    """Returns the versions at which a step of a decoded log ends, in order, as far as the log
    replays: the deal's (2), then each decision's and each of the clock's (a timeout with its
    default action). A position between two steps is one the rules can reach; one inside a
    step (a player who played and has not drawn yet) is not."""
    done, _ = _run(events)
    if done is None:
        return []
    ends = [first - 1 for first, _ in done.turns if first > 2]
    return sorted({*ends, done.at})


def replay(game_id: str, events: Sequence[Event]) -> ReplayReport:
    """Returns the report of checking a game's decoded log (index i holds version i + 1)
    against the rules, and its deal against the commitment; pure."""
    game = events[0].game if events and isinstance(events[0], GameCreated) else ""
    verification = verify(events)
    done, bad = _run(events)
    reading = ""
    for earlier, fields in _earlier_readings(events) if bad is not None else []:
        then, wrong = _run(earlier)
        if wrong is None:
            done, bad, reading = then, None, fields
            break
    failed = verification.version if verification.status == "failed" else None
    if failed is not None and (bad is None or failed < bad.version):
        bad = _Bad(failed, f"deal: {verification.detail}")
    turns = [] if done is None else done.turns
    if bad is not None:
        before = [text for first, text in turns if first < bad.version]
        return ReplayReport(
            False, game_id, game, len(events), bad.version, bad.reason, before, None, verification
        )
    assert done is not None
    result = done.spec.result(done.state)
    texts = [text for _, text in turns]
    return ReplayReport(
        True, game_id, game, len(events), None, "", texts, result, verification, reading
    )


def _earlier_readings(events: Sequence[Event]) -> list[tuple[list[Event], str]]:
    """Returns the log with its deal's ruleset read as before each rules change that left it
    a default, newest first, each with the fields that reading sets."""
    if len(events) < 2 or not isinstance(events[0], GameCreated):
        return []
    started = events[1]
    ruleset = getattr(started, "ruleset", None)
    try:
        readings = get_game(events[0].game).earlier_readings(ruleset)
    except Exception:  # a tampered log (an unknown game, a ruleset of another) has none
        return []
    found = []
    for earlier in readings:
        fields = ", ".join(
            f"{name}={getattr(earlier, name)}"
            for name in earlier.__struct_fields__
            if getattr(earlier, name) != getattr(ruleset, name)
        )
        deal = msgspec.structs.replace(started, ruleset=earlier)
        found.append(([events[0], deal, *events[2:]], fields))
    return found


def replay_log(lines: Iterable[str | bytes]) -> ReplayReport:
    """Returns the report of reading an export and replaying it (see `replay`); a log that
    cannot be read is reported at its first unreadable line (version None: the header)."""
    rows = [line for line in lines if line.strip()]
    try:
        log = read_log(rows)
    except InvalidLog as error:
        return _unreadable(rows, error)
    return replay(log.header.game_id, log.events)


def _unreadable(rows: Sequence[str | bytes], error: InvalidLog) -> ReplayReport:
    """Returns the report of a log that cannot be read, with the turns that replay cleanly
    before its first unreadable line."""
    try:
        header = read_header(rows[0])
    except (InvalidLog, IndexError):
        return ReplayReport(False, "", "", 0, error.version, error.reason, [], None, None)
    events: list[Event] = []
    with contextlib.suppress(InvalidLog):
        read_events(header, rows[1:], events)
    before = error.version or 1
    done, _ = _run(events[: before - 1])
    turns = [text for first, text in (done.turns if done else []) if first < before]
    game_id, game, count = header.game_id, header.game, len(rows) - 1
    return ReplayReport(False, game_id, game, count, error.version, error.reason, turns, None, None)
