"""`cardarena beggar play`: one Beggar-my-neighbour deal, its counts as one JSON line."""

from __future__ import annotations

import argparse
import json

from services.cli.common import fail
from shared.catalog import get_game
from shared.errors import InvalidRuleset
from shared.games import beggar


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
