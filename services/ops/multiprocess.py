"""Prometheus metrics of forked processes (Celery's prefork children): prometheus_client's
multiprocess mode, which counts into files under PROMETHEUS_MULTIPROC_DIR.

prometheus_client reads that variable when it is first imported, so `prepare_metrics_dir`
must run before anything imports it (`services.ops.metrics`): this module imports neither.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare_metrics_dir() -> str:
    """Points prometheus_client's multiprocess mode at a fresh directory, removed when this
    process (not a forked child) exits; returns it."""
    directory = tempfile.mkdtemp(prefix="cardarena-worker-metrics-")
    os.environ[MULTIPROC_ENV] = directory
    owner = os.getpid()

    def remove() -> None:
        if os.getpid() == owner:
            shutil.rmtree(directory, ignore_errors=True)

    atexit.register(remove)
    return directory


def multiprocess_mode() -> bool:
    """Returns whether this process counts into multiprocess files."""
    return bool(os.environ.get(MULTIPROC_ENV))
