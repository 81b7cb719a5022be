"""Helpers of the end-to-end tests: ports, waiting, health checks."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port() -> int:
    """Returns a TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for(check: Callable[[], T | None], seconds: float, what: str) -> T:
    """Returns the first truthy result of `check`, failing after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {seconds}s waiting for {what}")


def wait_until_healthy(base_url: str, what: str) -> None:
    """Waits until the service at `base_url` answers its health check."""

    def healthy() -> bool:
        try:
            return httpx.get(f"{base_url}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_for(healthy, 60, what)
