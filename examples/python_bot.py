"""A third-party bot in Python on the cardarena client: plays every turn it is given.

    CARDARENA_URL=http://127.0.0.1:8000 CARDARENA_TOKEN=<bot token> \
        uv run python examples/python_bot.py [--games N] [--wait 30] [--accept-challenges]

It long-polls for its turns, reads each seat's view and posts a legal action: the first
one that plays cards, else the first legal action (a small but real strategy). It stops
after it has seen N of its games finish (default: runs until interrupted).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from shared.sdk import ApiError, Client, SeatView


def choose(view: SeatView) -> dict[str, Any]:
    """Returns a play when there is one (lowest cards first), else the first legal action."""
    plays = [a for a in view.legal_actions if a.get("type") in ("PlayCards", "PlayToSequence")]
    return plays[0] if plays else view.legal_actions[0]


def play(client: Client, games: int | None, wait: int, accept: bool = False) -> int:
    """Plays turns until `games` of the bot's games have finished; returns how many did.

    With `accept`, it first accepts every challenge waiting for its answer.
    """
    finished: set[str] = set()
    seen: set[str] = set()
    while games is None or len(finished) < games:
        for challenge in client.challenges() if accept else ():
            client.accept_challenge(challenge["challenge_id"])
        for turn in client.turns(wait=wait):
            seen.add(turn.game_id)
            client.act(turn.game_id, turn.seat, choose)
        for game_id in seen - finished:
            if client.game(game_id)["status"] != "playing":
                finished.add(game_id)
    return len(finished)


def main() -> int:
    """Reads the settings from the environment and plays."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--wait", type=int, default=30)
    parser.add_argument(
        "--accept-challenges", action="store_true", help="accept every challenge it is sent"
    )
    args = parser.parse_args()
    url = os.environ.get("CARDARENA_URL", "http://127.0.0.1:8000")
    with Client(url, token=os.environ["CARDARENA_TOKEN"]) as client:
        try:
            done = play(client, args.games, args.wait, args.accept_challenges)
        except ApiError as error:
            print(f"cardarena refused: {error}", file=sys.stderr)
            return 1
    print(f"{done} games finished")
    return 0


if __name__ == "__main__":
    sys.exit(main())
