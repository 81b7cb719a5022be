"""`cardarena store migrate`: moves a Redis event store to the partitioned layout."""

from __future__ import annotations

import argparse
import dataclasses
import json

from services.cli.servers import require_redis
from services.settings import CommonSettings, load_settings


def run(args: argparse.Namespace) -> int:
    """Migrates the store of REDIS_URL and CARDARENA_NAMESPACE in place; prints what moved."""
    del args
    # Start-up cost: only this command needs the migration and a Redis client.
    from services.bootstrap.stores import redis_client  # noqa: PLC0415
    from shared.store.redis_migrate import migrate_log  # noqa: PLC0415

    settings = load_settings(None, CommonSettings)
    if settings.redis_cluster:
        print(
            json.dumps(
                {
                    "error": "the layout before partitions only ran on a standalone Redis:"
                    " migrate there, then move the keys (redis-cli --cluster import)"
                }
            )
        )
        return 2
    require_redis(settings.redis_url)
    moved = migrate_log(redis_client(settings), settings.namespace, settings.partitions)
    print(json.dumps({"migrated": dataclasses.asdict(moved)}))
    return 0
