"""A bot's notifications on its event stream, in the embedded default: its challenges declined,
cancelled or expired (to the challenger, once each, resumed with `Last-Event-ID` without a
repeat or a gap), its tournaments started, their rounds and their end (to each entrant with a
token), and never another bot's."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import STATE_KEY, StreamConfig
from services.game.streams.bot_stream import BotStream
from services.settings import Settings
from shared.app import challenges as challenge_app
from shared.app.registry import registered_bots
from shared.model.challenges import Opponent
from tests.support.api import ADMIN, KEY, bearer
from tests.support.challenges import Arena
from tests.support.streams import SHORT, Sse, parse
from tests.support.tournaments import alice_swiss

NOTICES = {
    "challenge_declined",
    "challenge_cancelled",
    "challenge_expired",
    "tournament_started",
    "round_started",
    "tournament_finished",
}


class Notified(Arena):
    """The challenge arena, keeping its access (the places of open challenges)."""

    def __init__(self, config: StreamConfig = SHORT, max_open_challenges: int = 20) -> None:
        super().__init__(config)
        settings = Settings(admin_key=KEY, rate_limit=0, max_open_challenges=max_open_challenges)
        self.access = Access.embedded(self.store, settings)
        self.app = create_app(self.store, self.dispatcher, access=self.access)
        self.app.state[STATE_KEY] = self.streams
        self.client = TestClient(self.app)

    def events(self, bot: str, last: str | None = None) -> list[Sse]:
        """Returns the notifications of one whole stream of `bot` (from `last`, if given)."""
        headers = bearer(self.tokens[bot])
        if last is not None:
            headers["Last-Event-ID"] = last
        response = self.client.get("/v1/bots/me/events", headers=headers)
        assert response.status_code == 200, response.text
        return [e for e in parse(response.text)[0] if e.event in NOTICES]

    def issue_expiring(self, by: str, opponent: str, in_s: float) -> str:
        """Issues `by`'s challenge of `opponent` that expires in `in_s` seconds, holding its
        place of open challenges as the route does; returns its id."""
        now = datetime.now(UTC)
        bots = registered_bots(self.store)
        challenger = next(b for b in bots if b.name == by)
        slots, cap = self.access.challenges, self.access.max_open_challenges
        reservation = challenge_app.hold_open(slots, self.store, challenger.key, cap, now)
        issued = challenge_app.issue(
            self.store,
            game="shithead",
            ruleset={"max_moves": 40},
            opponents=[Opponent(bot=opponent)],
            bots=bots,
            challenger=challenger,
            now=now - timedelta(seconds=10 - in_s),
            expires_in=10,
        )
        slots.confirm(challenger.key, reservation, issued.challenge_id)
        return issued.challenge_id

    def expiries(self, challenge_id: str) -> int:
        """Returns how many ChallengeExpired the challenge's stream holds."""
        recorded = self.store.read(f"challenge:{challenge_id}")
        return sum(1 for r in recorded if r.type == "ChallengeExpired")


@contextlib.contextmanager
def arena_of(config: StreamConfig = SHORT, max_open_challenges: int = 20) -> Iterator[Notified]:
    """Yields the arena with its bots registered, its streams configured by `config`."""
    built = Notified(config, max_open_challenges)
    with built.client:
        built.setup()
        yield built


@pytest.fixture
def arena() -> Iterator[Notified]:
    with arena_of() as built:
        yield built


def test_a_challenger_hears_once_of_each_decline_and_cancellation(arena: Notified) -> None:
    declined = arena.issue("alice", "bob").json()["challenge_id"]
    arena.answer(declined, "bob", "decline", reason="busy")
    withdrawn = arena.issue("alice", "bob").json()["challenge_id"]
    arena.answer(withdrawn, "alice", "cancel")
    by_host = arena.issue("alice", "bob", "carol").json()["challenge_id"]
    arena.answer(by_host, "host", "cancel")
    hosted = arena.issue(None, "bob", "carol").json()["challenge_id"]
    arena.answer(hosted, "bob", "decline")

    notices = arena.events("alice", last="0")

    assert [(e.event, e.data["challenge_id"]) for e in notices] == [
        ("challenge_declined", declined),
        ("challenge_cancelled", withdrawn),
        ("challenge_cancelled", by_host),
    ]
    first, second, third = (e.data for e in notices)
    assert (first["bot"], first["reason"], first["game"]) == ("bob@1", "busy", "shithead")
    assert (second["by"], third["by"]) == ("alice@1", "")
    assert all(e.data["at"] for e in notices)
    assert [e.data["challenge_id"] for e in arena.events("alice", last=notices[0].id)] == [
        withdrawn,
        by_host,
    ]
    assert arena.events("alice", last=notices[-1].id) == []
    assert arena.events("alice") == []


def test_no_bot_hears_of_another_bots_challenges_closing(arena: Notified) -> None:
    declined = arena.issue("alice", "bob").json()["challenge_id"]
    arena.answer(declined, "bob", "decline")
    cancelled = arena.issue("alice", "bob", "carol").json()["challenge_id"]
    arena.answer(cancelled, "alice", "cancel")
    expired = arena.issue_expiring("alice", "bob", 0.0)
    assert [e.event for e in arena.events("alice")] == ["challenge_expired"]

    for bot in ("bob", "carol"):
        assert arena.events(bot, last="0") == [], bot
        assert arena.events(bot) == [], bot
    assert arena.expiries(expired) == 1


def test_a_decline_while_the_challenger_listens_arrives_once() -> None:
    with arena_of(StreamConfig(keepalive_s=0.05, lifetime_s=1.5)) as arena:
        challenge_id = arena.issue("alice", "bob").json()["challenge_id"]
        thread = arena.when_streaming(
            lambda: arena.answer(challenge_id, "bob", "decline", reason="no")
        )
        notices = arena.events("alice")
        thread.join()

        assert [(e.event, e.data["reason"]) for e in notices] == [("challenge_declined", "no")]
        assert arena.events("alice", last=notices[0].id) == []


@pytest.mark.parametrize("cap", [20, 0])
def test_a_challenge_that_expires_while_its_challenger_listens_is_told_once(cap: int) -> None:
    with arena_of(StreamConfig(keepalive_s=5, lifetime_s=1.5), cap) as arena:
        challenge_id = arena.issue_expiring("alice", "bob", 0.5)
        streams: list[list[Sse]] = []
        readers = [
            threading.Thread(target=lambda: streams.append(arena.events("alice"))) for _ in range(2)
        ]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()

        assert len(streams) == 2
        for notices in streams:
            assert [(e.event, e.data["challenge_id"]) for e in notices] == [
                ("challenge_expired", challenge_id)
            ]
            assert notices[0].data["pending"] == ["bob@1"]
        assert arena.expiries(challenge_id) == 1
        assert [e.event for e in arena.events("alice", last="0")] == ["challenge_expired"]
        assert arena.events("alice", last=streams[0][0].id) == []
        refused = arena.answer(challenge_id, "bob", "accept")
        assert (refused.status_code, refused.json()["challenge_status"]) == (409, "expired")


def test_a_challenge_that_expired_while_nobody_listened_is_told_on_connect(
    arena: Notified,
) -> None:
    early = arena.store.feed_position()
    challenge_id = arena.issue_expiring("alice", "bob", 0.0)
    time.sleep(0.01)

    notices = arena.events("alice")
    resumed = arena.events("alice", last=early)

    assert [(e.event, e.data["challenge_id"]) for e in notices] == [
        ("challenge_expired", challenge_id)
    ]
    assert [e.event for e in resumed] == ["challenge_expired"]
    assert resumed[0].id == notices[0].id
    assert arena.events("alice") == []
    assert arena.expiries(challenge_id) == 1


def test_issuing_more_records_the_expiry_of_a_full_challengers_old_ones() -> None:
    with arena_of(max_open_challenges=1) as arena:
        early = arena.store.feed_position()
        expired = arena.issue_expiring("alice", "bob", 0.0)

        assert arena.issue("alice", "carol").status_code == 201
        assert arena.expiries(expired) == 1
        assert [e.event for e in arena.events("alice", last=early)] == ["challenge_expired"]
        assert arena.events("alice") == []


SWISS = alice_swiss("7")


def play_turns(arena: Notified, bot: str, tournament_id: str) -> None:
    """Plays `bot`'s turns (the first legal action of each) until the tournament is over."""
    headers = bearer(arena.tokens[bot])
    for _ in range(2000):
        url = f"/v1/tournaments/{tournament_id}"
        if arena.client.get(url).json()["status"] != "running":
            return
        turns = arena.client.get("/v1/bots/me/turns", params={"wait": 1}, headers=headers)
        for turn in turns.json()["turns"]:
            body = {
                "seat": turn["seat"],
                "action": turn["legal_actions"][0],
                "expected_version": turn["version"],
            }
            arena.client.post(f"/v1/games/{turn['game_id']}/actions", json=body, headers=headers)
    raise AssertionError("the tournament did not end")


def test_an_entrant_hears_of_its_tournament_its_rounds_and_its_end(arena: Notified) -> None:
    created = arena.client.post("/v1/tournaments", json=SWISS, headers=ADMIN)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["tournament_id"]
    play_turns(arena, "alice", tournament_id)
    tournament = arena.client.get(f"/v1/tournaments/{tournament_id}").json()

    notices = arena.events("alice", last="0")

    assert [e.event for e in notices] == [
        "tournament_started",
        "round_started",
        "round_started",
        "tournament_finished",
    ]
    started, first, second, finished = (e.data for e in notices)
    assert started == {
        "tournament_id": tournament_id,
        "game": "shithead",
        "format": "swiss",
        "table_size": 2,
        "entries": [0],
        "entrants": 4,
    }
    for number, (data, played) in enumerate(
        zip((first, second), tournament["rounds"], strict=True)
    ):
        mine = [g for g in played["games"] if 0 in g["entrants"]]
        assert data["round"] == number + 1
        assert data["bye"] is False
        assert [(g["game_id"], g["seats"]) for g in data["games"]] == [
            (g["game_id"], [g["entrants"].index(0)]) for g in mine
        ]
    assert (finished["status"], finished["winner"]) == ("finished", tournament["winner"])
    assert [e.event for e in arena.events("alice", last=notices[1].id)] == [
        "round_started",
        "tournament_finished",
    ]
    assert arena.events("alice", last=notices[-1].id) == []
    for bot in ("bob", "carol"):
        assert arena.events(bot, last="0") == [], bot


def test_a_cancelled_tournament_tells_its_entrants_it_is_over(arena: Notified) -> None:
    body = {**SWISS, "entrants": [{"bot": "alice"}, {"bot": "bob"}, *SWISS["entrants"][1:3]]}
    created = arena.client.post("/v1/tournaments", json=body, headers=ADMIN).json()
    tournament_id = created["tournament_id"]
    url = f"/v1/tournaments/{tournament_id}/cancel"
    assert arena.client.post(url, json={"reason": "rain"}, headers=ADMIN).status_code == 200

    for bot, entries in (("alice", [0]), ("bob", [1])):
        notices = arena.events(bot, last="0")
        assert [e.event for e in notices] == [
            "tournament_started",
            "round_started",
            "tournament_finished",
        ], bot
        assert notices[0].data["entries"] == entries
        assert (notices[2].data["status"], notices[2].data["reason"]) == ("cancelled", "rain")
    assert arena.events("carol", last="0") == []


def test_without_a_cap_a_challenger_is_never_refused_and_its_closed_places_are_swept() -> None:
    with arena_of(max_open_challenges=0) as arena:
        for _ in range(130):
            issued = arena.issue("alice", "bob")
            assert issued.status_code == 201, issued.text
            arena.answer(issued.json()["challenge_id"], "alice", "cancel")
        still_open = arena.issue("alice", "bob").json()["challenge_id"]

        held = arena.access.challenges.games("alice@1")
        assert still_open in held
        assert len(held) <= 101
        assert len(arena.events("alice", last="0")) == 130


def test_a_late_joiner_of_an_arena_hears_of_it_at_its_join_then_of_its_pairings(
    arena: Notified,
) -> None:
    body = {
        "game": "shithead",
        "entrants": [{"bot": "alice"}, {"bot": "bob"}],
        "table_size": 2,
        "format": "arena",
        "duration_seconds": 600,
    }
    created = arena.client.post("/v1/tournaments", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    tournament_id = created.json()["tournament_id"]
    url = f"/v1/tournaments/{tournament_id}/entrants"
    assert arena.client.post(url, headers=bearer(arena.tokens["carol"])).status_code == 201
    joined = arena.client.post(url, json={"bot": "random", "version": "9"}, headers=ADMIN)
    assert joined.status_code == 201, joined.text
    (paired,) = joined.json()["rounds"][-1]["games"]
    cancel = f"/v1/tournaments/{tournament_id}/cancel"
    assert arena.client.post(cancel, headers=ADMIN).status_code == 200

    notices = arena.events("carol", last="0")
    assert [e.event for e in notices] == [
        "tournament_started",
        "round_started",
        "tournament_finished",
    ]
    assert (notices[0].data["entries"], notices[0].data["entrants"]) == ([2], 3)
    games = notices[1].data["games"]
    assert [(g["game_id"], g["seats"]) for g in games] == [
        (paired["game_id"], [paired["entrants"].index(2)])
    ]
    alice = [e.event for e in arena.events("alice", last="0")]
    assert alice == ["tournament_started", "round_started", "tournament_finished"]


def test_a_stream_hears_what_happens_after_its_request_even_before_it_is_first_read(
    arena: Notified, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream's start is the feed's end when the request came, not when its body is first
    read: a cancellation written between the answer's headers and that first read (a busy
    server) reaches the challenger (it was lost when the start was read inside the body)."""
    challenge_id = arena.issue("alice", "bob").json()["challenge_id"]
    events = BotStream.events

    async def late_first_read(stream: BotStream) -> AsyncIterator[Any]:
        challenge_app.cancel(arena.store, challenge_id, "alice@1", datetime.now(UTC))
        async for message in events(stream):
            yield message

    monkeypatch.setattr(BotStream, "events", late_first_read)
    notices = arena.events("alice")

    assert [(e.event, e.data["challenge_id"]) for e in notices] == [
        ("challenge_cancelled", challenge_id)
    ]
