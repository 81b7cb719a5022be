"""`cardarena dev`: the whole stack as local child processes, and the launcher behind it.

`Launcher` starts `cardarena` commands as children, each in a process group of its own (so
a terminal's Ctrl-C reaches only the parent, which stops them in order, and a child's own
children, such as Celery's pool, go with it), prefixes each line of their output with the
child's name, and stops them: SIGTERM, then SIGKILL to the group after a grace period. The
end-to-end and smoke tests start the stack with the same launcher.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

import httpx
import psycopg
from psycopg import sql

from services.cli.servers import require_redis, unreachable
from services.ops.migrate import migrate
from services.settings import Settings, load_settings

GRACE_SECONDS = 10.0
"""How long a child may take to exit after SIGTERM before its process group gets SIGKILL."""
READY_SECONDS = 60.0
"""How long `cardarena dev` waits for the game service to answer its health checks."""
ROOT = Path(__file__).resolve().parents[1]
"""The repository (or installed package) root: the children's working directory."""


def cardarena(*args: str) -> list[str]:
    """Returns the command line that runs `cardarena *args` with this interpreter."""
    return [sys.executable, "-m", "services.cli.main", *args]


def stack_commands(concurrency: int, max_interval: int = 5) -> list[tuple[str, list[str]]]:
    """Returns the (name, command line) of each long-running process of the stack."""
    return [
        ("game", cardarena("serve", "game")),
        ("projection", cardarena("serve", "projection")),
        ("workers", cardarena("serve", "workers", "--concurrency", str(concurrency))),
        ("beat", cardarena("serve", "beat", "--max-interval", str(max_interval))),
    ]


def stack_environment(
    base: Mapping[str, str], redis_url: str, database_url: str, host: str, port: int
) -> dict[str, str]:
    """Returns `base` with the settings of a stack on Redis, Celery and PostgreSQL."""
    return {
        **base,
        "CARDARENA_STORE": "redis",
        "CARDARENA_DISPATCH": "celery",
        "REDIS_URL": redis_url,
        "DATABASE_URL": database_url,
        "CARDARENA_HOST": host,
        "CARDARENA_PORT": str(port),
        "PYTHONUNBUFFERED": "1",
    }


class Child:
    """One started command: its process, and the last lines of its output (relayed), or
    the file its output goes to."""

    def __init__(
        self,
        name: str,
        process: subprocess.Popen[str],
        keep: int = 2000,
        log: Path | None = None,
    ) -> None:
        self.name = name
        self.process = process
        self.lines: collections.deque[str] = collections.deque(maxlen=keep)
        self.reader: threading.Thread | None = None
        self.log = log

    def tail(self, count: int) -> list[str]:
        """Returns the last `count` lines of the child's output."""
        if self.log is None:
            return list(self.lines)[-count:]
        with contextlib.suppress(OSError), self.log.open(errors="replace") as lines:
            return [line.rstrip("\n") for line in collections.deque(lines, maxlen=count)]
        return []

    @property
    def pid(self) -> int:
        """Returns the child's pid, which is also its process group's id."""
        return self.process.pid

    def saw(self, text: str) -> bool:
        """Returns whether a line of the child's output so far contains `text`."""
        return any(text in line for line in self.tail(self.lines.maxlen or 2000))


class Launcher:
    """Starts named `cardarena` commands as children and stops them all (a context manager)."""

    def __init__(
        self,
        env: Mapping[str, str],
        out: TextIO | None = None,
        cwd: Path = ROOT,
        grace: float = GRACE_SECONDS,
        logs: Path | None = None,
    ) -> None:
        self.env = dict(env)
        self.out = out
        self.cwd = cwd
        self.grace = grace
        self.logs = logs
        """When set, each child writes its output to `<logs>/<name>.log` itself, and none
        is relayed (a benchmark's own process then spends nothing on the children's logs)."""
        self.children: list[Child] = []
        self._lock = threading.Lock()

    def __enter__(self) -> Launcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def say(self, name: str, line: str) -> None:
        """Writes `line` to the output, prefixed with `name`."""
        out = self.out if self.out is not None else sys.stdout
        # A closed output must not stop a relay: the child would block on a full pipe.
        with self._lock, contextlib.suppress(ValueError, OSError):
            out.write(f"{name:<10} | {line.rstrip()}\n")
            out.flush()

    def start(self, name: str, command: Sequence[str]) -> Child:
        """Starts `command` as the child `name`, in a process group of its own."""
        log = None if self.logs is None else self.logs / f"{name}.log"
        opened: Any = contextlib.nullcontext(subprocess.PIPE) if log is None else log.open("w")
        with opened as output:  # a log file is the child's: this process closes its copy
            process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
                list(command),
                cwd=self.cwd,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
                bufsize=1,
                process_group=0,
            )
        child = Child(name, process, log=log)
        if log is None:
            child.reader = threading.Thread(target=self._relay, args=(child,), daemon=True)
            child.reader.start()
        self.children.append(child)
        self.say("dev", f"started {name} (pid {child.pid}): {' '.join(command[1:])}")
        return child

    def _relay(self, child: Child) -> None:
        """Copies the child's output, line by line and prefixed, until it closes."""
        stream = child.process.stdout
        assert stream is not None
        for line in stream:
            child.lines.append(line.rstrip("\n"))
            self.say(child.name, line)

    def exited(self) -> Child | None:
        """Returns the first child that has exited, if any."""
        return next((c for c in self.children if c.process.poll() is not None), None)

    def stop(self) -> None:
        """Stops every child: SIGTERM, then SIGKILL to its group after the grace period."""
        for child in self.children:
            if child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        for child in self.children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        for child in self.children:
            # The group too: a child killed or gone may leave its own children behind.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            child.process.wait()
            if child.reader is not None:
                child.reader.join(timeout=5)
            if child.process.stdout is not None:
                child.process.stdout.close()
        self.children.clear()


def display_host(host: str) -> str:
    """Returns the host to reach a server listening on `host` from this machine."""
    return "127.0.0.1" if host in {"", "0.0.0.0", "::"} else host  # noqa: S104 - compared


def service_ready(base_url: str) -> bool:
    """Returns whether the game service answers /health, and /ready where it exists."""
    try:
        if httpx.get(f"{base_url}/health", timeout=2).status_code != 200:
            return False
        return httpx.get(f"{base_url}/ready", timeout=2).status_code in {200, 404}
    except httpx.TransportError:
        return False


def wait_ready(
    base_url: str, launcher: Launcher, stop: threading.Event, seconds: float = READY_SECONDS
) -> str | None:
    """Waits for the game service; returns None when ready, else why it is not."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if stop.is_set():
            return "stopped"
        if (dead := launcher.exited()) is not None:
            return f"{dead.name} exited with code {dead.process.returncode}"
        if service_ready(base_url):
            return None
        time.sleep(0.25)
    return f"the game service did not answer {base_url}/health within {seconds:.0f}s"


def ensure_database(database_url: str) -> str | None:
    """Creates the database of `database_url` if it is missing; returns its name if it did."""
    name = psycopg.conninfo.conninfo_to_dict(database_url).get("dbname")
    try:
        psycopg.connect(database_url, connect_timeout=5).close()
    except psycopg.OperationalError:
        if not name:
            raise
    else:
        return None
    server = psycopg.conninfo.make_conninfo(database_url, dbname="postgres")
    with psycopg.connect(server, autocommit=True, connect_timeout=5) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if found:
            return None
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(str(name))))
    return str(name)


def prepare(settings: Settings, say: Callable[[str], None]) -> None:
    """Checks Redis, creates the database if missing and applies the migrations; raises
    CannotStart naming the server that does not answer."""
    require_redis(settings.redis_url)
    try:
        created = ensure_database(settings.database_url)
    except psycopg.Error as error:
        url = settings.database_url
        raise unreachable("PostgreSQL", url, "DATABASE_URL", str(error), "postgres") from None
    if created:
        say(f"created the database {created}")
    say(f"migrations applied now: {migrate(settings.database_url) or 'none'}")


def addresses(base_url: str, settings: Settings) -> list[tuple[str, str]]:
    """Returns what a user of the stack at `base_url` opens, and where: the API, its docs,
    the arena, the replay viewer and each service's Prometheus metrics."""
    found = [
        ("API", f"{base_url}/v1"),
        ("API docs", f"{base_url}/schema"),
        ("arena", f"{base_url}/arena"),
        ("replay viewer", f"{base_url}/replay/<game_id>"),
        ("metrics", f"{base_url}/metrics (game)"),
    ]
    for service, port in (
        ("projection", settings.projection_metrics_port),
        ("workers", settings.workers_metrics_port),
    ):
        if port:
            found.append(("metrics", f"http://127.0.0.1:{port}/metrics ({service})"))
    return found


@contextlib.contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """Yields an event set by SIGINT or SIGTERM while the block runs."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


def run_dev(
    host: str | None,
    port: int | None,
    concurrency: int,
    environ: Mapping[str, str] | None = None,
    out: TextIO | None = None,
) -> int:
    """Runs the stack until SIGINT or SIGTERM (exit 0) or a child's death (exit 1); raises
    CannotStart when Redis or PostgreSQL does not answer at start."""
    base = dict(os.environ if environ is None else environ)
    settings = load_settings(base)
    host = settings.host if host is None else host
    port = settings.port if port is None else port
    env = stack_environment(base, settings.redis_url, settings.database_url, host, port)
    env.setdefault("CARDARENA_LOG_JSON", "false")  # a terminal reads text better than JSON
    launcher = Launcher(env, out)

    def say(line: str) -> None:
        launcher.say("dev", line)

    prepare(settings, say)
    shown = display_host(host)
    base_url = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"
    with stop_on_signals() as stop, launcher:
        for name, command in stack_commands(concurrency):
            launcher.start(name, command)
        problem = wait_ready(base_url, launcher, stop)
        if problem == "stopped":
            return 0
        if problem is not None:
            say(f"error: {problem}; stopping")
            return 1
        for what, where in addresses(base_url, settings):
            say(f"{what + ':':<15}{where}")
        say("ready; Ctrl-C stops everything")
        while not stop.wait(0.25):
            if (dead := launcher.exited()) is not None:
                say(f"error: {dead.name} exited unexpectedly (code {dead.process.returncode})")
                say("stopping the others")
                return 1
        say("stopping")
    say("stopped")
    return 0


def run(args: argparse.Namespace) -> int:
    """Runs the game service, projection, a worker and beat locally until interrupted."""
    return run_dev(args.host, args.port, args.workers_concurrency)
