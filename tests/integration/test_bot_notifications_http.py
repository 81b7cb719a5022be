"""A bot's notifications over real HTTP: a `cardarena serve game` process on Redis (its bot
index over the projection's views, its places of open challenges in Redis). The challenger
hears of its challenges declined, cancelled and expired while it listens, an entrant of its
tournament's start, rounds and end, each once (playing from its turns' views, its running
games listed), and resumes with `Last-Event-ID` without a
repeat or a gap; another bot hears none of it."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx

from tests.support.api import ADMIN, register
from tests.support.served import sse
from tests.support.tournaments import alice_swiss

NOTICES = {
    "challenge_declined",
    "challenge_cancelled",
    "challenge_expired",
    "tournament_started",
    "round_started",
    "tournament_finished",
}
Event = tuple[str, str, Any]


def until_quiet(lines: Iterator[str]) -> Iterator[str]:
    """Yields `lines` up to the first keep-alive comment (the stream's backlog is sent
    before the stream first waits)."""
    for line in lines:
        if line.startswith(":"):
            return
        yield line


class Listener:
    """One bot's event stream read in a thread, its notifications kept as they come."""

    def __init__(self, base_url: str, token: str, last: str | None = None) -> None:
        self.events: list[Event] = []
        self._stop = threading.Event()
        headers = {"Authorization": f"Bearer {token}"}
        if last is not None:
            headers["Last-Event-ID"] = last
        self._thread = threading.Thread(target=self._run, args=(base_url, headers), daemon=True)
        self._opened = threading.Event()
        self._thread.start()
        assert self._opened.wait(30), "the stream did not open"

    def _run(self, base_url: str, headers: dict[str, str]) -> None:
        # No read timeout shorter than a busy machine's delay of a keep-alive (every few
        # seconds): a read that timed out ended the stream and failed the test under load.
        timeout = httpx.Timeout(30, read=120)
        with (
            httpx.Client(base_url=base_url, timeout=timeout) as http,
            http.stream("GET", "/v1/bots/me/events", headers=headers) as response,
        ):
            assert response.status_code == 200
            self._opened.set()

            def lines() -> Iterator[str]:
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    yield line

            for event in sse(lines()):
                if event[0] in NOTICES:
                    self.events.append(event)

    def wait_for(self, count: int, seconds: float) -> list[Event]:
        """Returns the notifications once `count` came (fails after `seconds`)."""
        deadline = time.monotonic() + seconds
        while len(self.events) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(self.events) >= count, self.events
        return list(self.events)

    def stop(self) -> None:
        """Stops reading (at the next line: a keep-alive comes every few seconds)."""
        self._stop.set()
        self._thread.join(15)


def resumed(http: httpx.Client, token: str, last: str) -> list[Event]:
    """Returns the notifications a stream resumed after `last` sends before it first waits."""
    headers = {"Authorization": f"Bearer {token}", "Last-Event-ID": last}
    with http.stream("GET", "/v1/bots/me/events", headers=headers) as response:
        assert response.status_code == 200
        return [e for e in sse(until_quiet(response.iter_lines())) if e[0] in NOTICES]


def challenge(http: httpx.Client, token: str, opponent: str, **extra: Any) -> str:
    """Posts a challenge of `opponent` with `token`; returns its id."""
    body = {"game": "shithead", "opponents": [{"bot": opponent}], **extra}
    issued = http.post("/v1/challenges", json=body, headers={"Authorization": f"Bearer {token}"})
    assert issued.status_code == 201, issued.text
    challenge_id: str = issued.json()["challenge_id"]
    return challenge_id


def test_a_challenger_hears_once_of_each_challenge_declined_cancelled_and_expired(
    service: str,
) -> None:
    with httpx.Client(base_url=service, timeout=60) as http:
        alice, bob, carol = (register(http, name)["token"] for name in ("alice", "bob", "carol"))
        alices = Listener(service, alice)
        carols = Listener(service, carol)
        bearer = {"Authorization": f"Bearer {bob}"}

        declined = challenge(http, alice, "bob")
        answer = http.post(
            f"/v1/challenges/{declined}/decline", json={"reason": "r"}, headers=bearer
        )
        assert answer.status_code == 200, answer.text
        cancelled = challenge(http, alice, "bob")
        own = {"Authorization": f"Bearer {alice}"}
        assert http.post(f"/v1/challenges/{cancelled}/cancel", headers=own).status_code == 200
        expiring = challenge(http, alice, "bob", expires_in=10)
        heard = alices.wait_for(3, 30)
        alices.stop()
        carols.stop()

        assert [(e[0], e[2]["challenge_id"]) for e in heard] == [
            ("challenge_declined", declined),
            ("challenge_cancelled", cancelled),
            ("challenge_expired", expiring),
        ]
        assert heard[2][2]["pending"] == ["bob@1"]
        assert [e[2]["challenge_id"] for e in resumed(http, alice, heard[0][1])] == [
            cancelled,
            expiring,
        ]
        assert resumed(http, alice, heard[-1][1]) == []
        assert carols.events == []
        late = http.post(f"/v1/challenges/{expiring}/accept", headers=bearer)
        assert (late.status_code, late.json()["challenge_status"]) == (409, "expired")


def test_an_entrant_hears_of_its_tournament_and_plays_it_from_its_turns(
    service: str,
) -> None:
    with httpx.Client(base_url=service, timeout=60) as http:
        alice, carol = register(http, "alice")["token"], register(http, "carol")["token"]
        carols = Listener(service, carol)
        definition = alice_swiss("11")
        alices = Listener(service, alice)
        created = http.post("/v1/tournaments", json=definition, headers=ADMIN)
        assert created.status_code == 201, created.text
        tournament_id = created.json()["tournament_id"]
        auth = {"Authorization": f"Bearer {alice}"}
        for _ in range(1000):
            if http.get(f"/v1/tournaments/{tournament_id}").json()["status"] != "running":
                break
            turns = http.get("/v1/bots/me/turns", params={"wait": 5}, headers=auth).json()
            listed = http.get("/v1/bots/me/games", headers=auth).json()["games"]
            for turn in turns["turns"]:
                assert (turn["game_id"], [turn["seat"]]) in [
                    (g["game_id"], g["seats"]) for g in listed
                ]
                view = http.get(
                    f"/v1/games/{turn['game_id']}/view", params={"seat": turn["seat"]}, headers=auth
                ).json()
                if view["version"] == turn["version"]:
                    assert (turn["view"], turn["legal_actions"]) == (
                        view["view"],
                        view["legal_actions"],
                    )
                body = {
                    "seat": turn["seat"],
                    "action": turn["legal_actions"][0],
                    "expected_version": turn["version"],
                }
                http.post(f"/v1/games/{turn['game_id']}/actions", json=body, headers=auth)
        heard = alices.wait_for(4, 30)
        alices.stop()
        carols.stop()

        assert [e[0] for e in heard] == [
            "tournament_started",
            "round_started",
            "round_started",
            "tournament_finished",
        ]
        assert heard[0][2]["entries"] == [0]
        assert [len(e[2]["games"]) for e in heard[1:3]] == [1, 1]
        assert heard[3][2]["status"] == "finished"
        assert [e[0] for e in resumed(http, alice, heard[1][1])] == [
            "round_started",
            "tournament_finished",
        ]
        assert carols.events == []
