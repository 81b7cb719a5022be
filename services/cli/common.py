"""What every command group shares: exit codes and the one way to report a usage error."""

from __future__ import annotations

import argparse
import sys
from typing import TypeAlias

USAGE_ERROR = 2
"""The exit code of a command asked for something it cannot do (argparse's own)."""
BAD_LOG = 1
"""The exit code of a log that does not add up (or a deal that does not verify)."""

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `ArgumentParser.add_subparsers` returns, where a command group adds its commands."""


def fail(message: str, code: int = USAGE_ERROR) -> int:
    """Prints `message` to stderr as cardarena's error and returns `code`."""
    print(f"cardarena: error: {message}", file=sys.stderr)
    return code
