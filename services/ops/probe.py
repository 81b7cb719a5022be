"""Liveness and readiness of a service, for `cardarena probe` (Kubernetes exec probes).

`probe` answers whether a service is alive (or ready), with the reason. `game` asks the game
service's `/health` (or `/ready`) on CARDARENA_HOST/PORT. `projection`, `workers` and `beat`
read their heartbeat file (see `services.ops.health.heartbeat_path`): alive while it is younger
than CARDARENA_HEARTBEAT_MAX_AGE seconds; ready when alive and what the service needs
answers: Redis for all three, PostgreSQL with its migrations for the projection.
"""

from __future__ import annotations

import httpx

from services.ops.health import (
    TIMEOUT_S,
    StackReadiness,
    heartbeat_age,
    heartbeat_path,
)
from services.settings import Settings

SERVICES = ("game", "projection", "workers", "beat")
_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}  # noqa: S104 - where to ask


def probe(service: str, settings: Settings, ready: bool = False) -> tuple[bool, str]:
    """Returns whether `service` is alive (or ready) and why."""
    if service == "game":
        return _probe_game(settings, ready)
    path = heartbeat_path(settings.heartbeat_dir, service)
    age = heartbeat_age(path)
    if age is None:
        return False, f"no heartbeat at {path}"
    if age > settings.heartbeat_max_age:
        return False, f"heartbeat {age:.0f}s old (max {settings.heartbeat_max_age:g}s) at {path}"
    if not ready:
        return True, f"heartbeat {age:.1f}s old"
    database = settings.database_url if service == "projection" else None
    down = StackReadiness(settings.redis_url, database).problems()
    if down:
        return False, "; ".join(down)
    needs = "redis and postgresql" if database else "redis"
    return True, f"heartbeat {age:.1f}s old, {needs} answer"


def _probe_game(settings: Settings, ready: bool) -> tuple[bool, str]:
    """Asks the game service's /ready (or /health)."""
    host = _WILDCARDS.get(settings.host, settings.host)
    host = f"[{host}]" if ":" in host else host
    url = f"http://{host}:{settings.port}{'/ready' if ready else '/health'}"
    try:
        response = httpx.get(url, timeout=TIMEOUT_S + 2)
    except httpx.HTTPError as error:
        return False, f"{url}: {error or type(error).__name__}"
    if response.status_code == 200:
        return True, f"{url}: 200"
    try:
        detail = str(response.json().get("detail", ""))
    except ValueError:
        detail = response.text[:200]
    return False, f"{url}: {response.status_code} {detail}".rstrip()
