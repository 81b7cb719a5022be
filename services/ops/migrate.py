"""Applies the SQL migrations of deploy/migrations (the projection's schema), in name order,
each once: `cardarena migrate`, `cardarena dev` and the projection at start; readiness
checks them (`services.ops.health`).

Each file runs in its own transaction together with its row in `schema_migrations`; a
session advisory lock makes concurrent runners wait for each other instead of racing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "deploy" / "migrations"
"""Where the `*.sql` migrations live: deploy/migrations beside services/."""

LOCK_KEY = 0x636172646172656E
"""The advisory lock key that serialises migration runs ("cardaren" in ASCII)."""

_CREATE_LEDGER = b"""
CREATE TABLE IF NOT EXISTS schema_migrations (
    name       text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


def migrate(conninfo: str, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Applies the not yet applied migrations of `directory`; returns their names, in order."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            conn.execute(_CREATE_LEDGER)
            done = set(_applied(conn))
            pending = [path for path in sorted(directory.glob("*.sql")) if path.name not in done]
            for path in pending:
                _apply(conn, path)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
    return [path.name for path in pending]


def applied(conninfo: str) -> list[str]:
    """Returns the names of the applied migrations, in order (none on an empty database)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        ledger = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()
        if ledger is None or ledger[0] is None:
            return []
        return _applied(conn)


def _applied(conn: psycopg.Connection[Any]) -> list[str]:
    """Returns the names recorded in `schema_migrations`, in order."""
    rows = conn.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()
    return [str(row[0]) for row in rows]


def _apply(conn: psycopg.Connection[Any], path: Path) -> None:
    """Runs the migration at `path` and records it, in one transaction."""
    with conn.transaction():
        conn.execute(path.read_bytes())
        conn.execute("INSERT INTO schema_migrations (name) VALUES (%s)", (path.name,))
