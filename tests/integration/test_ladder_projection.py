"""A ladder's events on the real projection (PostgreSQL): archived like every event, never a
dead letter, and the ladder's games rated on the leaderboard as ordinary games."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.queries import archived_events, get_game_row
from shared.app import ladder as ladders
from shared.app.accounts import create_account
from shared.app.ladder import Pairing, pair_ladder
from shared.app.registry import find_bot, register
from shared.app.runtime import InProcessDispatcher
from shared.app.starting import GameCap
from shared.model.ladder import Rules
from shared.model.ladder_events import stream_id
from shared.model.registry import BotSpec
from shared.ports.game_slots import InMemoryGameSlots
from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer


def test_a_ladders_events_are_archived_and_its_games_rated(database_url: str) -> None:
    migrate(database_url)
    store = InMemoryEventStore()
    now = datetime.now(UTC)
    ladder = ladders.open_ladder(store, "shithead", {"max_moves": 60}, 2, now)
    for account in ("ada", "bea"):
        create_account(store, account, mode="open")
        spec = BotSpec(name=f"{account}-bot", game="shithead", strategy="random")
        register(store, spec, account=account)
        bot = find_bot(store, f"{account}-bot", "1")
        assert bot is not None
        ladders.join(store, ladder.ladder_id, bot, now)
    pairing = Pairing(GameCap(InMemoryGameSlots(), 0), InProcessDispatcher(store), lambda g: {})
    (game_id,) = pair_ladder(store, ladder.ladder_id, now, pairing)
    assert pairing.rules == Rules()
    with Projector(database_url, InMemoryFeedConsumer(store, "projection", "p1")) as projector:
        while projector.run_once(50):
            pass
    assert archived_events(database_url, stream_id(ladder.ladder_id)) == store.read(
        stream_id(ladder.ladder_id)
    )
    row = get_game_row(database_url, game_id)
    assert row is not None
    assert row["status"] != "playing"
    with psycopg.connect(database_url) as conn:
        dead = conn.execute("SELECT count(*) FROM projection_dead_letters").fetchone()
        rated = conn.execute("SELECT key FROM ratings ORDER BY key").fetchall()
    assert dead == (0,)
    assert [key for (key,) in rated] == ["ada-bot@1", "bea-bot@1"]
