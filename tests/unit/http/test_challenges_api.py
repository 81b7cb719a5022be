"""Challenges in the embedded default: issue, the `challenge` event, accept, decline, cancel,
expiry, the cap of running games, and every refusal (which stores nothing)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.game.http.waiters import StreamConfig
from shared.app import challenges as challenge_app
from shared.app.loading import load
from shared.app.registry import register, registered_bots
from shared.model.challenges import ChallengeClosed, Opponent
from shared.model.registry import BotSpec
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, bearer
from tests.support.challenges import Arena
from tests.support.streams import parse


@pytest.fixture
def arena() -> Iterator[Arena]:
    built = Arena()
    with built.client:
        built.setup()
        yield built


def test_an_external_bot_is_challenged_accepts_and_the_game_starts_bound_to_both(
    arena: Arena,
) -> None:
    issued = arena.issue("alice", "bob")
    assert issued.status_code == 201, issued.text
    challenge = issued.json()
    assert challenge["status"] == "open"
    assert challenge["bots"] == ["alice@1", "bob@1"]
    assert challenge["pending"] == ["bob@1"]
    assert issued.headers["location"] == f"/v1/challenges/{challenge['challenge_id']}"

    accepted = arena.answer(challenge["challenge_id"], "bob", "accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["status"] == "started"
    game_id = accepted.json()["game_id"]
    assert game_id == challenge["game_id"]
    seats = load(arena.store, game_id).created.seats
    assert [seat.bound_bot for seat in seats] == ["alice@1", "bob@1"]
    view = arena.client.get(f"/v1/games/{game_id}/view?seat=1", headers=bearer(arena.tokens["bob"]))
    assert view.status_code == 200
    again = arena.answer(challenge["challenge_id"], "bob", "accept")
    assert again.status_code == 200
    assert again.json()["status"] == "started"


def test_a_challenged_bot_hears_of_it_on_its_stream_and_its_list(arena: Arena) -> None:
    challenge_id = arena.issue("alice", "bob").json()["challenge_id"]
    headers = bearer(arena.tokens["bob"])
    events, _ = parse(arena.client.get("/v1/bots/me/events", headers=headers).text)
    assert [(e.event, e.data["challenge_id"]) for e in events] == [("challenge", challenge_id)]
    listed = arena.client.get("/v1/bots/me/challenges", headers=headers).json()
    assert [c["challenge_id"] for c in listed["challenges"]] == [challenge_id]
    alice = arena.client.get("/v1/bots/me/challenges", headers=bearer(arena.tokens["alice"]))
    assert alice.json() == {"challenges": []}

    arena.answer(challenge_id, "bob", "decline")
    events, _ = parse(arena.client.get("/v1/bots/me/events", headers=headers).text)
    assert [e.event for e in events] == []
    assert arena.client.get("/v1/bots/me/challenges", headers=headers).json()["challenges"] == []


def test_a_challenge_issued_while_the_bot_listens_arrives_once() -> None:
    built = Arena(StreamConfig(keepalive_s=0.05, lifetime_s=1.5))
    with built.client:
        built.setup()
        ids: list[str] = []
        thread = built.when_streaming(
            lambda: ids.append(built.issue("alice", "bob").json()["challenge_id"])
        )
        response = built.client.get("/v1/bots/me/events", headers=bearer(built.tokens["bob"]))
        thread.join()
    events, _ = parse(response.text)
    assert [(e.event, e.data["challenge_id"]) for e in events] == [("challenge", ids[0])]
    assert events[0].data["challenger"] == "alice@1"


def test_built_in_opponents_accept_at_once_and_the_host_may_match_bots(arena: Arena) -> None:
    against_builtin = arena.issue("alice", "deep")
    assert against_builtin.status_code == 201, against_builtin.text
    assert against_builtin.json()["status"] == "started"
    seats = load(arena.store, against_builtin.json()["game_id"]).created.seats
    assert (seats[1].kind, seats[1].bot, seats[1].name) == ("bot", "heuristic", "deep")

    hosted = arena.issue(None, "deep", "bob")
    assert hosted.status_code == 201, hosted.text
    assert hosted.json()["challenger"] == ""
    assert hosted.json()["pending"] == ["bob@1"]
    started = arena.answer(hosted.json()["challenge_id"], "bob", "accept").json()
    game = load(arena.store, started["game_id"])
    assert [s.name for s in game.created.seats] == ["deep", "bob"]


def test_a_decline_closes_the_challenge_with_its_reason(arena: Arena) -> None:
    challenge_id = arena.issue("alice", "bob", "carol").json()["challenge_id"]
    assert arena.answer(challenge_id, "bob", "accept").json()["status"] == "open"
    declined = arena.answer(challenge_id, "carol", "decline", reason="busy")
    assert declined.status_code == 200, declined.text
    body = declined.json()
    assert (body["status"], body["declined_by"], body["reason"]) == ("declined", "carol@1", "busy")
    late = arena.answer(challenge_id, "carol", "accept")
    assert late.status_code == 409
    assert late.json()["challenge_status"] == "declined"
    seen = arena.client.get(f"/v1/challenges/{challenge_id}", headers=bearer(arena.tokens["alice"]))
    assert seen.json()["status"] == "declined"
    assert arena.store.read(body["game_id"]) == []


def test_the_challenger_or_the_host_cancels_and_nobody_else(arena: Arena) -> None:
    challenge_id = arena.issue("alice", "bob").json()["challenge_id"]
    refused = arena.answer(challenge_id, "bob", "cancel")
    assert refused.status_code == 403
    cancelled = arena.answer(challenge_id, "alice", "cancel")
    assert cancelled.json()["status"] == "cancelled"
    assert arena.answer(challenge_id, "alice", "cancel").status_code == 200
    assert arena.answer(challenge_id, "bob", "accept").status_code == 409
    other = arena.issue("alice", "bob").json()["challenge_id"]
    assert arena.answer(other, "host", "cancel").json()["status"] == "cancelled"


@pytest.mark.parametrize(
    ("by", "opponents", "extra", "field"),
    [
        ("alice", ["nobody"], {}, "opponents[0]"),
        ("alice", ["alice"], {}, "opponents[0]"),
        ("alice", ["bob", "bob"], {}, "opponents[1]"),
        ("alice", [], {}, "opponents"),
        ("alice", ["bob", "carol", "deep", "bob"], {}, "opponents[3]"),
        (None, ["bob"], {}, "opponents"),
        ("alice", ["bob"], {"game": "nope"}, "game"),
        ("alice", ["bob"], {"game": "autobus"}, "game"),
        ("alice", ["bob"], {"ruleset": {"hand": 0}}, "ruleset.hand"),
        ("alice", ["bob"], {"expires_in": 5}, "expires_in"),
        ("alice", ["bob"], {"clock": {"move_seconds": 0}}, "clock.move_seconds"),
        ("alice", ["bob"], {"colour": "red"}, "colour"),
    ],
)
def test_a_bad_challenge_names_its_field_and_stores_nothing(
    arena: Arena, by: str | None, opponents: list[str], extra: dict[str, Any], field: str
) -> None:
    response = arena.issue(by, *opponents, **extra)
    assert response.status_code in {400, 422}, response.text
    assert response.json()["field"] == field
    assert arena.challenge_streams() == 0


def test_who_may_answer_and_read_a_challenge(arena: Arena) -> None:
    challenge_id = arena.issue("alice", "bob").json()["challenge_id"]
    assert arena.answer(challenge_id, "carol", "accept").status_code == 403
    assert arena.answer(challenge_id, "alice", "accept").status_code == 403
    assert arena.answer(challenge_id, "host", "accept").status_code == 403
    url = f"/v1/challenges/{challenge_id}"
    assert arena.client.post(url + "/accept").status_code == 401
    assert arena.client.get(url, headers=bearer(arena.tokens["carol"])).status_code == 403
    assert arena.client.get(url).status_code == 401
    assert arena.client.get(url, headers=ADMIN).status_code == 200
    missing = arena.client.get("/v1/challenges/" + "0" * 32, headers=ADMIN)
    assert missing.status_code == 404
    assert missing.json()["challenge_id"] == "0" * 32
    assert (
        arena.client.post("/v1/challenges", json={"game": "shithead", "opponents": []}).status_code
        == 401
    )
    assert arena.client.get(url, headers=ADMIN).json()["pending"] == ["bob@1"]


def test_an_acceptance_that_would_pass_the_cap_is_refused_and_not_recorded() -> None:
    built = Arena(max_games_per_bot=1)
    with built.client:
        built.setup()
        first = built.issue("alice", "bob").json()["challenge_id"]
        assert built.answer(first, "bob", "accept").json()["status"] == "started"
        second = built.issue("carol", "bob").json()["challenge_id"]
        refused = built.answer(second, "bob", "accept")
        assert refused.status_code == 422, refused.text
        assert refused.json()["field"] == "bots[1]"
        url = f"/v1/challenges/{second}"
        assert built.client.get(url, headers=ADMIN).json()["pending"] == ["bob@1"]


def test_an_unanswered_challenge_expires() -> None:
    store = InMemoryEventStore()
    for name in ("alice", "bob"):
        register(store, BotSpec(name=name, version="1", game="shithead", kind="external"))
    now = datetime(2026, 1, 1, tzinfo=UTC)
    bots = registered_bots(store)
    alice = next(b for b in bots if b.name == "alice")
    issued = challenge_app.issue(
        store,
        game="shithead",
        ruleset=None,
        opponents=[Opponent(bot="bob")],
        bots=bots,
        challenger=alice,
        now=now,
        expires_in=60,
    )
    later = now + timedelta(seconds=61)
    assert challenge_app.read(store, issued.challenge_id, later)[0].status == "expired"
    with pytest.raises(ChallengeClosed):
        challenge_app.answer(store, issued.challenge_id, "bob@1", accept=True, now=later)


def test_concurrent_acceptances_start_the_game_once() -> None:
    built = Arena()
    with built.client:
        built.setup()
        challenge_id = built.issue("alice", "bob", "carol").json()["challenge_id"]
        answers: dict[str, Any] = {}

        def accept(bot: str) -> None:
            answers[bot] = built.answer(challenge_id, bot, "accept")

        threads = [threading.Thread(target=accept, args=(bot,)) for bot in ("bob", "carol")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert {a.status_code for a in answers.values()} == {200}
        final = built.client.get(f"/v1/challenges/{challenge_id}", headers=ADMIN).json()
        assert final["status"] == "started"
        assert sorted(final["accepted"]) == ["bob@1", "carol@1"]
        created = [e for e in built.store.read_feed("0", 100_000) if e.event.type == "GameCreated"]
        assert [e.event.game_id for e in created] == [final["game_id"]]


def test_a_last_event_id_older_than_the_trimmed_feed_is_gone_and_a_kept_one_resumes(
    arena: Arena,
) -> None:
    issued = arena.issue("alice", "bob")
    assert issued.status_code == 201, issued.text
    early = arena.store.read_feed(count=1)[0].position
    headers = bearer(arena.tokens["bob"])
    assert arena.client.get("/v1/bots/me/events", headers=headers).status_code == 200
    projection = arena.store.consumer("projection", "p1")
    while batch := projection.read(count=1000):
        projection.ack_entries(batch)
    assert arena.store.trim_feed(2**62) > 0
    kept = arena.store.feed_position()

    gone = arena.client.get("/v1/bots/me/events", headers={**headers, "Last-Event-ID": early})
    resumed = arena.client.get("/v1/bots/me/events", headers={**headers, "Last-Event-ID": kept})

    assert gone.status_code == 410, gone.text
    assert gone.headers["content-type"].startswith("application/problem+json")
    body = gone.json()
    assert (body["rule"], body["field"]) == ("feed_trimmed", "Last-Event-ID")
    assert resumed.status_code == 200
    events, _ = parse(resumed.text)
    challenge_id = issued.json()["challenge_id"]
    assert [(e.event, e.data["challenge_id"]) for e in events] == [("challenge", challenge_id)]
