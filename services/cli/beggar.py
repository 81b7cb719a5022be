"""`cardarena beggar play`: one Beggar-my-neighbour deal, its counts as one JSON line."""

from __future__ import annotations

import argparse
import json

from services.cli.common import Subparsers, fail
from shared.catalog import get_game
from shared.errors import InvalidRuleset
from shared.games import beggar


def add_parser(commands: Subparsers) -> None:
    """Adds `beggar play` to the `cardarena` subcommands."""
    beggar_cmd = commands.add_parser("beggar", help="Beggar-my-neighbour tools")
    beggar_sub = beggar_cmd.add_subparsers(dest="beggar_command", required=True)
    play = beggar_sub.add_parser("play", help="play one deal and print its counts as JSON")
    play.add_argument("--a", help="seat 0's pack, top card first, e.g. 2A78Q")
    play.add_argument("--b", help="seat 1's pack, top card first")
    play.add_argument("--players", type=int, default=2, help="players of a shuffled deal")
    play.add_argument("--seed", default="0", help="seed of a shuffled deal")
    play.add_argument("--max-cards", type=int, default=100_000, help="the card cap")
    beggar_cmd.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plays one Beggar-my-neighbour deal and prints its counts as one JSON line."""
    ruleset = beggar.BeggarRuleset(max_cards=args.max_cards)
    try:
        if args.a is not None or args.b is not None:
            if args.a is None or args.b is None:
                return fail("a fixed deal needs both --a and --b")
            started = beggar.fixed_deal(
                [beggar.parse_deal(args.a), beggar.parse_deal(args.b)], ruleset
            )
        else:
            started = beggar.deal(ruleset, args.players, args.seed)
    except (ValueError, InvalidRuleset) as error:
        return fail(str(error))
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
