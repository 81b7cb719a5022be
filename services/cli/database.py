"""`cardarena migrate` and `cardarena projection rebuild`: the projection's database."""

from __future__ import annotations

import argparse
import dataclasses
import json

from services.cli.servers import require_postgresql
from services.ops.migrate import migrate
from services.settings import ProjectionSettings, load_settings


def run(args: argparse.Namespace) -> int:
    """Applies the SQL migrations (`migrate`, printing the ones applied now), then, for
    `projection rebuild`, rebuilds the views from the archive and prints the counts."""
    database_url = load_settings(None, ProjectionSettings).database_url
    require_postgresql(database_url)
    if args.command == "migrate":
        print(json.dumps({"applied": migrate(database_url)}))
        return 0
    # Start-up cost: the projector loads prometheus_client, which `serve workers` must not
    # import before `prepare_metrics_dir`; this closes no cycle (the CLI is the top layer).
    from services.projection.projector import rebuild  # noqa: PLC0415

    migrate(database_url)
    counts = rebuild(database_url)
    print(json.dumps({"rebuilt": dataclasses.asdict(counts)}))
    return 0
