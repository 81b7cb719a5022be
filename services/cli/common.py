"""What every command group shares: exit codes, the one way to report a usage error, and the
values the parser needs (this module imports argparse and sys only: see `services.cli.parsers`)."""

from __future__ import annotations

import argparse
import sys

USAGE_ERROR = 2
"""The exit code of a command asked for something it cannot do (argparse's own)."""
BAD_LOG = 1
"""The exit code of a log that does not add up (or a deal that does not verify)."""
UNREACHABLE = 1
"""The exit code of a command that cannot reach a server it needs (Redis, PostgreSQL, the
game service): asked rightly, it could not do its work."""
MOVE_SECONDS = 10.0
"""The default time limit of a local program's move, start-up included."""


class CannotStart(Exception):
    """A command cannot start: the message says why and what to try, in one line; `code` is
    the exit code."""

    def __init__(self, message: str, code: int = USAGE_ERROR) -> None:
        super().__init__(message)
        self.code = code


def fail(message: str, code: int = USAGE_ERROR) -> int:
    """Prints `message` to stderr as cardarena's error and returns `code`."""
    print(f"cardarena: error: {message}", file=sys.stderr)
    return code


def port_number(text: str) -> int:
    """Returns the TCP port `text` names; raises argparse.ArgumentTypeError unless it is an
    integer from 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f'expected an integer from 1 to 65535, got "{text}"')
    return port
