"""The Redis adapter of the deal secret: one random secret per deployment, shared by every
process of it (`shared.model.deal_keys`).

Key under the namespace `ns`: `{ns}deal-secret`, 64 lowercase hex digits (32 random bytes),
set once (SET NX, no expiry) by whichever process needs it first; every process reads it.
Losing it (a flushed Redis) draws another: the same seed then deals other cards, so a
deployment that must repeat deals across such a loss sets `CARDARENA_DEAL_SECRET`.
"""

from __future__ import annotations

import secrets
import threading

import redis
from redis.cluster import RedisCluster

from shared.ports.deal_secret import DealSecret
from shared.store.redis_common import reachable


class RedisDealSecret(DealSecret):
    """The deployment's secret in Redis, drawn by the first process that asks; cached."""

    def __init__(self, client: redis.Redis | RedisCluster, namespace: str = "cardarena:") -> None:
        self._client = client
        self._key = f"{namespace}deal-secret"
        self._secret: bytes | None = None
        self._lock = threading.Lock()

    def get(self) -> bytes:
        with self._lock:
            if self._secret is None:
                with reachable():
                    self._client.set(self._key, secrets.token_hex(32), nx=True)
                    stored = self._client.get(self._key)
                if not isinstance(stored, bytes | str) or not stored:
                    raise RuntimeError(f"redis holds no deal secret at {self._key}")
                self._secret = stored.encode() if isinstance(stored, str) else stored
            return self._secret
