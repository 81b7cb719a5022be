"""The `cardarena` command: serve the services, run migrations, play and rebuild locally.

The parser (`services.cli.parsers`) names, for each command, the command group module
(`services.cli.<group>`) whose `run` carries it out; this module builds the parser, imports
that one module once the arguments parse, and runs it. A setting that does not parse
(`SettingsError`) or a server a command cannot reach (`CannotStart`) ends the command with
one line on stderr, not a traceback. None of these lazy imports closes a cycle: the CLI is
the top layer, and nothing below imports it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from services.cli.common import CannotStart, fail
from services.cli.parsers import COMMANDS, Parser

TYPE_CHECKING = False
"""True for type checkers only: this module does not import typing (see the module docstring)."""
if TYPE_CHECKING:
    pass

PACKAGE = "cardarena"
"""The distribution whose version `cardarena --version` prints."""


class _Version(argparse.Action):
    """`--version`: prints the installed package's version and the API's, then exits; both
    are read only when asked (the parser imports nothing for them)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(version_line(), flush=True)
        parser.exit()


def version_line() -> str:
    """Returns `cardarena <package version> (API <the OpenAPI document's version>)`."""
    import importlib.metadata  # noqa: PLC0415 - only for --version: see the module docstring

    from services.game.version import API_VERSION  # noqa: PLC0415 - a constant, no Litestar

    try:
        installed = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        installed = "(not installed)"
    return f"{PACKAGE} {installed} (API {API_VERSION})"


def build_parser() -> argparse.ArgumentParser:
    """Returns the parser of every cardarena command."""
    parser = Parser(prog="cardarena", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command in `argv` and returns its exit code."""
    args = build_parser().parse_args(argv)
    group = importlib.import_module(f"services.cli.{args.group}")
    # After parsing, and only for a command that runs: see the module docstring.
    from services.settings import SettingsError  # noqa: PLC0415

    try:
        code: int = group.run(args)
    except SettingsError as error:
        return fail(str(error))
    except CannotStart as error:
        return fail(str(error), error.code)
    return code


if __name__ == "__main__":
    sys.exit(main())
