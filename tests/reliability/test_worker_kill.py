"""A Celery worker SIGKILLed in the middle of a tournament (the scenario of bench/worker_kill.py,
smaller): every game finishes with versions 1..n, the standings equal the in-process run's.

The killed worker's held tasks come back through the broker (over Redis, after the short
visibility timeout and restore interval here; over RabbitMQ, at once); the message it was
taking, lost to the broker, through beat's reconciliation. It runs on both brokers: the
shared Redis, and RabbitMQ on a virtual host of the test's own. See docs/reliability.md.
"""

from __future__ import annotations

import sys

import pytest

from bench import worker_kill
from shared.app.bot_turns import platform_due, play_bot_turns
from shared.app.deadlines import now_ms
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.registry import register_bot
from shared.app.tournaments import (
    after_game,
    create_tournament,
    load_tournament,
    reconcile,
    reconcile_games,
    record_game,
)
from shared.messages.common import Clock, Seat
from shared.model.idempotency import game_id_for
from shared.model.registry import BotSpec
from shared.model.tournaments.model import Entrant, TournamentDefinition, pending
from shared.store.memory import InMemoryEventStore

SETTINGS = {
    "CARDARENA_BROKER_VISIBILITY_TIMEOUT": "10",
    "CARDARENA_BROKER_RESTORE_INTERVAL": "1",
    "CARDARENA_RECONCILE_SECONDS": "5",
}
"""Short redelivery and reconciliation, so that the run takes about a minute."""


# The run's waits fail only on a hang (worker_kill.HANG_SECONDS each); a busy machine may
# take longer than the suite's 300 s default for the whole test.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("broker", ["redis", "amqp"])
def test_a_worker_killed_mid_tournament_loses_and_repeats_no_move_and_the_standings_hold(
    broker: str,
    request: pytest.FixtureRequest,
    redis_url: str,
    namespace: str,
    database_url: str,
) -> None:
    # amqp: a RabbitMQ virtual host of the test's own (the `amqp_url` fixture)
    broker_url = request.getfixturevalue("amqp_url") if broker == "amqp" else redis_url
    settings = {**SETTINGS, "CELERY_BROKER_URL": broker_url}
    tournament = worker_kill.definition(entrants=5, games_per_table=6)
    figures = worker_kill.run(redis_url, database_url, namespace, tournament, settings, sys.stdout)
    worker_kill.report(figures)
    assert figures.broker == broker
    assert 0 < figures.recorded_at_kill < figures.games == 60
    assert figures.held, "the killed worker held no task: nothing was redelivered"
    assert figures.redelivered_after_s is not None, "the held tasks did not come back"
    assert figures.lost is not None, "no message was lost with the killed worker"
    assert figures.resumed_after_s is not None, "the game whose task was lost never moved on"
    assert figures.finished
    assert figures.unfinished_games == []
    assert figures.gaps_or_repeats == [], "versions with gaps or repeats"
    assert figures.feed_repeats == 0
    assert figures.records_equal, "a game's places differ from the in-process run"
    assert figures.standings_equal


STALL_MS = 5_000


def test_the_reconciliation_dispatches_only_the_games_the_platform_left_waiting() -> None:
    store = InMemoryEventStore()
    tournament = worker_kill.definition(entrants=3, games_per_table=2)
    create_tournament(store, tournament, "t")
    sent: list[str] = []
    assert reconcile(store, "t", STALL_MS, now_ms(), sent.append) == 0, "still moving"

    later = now_ms() + STALL_MS
    games = [game_id_for(game.key) for game in pending(load_tournament(store, "t")[0])]
    assert reconcile(store, "t", STALL_MS, later, sent.append) == len(games) == 6
    assert sent == games, "a round whose games were never created starts again"

    waiting, unrecorded, *played = games
    play_bot_turns(store, unrecorded)
    for game_id in played:
        play_bot_turns(store, game_id)
        after_game(store, game_id, sent.append)
    sent.clear()
    assert reconcile(store, "t", STALL_MS, now_ms(), sent.append) == 0, "a game was recorded"
    assert reconcile(store, "t", STALL_MS, now_ms() + STALL_MS, sent.append) == 2
    assert sorted(sent) == sorted([waiting, unrecorded])

    key = load_tournament(store, "t")[0].rounds[-1].games[1].key
    record_game(store, "t", key, unrecorded)
    play_bot_turns(store, waiting)
    after_game(store, waiting, sent.append)
    assert load_tournament(store, "t")[0].status == "finished"
    assert reconcile(store, "t", STALL_MS, now_ms() + 10 * STALL_MS, sent.append) == 0


def test_the_reconciliation_leaves_a_seat_its_time_and_enforces_a_deadline_left_unwatched() -> None:
    store = InMemoryEventStore()
    register_bot(store, BotSpec(name="ext", game="autobus", kind="external"))
    tournament = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="ext"), Entrant(bot="random")],
        table_size=2,
        clock=Clock(move_seconds=10),
    )
    create_tournament(store, tournament, "t")
    sent: list[str] = []
    (game_id,) = [game_id_for(game.key) for game in pending(load_tournament(store, "t")[0])]
    assert reconcile(store, "t", STALL_MS, now_ms() + STALL_MS, sent.append) == 1
    play_bot_turns(store, game_id)
    loaded = load(store, game_id)
    assert loaded.clock is not None, "the external seat is timed"
    assert reconcile(store, "t", STALL_MS, now_ms() + STALL_MS, sent.append) == 0, "may think"
    late = now_ms() + 10_000 + STALL_MS
    assert reconcile(store, "t", STALL_MS, late, sent.append) == 1, "its deadline went by"
    assert sent == [game_id, game_id]


def test_the_reconciliation_of_games_of_no_tournament_sends_on_only_a_lost_bot_turn() -> None:
    store = InMemoryEventStore()
    bots = [Seat(bot="heuristic"), Seat(bot="random")]
    due = create_game(store, "autobus", seats=bots).game_id
    finished = create_game(store, "autobus", seats=bots).game_id
    play_bot_turns(store, finished)
    hosted = create_game(store, "autobus", seats=[Seat(kind="external"), Seat(bot="random")])
    play_bot_turns(store, hosted.game_id)
    assert not platform_due(load(store, hosted.game_id)), "it waits for its host, untimed"
    games = [due, finished, hosted.game_id, "never-created"]
    sent: list[str] = []
    assert reconcile_games(store, games, STALL_MS, now_ms(), sent.append) == 0, "still moving"
    # A finished game of no tournament has nothing left to record: it is not sent on.
    assert reconcile_games(store, games, STALL_MS, now_ms() + STALL_MS, sent.append) == 1
    assert sent == [due]
    play_bot_turns(store, due)
    assert reconcile_games(store, games, STALL_MS, now_ms() + 10 * STALL_MS, sent.append) == 0


def test_the_reconciliation_of_a_game_of_no_tournament_enforces_a_deadline_left_unwatched() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(bot="random")]
    game_id = create_game(store, "autobus", seats=seats, clock=Clock(move_seconds=10)).game_id
    play_bot_turns(store, game_id)
    loaded = load(store, game_id)
    assert loaded.clock is not None, "the external seat is timed"
    assert not loaded.spec.is_over(loaded.state)
    sent: list[str] = []
    assert reconcile_games(store, [game_id], STALL_MS, now_ms() + STALL_MS, sent.append) == 0
    late = now_ms() + 10_000 + STALL_MS
    assert reconcile_games(store, [game_id], STALL_MS, late, sent.append) == 1, "deadline past"
    assert sent == [game_id]
