"""Accounts as the API tests drive them (in process, or a served game service): make an
account, register its bots with its key, and play a game's bound seats with their tokens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import pytest

from tests.support.api import bearer


def make_account(client: httpx.Client, name: str, **body: Any) -> str:
    """Makes the account `name` (anyone may: the service's registration is open, or `body`
    holds an invite); returns its key."""
    made = client.post("/v1/accounts", json={"name": name, **body})
    assert made.status_code == 201, made.text
    key: str = made.json()["key"]
    return key


def own_bot(client: httpx.Client, key: str, name: str, **spec: Any) -> dict[str, Any]:
    """Registers a bot `name` (an external Shithead bot unless `spec` says) with the account
    `key`; returns the 201 body (with its token)."""
    body = {"name": name, "game": "shithead", "kind": "external", **spec}
    created = client.post("/v1/bots", json=body, headers=bearer(key))
    assert created.status_code == 201, created.text
    answer: dict[str, Any] = created.json()
    return answer


def play_out(
    client: httpx.Client, game_id: str, tokens: Mapping[int, str], limit: int = 5000
) -> None:
    """Plays the first legal action of each bound seat (with its token) until the game ends."""
    for _ in range(limit):
        for seat, token in tokens.items():
            view = client.get(
                f"/v1/games/{game_id}/view", params={"seat": seat}, headers=bearer(token)
            ).json()
            if view["status"] != "playing":
                return
            if view["legal_actions"]:
                body = {"seat": seat, "action": view["legal_actions"][0]}
                posted = client.post(
                    f"/v1/games/{game_id}/actions",
                    json={**body, "expected_version": view["version"]},
                    headers=bearer(token),
                )
                assert posted.status_code == 200, posted.text
    pytest.fail(f"game {game_id} did not end")
