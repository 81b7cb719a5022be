"""Bots as local programs: any executable that reads one JSON line per turn on its standard
input and writes one action per line on its standard output.

A bot named `exec:<command>` (for example `exec:node examples/local_bot.js`) runs as a
subprocess of the command that plays it (`cardarena simulate`, `cardarena evaluate`,
`cardarena tournament`, `cardarena connect`), started at its first turn and kept for the
next ones; before the first game, the command checks that it can start at all
(`check_program`). Each turn it is sent is the API's `your_turn` (`game_id`, `game`,
`seat`, `version`, `status`, `to_move`, `view`, `legal_actions`, and `deadline` in a timed
game online); it answers one action object, as the API's `postAction` takes it (one of
`legal_actions`, or `{"type": "Resign"}`), which may carry the move's private note in an
optional `"note"` field (`shared.model.notes`; `split_note`: a note that cannot be one fails
the turn as `invalid_action`).

An answer that does not come within the move's time limit, a program that exits, and a line
that is not a JSON object fail the turn with a `ProgramFailed` naming the reason; the
program is stopped, and started afresh at its next turn. What it writes on its standard
error is its own log: the last lines of it are kept for the reason of a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import msgspec

from services.cli.common import MOVE_SECONDS
from shared.errors import IllegalAction, InvalidRequest
from shared.games.base import AnyGame
from shared.model.notes import problem

PREFIX = "exec:"
"""What a bot name that runs a local program starts with."""
START_GRACE = 0.5
"""How long a program started once before a run (`check_program`) must keep running: one
that exits sooner cannot play."""
_STDERR_LINES = 20
"""How many of a program's last standard error lines are kept."""


def is_program(bot: str) -> bool:
    """Returns whether the bot name `bot` names a local program (`exec:<command>`)."""
    return bot.startswith(PREFIX)


def command_of(bot: str) -> list[str]:
    """Returns the argument vector of the program bot `bot`; raises ValueError if empty (or
    not a command line shlex can split: an unclosed quote)."""
    try:
        argv = shlex.split(bot.removeprefix(PREFIX))
    except ValueError as error:
        raise ValueError(f"{bot!r} is not a command line: {error}") from None
    if not argv:
        raise ValueError(f"{bot!r} names no command: write exec:<command>")
    return argv


def bot_names(bots: str) -> list[str]:
    """Returns the bot names of a `--bots` list (comma-separated, each name stripped); raises
    ValueError naming an empty one."""
    names = [name.strip() for name in bots.split(",")]
    for place, name in enumerate(names, start=1):
        if not name:
            raise ValueError(f"--bots: name {place} of {bots!r} is empty; one name per seat")
    return names


def check_program(bot: str, grace: float = START_GRACE) -> None:
    """Raises ValueError, saying why, unless the program `bot` can start: its command resolves
    (a path to an executable file, or a command on PATH) and, started once with no turn to
    read, it is still running `grace` seconds later, waiting as a program does. One that exits
    sooner (a script that is not there) fails with its exit code and the last line of its
    standard error; one slower to fail passes, and forfeits its turns as today."""
    argv = command_of(bot)
    executable = argv[0]
    if os.sep in executable or (os.altsep and os.altsep in executable):
        path = Path(executable)
        if not path.is_file():
            raise ValueError(f"{bot!r} cannot start: there is no file {executable}")
        if not os.access(path, os.X_OK):
            raise ValueError(f"{bot!r} cannot start: {executable} is not executable (chmod +x)")
    elif shutil.which(executable) is None:
        raise ValueError(f"{bot!r} cannot start: {executable!r} is not a command on PATH")
    try:
        process = subprocess.Popen(  # noqa: S603 - the user's own program, by design
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as error:
        raise ValueError(f"{bot!r} cannot start: {error.strerror or error}") from None
    with process:
        try:
            code = process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return
        said = ""
        with contextlib.suppress(subprocess.TimeoutExpired):  # its children may hold stderr
            said = process.communicate(timeout=1)[1] or ""
    last = said.strip().splitlines()[-1][:300] if said.strip() else "nothing on its stderr"
    raise ValueError(f"{bot!r} exited before its first turn, with code {code}: {last}")


class ProgramFailed(Exception):
    """A program's turn failed: `reason` is one of `timeout`, `crashed`, `malformed_output`,
    `invalid_action`, `illegal_action`; `detail` says what happened."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def turn_line(game_id: str, spec: AnyGame, state: Any, seat: int, version: int) -> dict[str, Any]:
    """Returns `seat`'s turn in a game (`spec`, `state`, at `version`) as a program reads it:
    the API's `your_turn` (with no deadline: local games are untimed)."""
    return {
        "game_id": game_id,
        "game": spec.name,
        "seat": seat,
        "version": version,
        "status": "playing",
        "to_move": spec.to_move(state),
        "view": msgspec.to_builtins(spec.view(state, seat)),
        "legal_actions": msgspec.to_builtins(spec.legal_actions(state, seat)),
    }


def split_note(answer: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Returns a program's answer as its action (the object without `"note"`) and its note
    (None: none); raises ProgramFailed `invalid_action` for a note that cannot be one."""
    action = dict(answer)
    note = action.pop("note", None)
    reason = "a note is a string" if not isinstance(note, str | None) else problem(note or "")
    if reason is not None:
        raise ProgramFailed("invalid_action", f"note: {reason}")
    return action, note


def refusal(error: InvalidRequest | IllegalAction) -> ProgramFailed:
    """Returns the failure of a program whose answer the rules refused: none of the game's
    actions (`invalid_action`), or one they forbid now (`illegal_action`, its rule named)."""
    if isinstance(error, IllegalAction):
        return ProgramFailed("illegal_action", f"{error.rule}: {error.message}"[:300])
    return ProgramFailed("invalid_action", error.message[:300])


class Program:
    """One bot program: its subprocess (started at its first turn) and the lines it writes."""

    def __init__(self, bot: str, move_seconds: float = MOVE_SECONDS) -> None:
        self.bot = bot
        self.argv = command_of(bot)
        self.move_seconds = move_seconds
        self._process: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self._stderr_reader: threading.Thread | None = None

    def ask(self, turn: Mapping[str, Any]) -> dict[str, Any]:
        """Sends `turn` as one JSON line and returns the JSON object the program answers;
        raises ProgramFailed (and stops the program) when it does not answer one in time."""
        process = self._process or self._start()
        assert process.stdin is not None
        if not self._lines.empty():  # answers no turn asked for: the next would read them
            extra = self._lines.get_nowait()
            self.stop()
            raise ProgramFailed(
                "malformed_output", f"more than one line for its last turn: {extra!r:.200}"
            )
        try:
            process.stdin.write(json.dumps(turn, separators=(",", ":")) + "\n")
            process.stdin.flush()
        except OSError:
            raise self._crashed() from None
        try:
            line = self._lines.get(timeout=self.move_seconds)
        except queue.Empty:
            self.stop()
            raise ProgramFailed(
                "timeout", f"no answer within {self.move_seconds:g} s of its turn"
            ) from None
        if line is None:
            raise self._crashed()
        try:
            answer = json.loads(line)
        except ValueError:
            self.stop()
            raise ProgramFailed("malformed_output", f"not JSON: {line[:200]!r}") from None
        if not isinstance(answer, dict):
            self.stop()
            raise ProgramFailed("malformed_output", f"not a JSON object: {line[:200]!r}")
        return answer

    def stop(self) -> None:
        """Stops the program (it starts again at its next turn)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    def _start(self) -> subprocess.Popen[str]:
        """Starts the program, with a thread for each of its output streams."""
        try:
            process = subprocess.Popen(  # noqa: S603 - the user's own program, by design
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as error:
            raise ProgramFailed("crashed", f"cannot start {self.argv[0]!r}: {error}") from None
        # A process's own queue and log: a stopped one's readers never reach the next's.
        lines: queue.Queue[str | None] = queue.Queue()
        self._process, self._lines = process, lines
        self._stderr = deque(maxlen=_STDERR_LINES)
        assert process.stdout is not None
        assert process.stderr is not None
        _follow(process.stdout, lines.put, end=lambda: lines.put(None))
        self._stderr_reader = _follow(process.stderr, self._stderr.append)
        return process

    def _crashed(self) -> ProgramFailed:
        """Returns the failure of a program that exited (stopping what is left of it)."""
        process, code = self._process, None
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = process.wait(timeout=2)
        self.stop()
        if self._stderr_reader is not None:
            self._stderr_reader.join(timeout=1)  # its last words
        said = f": {self._stderr[-1].strip()[:300]}" if self._stderr else ""
        return ProgramFailed("crashed", f"the program exited with code {code}{said}")


def _follow(
    stream: IO[str], line: Callable[[str], None], end: Callable[[], None] | None = None
) -> threading.Thread:
    """Hands each line of `stream` to `line` (without its newline) from a daemon thread, then
    calls `end` at its end of file; returns the thread."""

    def run() -> None:
        try:
            for text in stream:
                line(text.rstrip("\n"))
        except (OSError, ValueError):  # closed under the reader by `stop`
            pass
        if end is not None:
            end()

    reader = threading.Thread(target=run, daemon=True, name="program-output")
    reader.start()
    return reader


class Programs:
    """The programs of a run, one per bot name, each started at its first turn."""

    def __init__(self, bots: Iterable[str], move_seconds: float = MOVE_SECONDS) -> None:
        self._programs = {bot: Program(bot, move_seconds) for bot in bots if is_program(bot)}

    def __getitem__(self, bot: str) -> Program:
        return self._programs[bot]

    def __enter__(self) -> Programs:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stops every program."""
        for program in self._programs.values():
            program.stop()
