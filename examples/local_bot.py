"""A bot as a local program, in Python with nothing but the standard library.

    cardarena simulate --game shithead --bots "exec:python examples/local_bot.py",heuristic
    cardarena connect --server http://127.0.0.1:8000 --token <token> \
        --bot "exec:python examples/local_bot.py"

It reads one turn per line on its standard input (a JSON object: `game_id`, `game`, `seat`,
`version`, `view`, `legal_actions`, ...) and writes one action per line on its standard
output: the first legal action that plays cards (lowest cards first), else the first legal
action. Its standard error is its own log. It ends when its standard input does.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PLAYS = ("PlayCards", "PlayToSequence")
"""The action types that play cards (Shithead's, Hospodský autobus')."""


def choose(turn: dict[str, Any]) -> dict[str, Any]:
    """Returns the first legal action that plays cards, else the first legal action."""
    legal: list[dict[str, Any]] = turn["legal_actions"]
    plays = [action for action in legal if action.get("type") in PLAYS]
    return plays[0] if plays else legal[0]


def main() -> int:
    """Answers every turn on standard input until it ends."""
    for line in sys.stdin:
        turn = json.loads(line)
        print(json.dumps(choose(turn)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
