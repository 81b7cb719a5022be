"""The bot programs the tests play (`exec:<command>`): the examples in Python and JavaScript,
and the misbehaving ones of tests/support/programs/."""

from __future__ import annotations

import shlex
import shutil
import sys

from tests.support.browsing import unavailable
from tests.support.stack import ROOT

PROGRAMS = ROOT / "tests" / "support" / "programs"
"""The misbehaving programs: each says in its docstring how it misbehaves."""
PYTHON_EXAMPLE = f"exec:{shlex.quote(sys.executable)} {ROOT / 'examples' / 'local_bot.py'}"
"""The Python example, run by this interpreter."""


def program(name: str) -> str:
    """Returns the bot name of the test program `name` (tests/support/programs/<name>.py)."""
    return f"exec:{shlex.quote(sys.executable)} {PROGRAMS / name}.py"


def node() -> str:
    """Returns Node.js's path; skips the test without it (fails it under
    CARDARENA_REQUIRE_SERVICES=1, as in CI)."""
    found = shutil.which("node")
    if found is None:
        unavailable("Node.js is not installed: the JavaScript bots cannot run")
    return found


def javascript_example() -> str:
    """Returns the bot name of the JavaScript example (see `node`)."""
    return f"exec:{node()} {ROOT / 'examples' / 'local_bot.js'}"
