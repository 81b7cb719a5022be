"""Clocks: deadlines and banks from the log, strikes, forfeits placed last, default actions."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, watch_of
from shared.app.games import act, create_game
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import run_in_process
from shared.catalog import game_names, get_game
from shared.errors import IllegalAction
from shared.games import autobus as ab
from shared.games import beggar as bg
from shared.games import shithead as sh
from shared.games.autobus.decide import deal as ab_deal
from shared.games.autobus.legal import default_action as ab_default_action
from shared.games.autobus.legal import legal_actions
from shared.games.autobus.messages import (
    CardDiscarded,
    CardUnderTheBus,
    Discard,
    EndTurn,
    PlayToSequence,
    TurnEnded,
    UnderTheBus,
)
from shared.games.autobus.rules import AutobusRuleset
from shared.games.base import AnyGame
from shared.games.shithead.decide import deal as sh_deal
from shared.games.shithead.legal import default_action as sh_default_action
from shared.games.shithead.messages import PickUp, PlayFaceDown, PlayFromDeck, Ready
from shared.games.shithead.rules import PRESETS
from shared.games.shithead.state import ShitheadState
from shared.messages.codec import encode
from shared.messages.common import (
    Clock,
    ClockEvent,
    DefaultActionPlayed,
    Event,
    GameCreated,
    GameFinished,
    Result,
    Seat,
    SeatForfeited,
    TurnTimedOut,
    WebhookFailed,
)
from shared.messages.envelope import RecordedEvent
from shared.model import clocks
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.memory import InMemoryEventStore

T0 = 1_700_000_000_000
"""A start time in ms; logs built by hand count from it."""
FAR_FUTURE = 10**15
"""A time (ms) past every deadline."""
EXTERNAL = Seat(kind="external")
CLASSIC = PRESETS["classic"]


def created(game: str, seats: Sequence[Seat], clock: Clock | None) -> GameCreated:
    """Returns the creation event of a game with these seats and clock."""
    return GameCreated(
        game=game, ruleset={}, seats=list(seats), clock=msgspec.UNSET if clock is None else clock
    )


def logged(
    spec: AnyGame, timed: Sequence[tuple[Event, int]]
) -> tuple[list[Event], list[RecordedEvent]]:
    """Returns (event, ms after T0) pairs as a decoded log and its stored records."""
    recorded = []
    for version, (event, offset) in enumerate(timed, start=1):
        envelope = encode(event)
        recorded.append(
            RecordedEvent("g", spec.name, version, envelope.type, envelope.data, 1, T0 + offset)
        )
    return spec.codec.decode_all(recorded), recorded


class Table:
    """A game played by hand: every append is recorded `at` a chosen time (ms after T0)."""

    def __init__(self, game: str, seats: Sequence[Seat], clock: Clock | None, seed: int) -> None:
        self.spec = get_game(game)
        self.created = created(game, seats, clock)
        start = self.spec.deal(self.spec.ruleset(None), len(seats), seed)
        self.timed: list[tuple[Event, int]] = [(self.created, 0), (start, 0)]

    def fold(self) -> tuple[Any, clocks.ClockState | None]:
        """Returns the state and clock of the log so far."""
        events, recorded = logged(self.spec, self.timed)
        return clocks.fold_with_clock(self.spec, self.created, events, recorded)

    @property
    def state(self) -> Any:
        """Returns the game's state."""
        return self.fold()[0]

    @property
    def clock(self) -> clocks.ClockState:
        """Returns the game's clock."""
        clock = self.fold()[1]
        assert clock is not None
        return clock

    def add(self, events: Sequence[Event], at: int) -> None:
        """Appends `events`, recorded at `at` ms after T0."""
        self.timed.extend((event, at) for event in events)

    def move(self, seat: int, at: int, action: Any = None) -> None:
        """Appends `seat`'s action (default: the game's default action) at `at`."""
        state = self.state
        chosen = clocks.default_action(self.spec, state, seat) if action is None else action
        self.add(self.spec.decide(state, seat, chosen), at)

    def expire(self, now: int) -> list[Event]:
        """Appends what the clock does at `now` (ms after T0) and returns it."""
        state, clock = self.fold()
        assert clock is not None
        events = clocks.expire(self.spec, state, clock, T0 + now)
        self.add(events, now)
        return events


# Deadlines and banks ---------------------------------------------------------------------


def test_an_untimed_game_has_no_clock_and_its_creation_encodes_as_before() -> None:
    untimed = created("autobus", [EXTERNAL, EXTERNAL], None)
    assert b"clock" not in encode(untimed).data
    table = Table("autobus", [EXTERNAL, EXTERNAL], None, seed=1)
    assert table.fold()[1] is None
    assert clocks.timed_waits(table.spec, table.state, None) == []


def test_a_waiting_seats_deadline_is_the_last_event_plus_the_move_and_its_bank() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=10, bank_seconds=30), 1)
    clock = table.clock
    assert clocks.timed_waits(table.spec, table.state, clock) == [0]
    assert clock.turn_version == 2
    assert clock.deadline_ms(0) == T0 + 40_000


def test_a_bank_drains_by_the_time_used_beyond_the_move_deadline_only() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=10, bank_seconds=30), 2)
    table.move(0, at=25_000)
    assert table.clock.banks_ms == (15_000, 30_000)
    table.move(1, at=30_000)
    assert table.clock.banks_ms == (15_000, 30_000)
    assert table.clock.deadline_ms(0) == T0 + 30_000 + 10_000 + 15_000
    table.move(0, at=200_000)
    assert table.clock.banks_ms == (0, 30_000)


def test_a_failed_webhook_call_neither_restarts_the_wait_nor_drains_the_bank() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=10, bank_seconds=5), 3)
    before = table.clock
    table.add([WebhookFailed(seat=0, reason="timeout")], at=9_000)
    after = table.clock
    assert (after.turn_version, after.turn_started_ms) == (before.turn_version, T0)
    assert after.deadline_ms(0) == before.deadline_ms(0)


def test_built_in_bots_are_never_timed() -> None:
    bot = Seat(kind="bot", bot="random")
    table = Table("autobus", [bot, EXTERNAL], Clock(move_seconds=1), 4)
    assert clocks.timed_waits(table.spec, table.state, table.clock) == []
    assert table.expire(FAR_FUTURE - T0) == []


def test_shitheads_swap_phase_times_every_unready_client_seat_at_once() -> None:
    seats = [EXTERNAL, Seat(kind="bot", bot="random"), EXTERNAL]
    table = Table("shithead", seats, Clock(move_seconds=5), 5)
    assert clocks.timed_waits(table.spec, table.state, table.clock) == [0, 2]
    events = table.expire(5_000)
    assert [e.seat for e in events if isinstance(e, TurnTimedOut)] == [0, 2]
    played = [e for e in events if isinstance(e, DefaultActionPlayed)]
    assert [p.action for p in played] == [{"type": "Ready"}] * 2


# Strikes and forfeits --------------------------------------------------------------------


def test_nothing_times_out_before_the_deadline() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=10, bank_seconds=2), 6)
    assert table.expire(11_999) == []
    timed_out, played, *moved = table.expire(12_000)
    assert timed_out == TurnTimedOut(seat=0, strikes=1)
    assert isinstance(played, DefaultActionPlayed)
    assert (played.seat, played.reason) == (0, "timeout")
    assert isinstance(moved[0], CardDiscarded | CardUnderTheBus | TurnEnded)


def test_a_timeout_strikes_drains_the_bank_and_hands_the_turn_on() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=1, bank_seconds=3), 7)
    table.expire(4_000)
    clock = table.clock
    assert clock.strikes == (1, 0)
    assert clock.banks_ms == (0, 3_000)
    assert table.state.turn == 1
    assert clock.turn_started_ms == T0 + 4_000


def test_the_third_strike_forfeits_and_the_forfeited_seat_is_no_longer_timed() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=1), 8)
    now = 0
    for strike in (1, 2):
        now += 1_000
        assert table.expire(now)[0] == TurnTimedOut(seat=0, strikes=strike)
        now += 100
        table.move(1, at=now)
    events = table.expire(now + 1_000)
    assert events[:2] == [TurnTimedOut(seat=0, strikes=3), SeatForfeited(seat=0)]
    assert isinstance(events[2], DefaultActionPlayed)
    assert table.clock.forfeits == (0,)
    table.move(1, at=now + 2_000)
    assert table.state.turn == 0
    assert clocks.timed_waits(table.spec, table.state, table.clock) == []


def test_strikes_to_forfeit_is_the_clocks_setting() -> None:
    table = Table("autobus", [EXTERNAL, EXTERNAL], Clock(move_seconds=1, strikes_to_forfeit=1), 9)
    assert table.expire(1_000)[:2] == [TurnTimedOut(seat=0, strikes=1), SeatForfeited(seat=0)]


# Places ----------------------------------------------------------------------------------


def test_a_forfeited_seat_places_after_every_other_seat() -> None:
    result = Result("finished", [1, 2, 3, 4], "seat 3 is the shithead")
    placed = clocks.place_forfeits_last(result, [0])
    assert placed.places == [4, 1, 2, 3]
    assert placed.reason == "seat 3 is the shithead; forfeited: seat 0"


def test_the_others_keep_their_order_and_ties() -> None:
    placed = clocks.place_forfeits_last(Result("draw", [1, 1, 3, 1], ""), [1])
    assert placed.places == [1, 4, 3, 1]


def test_of_several_forfeits_the_first_to_forfeit_places_last() -> None:
    placed = clocks.place_forfeits_last(Result("finished", [3, 1, 2, 4], ""), [1, 3])
    assert placed.places == [2, 4, 1, 3]


def test_no_forfeit_leaves_a_result_as_it_is() -> None:
    result = Result("finished", [2, 1], "r")
    assert clocks.place_forfeits_last(result, []) is result
    finished = GameFinished(result=result)
    assert clocks.forfeits_last([finished], [1]) == [
        GameFinished(result=Result("finished", [1, 2], "r; forfeited: seat 1"))
    ]


# Default actions -------------------------------------------------------------------------


def test_shitheads_default_is_ready_while_swapping() -> None:
    state = sh.SPEC.fold([sh_deal(CLASSIC, 2, 1)])
    assert sh_default_action(state, 0) == Ready()


def _play(state: ShitheadState, **changes: Any) -> ShitheadState:
    """Returns a play-phase Shithead state with `changes`."""
    return msgspec.structs.replace(state, phase="play", ready=(True, True), **changes)


def test_shitheads_default_is_a_forced_pickup_when_nothing_can_be_played() -> None:
    state = _play(
        sh.SPEC.fold([sh_deal(CLASSIC, 2, 1)]),
        hands=(("4C", "5D"), ("6C",)),
        pile=("KS",),
        deck=(),
        turn=0,
    )
    assert sh_default_action(state, 0) == PickUp()


def test_shitheads_default_turns_a_face_down_card_when_it_plays_blind() -> None:
    state = _play(
        sh.SPEC.fold([sh_deal(CLASSIC, 2, 1)]),
        hands=((), ("6C",)),
        face_up=((), ("7C",)),
        face_down=(("4C", "5D"), ("8C",)),
        pile=("KS",),
        deck=(),
        turn=0,
    )
    assert sh_default_action(state, 0) == PlayFaceDown(index=0)


def test_shitheads_default_picks_up_rather_than_gamble_on_the_deck() -> None:
    rules = msgspec.structs.replace(CLASSIC, gamble_from_deck=True)
    state = _play(
        sh.SPEC.fold([sh_deal(rules, 2, 1)]),
        hands=(("4C",), ("6C",)),
        pile=("KS",),
        deck=("9H",),
        turn=0,
    )
    assert sh_default_action(state, 0) == PickUp()


def test_shitheads_default_turns_the_deck_when_a_gamble_is_all_it_may_do() -> None:
    rules = msgspec.structs.replace(CLASSIC, gamble_from_deck=True)
    state = _play(
        sh.SPEC.fold([sh_deal(rules, 2, 1)]), hands=((), ("6C",)), pile=(), deck=("9H",), turn=0
    )
    assert sh_default_action(state, 0) == PlayFromDeck()


def test_autobus_default_is_the_first_legal_way_to_end_the_turn() -> None:
    state = ab.SPEC.fold([ab_deal(AutobusRuleset(), 2, 3)])
    action = ab_default_action(state, 0)
    assert isinstance(action, Discard | UnderTheBus | EndTurn)
    assert action == next(a for a in legal_actions(state, 0) if not isinstance(a, PlayToSequence))


def test_autobus_default_discards_before_it_puts_a_card_under_the_bus() -> None:
    state = ab.SPEC.fold([ab_deal(AutobusRuleset(), 2, 3)])
    slots = (("2C",), ("3C",), ("4C",), ("9C",))
    state = msgspec.structs.replace(
        state,
        hands=(("6D", "9H"), state.hands[1]),
        slots=(slots, state.slots[1]),
        slot_ranks=((2, 3, 4, 9), state.slot_ranks[1]),
    )
    enders = [a for a in legal_actions(state, 0) if not isinstance(a, PlayToSequence)]
    assert enders == [UnderTheBus(card="6D"), Discard(card="9H", slot=3)]
    assert ab_default_action(state, 0) == Discard(card="9H", slot=3)


def test_beggars_default_is_its_only_action_and_nobody_else_has_one() -> None:
    state = bg.SPEC.fold([bg.deal(bg.BeggarRuleset(), 2, 3)])
    assert bg.default_action(state, 0) == bg.PlayTrick()
    with pytest.raises(IllegalAction):
        bg.default_action(state, 1)


@pytest.mark.parametrize("game", game_names())
def test_the_default_action_is_always_legal_for_every_seat_to_move(game: str) -> None:
    spec = get_game(game)
    players = min(spec.max_players, 4)
    for seed in range(3):
        state = spec.fold([spec.deal(spec.ruleset(None), players, seed)])
        moves = 0
        while not spec.is_over(state) and moves < 400:
            for seat in spec.to_move(state):
                assert clocks.default_action(spec, state, seat) in spec.legal_actions(state, seat)
            seat = spec.to_move(state)[0]
            for event in clocks.forced_move(spec, state, seat, "forfeited"):
                state = spec.evolve(state, event)
            moves += 1


# Replays and the store -------------------------------------------------------------------


def _timed_out_game(store: InMemoryEventStore, clock: Clock) -> str:
    """Returns a Shithead game whose seat 0 (a client) never moves, timed out to its end."""
    seats = [EXTERNAL, Seat(kind="bot", bot="random"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "shithead", seats=seats, seed=11, clock=clock).game_id
    play_bot_turns(store, game_id)
    for _ in range(10):
        watch = watch_of(load(store, game_id))
        if watch is None:
            break
        assert watch.deadline_ms is not None
        check = enforce_deadline(store, game_id, watch.turn_version, FAR_FUTURE)
        assert check.status == "timed_out"
        play_bot_turns(store, game_id)
    return game_id


def test_a_seat_that_never_moves_is_struck_three_times_forfeits_and_places_last() -> None:
    store = InMemoryEventStore()
    game_id = _timed_out_game(store, Clock(move_seconds=1))
    loaded = load(store, game_id)
    assert loaded.spec.is_over(loaded.state)
    events = loaded.spec.codec.decode_all(store.read(game_id))
    assert [e.strikes for e in events if isinstance(e, TurnTimedOut)] == [1, 2, 3]
    assert [e.seat for e in events if isinstance(e, SeatForfeited)] == [0]
    forced = [e.reason for e in events if isinstance(e, DefaultActionPlayed)]
    assert forced[:3] == ["timeout"] * 3
    assert set(forced[3:]) <= {"forfeited"}
    (finished,) = [e for e in events if isinstance(e, GameFinished)]
    assert finished.result.places[0] == 3
    assert loaded.spec.result(loaded.state) == finished.result


def test_a_log_with_timeouts_replays_to_the_same_state_and_clock() -> None:
    store = InMemoryEventStore()
    game_id = _timed_out_game(store, Clock(move_seconds=1, bank_seconds=2))
    recorded = store.read(game_id)
    spec = get_game("shithead")
    events = spec.codec.decode_all(recorded)
    assert any(isinstance(e, ClockEvent) for e in events)
    by_evolve = None
    for event in events[1:]:
        by_evolve = spec.evolve(by_evolve, event)
    without_clock = spec.fold([e for e in events if not isinstance(e, ClockEvent)])
    loaded = load(store, game_id)
    assert spec.fold(events) == by_evolve == without_clock == loaded.state
    again = clocks.fold_with_clock(spec, loaded.created, events, recorded)
    assert again == (loaded.state, loaded.clock)


def test_a_deadline_is_enforced_once_and_not_before_it_is_due() -> None:
    store = InMemoryEventStore()
    seats = [EXTERNAL, Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=2, clock=Clock(move_seconds=60))
    loaded = load(store, game_id.game_id)
    watch = watch_of(loaded)
    assert watch is not None
    assert watch.deadline_ms is not None
    early = enforce_deadline(store, loaded.game_id, watch.turn_version, watch.deadline_ms - 1)
    assert (early.status, early.retry_at_ms) == ("early", watch.deadline_ms)
    first = enforce_deadline(store, loaded.game_id, watch.turn_version, watch.deadline_ms)
    version = store.version(loaded.game_id)
    second = enforce_deadline(store, loaded.game_id, watch.turn_version, watch.deadline_ms)
    assert (first.status, second.status) == ("timed_out", "moved_on")
    assert store.version(loaded.game_id) == version


def test_a_forfeited_client_seat_may_no_longer_act() -> None:
    store = InMemoryEventStore()
    seats = [EXTERNAL, EXTERNAL]
    clock = Clock(move_seconds=1, strikes_to_forfeit=1)
    game_id = create_game(store, "autobus", seats=seats, seed=5, clock=clock).game_id
    turn = watch_of(load(store, game_id))
    assert turn is not None
    enforce_deadline(store, game_id, turn.turn_version, FAR_FUTURE)
    loaded = load(store, game_id)
    assert loaded.forfeits == (0,)
    play_bot_turns(store, game_id)
    loaded = load(store, game_id)
    assert loaded.state.turn == 1
    legal = loaded.spec.legal_actions(loaded.state, 1)
    act(
        store,
        game_id,
        seat=1,
        action=msgspec.to_builtins(legal[-1]),
        expected_version=loaded.version,
    )
    play_bot_turns(store, game_id)
    loaded = load(store, game_id)
    assert loaded.state.turn == 1
    with pytest.raises(IllegalAction) as refused:
        act(store, game_id, seat=0, action={"type": "EndTurn"}, expected_version=loaded.version)
    assert refused.value.rule == "forfeited"


def test_the_in_process_dispatcher_times_out_a_client_seat_that_never_moves() -> None:
    store = InMemoryEventStore()
    seats = [EXTERNAL, Seat(kind="bot", bot="random")]
    clock = Clock(move_seconds=0.05)
    game_id = create_game(store, "autobus", seats=seats, seed=9, clock=clock).game_id
    earlier = set(threading.enumerate())  # other tests' apps may leave their timers running
    dispatcher = InProcessDispatcher(store)
    try:
        dispatcher.dispatch(game_id)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not load(store, game_id).spec.is_over(
            load(store, game_id).state
        ):
            time.sleep(0.05)
        loaded = load(store, game_id)
        assert loaded.spec.is_over(loaded.state), "the timers did not finish the game"
        assert loaded.forfeits == (0,)
        result = loaded.spec.result(loaded.state)
        assert result is not None
        assert result.places == [2, 1]
    finally:
        dispatcher.close()
    timers = [
        t
        for t in threading.enumerate()
        if isinstance(t, threading.Timer)
        and t.is_alive()
        and game_id in getattr(t, "args", ())  # other tests' apps may arm timers meanwhile
    ]
    assert not set(timers) - earlier, "closing the dispatcher leaves none of its timers running"


def test_a_tournaments_clock_reaches_its_games_and_leaves_its_bots_untimed() -> None:
    store = InMemoryEventStore()
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random"), Entrant(bot="heuristic")],
        table_size=2,
        clock=Clock(move_seconds=1),
    )
    state = run_in_process(store, definition)
    (record,) = state.records
    loaded = load(store, record.game_id)
    assert loaded.created.clock == Clock(move_seconds=1)
    assert loaded.spec.is_over(loaded.state)
    events = loaded.spec.codec.decode_all(store.read(record.game_id))
    assert not [e for e in events if isinstance(e, ClockEvent)]


# Written on 2026-11-30 (schema version 1); never edit these, add new samples instead.
FROZEN_CLOCK_EVENTS = {
    "GameCreated": (
        "89a474797065ab47616d6543726561746564a467616d65a76175746f627573a772756c6573657480a573"
        "656174739284a46b696e64a7776562686f6f6ba3626f74c0a46e616d65a4686f6f6ba776657273696f6e"
        "a13184a46b696e64a3626f74a3626f74a672616e646f6da46e616d65c0a776657273696f6ea0aa637265"
        "617465645f6174a0a8626f745f73656564a0aa746f75726e616d656e74a0ae746f75726e616d656e745f"
        "6b6579a0a5636c6f636b83ac6d6f76655f7365636f6e6473cb3ff8000000000000ac62616e6b5f736563"
        "6f6e64731eb2737472696b65735f746f5f666f726665697403"
    ),
    "TurnTimedOut": "83a474797065ac5475726e54696d65644f7574a47365617400a7737472696b657303",
    "SeatForfeited": "82a474797065ad53656174466f72666569746564a47365617400",
    "DefaultActionPlayed": (
        "84a474797065b344656661756c74416374696f6e506c61796564a47365617400a6616374696f6e81a474"
        "797065a7456e645475726ea6726561736f6ea774696d656f7574"
    ),
    "WebhookFailed": (
        "84a474797065ad576562686f6f6b4661696c6564a47365617400a6726561736f6eab687474705f7374"
        "61747573a664657461696ca3353033"
    ),
}


@pytest.mark.parametrize("game", game_names())
def test_frozen_clock_events_decode_in_every_game(game: str) -> None:
    codec = get_game(game).codec
    decoded = [
        codec.decode(RecordedEvent("g", game, version, type_, bytes.fromhex(data)))
        for version, (type_, data) in enumerate(FROZEN_CLOCK_EVENTS.items(), start=1)
    ]
    assert decoded[1:] == [
        TurnTimedOut(seat=0, strikes=3),
        SeatForfeited(seat=0),
        DefaultActionPlayed(seat=0, action={"type": "EndTurn"}, reason="timeout"),
        WebhookFailed(seat=0, reason="http_status", detail="503"),
    ]
    creation = decoded[0]
    assert isinstance(creation, GameCreated)
    assert creation.clock == Clock(move_seconds=1.5, bank_seconds=30, strikes_to_forfeit=3)
    assert creation.seats[0] == Seat(kind="webhook", name="hook", version="1")
