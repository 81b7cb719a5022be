"""Two game service processes over one Redis share the bot registry and each token's rate
limit: a token is limited across both (its RateLimit headers count both servers' requests),
and a rotation on one holds on the other at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests.support.stack import ROOT, free_port, wait_until_healthy

KEY = "integration-admin-key"
LIMIT = 6


@pytest.fixture
def servers(redis_url: str, namespace: str) -> Iterator[list[str]]:
    """Starts two game services on this test's Redis keys with a small rate limit."""
    ports = [free_port(), free_port()]
    base = {
        **os.environ,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "inprocess",
        "REDIS_URL": redis_url,
        "CARDARENA_NAMESPACE": namespace,
        "CARDARENA_ADMIN_KEY": KEY,
        "CARDARENA_RATE_LIMIT": str(LIMIT),
        "CARDARENA_RATE_WINDOW": "60",
    }
    command = [sys.executable, "-m", "services.cli.main", "serve", "game"]
    processes = [
        subprocess.Popen(command, cwd=ROOT, env={**base, "CARDARENA_PORT": str(port)})
        for port in ports
    ]
    urls = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for url in urls:
            wait_until_healthy(url, f"the game service at {url}")
        yield urls
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_token_registered_on_one_server_is_limited_across_both(servers: list[str]) -> None:
    first, second = servers
    admin = {"Authorization": f"Bearer {KEY}"}
    spec = {"name": "alice", "game": "shithead", "kind": "external"}
    registered = httpx.post(f"{first}/v1/bots", json=spec, headers=admin, timeout=10)
    assert registered.status_code == 201, registered.text
    alice = {"Authorization": f"Bearer {registered.json()['token']}"}
    answers = [
        httpx.get(f"{url}/v1/bots/me", headers=alice, timeout=10)
        for url in (second, first) * (LIMIT // 2)
    ]
    assert [a.status_code for a in answers] == [200] * LIMIT
    assert answers[0].json()["key"] == "alice@1"
    # One bucket in Redis: each server's answer counts the other's requests down.
    assert [int(a.headers["ratelimit-remaining"]) for a in answers] == list(range(LIMIT))[::-1]
    assert {a.headers["ratelimit-limit"] for a in answers} == {str(LIMIT)}
    resets = [int(a.headers["ratelimit-reset"]) for a in answers]  # a token back each 10 s
    assert all(10 * n - 2 <= reset <= 10 * n for n, reset in enumerate(resets, start=1))
    for url in servers:
        refused = httpx.get(f"{url}/v1/bots/me", headers=alice, timeout=10)
        assert refused.status_code == 429, refused.text
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["type"].endswith("rate-limited")
        assert 1 <= int(refused.headers["retry-after"]) <= 10  # a request comes back each 10 s
        assert refused.headers["ratelimit-remaining"] == "0"
    bob = {**spec, "name": "bob"}
    other = httpx.post(f"{second}/v1/bots", json=bob, headers=admin, timeout=10).json()["token"]
    mine = httpx.get(f"{first}/v1/bots/me", headers={"Authorization": f"Bearer {other}"})
    assert mine.status_code == 200
    assert mine.json()["key"] == "bob@1"
    rotated = httpx.post(f"{first}/v1/bots/bob/1/token", headers=admin, timeout=10)
    assert rotated.status_code == 201
    stale = httpx.get(f"{second}/v1/bots/me", headers={"Authorization": f"Bearer {other}"})
    assert stale.status_code == 401
    fresh = {"Authorization": f"Bearer {rotated.json()['token']}"}
    assert httpx.get(f"{second}/v1/bots/me", headers=fresh).status_code == 200
