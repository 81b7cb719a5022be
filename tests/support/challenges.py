"""The service with bots to challenge and be challenged: external alice, bob and carol and the
built-in deep."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import STATE_KEY, StreamConfig
from services.settings import Settings
from shared.model import challenges
from tests.support.api import ADMIN, KEY, bearer
from tests.support.streams import RULES, SHORT, World


class Arena(World):
    """The service with the external bots alice, bob and carol and the built-in bot deep."""

    def __init__(self, config: StreamConfig = SHORT, max_games_per_bot: int = 20) -> None:
        super().__init__(config)
        settings = Settings(admin_key=KEY, rate_limit=0, max_games_per_bot=max_games_per_bot)
        self.app = create_app(
            self.store, self.dispatcher, access=Access.embedded(self.store, settings)
        )
        self.app.state[STATE_KEY] = self.streams
        self.client = TestClient(self.app)

    def setup(self) -> None:
        for name in ("alice", "bob", "carol"):
            self.register(name)
        body = {"name": "deep", "game": "shithead", "kind": "builtin", "strategy": "heuristic"}
        assert self.client.post("/v1/bots", json=body, headers=ADMIN).status_code == 201

    def issue(self, by: str | None, *opponents: str, **extra: Any) -> Any:
        """Posts a challenge from `by` (None: the host) to `opponents`; returns the response."""
        body = {"game": "shithead", "ruleset": RULES, "opponents": [{"bot": o} for o in opponents]}
        headers = ADMIN if by is None else bearer(self.tokens[by])
        return self.client.post("/v1/challenges", json={**body, **extra}, headers=headers)

    def answer(self, challenge_id: str, bot: str, verb: str, **body: Any) -> Any:
        """Posts `verb` (accept, decline, cancel) on the challenge as `bot`."""
        headers = ADMIN if bot == "host" else bearer(self.tokens[bot])
        url = f"/v1/challenges/{challenge_id}/{verb}"
        return self.client.post(url, json=body or None, headers=headers)

    def challenge_streams(self) -> int:
        """Returns how many challenge events the store holds."""
        feed = self.store.read_feed("0", 100_000)
        return sum(1 for entry in feed if entry.event.kind == challenges.KIND)
