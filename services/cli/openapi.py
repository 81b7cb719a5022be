"""`cardarena openapi [--output FILE]`: print the game service's OpenAPI document (the body of
`/schema/openapi.json`) without starting a server or reaching a store, for client generators.

Litestar is imported when the command runs, not when the CLI starts (see `services.cli.serve`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from services.cli.common import fail


def run(args: argparse.Namespace) -> int:
    """Writes the document as indented JSON to `args.output` (or stdout); returns 0, or 2 if
    the file cannot be written."""
    from services.game.app import openapi_document  # noqa: PLC0415

    text = json.dumps(openapi_document(), indent=2, ensure_ascii=False) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as error:
        return fail(f"cannot write {args.output}: {error.strerror}")
    return 0
