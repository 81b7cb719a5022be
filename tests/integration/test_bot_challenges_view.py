"""The projection's `bot_challenges` view (migration 005): the challenges waiting for each bot,
as the live projection writes it batch by batch and as a rebuild writes it again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import psycopg

from services.ops.migrate import migrate
from services.projection.projector import Projector, rebuild
from shared.model.challenges import ChallengeAccepted, ChallengeCancelled, ChallengeDeclined
from shared.store.memory import InMemoryEventStore, InMemoryFeedConsumer
from tests.support.bot_index import ALICE, BOB, NOW, answer, challenge


def rows(url: str) -> list[tuple[Any, ...]]:
    """Returns every `bot_challenges` row as (bot, challenge, expires_at), ordered."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT bot, challenge_id, expires_at FROM bot_challenges ORDER BY bot, challenge_id"
        ).fetchall()


def test_a_challenge_waits_for_each_pending_bot_until_it_answers_or_the_challenge_closes(
    database_url: str,
) -> None:
    migrate(database_url)
    store, later = InMemoryEventStore(), NOW + timedelta(hours=1)
    challenge(store, "c-both", ALICE, BOB, expires=later)
    challenge(store, "c-declined", ALICE, BOB, expires=later)
    challenge(store, "c-open", ALICE, expires=later)
    challenge(store, "c-cancelled", BOB, expires=later)
    answer(store, "c-both", ChallengeAccepted(bot=ALICE))
    answer(store, "c-declined", ChallengeDeclined(bot=BOB))
    answer(store, "c-cancelled", ChallengeCancelled(by=""))
    with Projector(database_url, InMemoryFeedConsumer(store, "projection", "p1")) as projector:
        while projector.run_once(count=1):  # each event in a batch of its own
            pass
    live = rows(database_url)

    rebuild(database_url, chunk=2)

    assert [(bot, challenge_id) for bot, challenge_id, _ in live] == [
        (ALICE, "c-open"),
        (BOB, "c-both"),
    ]
    assert all(expires == later for _, _, expires in live)
    assert rows(database_url) == live
