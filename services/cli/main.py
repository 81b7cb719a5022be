"""The `cardarena` command: serve the services, run migrations, play and rebuild locally."""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from services.cli import logs as export_cli
from services.cli import tournament as tournament_cli
from services.ops import probe
from services.settings import (
    BeatSettings,
    GameSettings,
    ProjectionSettings,
    Settings,
    WorkerSettings,
    load_settings,
)
from shared.catalog import get_game
from shared.errors import InvalidRuleset
from shared.games import beggar

USAGE_ERROR = 2


def _fail(message: str) -> int:
    """Prints `message` to stderr and returns the usage-error exit code."""
    print(f"cardarena: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def beggar_play(args: argparse.Namespace) -> int:
    """Plays one Beggar-my-neighbour deal and prints its counts as one JSON line."""
    ruleset = beggar.BeggarRuleset(max_cards=args.max_cards)
    try:
        if args.a is not None or args.b is not None:
            if args.a is None or args.b is None:
                return _fail("a fixed deal needs both --a and --b")
            started = beggar.fixed_deal(
                [beggar.parse_deal(args.a), beggar.parse_deal(args.b)], ruleset
            )
        else:
            started = beggar.deal(ruleset, args.players, args.seed)
    except (ValueError, InvalidRuleset) as error:
        return _fail(str(error))
    spec = get_game("beggar")
    state = spec.fold([started])
    while not spec.is_over(state):
        (seat,) = spec.to_move(state)
        state, _ = spec.apply(state, seat, beggar.PlayTrick())
    result = state.result
    winner = result.places.index(1) if result.status == "finished" else None
    line = {"status": result.status, "cards": state.cards, "tricks": state.tricks, "winner": winner}
    print(json.dumps(line))
    return 0


def simulate_command(args: argparse.Namespace) -> int:
    """Plays seeded games between built-in bots; prints a table (or one JSON object) per bot."""
    from services.cli.simulate import SimulationError, check, simulate  # noqa: PLC0415

    bots = [name.strip() for name in args.bots.split(",")]
    try:
        request = check(args.game, args.preset, bots, args.games, args.seed)
        if args.processes < 1:
            raise SimulationError(f"processes must be at least 1, not {args.processes}")
    except SimulationError as error:
        return _fail(str(error))
    if args.json:
        print(json.dumps(simulate(request, args.processes).to_json()))
        return 0
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import MofNCompleteColumn, Progress, TimeElapsedColumn  # noqa: PLC0415
    from rich.table import Table  # noqa: PLC0415

    columns = (*Progress.get_default_columns(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{request.game} ({request.preset})", total=request.games)
        report = simulate(request, args.processes, lambda n: progress.advance(task, n))
    table = Table(title=f"{request.games} games of {request.game} ({request.preset})")
    for header in ("bot", "games", "wins", "win rate", "mean place"):
        table.add_column(header, justify="left" if header == "bot" else "right")
    for name, tally in sorted(report.bots.items()):
        rate, place = f"{tally.win_rate:.1%}", f"{tally.mean_place:.2f}"
        table.add_row(name, str(tally.games), str(tally.wins), rate, place)
    table.caption = f"{report.games_per_second:.1f} games per second"
    Console().print(table)
    return 0


def serve_game(settings: GameSettings) -> int:
    """Serves the game service's API with uvicorn until interrupted."""
    import uvicorn  # noqa: PLC0415

    from services.bootstrap import (  # noqa: PLC0415
        build_access,
        build_archive,
        build_dispatcher,
        build_game_metrics,
        build_readiness,
        build_scheduler,
        build_store,
        build_views,
    )
    from services.game.app import create_app  # noqa: PLC0415
    from services.game.auth import warn_if_open  # noqa: PLC0415
    from services.game.streams import StreamConfig  # noqa: PLC0415

    warn_if_open(settings)
    store = build_store(settings)
    views = build_views(settings, store)
    dispatcher = build_dispatcher(settings, store)
    scheduler = build_scheduler(settings, dispatcher)
    access = build_access(settings, store)
    archive = build_archive(settings, store)
    app = create_app(
        store,
        dispatcher,
        views=views,
        scheduler=scheduler,
        access=access,
        archive=archive,
        readiness=build_readiness(settings, store),
        game_metrics=build_game_metrics(settings, views),
        streams=StreamConfig(spectators=settings.spectator_streams),
    )
    print(
        f"cardarena game service on http://{settings.host}:{settings.port} "
        f"(store: {settings.store}, bot turns: {settings.dispatch}); "
        f"API docs at /schema",
        flush=True,
    )
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", log_config=None)
    return 0


def serve_projection(settings: ProjectionSettings) -> int:
    """Runs the projection service on the feed until SIGINT or SIGTERM."""
    import redis  # noqa: PLC0415

    from services.bootstrap import build_retention  # noqa: PLC0415
    from services.ops.metrics import ProjectionMetrics  # noqa: PLC0415
    from services.projection.migrate import migrate  # noqa: PLC0415
    from services.projection.probes import install  # noqa: PLC0415
    from services.projection.projector import Projector  # noqa: PLC0415
    from shared.store.redis_store import RedisEventStore, RedisFeedConsumer  # noqa: PLC0415

    migrate(settings.database_url)
    client = redis.Redis.from_url(settings.redis_url)
    consumer = RedisFeedConsumer(
        client, settings.projection_group, "projector-1", namespace=settings.namespace
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print("cardarena projection service: following the feed", flush=True)
    retention = build_retention(settings, RedisEventStore(client, settings.namespace))
    metrics = ProjectionMetrics()
    beat = install(settings, client, metrics)
    linger_s = settings.projection_linger_ms / 1000
    projector = Projector(
        settings.database_url,
        consumer,
        retention=retention,
        metrics=metrics,
        retry_s=settings.projection_retry_seconds,
    )
    projector.run_forever(stop, beat=beat, linger_s=linger_s)
    return 0


def serve_beat(settings: BeatSettings, max_interval: int) -> int:
    """Runs celery beat over the scheduled tournaments in Redis (celery-redbeat, locked)."""
    from services.workers.beat import run_beat  # noqa: PLC0415

    run_beat(settings, max_interval)
    return 0


def serve_workers(settings: WorkerSettings, concurrency: int) -> int:
    """Runs a Celery worker on the bot-turn queue."""
    from services.workers import probes  # noqa: PLC0415

    probes.prepare_metrics_dir()  # before prometheus_client is imported: see probes
    from services.workers.celery_app import app  # noqa: PLC0415

    probes.install(settings)

    app.worker_main(
        ["worker", "--loglevel=INFO", f"--concurrency={concurrency}", "-Q", settings.queue]
    )
    return 0


def projection_command(args: argparse.Namespace, settings: Settings) -> int:
    """Runs a projection maintenance command."""
    from services.projection.migrate import migrate  # noqa: PLC0415
    from services.projection.projector import rebuild  # noqa: PLC0415

    migrate(settings.database_url)
    counts = rebuild(settings.database_url)
    print(json.dumps({"rebuilt": dataclasses.asdict(counts)}))
    return 0


def migrate_command(settings: Settings) -> int:
    """Applies the SQL migrations and prints the ones applied now."""
    from services.projection.migrate import migrate  # noqa: PLC0415

    print(json.dumps({"applied": migrate(settings.database_url)}))
    return 0


def dev_command(args: argparse.Namespace) -> int:
    """Runs the game service, projection, a worker and beat locally until interrupted."""
    from services.cli.dev import run_dev  # noqa: PLC0415

    return run_dev(args.host, args.port, args.workers_concurrency)


def build_parser() -> argparse.ArgumentParser:
    """Returns the parser of every cardarena command."""
    parser = argparse.ArgumentParser(prog="cardarena", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run a service (default: the game service)")
    serve.add_argument(
        "service", nargs="?", default="game", choices=["game", "projection", "workers", "beat"]
    )
    serve.add_argument("--concurrency", type=int, default=2, help="worker processes")
    serve.add_argument(
        "--max-interval", type=int, default=5, help="beat: seconds between looks at Redis"
    )

    beggar_cmd = commands.add_parser("beggar", help="Beggar-my-neighbour tools")
    beggar_sub = beggar_cmd.add_subparsers(dest="beggar_command", required=True)
    play = beggar_sub.add_parser("play", help="play one deal and print its counts as JSON")
    play.add_argument("--a", help="seat 0's pack, top card first, e.g. 2A78Q")
    play.add_argument("--b", help="seat 1's pack, top card first")
    play.add_argument("--players", type=int, default=2, help="players of a shuffled deal")
    play.add_argument("--seed", default="0", help="seed of a shuffled deal")
    play.add_argument("--max-cards", type=int, default=100_000, help="the card cap")

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

    projection = commands.add_parser("projection", help="projection maintenance")
    projection_sub = projection.add_subparsers(dest="projection_command", required=True)
    projection_sub.add_parser("rebuild", help="drop the views and rebuild them from the archive")

    commands.add_parser("migrate", help="apply the SQL migrations")
    dev = commands.add_parser(
        "dev", help="run the whole stack as local processes until Ctrl-C (migrations first)"
    )
    dev.add_argument("--host", help="where the game service listens (default: CARDARENA_HOST)")
    dev.add_argument("--port", type=int, help="the game service's port (default: CARDARENA_PORT)")
    dev.add_argument("--workers-concurrency", type=int, default=2, help="worker processes")
    tournament_cli.add_parser(commands)
    export_cli.add_parsers(commands)
    probe.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command in `argv` and returns its exit code."""
    args = build_parser().parse_args(argv)
    settings = load_settings()
    handlers: dict[str, Any] = {
        "beggar": lambda: beggar_play(args),
        "simulate": lambda: simulate_command(args),
        "tournament": lambda: tournament_cli.tournament_command(args),
        "projection": lambda: projection_command(args, settings),
        "migrate": lambda: migrate_command(settings),
        "dev": lambda: dev_command(args),
        "export": lambda: export_cli.export_command(args),
        "replay": lambda: export_cli.replay_command(args),
        "verify": lambda: export_cli.verify_command(args),
        "probe": lambda: probe.probe_command(args, settings),
    }
    if args.command == "serve":
        from services.ops.logs import configure_logging  # noqa: PLC0415

        configure_logging(json=settings.log_json)
        if args.service == "game":
            return serve_game(load_settings(None, GameSettings))
        if args.service == "beat":
            return serve_beat(load_settings(None, BeatSettings), args.max_interval)
        if args.service == "projection":
            return serve_projection(load_settings(None, ProjectionSettings))
        return serve_workers(load_settings(None, WorkerSettings), args.concurrency)
    code: int = handlers[args.command]()
    return code


if __name__ == "__main__":
    sys.exit(main())
