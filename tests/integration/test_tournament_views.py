"""The tournament and rating views in PostgreSQL: live projection, rebuild, redelivery."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector, rebuild
from services.projection.tournament_folds import (
    SELECT_WITH_POSITION,
    fold_ratings,
    positioned_from_row,
)
from services.projection.views import PostgresTournamentViews
from shared.app.bot_turns import play_bot_turns
from shared.app.loading import load
from shared.app.tournaments import (
    create_tournament,
    load_tournament,
    record_game,
    run_in_process,
    start_game,
)
from shared.catalog import game_names
from shared.model.tournaments import model
from shared.model.tournaments.model import (
    Entrant,
    RoundCompleted,
    TournamentDefinition,
    TournamentState,
    pending,
)
from shared.model.tournaments.standings import standings
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore

FIELD = [
    Entrant(bot="heuristic", version="1"),
    Entrant(bot="random", version="1"),
    Entrant(bot="random", version="2"),
]
"""Three bot versions that play in every tournament below, so their ratings accumulate."""
SWISS = TournamentDefinition(
    game="autobus", entrants=FIELD, table_size=2, format="swiss", rounds=2, seed="s"
)
ROUND_ROBIN = TournamentDefinition(game="autobus", entrants=FIELD, table_size=2, seed="r")
SHITHEAD = TournamentDefinition(game="shithead", entrants=FIELD, table_size=3, seed="h")
BEGGAR = TournamentDefinition(
    game="beggar",
    entrants=[Entrant(bot="turner", version="1"), Entrant(bot="turner", version="2")],
    table_size=2,
)

TABLES = {
    "tournaments": "tournament_id",
    "tournament_entrants": "tournament_id, entrant",
    "tournament_games": "tournament_id, key",
    "tournament_standings": "tournament_id, rank",
    "ratings": "game, key",
    "rating_history": "game, key, feed_ms, feed_seq",
}
"""The views of migration 002 and the order to compare their rows in."""


def play_interleaved(store: EventStore, tournaments: dict[str, TournamentDefinition]) -> None:
    """Runs the tournaments in turns, one game of each at a time, until all are over."""
    for tournament_id, definition in tournaments.items():
        create_tournament(store, definition, tournament_id)
    running = list(tournaments)
    while running:
        for tournament_id in list(running):
            state, _ = load_tournament(store, tournament_id)
            games = pending(state)
            if state.status != "running" or not games:
                running.remove(tournament_id)
                continue
            game_id = start_game(store, tournament_id, state, games[0])
            play_bot_turns(store, game_id)
            record_game(store, tournament_id, games[0].key, game_id)


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Returns every row of the tournament and rating views, in a fixed order."""
    with psycopg.connect(url) as conn:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()  # noqa: S608
            for table, order in TABLES.items()
        }


def port_reads(views: TournamentViews, games: Sequence[str]) -> dict[str, Any]:
    """Returns everything the port reads: tournaments, standings, leaderboards, histories."""
    listed = views.tournaments(limit=500)
    boards = {game: views.leaderboard(game, limit=1000) for game in games}
    return {
        "tournaments": listed,
        "standings": {t.tournament_id: views.standings(t.tournament_id) for t in listed},
        "leaderboards": boards,
        "history": {
            (game, entry.key): views.rating_history(game, entry.key)
            for game, board in boards.items()
            for entry in board
        },
    }


def seats_played(state: TournamentState) -> Counter[tuple[str, str]]:
    """Returns how many games each FIELD bot version played in a tournament, per game."""
    tables = {game.key: game.table for rnd in state.rounds for game in rnd.games}
    return Counter(
        (state.definition.game, f"{FIELD[entrant].bot}@{FIELD[entrant].version}")
        for record in state.records
        for entrant in tables[record.key]
    )


@pytest.fixture
def db(database_url: str) -> str:
    """Returns the URL of this test's database, migrated."""
    migrate(database_url)
    return database_url


def test_rebuilding_from_the_archive_gives_the_live_tournaments_standings_and_ratings(
    db: str, redis_client: redis.Redis, namespace: str
) -> None:
    store = RedisEventStore(redis_client, namespace)
    play_interleaved(store, {"swiss": SWISS, "robin": ROUND_ROBIN, "beggar": BEGGAR})
    run_in_process(store, SHITHEAD, "shithead")
    consumer = store.consumer("projection", "p1")
    with Projector(db, consumer) as projector:
        while projector.run_once(count=97):
            pass
    live = snapshot(db)
    states = {t: load_tournament(store, t)[0] for t in ("swiss", "robin", "beggar", "shithead")}
    assert [row[0] for row in live["tournaments"]] == sorted(states)
    played = sum((seats_played(states[t]) for t in ("swiss", "robin", "shithead")), Counter())
    assert {(row[0], row[1]): row[2] for row in live["ratings"]} == played
    assert len(live["rating_history"]) == sum(played.values())

    counts = rebuild(db)

    rated = sum(len(states[t].records) for t in ("swiss", "robin", "shithead"))
    assert (counts.tournaments, counts.rated_games) == (4, rated)
    assert snapshot(db) == live
    games = game_names()
    pg = port_reads(PostgresTournamentViews(db), games)
    assert pg == port_reads(InMemoryTournamentViews(store), games)
    for tournament_id, state in states.items():
        assert pg["standings"][tournament_id].standings == standings(state)


def rated_games_of(store: EventStore, key: str) -> list[str]:
    """Returns the ids of the tournament games `key` sat in, in the order the leaderboard
    rates them: at each RoundCompleted, in feed order, that round's games in schedule order."""
    rated = []
    for entry in store.read_feed("0", 1_000_000):
        if entry.event.type != "RoundCompleted":
            continue
        state, _ = load_tournament(store, entry.event.game_id.removeprefix("tournament:"))
        (completed,) = [
            e for e in model.CODEC.decode_all([entry.event]) if isinstance(e, RoundCompleted)
        ]
        records = {record.key: record.game_id for record in state.records}
        (rnd,) = [rnd for rnd in state.rounds if rnd.round == completed.round]
        for game in rnd.games:
            seats = load(store, records[game.key]).created.seats
            if key in {seat.rating_key for seat in seats}:
                rated.append(records[game.key])
    return rated


def test_a_rebuild_folds_ratings_in_feed_order_not_in_game_id_order(db: str) -> None:
    store = InMemoryEventStore()
    play_interleaved(store, {"b": ROUND_ROBIN, "a": SWISS})
    finished = rated_games_of(store, "random@1")
    assert finished != sorted(finished)
    with Projector(db, InMemoryFeedConsumer(store, "projection", "p1")) as projector:
        while projector.run_once(count=50):
            pass
    views = PostgresTournamentViews(db)
    live = views.leaderboard("autobus")
    assert [p.game_id for p in views.rating_history("autobus", "random@1")] == finished

    rebuild(db, chunk=2)

    assert [p.game_id for p in views.rating_history("autobus", "random@1")] == finished
    assert (
        views.leaderboard("autobus")
        == live
        == InMemoryTournamentViews(store).leaderboard("autobus")
    )


class CrashOnFirstAck(InMemoryFeedConsumer):
    """A member that dies the first time it is about to acknowledge entries."""

    crashed = False

    def ack(self, positions: Sequence[str]) -> None:
        if not self.crashed:
            self.crashed = True
            raise ConnectionError("killed between commit and ack")
        super().ack(positions)


def test_a_batch_redelivered_after_a_crash_rates_its_games_once(db: str) -> None:
    store = InMemoryEventStore()
    run_in_process(store, ROUND_ROBIN, "robin")
    crashing = CrashOnFirstAck(store, "projection", "p1")
    with Projector(db, crashing) as projector:
        with pytest.raises(ConnectionError):
            projector.run_once(count=100_000)
        assert projector.run_once(count=100_000) == 0
    views = PostgresTournamentViews(db)
    assert views.leaderboard("autobus") == InMemoryTournamentViews(store).leaderboard("autobus")
    assert [entry.games for entry in views.leaderboard("autobus")] == [2, 2, 2]


def test_a_round_whose_games_were_rated_already_rates_none_of_them_again(db: str) -> None:
    # A database projected before the leaderboard took tournament games by round rated them
    # at their GameFinished; their RoundCompleted, folded after the upgrade, adds nothing.
    store = InMemoryEventStore()
    run_in_process(store, ROUND_ROBIN, "robin")
    with Projector(db, InMemoryFeedConsumer(store, "projection", "p1")) as projector:
        while projector.run_once(count=100):
            pass
    views = PostgresTournamentViews(db)
    before = (views.leaderboard("autobus"), views.rating_history("autobus", "random@1"))
    assert [entry.games for entry in before[0]] == [2, 2, 2]
    with psycopg.connect(db) as conn, conn.transaction(), conn.cursor() as cur:
        rows = cur.execute(SELECT_WITH_POSITION + " WHERE type = 'RoundCompleted'").fetchall()
        assert len(rows) == 1
        assert fold_ratings(cur, [positioned_from_row(row) for row in rows]) == 0
    assert (views.leaderboard("autobus"), views.rating_history("autobus", "random@1")) == before
