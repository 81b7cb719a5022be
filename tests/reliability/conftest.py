"""Fault injectors of the reliability tests: a private Redis server that a test kills and
restarts, a TCP proxy that a test cuts, and checks that compare the projection with the store.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.faults import PrivateRedis


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """Returns a started private Redis; kills it and deletes its files afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="cardarena-redis-"))
    server = PrivateRedis(directory)
    try:
        server.start()
        yield server
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)
