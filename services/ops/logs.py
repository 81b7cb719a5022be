"""Structured logs: JSON lines on stderr, with the ids bound while a game or tournament is handled.

Every `cardarena serve` command calls `configure_logging` once. structlog loggers and the
standard library's (uvicorn, Celery, psycopg, our own `logging.getLogger`) go through one
`ProcessorFormatter`, so every line has `timestamp`, `level`, `logger` and `event`, plus
whatever `structlog.contextvars` holds (`game_id`, `tournament_id`; see `bound_ids`).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, TextIO

import structlog
from structlog.typing import Processor

ID_KEYS = ("game_id", "tournament_id", "schedule_id")
"""The ids that `bound_ids` binds to every line while one of them is handled."""


def _shared_processors() -> list[Processor]:
    """Returns what both structlog and stdlib records go through before rendering."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]


def configure_logging(json: bool, stream: TextIO | None = None, level: int = logging.INFO) -> None:
    """Routes structlog and stdlib logging to `stream` (default stderr): JSON lines when
    `json`, else readable console lines. Replaces the root logger's handlers."""
    shared = _shared_processors()
    renderer: Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.StackInfoRenderer(),
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            renderer,
        ],
    )
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True


def ids_of(values: Mapping[str, Any]) -> dict[str, str]:
    """Returns the ids among `values` (see `ID_KEYS`) that are strings."""
    return {key: values[key] for key in ID_KEYS if isinstance(values.get(key), str)}


def _route_to_stdlib_until_configured() -> None:
    """Sends structlog's lines to the standard library's loggers until `configure_logging`
    runs: structlog's own default prints to stdout, which would mix log lines into a CLI
    command's output (and, unconfigured, stdlib shows only warnings, on stderr)."""
    if structlog.is_configured():
        return
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.KeyValueRenderer(key_order=["event"]),
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


_route_to_stdlib_until_configured()
