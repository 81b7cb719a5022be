"""The standings' ratings and the leaderboard's agree for the same games, however the games'
ends interleave: both take a tournament's games in schedule order (the leaderboard when each
round completes, or the tournament is cancelled), on the in-memory twin and on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.views import PostgresTournamentViews
from shared.app.bot_turns import play_bot_turns
from shared.app.tournaments import (
    cancel_tournament,
    create_tournament,
    load_tournament,
    record_game,
    start_game,
)
from shared.model.tournaments.model import Entrant, TournamentDefinition, TournamentState, pending
from shared.model.tournaments.standings import Rating, tournament_ratings, update_ratings
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore


def field(label: str, count: int) -> list[Entrant]:
    """Returns `count` entrants, each a distinct bot version labelled `label`<n>."""
    bots = ["heuristic", "random"]
    return [Entrant(bot=bots[i % 2], version=f"{label}{i}") for i in range(count)]


ROBIN = TournamentDefinition(game="autobus", entrants=field("r", 4), table_size=2, seed="o1")
SWISS = TournamentDefinition(
    game="autobus", entrants=field("s", 4), table_size=2, format="swiss", rounds=3, seed="o2"
)
CANCELLED = TournamentDefinition(game="autobus", entrants=field("c", 3), table_size=2, seed="o3")


@dataclass
class Backend:
    """An event store, and the views of what it holds (projected first, where they lag)."""

    store: EventStore
    views: Callable[[], TournamentViews]


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Returns the in-memory twin over a memory store, then the real projector's PostgreSQL
    views over a Redis store."""
    if request.param == "memory":
        store = InMemoryEventStore()
        views = InMemoryTournamentViews(store)
        return Backend(store, lambda: views)
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    database_url: str = request.getfixturevalue("database_url")
    migrate(database_url)
    redis_store = RedisEventStore(client, namespace)
    consumer = redis_store.consumer("projection", "p1")
    projected = PostgresTournamentViews(database_url)

    def caught_up() -> TournamentViews:
        with Projector(database_url, consumer) as projector:
            while projector.run_once(count=7):
                pass
        return projected

    return Backend(redis_store, caught_up)


def play_round_backwards(store: EventStore, tournament_id: str, stop: int | None = None) -> None:
    """Starts every game of the tournament's current round, then plays and records them last
    scheduled first (at most `stop` of them), so they end in the reverse of their order."""
    state, _ = load_tournament(store, tournament_id)
    games = [(game, start_game(store, tournament_id, state, game)) for game in pending(state)]
    for game, game_id in list(reversed(games))[:stop]:
        play_bot_turns(store, game_id)
        record_game(store, tournament_id, game.key, game_id)


def run_backwards(store: EventStore, definition: TournamentDefinition, tournament_id: str) -> None:
    """Runs a whole tournament, each round's games ending in reverse schedule order."""
    create_tournament(store, definition, tournament_id)
    while True:
        state, _ = load_tournament(store, tournament_id)
        if state.status != "running" or not pending(state):
            return
        play_round_backwards(store, tournament_id)


def keyed(state: TournamentState) -> dict[str, Rating]:
    """Returns the standings' ratings of a tournament, by the entrants' rating keys."""
    ratings = tournament_ratings(state)
    assert ratings is not None
    entrants = state.definition.entrants
    return {f"{entrants[e].bot}@{entrants[e].version}": r for e, r in ratings.items()}


def board(views: TournamentViews, keys: Sequence[str]) -> dict[str, Rating]:
    """Returns the leaderboard's ratings of `keys`."""
    entries = {e.key: e for e in views.leaderboard("autobus", limit=1000)}
    return {key: Rating(entries[key].mu, entries[key].sigma) for key in keys if key in entries}


def in_finish_order(store: EventStore, state: TournamentState) -> dict[str, Rating]:
    """Returns the ratings the tournament's games give folded in the order they ended (the
    leaderboard's order before it took a tournament's games by round)."""
    tables = {game.key: game.table for rnd in state.rounds for game in rnd.games}
    entrants = state.definition.entrants
    finished = [
        entry.event.game_id
        for entry in store.read_feed("0", 1_000_000)
        if entry.event.type == "GameFinished"
    ]
    records = sorted(state.records, key=lambda record: finished.index(record.game_id))
    ratings: dict[str, Rating] = {}
    for record in records:
        seats = [f"{entrants[e].bot}@{entrants[e].version}" for e in tables[record.key]]
        ratings = update_ratings(ratings, list(zip(seats, record.places, strict=True)))
    return ratings


def test_a_tournament_whose_games_end_out_of_schedule_order_rates_alike_on_both(
    backend: Backend,
) -> None:
    store = backend.store
    run_backwards(store, ROBIN, "robin")
    run_backwards(store, SWISS, "swiss")
    views = backend.views()
    for tournament_id in ("robin", "swiss"):
        state, _ = load_tournament(store, tournament_id)
        assert state.status == "finished"
        standings = keyed(state)
        assert board(views, list(standings)) == standings
        if tournament_id == "robin":  # its one round seats each entrant at three tables
            assert in_finish_order(store, state) != standings, "no game ended out of order"
        entries = {e.key: e.games for e in views.leaderboard("autobus", limit=1000)}
        played = dict.fromkeys(standings, 0)
        tables = {g.key: g.table for rnd in state.rounds for g in rnd.games}
        entrants = state.definition.entrants
        for record in state.records:
            for e in tables[record.key]:
                played[f"{entrants[e].bot}@{entrants[e].version}"] += 1
        assert {key: entries[key] for key in standings} == played


def test_a_round_is_rated_once_complete_and_a_cancelled_one_by_its_recorded_games(
    backend: Backend,
) -> None:
    store = backend.store
    create_tournament(store, CANCELLED, "cut")
    play_round_backwards(store, "cut", stop=2)  # two of its three games end, backwards
    state, _ = load_tournament(store, "cut")
    assert (state.status, len(state.records)) == ("running", 2)
    assert board(backend.views(), list(keyed(state))) == {}  # the round has not completed

    cancel_tournament(store, "cut", "host")
    (last,) = pending(state)
    play_bot_turns(store, start_game(store, "cut", state, last))  # ends after the cancel

    state, _ = load_tournament(store, "cut")
    standings = keyed(state)
    assert board(backend.views(), list(standings)) == standings
    assert sum(e.games for e in backend.views().leaderboard("autobus")) == 2 * 2
