"""`cardarena serve [game|projection|workers|beat]`: run one service until interrupted.

Each service's own modules are imported when it is served, not when the CLI starts
(`cardarena --help` stays quick): Litestar and uvicorn for the game service, Celery for the
workers and beat, prometheus_client for the projection and the workers (which must prepare
its multiprocess directory before prometheus_client is first imported). None of these lazy
imports closes a cycle: the CLI is the top layer, and nothing imports it.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
from dataclasses import replace

from services.cli.common import CannotStart
from services.cli.servers import require_service
from services.ops.logs import configure_logging
from services.ops.migrate import migrate
from services.ops.multiprocess import prepare_metrics_dir
from services.settings import (
    BeatSettings,
    CommonSettings,
    GameSettings,
    ProjectionSettings,
    WorkerSettings,
    load_settings,
)

KINDS: dict[str, type[CommonSettings]] = {
    "game": GameSettings,
    "projection": ProjectionSettings,
    "workers": WorkerSettings,
    "beat": BeatSettings,
}
"""The settings each service reads."""
PORTS = {"game": "port", "projection": "projection_metrics_port", "workers": "workers_metrics_port"}
"""The setting `--port` overrides for each service: the port it listens on (the API's, or its
Prometheus metrics'); beat listens on none."""


def run(args: argparse.Namespace) -> int:
    """Serves `args.service` with its settings (`--host` and `--port` over theirs), logging as
    CARDARENA_LOG_JSON says, once the servers it needs answer."""
    settings = options(args, load_settings(None, KINDS[args.service]))
    try:
        require_service(args.service, settings)
    except ValueError as error:  # the settings name servers that cannot work together
        raise CannotStart(str(error)) from None
    configure_logging(json=settings.log_json)
    if isinstance(settings, GameSettings):
        return serve_game(settings)
    if isinstance(settings, BeatSettings):
        return serve_beat(settings, args.max_interval)
    if isinstance(settings, ProjectionSettings):
        return serve_projection(settings)
    assert isinstance(settings, WorkerSettings)
    return serve_workers(settings, args.concurrency)


def options(args: argparse.Namespace, settings: CommonSettings) -> CommonSettings:
    """Returns `settings` with `--host` and `--port` in place of the settings they override;
    raises CannotStart for an option that means nothing to `args.service`."""
    if args.host is not None:
        if not isinstance(settings, GameSettings):
            raise CannotStart(
                f"serve {args.service}: --host is the game service's address; the projection's"
                " and the workers' metrics listen on every address, beat on none"
            )
        settings = replace(settings, host=args.host)
    if args.port is not None:
        field = PORTS.get(args.service)
        if field is None:
            raise CannotStart(
                f"serve {args.service}: --port means nothing here, {args.service} listens on"
                " no port (--port is the game service's API port, or the projection's or the"
                " workers' metrics port)"
            )
        settings = replace(settings, **{field: args.port})
    return settings


def serve_game(settings: GameSettings) -> int:
    """Serves the game service's API with uvicorn until interrupted."""
    # Start-up cost (Litestar, uvicorn): see the module docstring.
    import uvicorn  # noqa: PLC0415

    from services.bootstrap.game import (  # noqa: PLC0415
        build_access,
        build_bot_index,
        build_dispatcher,
        build_game_metrics,
        build_ladder_pairer,
        build_readiness,
        build_scheduler,
    )
    from services.bootstrap.stores import build_archive, build_store, build_views  # noqa: PLC0415
    from services.game.app import create_app  # noqa: PLC0415
    from services.game.http.pipeline.auth import warn_if_open  # noqa: PLC0415
    from services.game.http.waiters import StreamConfig  # noqa: PLC0415

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
        streams=StreamConfig(
            spectators=settings.spectator_streams, per_token=settings.max_streams_per_token
        ),
        bot_index=build_bot_index(settings, store),
        ladder_pairer=build_ladder_pairer(settings, store, dispatcher, views, access),
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
    # Start-up cost (prometheus_client): see the module docstring.
    from services.bootstrap.projection import (  # noqa: PLC0415
        build_retention,
        owned_partitions,
        projector_index,
    )
    from services.bootstrap.stores import redis_store  # noqa: PLC0415
    from services.ops.metrics import ProjectionMetrics  # noqa: PLC0415
    from services.projection.probes import install  # noqa: PLC0415
    from services.projection.projector import Projector  # noqa: PLC0415
    from services.projection.trimming import FeedTrimmer  # noqa: PLC0415

    try:
        index = projector_index(settings)
        owned = owned_partitions(settings, index)
    except ValueError as error:  # CARDARENA_PROJECTORS and its index do not fit together
        raise CannotStart(str(error)) from None
    migrate(settings.database_url)
    store = redis_store(settings)
    client = store.client
    consumer = store.consumer(settings.projection_group, f"projector-{index}", partitions=owned)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    print(f"cardarena projection service: following the feed (partitions {owned})", flush=True)
    retention = build_retention(settings, store)
    metrics = ProjectionMetrics()
    beat = install(settings, client, metrics)
    linger_s = settings.projection_linger_ms / 1000
    projector = Projector(
        settings.database_url,
        consumer,
        retention=retention,
        metrics=metrics,
        retry_s=settings.projection_retry_seconds,
        trimmer=FeedTrimmer(store, settings.feed_retention_seconds),
        partitions=store.partitions,
    )
    projector.run_forever(stop, beat=beat, linger_s=linger_s)
    return 0


def serve_beat(settings: BeatSettings, max_interval: int) -> int:
    """Runs celery beat over the scheduled tournaments in Redis (celery-redbeat, locked)."""
    # Start-up cost (Celery, redbeat): see the module docstring.
    from services.workers.beat import run_beat  # noqa: PLC0415
    from services.workers.celery_app import create_celery  # noqa: PLC0415

    run_beat(create_celery(load_settings(None, WorkerSettings)), settings, max_interval)
    return 0


def serve_workers(settings: WorkerSettings, concurrency: int) -> int:
    """Runs a Celery worker on the bot-turn queue, named by its host and process id.

    The name is the worker's own: Celery's default (`celery@<host>`) is the same for every
    worker of a machine, and over RabbitMQ the second one to start stops at once, refused
    the exclusive queue of its remote control (`celery@<host>.celery.pidbox`) that the first
    holds.
    """
    prepare_metrics_dir()  # before prometheus_client is imported: see the module docstring
    # Start-up cost (Celery), and after prepare_metrics_dir: see the module docstring.
    from services.bootstrap.workers import create_celery_app  # noqa: PLC0415
    from services.workers import probes  # noqa: PLC0415

    app = create_celery_app(settings)
    probes.install(settings)
    name = f"--hostname=cardarena-{os.getpid()}@%h"
    app.worker_main(
        ["worker", "--loglevel=INFO", f"--concurrency={concurrency}", "-Q", settings.queue, name]
    )
    return 0
