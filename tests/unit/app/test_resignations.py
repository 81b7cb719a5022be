"""Resignation and aborts in the use cases, over the in-memory store: every game with decisions
at two and four players, the places and reasons they give, and the offline replay of their logs.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
import pytest

from shared.app.bot_turns import next_bot_seat, play_bot_turns
from shared.app.games import abort_game, act, create_game
from shared.app.loading import LoadedGame, load
from shared.catalog import game_names, get_game
from shared.errors import GameOver, IllegalAction
from shared.messages.common import (
    Clock,
    DefaultActionPlayed,
    Event,
    GameAborted,
    GameFinished,
    Seat,
    SeatResigned,
)
from shared.model import clocks, log_replay
from shared.model import exported_log as export
from shared.ports.outbox import InMemoryOutbox
from shared.ports.views.memory import InMemoryTournamentViews
from shared.store.memory import InMemoryEventStore

RESIGN = {"type": "Resign"}
DECISION_GAMES = [game for game in game_names() if get_game(game).has_decisions]
"""The games a seat may resign from: those with decisions."""
FOUR_SEAT_GAMES = [game for game in DECISION_GAMES if get_game(game).max_players >= 4]
"""The games with decisions that seat four."""


def external_game(store: InMemoryEventStore, game: str, players: int, seed: int = 5) -> str:
    """Creates an untimed game of `players` external seats; returns its id."""
    seats = [Seat(kind="external") for _ in range(players)]
    return create_game(store, game, seats=seats, seed=seed).game_id


def resign(store: InMemoryEventStore, game_id: str, seat: int) -> LoadedGame:
    """Resigns `seat` at the game's current version; returns the game after it."""
    act(store, game_id, seat=seat, action=RESIGN, expected_version=store.version(game_id))
    return load(store, game_id)


def play_out(store: InMemoryEventStore, game_id: str, limit: int = 20_000) -> LoadedGame:
    """Plays the first legal action of each seat to move (the platform the resigned seats'
    defaults) until the game ends; returns it."""
    for _ in range(limit):
        play_bot_turns(store, game_id)
        loaded = load(store, game_id)
        if loaded.spec.is_over(loaded.state):
            return loaded
        seat = loaded.spec.to_move(loaded.state)[0]
        assert seat not in loaded.resigned, "the platform plays a resigned seat's turns"
        action = loaded.spec.legal_actions(loaded.state, seat)[0]
        act(
            store,
            game_id,
            seat=seat,
            action=msgspec.to_builtins(action),
            expected_version=loaded.version,
        )
    pytest.fail(f"game {game_id} did not end")


def events_of(store: InMemoryEventStore, game_id: str) -> list[Event]:
    """Returns the game's decoded log."""
    return load(store, game_id).spec.codec.decode_all(store.read(game_id))


def replayed(store: InMemoryEventStore, game_id: str) -> log_replay.ReplayReport:
    """Returns the offline replay's report of the game's exported log."""
    return log_replay.replay_log(export.export_lines(game_id, events_of(store, game_id)))


def not_to_move(loaded: LoadedGame) -> int:
    """Returns a seat the game does not wait for, the last seat when it waits for all."""
    waiting = loaded.spec.to_move(loaded.state)
    seats = range(len(loaded.created.seats))
    return next((seat for seat in seats if seat not in waiting), seats[-1])


@pytest.mark.parametrize("game", DECISION_GAMES)
def test_a_resignation_in_a_two_player_game_ends_it_at_once_the_other_seat_first(
    game: str,
) -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, game, 2)
    loaded = load(store, game_id)
    seat = not_to_move(loaded)
    after = resign(store, game_id, seat)
    tail = events_of(store, game_id)[loaded.version :]
    assert [type(event) for event in tail] == [SeatResigned, GameFinished]
    finished = tail[1]
    assert isinstance(finished, GameFinished)
    assert finished.result.places == [2 if s == seat else 1 for s in range(2)]
    assert finished.result.reason == f"resigned: seat {seat}"
    assert finished.seed, "the platform's finish reveals the deal"
    assert finished.salt
    assert after.spec.is_over(after.state)
    assert after.spec.result(after.state) == finished.result
    report = replayed(store, game_id)
    assert report.ok, report.reason
    assert report.result == finished.result


@pytest.mark.parametrize("game", FOUR_SEAT_GAMES)
def test_a_resigned_seat_of_four_has_its_defaults_played_and_places_last(game: str) -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, game, 4)
    after = resign(store, game_id, 2)
    assert after.resigned == (2,)
    assert not after.spec.is_over(after.state), "three seats still play"
    over = play_out(store, game_id)
    result = over.spec.result(over.state)
    assert result is not None
    assert result.places[2] == 4
    assert max(result.places[s] for s in (0, 1, 3)) <= 3
    assert result.reason.endswith("resigned: seat 2")
    defaults = [e for e in events_of(store, game_id) if isinstance(e, DefaultActionPlayed)]
    assert defaults, "the resigned seat came to move"
    assert {(e.seat, e.reason) for e in defaults} == {(2, "forfeited")}
    report = replayed(store, game_id)
    assert report.ok, report.reason
    assert report.result == result


@pytest.mark.parametrize("game", FOUR_SEAT_GAMES)
def test_the_third_resignation_of_four_ends_the_game_the_earliest_to_resign_last(
    game: str,
) -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, game, 4)
    for seat in (3, 0):
        assert not resign(store, game_id, seat).spec.is_over(load(store, game_id).state)
    over = resign(store, game_id, 1)
    result = over.spec.result(over.state)
    assert result is not None
    assert result.places == [3, 2, 1, 4]
    assert result.reason == "resigned: seat 3, 0, 1"
    assert replayed(store, game_id).ok


def test_a_seat_resigns_only_once_and_then_takes_no_action() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "shithead", 3)
    resign(store, game_id, 1)
    version = store.version(game_id)
    with pytest.raises(IllegalAction) as again:
        resign(store, game_id, 1)
    assert again.value.rule == "resigned"
    loaded = load(store, game_id)
    if 1 in loaded.spec.to_move(loaded.state):
        action = msgspec.to_builtins(loaded.spec.legal_actions(loaded.state, 1)[0])
        with pytest.raises(IllegalAction) as moved:
            act(store, game_id, seat=1, action=action, expected_version=version)
        assert moved.value.rule == "resigned"
    assert store.version(game_id) == version


def test_a_built_in_bots_seat_cannot_resign_and_a_game_without_decisions_takes_none() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="heuristic")]
    game_id = create_game(store, "autobus", seats=seats, seed=2).game_id
    with pytest.raises(IllegalAction) as bot_seat:
        resign(store, game_id, 1)
    assert bot_seat.value.rule == "bot_seat"
    beggar = create_game(store, "beggar", players=2, seed=2).game_id
    with pytest.raises(IllegalAction) as beggars:
        resign(store, beggar, 0)
    assert beggars.value.rule == "no_decisions"


def test_a_finished_game_takes_no_resignation() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "autobus", 2)
    resign(store, game_id, 0)
    with pytest.raises(IllegalAction) as over:
        resign(store, game_id, 1)
    assert over.value.rule == "game_over"


def test_resign_is_never_a_listed_legal_action() -> None:
    store = InMemoryEventStore()
    for game in DECISION_GAMES:
        loaded = load(store, external_game(store, game, 2))
        for seat in loaded.spec.to_move(loaded.state):
            legal = loaded.spec.legal_actions(loaded.state, seat)
            assert all(type(action).__name__ != "Resign" for action in legal)


def test_a_resigned_seat_of_a_timed_game_is_no_longer_timed() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external") for _ in range(3)]
    clock = Clock(move_seconds=1, bank_seconds=0)
    game_id = create_game(store, "shithead", seats=seats, seed=4, clock=clock).game_id
    before = load(store, game_id)
    assert 0 in clocks.timed_waits(before.spec, before.state, before.clock), "the swap phase"
    after = resign(store, game_id, 0)
    assert after.clock is not None
    assert (after.forfeits, after.resigned) == ((0,), (0,))
    assert 0 not in clocks.timed_waits(after.spec, after.state, after.clock)
    assert next_bot_seat(after) == 0, "the platform plays the resigned seat's swap"
    play_bot_turns(store, game_id)
    assert 0 not in load(store, game_id).spec.to_move(load(store, game_id).state)


def test_an_abort_ends_the_game_with_no_result_and_no_action_after_it() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "shithead", 2)
    version = store.version(game_id)
    abort_game(store, game_id, "host")
    (aborted,) = events_of(store, game_id)[version:]
    assert isinstance(aborted, GameAborted)
    assert (aborted.result.status, aborted.result.places, aborted.result.reason) == (
        "aborted",
        [],
        "host",
    )
    loaded = load(store, game_id)
    assert loaded.aborted
    assert loaded.spec.to_move(loaded.state) == []
    with pytest.raises(GameOver) as acted:
        resign(store, game_id, 0)
    assert acted.value.rule == "aborted"
    with pytest.raises(GameOver) as twice:
        abort_game(store, game_id, "host")
    assert twice.value.rule == "aborted"
    report = replayed(store, game_id)
    assert report.ok, report.reason
    assert report.result == aborted.result


def test_a_finished_game_cannot_be_aborted() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "autobus", 2)
    resign(store, game_id, 1)
    with pytest.raises(GameOver) as over:
        abort_game(store, game_id, "host")
    assert over.value.rule == "game_over"


def tampered(events: list[Event], index: int, **fields: Any) -> list[bytes]:
    """Returns the export of `events` with the event at `index` changed by `fields`."""
    changed = list(events)
    changed[index] = msgspec.structs.replace(changed[index], **fields)
    return export.export_lines("g", changed)


def test_the_replay_names_a_resignation_the_rules_refuse() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "shithead", 3)
    resign(store, game_id, 1)
    play_out(store, game_id)
    events = events_of(store, game_id)
    index = next(i for i, e in enumerate(events) if isinstance(e, SeatResigned))
    report = log_replay.replay_log(tampered(events, index, seat=7))
    assert (report.ok, report.version) == (False, index + 1)
    twice = [*events[: index + 1], events[index], *events[index + 1 :]]
    again = log_replay.replay_log(export.export_lines("g", twice))
    assert (again.ok, again.version) == (False, index + 2)
    assert "resigned already" in again.reason


def test_the_replay_names_an_abort_for_no_known_reason() -> None:
    store = InMemoryEventStore()
    game_id = external_game(store, "autobus", 2)
    abort_game(store, game_id, "stale")
    events = events_of(store, game_id)
    last = events[-1]
    assert isinstance(last, GameAborted)
    result = msgspec.structs.replace(last.result, reason="bored")
    report = log_replay.replay_log(tampered(events, len(events) - 1, result=result))
    assert (report.ok, report.version) == (False, len(events))


@pytest.mark.parametrize("stale_seconds", [0, 1])
def test_the_workers_reconciliation_aborts_the_games_stale_for_the_setting(
    stale_seconds: int,
) -> None:
    from services.settings import WorkerSettings  # noqa: PLC0415 - the workers' own test
    from services.workers.celery_app import create_celery  # noqa: PLC0415
    from services.workers.tasks import Worker  # noqa: PLC0415
    from shared.ports.game_slots import InMemoryGameSlots  # noqa: PLC0415

    store = InMemoryEventStore()
    settings = WorkerSettings(stale_game_seconds=stale_seconds)
    worker = Worker(
        create_celery(settings),
        settings,
        store=lambda: store,
        outbox=InMemoryOutbox,
        views=lambda: InMemoryTournamentViews(store),
        slots=InMemoryGameSlots,
    )
    game_id = external_game(store, "autobus", 2)
    assert worker.reconcile_tournaments(stall_seconds=3600) == 0
    assert not load(store, game_id).aborted, "moved just now"
    time.sleep(1.1)
    assert worker.reconcile_tournaments(stall_seconds=3600) == 0, "nothing to send on"
    assert load(store, game_id).aborted is bool(stale_seconds)


@pytest.mark.parametrize("game", DECISION_GAMES)
def test_a_timed_game_with_a_resignation_replays_clean(game: str) -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external") for _ in range(3)]
    clock = Clock(move_seconds=600, bank_seconds=0)
    game_id = create_game(store, game, seats=seats, seed=6, clock=clock).game_id
    resign(store, game_id, 1)
    over = play_out(store, game_id)
    result = over.spec.result(over.state)
    assert result is not None
    assert result.places[1] == 3
    report = replayed(store, game_id)
    assert report.ok, report.reason
    assert report.result == result
