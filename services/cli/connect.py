"""`cardarena connect`: a bot program on this machine plays its bot's seats on a live server.

    cardarena connect --server https://arena.example --token <bot token> \
        --bot "exec:node examples/local_bot.js" [--games N]

It long-polls the bot API for the bot's turns (`GET /v1/bots/me/turns`) and hands each to the
program exactly as it would get it from `cardarena simulate` or `cardarena tournament` (the
API's `your_turn`), then posts the action the program answers (`postAction`, with its own
Idempotency-Key, re-asking the program on a stale version). A program that fails its turn
(see `services.cli.programs`), or whose action the server refuses, resigns that game with
the reason printed; the next turn starts it afresh. Once the server has answered the bot's
first request, a dropped connection is retried with a growing pause (1 s, doubling up to
30 s) until the server answers again; before that, a server that cannot be reached (or
answers 5xx) or that refuses the token (401, 403) ends the command at once, in one line.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import httpx

from services.cli.common import UNREACHABLE, fail
from services.cli.programs import (
    Program,
    ProgramFailed,
    check_program,
    is_program,
    split_note,
)
from shared.sdk.client import ApiError, Client, SeatView, Turn

IDLE_LOOK_S = 2
"""While a game it plays has no turn for it, how long one long poll waits before the games are
asked whether an opponent's move ended them."""

MAX_PAUSE = 30.0
"""The longest pause between two tries to reach the server, in seconds."""
REFUSED = frozenset({400, 422})
"""The statuses of an action the server refuses as the program's fault."""


TOKEN_REFUSED = frozenset({401, 403})
"""The statuses of a token the server does not take (unknown, revoked, not a bot's)."""


class ServerError(Exception):
    """The server answered 5xx: it is there but failing (restarting, say); try again."""


class NeverReached(Exception):
    """The server did not answer the first request (or answered it 5xx): a wrong `--server`,
    or one not running; the message says what happened and what to check."""


def say(message: str) -> None:
    """Prints one line of what the connection does, at once."""
    print(message, flush=True)


def run(args: argparse.Namespace) -> int:
    """Connects and plays until the games asked for have ended (or until interrupted)."""
    token = args.token or os.environ.get("CARDARENA_TOKEN")
    if not token:
        return fail("a bot token is needed: --token or CARDARENA_TOKEN")
    if not is_program(args.bot):
        return fail(f"--bot must be a program, exec:<command>, not {args.bot!r}")
    try:
        check_program(args.bot)
    except ValueError as error:
        return fail(str(error))
    if args.games is not None and args.games < 1:
        return fail(f"games must be at least 1, not {args.games}")
    if not args.move_seconds > 0:
        return fail(f"move-seconds must be more than 0, not {args.move_seconds:g}")
    program = Program(args.bot, args.move_seconds)
    with Client(args.server, token=token, timeout=args.wait + 30) as client:
        try:
            ended = play_online(client, program, args.games, args.wait)
        except ApiError as error:
            if error.status in TOKEN_REFUSED:
                why = f"the server at {args.server} refused the bot's token ({error})"
                return fail(f"{why}: check --token or CARDARENA_TOKEN", UNREACHABLE)
            return fail(f"the server refused: {error}", UNREACHABLE)
        except NeverReached as error:
            return fail(f"cannot reach the server at {args.server}: {error}", UNREACHABLE)
        except KeyboardInterrupt:
            return 130
        finally:
            program.stop()
    say(f"{ended} games ended")
    return 0


def play_online(
    client: Client,
    program: Program,
    games: int | None,
    wait: int = 30,
    *,
    report: Callable[[str], None] = say,
    pause: Callable[[float], None] = time.sleep,
) -> int:
    """Plays every turn of the client's bot with `program` until `games` of the games it
    played have ended (None: for ever); returns how many did. Raises ApiError when the
    server refuses the bot (a wrong or revoked token) or a request that is not the program's
    fault, and NeverReached when its first request fails: only a connection that worked is
    retried.
    """
    ended: set[str] = set()
    playing: set[str] = set()
    wait_next = 1.0
    reached = False
    while games is None or len(ended) < games:
        try:
            # While a game of its may end on an opponent's move (which no turn tells), look
            # again within IDLE_LOOK_S rather than wait out the whole long poll.
            look = min(wait, IDLE_LOOK_S) if playing - ended else wait
            turns = _turns(client, look)
            reached = True
            moved: dict[str, str | None] = {}
            for turn in turns:
                playing.add(turn.game_id)
                moved[turn.game_id] = play_turn(client, program, turn, report)
            for game_id in sorted(playing - ended):
                # A move's answer tells whether it ended its game; any other game is asked.
                status = moved[game_id] if game_id in moved else _status(client, game_id)
                if status is not None and status != "playing":
                    ended.add(game_id)
                    report(f"game {game_id}: {status}")
            wait_next = 1.0
        except (httpx.TransportError, ServerError) as error:
            if not reached:
                what = str(error) or type(error).__name__
                raise NeverReached(
                    f"{what}; check --server (is the game service running?)"
                ) from error
            report(f"connection lost ({error or type(error).__name__}); again in {wait_next:g} s")
            pause(wait_next)
            wait_next = min(wait_next * 2, MAX_PAUSE)
    return len(ended)


def line_of(game: str, view: SeatView) -> dict[str, Any]:
    """Returns the turn a program reads for `view` (the API's `your_turn` of a game `game`)."""
    line: dict[str, Any] = {
        "game_id": view.game_id,
        "game": game,
        "seat": view.seat,
        "version": view.version,
        "status": view.status,
        "to_move": view.to_move,
        "view": view.view,
        "legal_actions": view.legal_actions,
    }
    if view.deadline is not None:
        line["deadline"] = view.deadline
    return line


def play_turn(
    client: Client, program: Program, turn: Turn, report: Callable[[str], None]
) -> str | None:
    """Posts the program's action for `turn` (its answer carries the game as the move left it:
    one request a move); resigns the game for the seat if the program fails its turn or the
    server refuses what it answered. Returns the game's status after the move, None when
    unknown (no move landed)."""
    view = SeatView(
        game_id=turn.game_id,
        seat=turn.seat,
        version=turn.version,
        status=turn.status or "playing",
        to_move=turn.to_move or [turn.seat],
        view=turn.view or {},
        legal_actions=turn.legal_actions,
        deadline=turn.deadline,
    )
    noted: list[str | None] = [None]

    def choose(seen: SeatView) -> dict[str, Any]:
        action, noted[0] = split_note(program.ask(line_of(turn.game, seen)))
        return action

    try:
        answer = client.act(
            turn.game_id, turn.seat, choose, view=view, wait=0, note=lambda _v, _a: noted[0]
        )
        after = None if answer is None else answer.get("turn")
        return None if after is None else str(after["status"])
    except ProgramFailed as failure:
        reason = str(failure)
    except ApiError as error:
        if error.status >= 500:
            raise ServerError(str(error)) from error
        if error.status == 409:  # the game moved on under every try: its next turn comes
            report(f"game {turn.game_id}: seat {turn.seat}'s turn passed ({error})")
            return None
        if error.status not in REFUSED:
            raise
        detail = error.problem.get("detail") or error.problem.get("title") or ""
        reason = f"refused ({error.status}): {detail}"
    report(f"forfeit: game {turn.game_id}, seat {turn.seat}: {reason}")
    try:
        client.act(turn.game_id, turn.seat, lambda _: {"type": "Resign"})
    except ApiError as error:  # the game ended meanwhile, or the seat may not resign
        report(f"game {turn.game_id}: could not resign seat {turn.seat}: {error}")
    return None


def _turns(client: Client, wait: int) -> list[Turn]:
    """Returns the bot's turns (waiting up to `wait` s); raises ServerError for a 5xx."""
    try:
        return client.turns(wait=wait)
    except ApiError as error:
        if error.status >= 500:
            raise ServerError(str(error)) from error
        raise


def _status(client: Client, game_id: str) -> str:
    """Returns a game's status; raises ServerError for a 5xx."""
    try:
        return str(client.game(game_id)["status"])
    except ApiError as error:
        if error.status >= 500:
            raise ServerError(str(error)) from error
        raise
