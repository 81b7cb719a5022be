"""The embedded service's streams as the tests read them: server-sent events parsed, and a
service (`World`) with the external bots alice and bob registered and its streams' lifetime set."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import STATE_KEY, StreamConfig, Streams
from services.settings import Settings
from shared.app.games import act
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, KEY, Client, bearer

SHORT = StreamConfig(keepalive_s=0.05, lifetime_s=0.6)
"""Streams that end soon by themselves (the test client waits for a stream's end)."""


RULES = {"max_moves": 40}
"""Classic Shithead capped at 40 moves, so that a game played to its end stays short."""


LONG = StreamConfig(keepalive_s=0.05, lifetime_s=120)
"""Streams that end with their game (the lifetime is only a safety net)."""


@dataclass(frozen=True)
class Sse:
    """One server-sent event: its type, id and JSON data."""

    event: str
    id: str
    data: Any


def parse(text: str) -> tuple[list[Sse], int]:
    """Returns the events of an SSE body and how many comment lines it had."""
    events: list[Sse] = []
    comments = 0
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                comments += 1
            elif line:
                name, _, value = line.partition(": ")
                fields[name] = value
        if "event" in fields:
            events.append(Sse(fields["event"], fields.get("id", ""), json.loads(fields["data"])))
    return events, comments


class World:
    """The service over an in-memory store, with the bots alice and bob registered."""

    def __init__(self, config: StreamConfig) -> None:
        self.store = InMemoryEventStore()
        self.dispatcher = InProcessDispatcher(self.store)
        access = Access.embedded(self.store, Settings(admin_key=KEY, rate_limit=0))
        self.app = create_app(self.store, self.dispatcher, access=access)
        self.streams = Streams(config)
        self.app.state[STATE_KEY] = self.streams
        self.client: Client = TestClient(self.app)
        self.tokens: dict[str, str] = {}

    def register(self, name: str) -> None:
        """Registers the external bot `name`, keeping its token."""
        body = {"name": name, "game": "shithead", "kind": "external"}
        created = self.client.post("/v1/bots", json=body, headers=ADMIN)
        assert created.status_code == 201, created.text
        self.tokens[name] = created.json()["token"]

    def game(self, *seats: Mapping[str, Any]) -> str:
        """Creates a two-player Shithead game with `seats`; returns its id."""
        body = {"game": "shithead", "ruleset": RULES, "seats": list(seats), "seed": 5}
        created = self.client.post("/v1/games", json=body, headers=ADMIN)
        assert created.status_code == 201, created.text
        game_id: str = created.json()["game_id"]
        return game_id

    def stream(self, game_id: str, token: str | None, **params: Any) -> tuple[list[Sse], int]:
        """Returns the events and comment count of one whole game stream."""
        headers = bearer(token) if token else {}
        if "last" in params:
            headers["Last-Event-ID"] = str(params.pop("last"))
        response = self.client.get(f"/v1/games/{game_id}/stream", params=params, headers=headers)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return parse(response.text)

    def play(self, game_id: str, moves: int = 100_000) -> int:
        """Plays the first legal action of the due seats, `moves` times or to the end."""
        played = 0
        while played < moves:
            loaded = load(self.store, game_id)
            if loaded.spec.is_over(loaded.state):
                break
            seat = loaded.spec.to_move(loaded.state)[0]
            action = loaded.spec.legal_actions(loaded.state, seat)[0]
            act(
                self.store,
                game_id,
                seat=seat,
                action=action,
                expected_version=loaded.version,
            )
            played += 1
        return played

    def when_streaming(self, then: Callable[[], object]) -> threading.Thread:
        """Starts a thread running `then` once a stream is open."""

        def run() -> None:
            deadline = time.monotonic() + 60
            while self.streams.open == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            then()

        thread = threading.Thread(target=run)
        thread.start()
        return thread


ALICE = {"kind": "external", "bot": "alice"}


BOB = {"kind": "external", "bot": "bob"}


@contextlib.contextmanager
def opened(config: StreamConfig) -> Iterator[World]:
    """Yields the service with alice and bob registered, its streams configured by `config`."""
    built = World(config)
    with built.client:
        built.register("alice")
        built.register("bob")
        yield built
