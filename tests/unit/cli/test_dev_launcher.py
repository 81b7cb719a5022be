"""The launcher behind `cardarena dev`: what it runs, and how it stops what it started."""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from pathlib import Path

from services.cli.dev import Launcher, display_host, stack_commands
from services.cli.main import build_parser

STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("grandchild", grandchild.pid, flush=True)
time.sleep(60)
"""


def alive(pid: int) -> bool:
    """Returns whether `pid` is a live process (not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_every_process_of_the_dev_stack_is_a_cardarena_command() -> None:
    commands = dict(stack_commands(concurrency=3))
    assert set(commands) == {"game", "projection", "workers", "beat"}
    for command in commands.values():
        assert command[:3] == [sys.executable, "-m", "services.cli.main"]
        build_parser().parse_args(command[3:])
    assert commands["workers"][-2:] == ["--concurrency", "3"]


def test_dev_takes_a_host_a_port_and_a_worker_concurrency() -> None:
    args = build_parser().parse_args(["dev", "--port", "9000", "--host", "0.0.0.0"])
    assert (args.host, args.port, args.workers_concurrency) == ("0.0.0.0", 9000, 2)
    assert display_host("0.0.0.0") == "127.0.0.1"
    assert display_host("10.1.2.3") == "10.1.2.3"


def test_a_child_that_ignores_sigterm_is_killed_with_its_group_after_the_grace() -> None:
    out = io.StringIO()
    launcher = Launcher(os.environ, out, grace=1)
    child = launcher.start("stubborn", [sys.executable, "-c", STUBBORN])
    deadline = time.monotonic() + 30
    while not child.saw("grandchild") and time.monotonic() < deadline:
        time.sleep(0.05)
    grandchild = int(next(line for line in child.lines if "grandchild" in line).split()[1])

    started = time.monotonic()
    launcher.stop()

    assert time.monotonic() - started < 10
    assert child.process.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)
    assert f"stubborn   | grandchild {grandchild}" in out.getvalue()


def test_with_a_logs_directory_each_child_writes_its_own_log_and_nothing_is_relayed(
    tmp_path: Path,
) -> None:
    out = io.StringIO()
    with Launcher(os.environ, out, grace=1, logs=tmp_path) as launcher:
        child = launcher.start("talker", [sys.executable, "-c", "print('one'); print('two')"])
        child.process.wait(timeout=30)
        assert child.reader is None
        assert child.saw("two")
        assert child.tail(1) == ["two"]
    assert (tmp_path / "talker.log").read_text().splitlines() == ["one", "two"]
    assert "talker     | one" not in out.getvalue()
    assert list(child.lines) == []
