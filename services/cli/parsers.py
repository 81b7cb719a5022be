"""The grammar of the `cardarena` command: every command, its arguments and its help.

Building the parser imports argparse and nothing else of weight: each command names the
command group module (`services.cli.<group>`) whose `run` carries it out, which `main`
imports only when that command runs, so that `cardarena --help` or a mistyped option costs
no Litestar, Celery, redis, psycopg, httpx or msgspec (`bench/cli_startup.py` measures it,
`tests/unit/cli/test_startup.py` holds it).
"""

from __future__ import annotations

import argparse
import os
import sys

from services.cli.common import MOVE_SECONDS, port_number

TYPE_CHECKING = False
"""True for type checkers only (mypy reads any `TYPE_CHECKING` so): `typing` costs this
module's importers more than its parser does (see the module docstring)."""
if TYPE_CHECKING:
    from typing import Any, TypeAlias

    Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"
    """What `ArgumentParser.add_subparsers` returns, where a command group adds its commands."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, as wide as the terminal, found without importing shutil (argparse's
    own way, with its archive modules: a tenth of `cardarena --help`'s start-up)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=terminal_columns() - 2)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser with that formatter, which the parsers of its subcommands inherit
    (argparse builds a formatter at every `add_argument`, not only for the help)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def terminal_columns() -> int:
    """Returns the terminal's width as `shutil.get_terminal_size` finds it: COLUMNS, else
    stdout's terminal, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
        return 80


SERVICES = ("game", "projection", "workers", "beat")
"""What `cardarena serve` and `cardarena probe` run or ask after."""
DEFAULT_URL = "http://127.0.0.1:8000"
"""The game service `cardarena export` reads from unless told another."""


def runs(parser: argparse.ArgumentParser, group: str) -> None:
    """Has the command `parser` parses run by `services.cli.<group>.run`."""
    parser.set_defaults(group=group)


def add_move_seconds(parser: argparse.ArgumentParser) -> None:
    """Adds `--move-seconds` (a program's time limit per move) to a command's options."""
    parser.add_argument(
        "--move-seconds",
        type=float,
        default=MOVE_SECONDS,
        help="an exec: bot's time limit per move, start-up included (default %(default)s)",
    )


def add_serve(commands: Subparsers) -> None:
    """Adds `serve`."""
    serve = commands.add_parser("serve", help="run a service (default: the game service)")
    serve.add_argument("service", nargs="?", default="game", choices=list(SERVICES))
    serve.add_argument(
        "--host", help="game: the address the API listens on (default: CARDARENA_HOST)"
    )
    serve.add_argument(
        "--port",
        type=port_number,
        help="the port the service listens on: game, its API (default: CARDARENA_PORT);"
        " projection and workers, their Prometheus metrics (default:"
        " CARDARENA_PROJECTION_METRICS_PORT, CARDARENA_WORKERS_METRICS_PORT); beat, none",
    )
    serve.add_argument("--concurrency", type=int, default=2, help="worker processes")
    serve.add_argument(
        "--max-interval", type=int, default=5, help="beat: seconds between looks at Redis"
    )
    runs(serve, "serve")


def add_beggar(commands: Subparsers) -> None:
    """Adds `beggar play`."""
    beggar_cmd = commands.add_parser("beggar", help="Beggar-my-neighbour tools")
    beggar_sub = beggar_cmd.add_subparsers(dest="beggar_command", required=True)
    play = beggar_sub.add_parser("play", help="play one deal and print its counts as JSON")
    play.add_argument("--a", help="seat 0's pack, top card first, e.g. 2A78Q")
    play.add_argument("--b", help="seat 1's pack, top card first")
    play.add_argument("--players", type=int, default=2, help="players of a shuffled deal")
    play.add_argument("--seed", default="0", help="seed of a shuffled deal")
    play.add_argument("--max-cards", type=int, default=100_000, help="the card cap")
    runs(beggar_cmd, "beggar")


def add_simulate(commands: Subparsers) -> None:
    """Adds `simulate`."""
    sim = commands.add_parser("simulate", help="play seeded games between built-in bots")
    sim.add_argument("--game", required=True, help="the game, e.g. shithead")
    sim.add_argument("--preset", default="classic", help="the ruleset preset")
    sim.add_argument(
        "--bots", required=True, help="one bot per seat, e.g. heuristic,random,random,random"
    )
    sim.add_argument("--games", type=int, default=1000, help="how many games")
    sim.add_argument("--seed", default="0", help="game i is dealt from the seed '<seed>:<i>'")
    sim.add_argument("--processes", type=int, default=1, help="worker processes")
    sim.add_argument("--json", action="store_true", help="print one JSON object, no progress")
    add_move_seconds(sim)
    runs(sim, "simulate")


def add_evaluate(commands: Subparsers) -> None:
    """Adds `evaluate`."""
    ev = commands.add_parser(
        "evaluate",
        help="is a candidate bot better than a baseline? an SPRT on duplicate deals, played here",
    )
    ev.add_argument("--game", required=True, help="the game, e.g. shithead")
    ev.add_argument(
        "--candidate", required=True, help='A: a built-in bot or "exec:<command>", e.g. heuristic'
    )
    ev.add_argument("--baseline", required=True, help="B: a built-in bot or exec:<command>")
    ev.add_argument(
        "--table-size",
        type=int,
        default=2,
        help="seats per table: A in one, B in the others (default %(default)s)",
    )
    ev.add_argument(
        "--ruleset",
        "--preset",
        dest="preset",
        default="classic",
        metavar="NAME",
        help="the ruleset preset (default %(default)s)",
    )
    ev.add_argument(
        "--elo0",
        type=float,
        default=0.0,
        help="H0: A is at most this much better, in Elo (default %(default)s)",
    )
    ev.add_argument(
        "--elo1",
        type=float,
        default=10.0,
        help="H1: A is at least this much better, in Elo (default %(default)s)",
    )
    ev.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="the chance of H1 when elo0 is true (default %(default)s)",
    )
    ev.add_argument(
        "--beta",
        type=float,
        default=0.05,
        help="the chance of H0 when elo1 is true (default %(default)s)",
    )
    ev.add_argument(
        "--max-games",
        type=int,
        default=100_000,
        help="stop, inconclusive, before playing more games than this (default %(default)s)",
    )
    ev.add_argument("--seed", default="0", help="the seed of the deals (default %(default)s)")
    ev.add_argument("--json", action="store_true", help="print one JSON object, no progress")
    add_move_seconds(ev)
    runs(ev, "evaluate")


def add_database(commands: Subparsers) -> None:
    """Adds `projection rebuild` and `migrate`."""
    projection = commands.add_parser("projection", help="projection maintenance")
    projection_sub = projection.add_subparsers(dest="projection_command", required=True)
    projection_sub.add_parser("rebuild", help="drop the views and rebuild them from the archive")
    runs(projection, "database")
    runs(commands.add_parser("migrate", help="apply the SQL migrations"), "database")


def add_store(commands: Subparsers) -> None:
    """Adds `store migrate`."""
    store = commands.add_parser("store", help="event store maintenance (Redis)")
    store_sub = store.add_subparsers(dest="store_command", required=True)
    store_sub.add_parser(
        "migrate",
        help="move a store of the layout before partitions to CARDARENA_PARTITIONS partitions"
        " (idempotent; stop the writers first)",
    )
    runs(store, "store")


def add_dev(commands: Subparsers) -> None:
    """Adds `dev`."""
    dev = commands.add_parser(
        "dev", help="run the whole stack as local processes until Ctrl-C (migrations first)"
    )
    dev.add_argument("--host", help="where the game service listens (default: CARDARENA_HOST)")
    dev.add_argument(
        "--port", type=port_number, help="the game service's port (default: CARDARENA_PORT)"
    )
    dev.add_argument("--workers-concurrency", type=int, default=2, help="worker processes")
    runs(dev, "dev")


def add_tournament(commands: Subparsers) -> None:
    """Adds `tournament`."""
    parser = commands.add_parser("tournament", help="run a whole tournament in this process")
    parser.add_argument("--game", required=True, help="beggar, shithead or autobus")
    parser.add_argument(
        "--format",
        default="round_robin",
        choices=["round_robin", "swiss", "duplicate", "knockout", "arena"],
    )
    parser.add_argument(
        "--duration",
        type=int,
        default=None,
        help="seconds an arena pairs free entrants (60-86400; arena only)",
    )
    parser.add_argument(
        "--bots",
        required=True,
        help='entrants, e.g. mc,heuristic,random or "exec:node bot.js",heuristic (a program)',
    )
    parser.add_argument("--table-size", type=int, required=True, help="seats per table")
    parser.add_argument(
        "--games",
        type=int,
        default=1,
        help="games per table, seats rotating (duplicate: cycles of one deal per entrant)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of a Swiss tournament")
    parser.add_argument(
        "--name", default=None, help="the tournament's name (default: the game and the format)"
    )
    parser.add_argument("--description", default=None, help="what the tournament is for")
    parser.add_argument("--preset", default=None, help="the ruleset preset (default: classic)")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--json", action="store_true", help="print the standings as JSON")
    add_move_seconds(parser)
    runs(parser, "tournament")


def add_connect(commands: Subparsers) -> None:
    """Adds `connect`."""
    parser = commands.add_parser(
        "connect", help="play a bot program's seats on a live server through the bot API"
    )
    parser.add_argument("--server", required=True, help="the server's URL")
    parser.add_argument("--token", default=None, help="the bot's token (default: $CARDARENA_TOKEN)")
    parser.add_argument(
        "--bot", required=True, help='the program, e.g. "exec:node examples/local_bot.js"'
    )
    parser.add_argument(
        "--games", type=int, default=None, help="stop once this many of its games have ended"
    )
    parser.add_argument("--wait", type=int, default=30, help="long-poll wait, in seconds")
    add_move_seconds(parser)
    runs(parser, "connect")


def add_game_logs(commands: Subparsers) -> None:
    """Adds `export`, `replay` and `verify`."""
    export = commands.add_parser("export", help="export a finished game's log as JSON lines")
    export.add_argument("game_id", help="the game's id")
    export.add_argument(
        "--url", default=DEFAULT_URL, help=f"the game service (default {DEFAULT_URL})"
    )
    export.add_argument("-o", "--output", help="write the log to this file (default: stdout)")

    replay = commands.add_parser(
        "replay", help="check an exported log against the rules, offline; print its turns"
    )
    replay.add_argument("log", help="the exported log (JSON lines), - for stdin")
    replay.add_argument("--json", action="store_true", help="print the report as one JSON object")

    check = commands.add_parser(
        "verify", help="check an exported log's deal against its seed commitment, offline"
    )
    check.add_argument("log", help="the exported log (JSON lines), - for stdin")
    check.add_argument("--json", action="store_true", help="print the check as one JSON object")
    for parser in (export, replay, check):
        runs(parser, "game_logs")


def add_probe(commands: Subparsers) -> None:
    """Adds `probe`."""
    parser = commands.add_parser(
        "probe", help="check that a service is alive (or, with --ready, ready); exit 0 or 1"
    )
    parser.add_argument("service", choices=SERVICES)
    parser.add_argument("--ready", action="store_true", help="readiness instead of liveness")
    runs(parser, "probe")


def add_openapi(commands: Subparsers) -> None:
    """Adds `openapi`."""
    parser = commands.add_parser(
        "openapi", help="print the game service's OpenAPI document (JSON) without serving it"
    )
    parser.add_argument("--output", "-o", help="write it to FILE instead of stdout")
    runs(parser, "openapi")


COMMANDS = (
    add_serve,
    add_beggar,
    add_simulate,
    add_evaluate,
    add_database,
    add_store,
    add_dev,
    add_tournament,
    add_connect,
    add_game_logs,
    add_probe,
    add_openapi,
)
"""Who adds each command group, in the order `cardarena --help` lists their commands."""
