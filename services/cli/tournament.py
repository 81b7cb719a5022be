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
    validate,
)
from shared.model.tournaments.standings import Standing, standings
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
        table_size=args.table_size,
        format=args.format,
        ruleset=args.preset,
        games_per_table=args.games,
        rounds=args.rounds,
        seed=str(args.seed),
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
        "game": d.game,
        "format": d.format,
        "games": games,
        "games_per_second": round(games / seconds, 2) if seconds > 0 else None,
        "winner": d.entrants[state.winner].label if state.winner is not None else None,
        "standings": [msgspec.to_builtins(line) for line in standings(state)],
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


def print_table(state: TournamentState, seconds: float) -> None:
    """Prints the standings as a table."""
    d = state.definition
    table = Table(title=f"{d.format} of {d.game}: {len(state.records)} games")
    headers = ["#", "entrant", "games", "points", "wins", "mean place", "win rate 95%", "rating"]
    duplicate = d.format == "duplicate"
    if duplicate:
        headers.insert(3, "score")
    for header in headers:
        table.add_column(header, justify="left" if header == "entrant" else "right")
    for rank, line in enumerate(standings(state), start=1):
        cells = _row(rank, line)
        if duplicate:
            cells.insert(3, f"{line.score or 0.0:+g}")
        table.add_row(*cells)
    table.caption = f"{len(state.records) / seconds:.1f} games per second" if seconds else None
    Console().print(table)


def _row(rank: int, line: Standing) -> list[str]:
    """Returns one standings line as table cells."""
    rating = "-" if line.rating is None else f"{line.rating:.1f} ±{line.uncertainty:.1f}"
    interval = f"{line.win_rate_low:.0%}..{line.win_rate_high:.0%}"
    cells = [str(rank), line.name, str(line.games), f"{line.points:g}", str(line.wins)]
    return [*cells, f"{line.mean_place:.2f}", interval, rating]
