"""The `cardarena export`, `replay` and `verify` commands: game logs as JSON lines.

`export` reads a finished game from a game service over HTTP; `replay` and `verify` check
an exported log offline, with no server (see `shared.model.exported_log` and `shared.model.deals`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import httpx
import msgspec

from services.cli.common import BAD_LOG, fail
from shared.model.deals import verify
from shared.model.exported_log import InvalidLog, read_log
from shared.model.log_replay import replay_log
from shared.model.replay_account import account


def run(args: argparse.Namespace) -> int:
    """Runs `export`, `replay` or `verify`, as `args.command` says."""
    commands = {"export": export_command, "replay": replay_command, "verify": verify_command}
    return commands[args.command](args)


def _read(path: str) -> bytes:
    """Returns the bytes of the file at `path` (`-`: stdin); raises OSError."""
    return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()


def export_command(args: argparse.Namespace) -> int:
    """Writes a finished game's export, read from the game service, to stdout or a file."""
    url = f"{args.url.rstrip('/')}/v1/games/{args.game_id}/export"
    try:
        response = httpx.get(url, timeout=60)
    except httpx.HTTPError as error:
        return fail(f"cannot reach {args.url}: {error}", BAD_LOG)
    if response.status_code != 200:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        return fail(f"{response.status_code}: {detail}", BAD_LOG)
    if args.output:
        Path(args.output).write_bytes(response.content)
    else:
        sys.stdout.buffer.write(response.content)
        sys.stdout.flush()
    return 0


def replay_command(args: argparse.Namespace) -> int:
    """Replays an exported log offline: prints its turns and result; exit 1 at a bad event."""
    try:
        data = _read(args.log)
    except OSError as error:
        return fail(f"cannot read {args.log}: {error.strerror or error}")
    report = replay_log(data.splitlines())
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        for line in account(report):
            print(line, file=sys.stderr if line.startswith("bad log:") else sys.stdout)
    return 0 if report.ok else BAD_LOG


def verify_command(args: argparse.Namespace) -> int:
    """Checks an exported log's deal against its commitment; exit 0 only when it verifies."""
    try:
        data = _read(args.log)
    except OSError as error:
        return fail(f"cannot read {args.log}: {error.strerror or error}")
    try:
        log = read_log(data.splitlines())
    except InvalidLog as error:
        return fail(f"not a readable log: {error}", BAD_LOG)
    checked = verify(log.events)
    if args.json:
        print(msgspec.json.encode(checked).decode())
    else:
        where = f" (v{checked.version})" if checked.version is not None else ""
        print(f"{checked.status}{where}: {checked.detail}")
        if checked.commitment:
            print(f"commitment {checked.commitment}")
        if checked.seed:
            print(f"seed {checked.seed!r}, salt {checked.salt}")
    return 0 if checked.status == "ok" else BAD_LOG
