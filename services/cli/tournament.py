"""`cardarena tournament`: a whole tournament in this process, on the in-memory store.

Its deals are keyed with `CARDARENA_DEAL_SECRET` when it is set, so a run deals what that
deployment deals for the same definition and seed; else with `OFFLINE_SECRET`, which is no
secret: a local run of built-in bots hides nothing, and so repeats from run to run.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import msgspec
from msgspec import UNSET
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from services.cli.common import fail
from services.cli.local_play import LocalSeats, SeatForfeit
from services.cli.programs import Program, bot_names, check_program, is_program
from services.settings import CommonSettings, load_settings
from shared.app.registry import registered_bots
from shared.app.tournaments import run_in_process
from shared.catalog import game_names, get_game
from shared.errors import GameNotFound
from shared.model.tournaments.model import (
    Entrant,
    InvalidTournament,
    TournamentDefinition,
    TournamentState,
    description_of,
    display_name,
    validate,
    warnings,
)
from shared.model.tournaments.standings import Standing, standings
from shared.model.tournaments.tiebreaks import ORDER
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret
from shared.store.memory import InMemoryEventStore

OFFLINE_SECRET = "cardarena tournament: offline deals, no secret"  # noqa: S105 - public on purpose
"""The deal secret of a run when `CARDARENA_DEAL_SECRET` is not set."""


def offline_store() -> InMemoryEventStore:
    """Returns the in-memory store of a run, its deals keyed as the module says."""
    store = InMemoryEventStore()
    secret = load_settings(None, CommonSettings).deal_secret or OFFLINE_SECRET
    deal_secret.attach(store, GivenDealSecret(secret))
    return store


def entrants_of(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """Returns each entrant of `--bots` as (its name, its bot, as given); raises ValueError
    for an empty name. A bot named twice or
    more is told apart by `#1`, `#2`, ...; a local program (`exec:<command>`) plays as the
    external bot `local-1`, `local-2`, ... (each entrant its own program)."""
    bots = bot_names(args.bots)
    counts: dict[str, int] = {}
    entrants = []
    programs = 0
    for bot in bots:
        counts[bot] = counts.get(bot, 0) + 1
        name = bot if bots.count(bot) == 1 else f"{bot}#{counts[bot]}"
        if is_program(bot):
            programs += 1
            entrants.append((name, f"local-{programs}", bot))
        else:
            entrants.append((name, bot, bot))
    return entrants


def definition_of(args: argparse.Namespace) -> TournamentDefinition:
    """Returns the tournament the arguments describe (not yet validated)."""
    return TournamentDefinition(
        game=args.game,
        entrants=[Entrant(bot=bot, name=name) for name, bot, _ in entrants_of(args)],
        name=UNSET if args.name is None else args.name,
        description=UNSET if args.description is None else args.description,
        table_size=args.table_size,
        format=args.format,
        ruleset=args.preset,
        games_per_table=args.games,
        rounds=args.rounds,
        seed=str(args.seed),
        duration_seconds=UNSET if args.duration is None else args.duration,
    )


def programs_of(args: argparse.Namespace) -> dict[str, Program]:
    """Returns the program of each local program entrant, by the external bot it plays as;
    raises ValueError for an `exec:` that names no command."""
    return {
        bot: Program(given, args.move_seconds)
        for _, bot, given in entrants_of(args)
        if is_program(given)
    }


def report(
    state: TournamentState, seconds: float, forfeits: Sequence[SeatForfeit] = ()
) -> dict[str, Any]:
    """Returns the standings of a finished tournament, and what its local programs forfeited
    and why, as one JSON-ready object."""
    d = state.definition
    games = len(state.records)
    return {
        "name": display_name(d),
        "description": description_of(d),
        "game": d.game,
        "format": d.format,
        "games": games,
        "games_per_second": round(games / seconds, 2) if seconds > 0 else None,
        "winner": d.entrants[state.winner].label if state.winner is not None else None,
        "order": list(ORDER[d.format]),
        "standings": [msgspec.to_builtins(line) for line in standings(state)],
        "warnings": [msgspec.to_builtins(warning) for warning in warnings(d)],
        "forfeits": [
            {"game_id": f.game_id, "bot": f.bot, "seat": f.seat, "reason": f.reason}
            for f in forfeits
        ],
    }


def run(args: argparse.Namespace) -> int:
    """Runs the tournament, with a progress bar, and prints its standings."""
    if not args.move_seconds > 0:
        return fail(f"move-seconds must be more than 0, not {args.move_seconds:g}")
    store = offline_store()
    try:
        programs = programs_of(args)
        definition = definition_of(args)
        if programs and not get_game(definition.game).has_decisions:
            return fail(f"{definition.game} has no decisions: the platform plays its seats")
        for bot in dict.fromkeys(program.bot for program in programs.values()):
            check_program(bot)
        seats = LocalSeats.registered(store, definition.game, programs)
        validate(definition, registered_bots(store))
    except GameNotFound:
        return fail(f"game: unknown game {args.game!r}; one of {', '.join(game_names())}")
    except (InvalidTournament, ValueError) as error:
        return fail(str(error))
    try:
        return _run(args, store, definition, seats)
    finally:
        for program in programs.values():
            program.stop()


def _run(
    args: argparse.Namespace,
    store: InMemoryEventStore,
    definition: TournamentDefinition,
    seats: LocalSeats,
) -> int:
    """Runs the checked tournament, its local programs at `seats`; prints its standings."""
    start = time.perf_counter()
    if args.json:
        state = run_in_process(store, definition, play=seats.play)
        print(json.dumps(report(state, time.perf_counter() - start, seats.forfeits)))
        return 0
    with Progress(console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{definition.format} of {definition.game}", total=None)
        state = run_in_process(
            store,
            definition,
            on_game=lambda s: progress.update(task, completed=len(s.records)),
            play=seats.play,
        )
    print_table(state, time.perf_counter() - start)
    for forfeit in seats.forfeits:
        where = f"game {forfeit.game_id}, seat {forfeit.seat}"
        Console().print(f"forfeit: {forfeit.bot} ({where}): {forfeit.reason}", markup=False)
    return 0


TIEBREAK_HEADERS = {
    "buchholz": "BH",
    "median_buchholz": "BH med",
    "sonneborn_berger": "SB",
    "direct_encounter": "DE",
    "lot": "lot",
}
"""The standings table's heading of each tie-break: Buchholz, median (or cut-1) Buchholz,
Sonneborn-Berger, direct encounter, the drawing of lots (the caption spells the order)."""


def print_table(state: TournamentState, seconds: float) -> None:
    """Prints the standings as a table: each line's rank, counts, its format's tie-breaks (in
    the order they rank) and rating; then any warning."""
    d = state.definition
    order = ORDER[d.format]
    shown = [name for name in order if name in TIEBREAK_HEADERS]
    named = isinstance(d.name, str)
    kind = f" ({d.format} of {d.game})" if named else ""
    table = Table(title=f"{display_name(d)}{kind}: {len(state.records)} games")
    headers = ["#", "entrant", "games"]
    headers += ["stage"] if d.format == "knockout" else []
    headers += ["score"] if d.format == "duplicate" else []
    headers += ["points", *(TIEBREAK_HEADERS[name] for name in shown)]
    headers += ["wins", "mean place", "win 95%", "rating"]
    for header in headers:
        table.add_column(header, justify="left" if header == "entrant" else "right")
    for line in standings(state):
        table.add_row(*_row(line, d.format, shown))
    notes = [f"{len(state.records) / seconds:.1f} games per second"] if seconds else []
    notes += [f"order: {', '.join(order)}"]
    table.caption = "; ".join(notes)
    console = Console()
    console.print(table)
    for warning in warnings(d):
        console.print(f"warning ({warning.code}): {warning.message}", markup=False)


def _number(value: float | None, digits: int = 2) -> str:
    """Returns a value with at most `digits` decimals, a dash for none."""
    return "-" if value is None else f"{round(value, digits):g}"


def _row(line: Standing, format_: str, shown: Sequence[str]) -> list[str]:
    """Returns one standings line as table cells."""
    rating = "-" if line.rating is None else f"{line.rating:.1f} ±{line.uncertainty:.1f}"
    if line.win_rate_low is None or line.win_rate_high is None:
        interval = "-"
    else:
        interval = f"{line.win_rate_low:.0%}..{line.win_rate_high:.0%}"
    cells = [str(line.rank), line.name, str(line.games)]
    if format_ == "knockout":
        cells.append(str(line.stage or 0))
    if format_ == "duplicate":
        cells.append(f"{line.score or 0.0:+g}")
    cells.append(f"{line.points:g}")
    values = msgspec.structs.asdict(line.tiebreaks)
    cells += [str(values[name]) if name == "lot" else _number(values[name]) for name in shown]
    place = "-" if line.mean_place is None else f"{line.mean_place:.2f}"
    cells += [str(line.wins), place, interval, rating]
    return cells
