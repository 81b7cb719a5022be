"""The `cardarena` command: serve the services, run migrations, play and rebuild locally.

Each command group (`services.cli.*`) adds its subcommands with `add_parser` and runs them
with `run`; this module only builds the parser from them and dispatches.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from services.cli import (
    beggar,
    connect,
    database,
    dev,
    game_logs,
    openapi,
    probe,
    serve,
    simulate,
    store,
    tournament,
)

GROUPS = (
    serve,
    beggar,
    simulate,
    database,
    store,
    dev,
    tournament,
    connect,
    game_logs,
    probe,
    openapi,
)
"""The command groups, in the order `cardarena --help` lists their commands."""


def build_parser() -> argparse.ArgumentParser:
    """Returns the parser of every cardarena command."""
    parser = argparse.ArgumentParser(prog="cardarena", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command in `argv` and returns its exit code."""
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
