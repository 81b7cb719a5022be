"""Engine speed: Beggar-my-neighbour against a plain deque loop; the other games' own rates.

Beggar: both loops play the same two-player deals with the same rules (pay cards,
collections, loop detection with numerals alike); the figure that matters is their ratio,
measured in one run. Target: the engine reaches at least 0.5 of the reference loop.
Shithead and Hospodský autobus: games per second of classic four-player games between
random bots, and the mean number of decisions per game.

    uv run python -m bench.engines [--games 2000] [--random-games 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import deque
from collections.abc import Callable

from shared.catalog import get_game
from shared.games import beggar

PAY = {"J": 1, "Q": 2, "K": 3, "A": 4}


def reference_game(packs: list[list[str]]) -> tuple[int, int, str]:
    """Plays a two-player deal with deques; returns (cards, tricks, status)."""
    hands = [deque(packs[0]), deque(packs[1])]
    seen: set[tuple[str, str, int]] = set()
    cards = tricks = 0
    leader = 0
    while True:
        key = (
            "".join(c[0] if c[0] in PAY else "-" for c in hands[0]),
            "".join(c[0] if c[0] in PAY else "-" for c in hands[1]),
            leader,
        )
        if key in seen:
            return cards, tricks, "loop"
        seen.add(key)
        pile: list[str] = []
        due, owner, debt = leader, -1, 0
        while True:
            if not hands[due]:
                hands[1 - due].extend(pile)
                return cards, tricks + 1, "finished"
            card = hands[due].popleft()
            pile.append(card)
            cards += 1
            value = PAY.get(card[0], 0)
            if value:
                owner, debt, due = due, value, 1 - due
            elif owner < 0:
                due = 1 - due
            else:
                debt -= 1
                if debt == 0:
                    hands[owner].extend(pile)
                    tricks += 1
                    leader = owner
                    break
        if not hands[1 - leader]:
            return cards, tricks, "finished"


def engine_game(packs: list[list[str]]) -> tuple[int, int, str]:
    """Plays a deal through the engine's decide and evolve; returns (cards, tricks, status)."""
    spec = get_game("beggar")
    state = spec.fold([beggar.fixed_deal(packs)])
    action = beggar.PlayTrick()
    while state.result is None:
        state, _ = spec.apply(state, state.leader, action)
    return state.cards, state.tricks, state.result.status


def rate(
    play: Callable[[list[list[str]]], tuple[int, int, str]], deals: list[list[list[str]]]
) -> float:
    """Returns games per second of `play` over `deals`."""
    start = time.perf_counter()
    for packs in deals:
        play(packs)
    return len(deals) / (time.perf_counter() - start)


def random_rate(game: str, players: int, games: int) -> tuple[float, float]:
    """Returns games per second of random bots (classic rules) and mean decisions per game."""
    spec = get_game(game)
    bot = spec.bots["random"]
    decisions = 0
    start = time.perf_counter()
    for seed in range(games):
        state = spec.fold([spec.deal(spec.ruleset("classic"), players, seed)])
        while not spec.is_over(state):
            seat = spec.to_move(state)[0]
            action = bot.choose(None, spec.legal_actions(state, seat), f"{seed}:{decisions}")
            state, _ = spec.apply(state, seat, action)
            decisions += 1
    return games / (time.perf_counter() - start), decisions / games


def main() -> None:
    """Prints both rates and their ratio, after checking that both agree on every deal.

    The two loops alternate over several rounds and the median round ratio is reported,
    so a noisy neighbour slows both sides of a round alike.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--random-games", type=int, default=200)
    args = parser.parse_args()
    ruleset = beggar.BeggarRuleset()
    deals = [beggar.deal(ruleset, 2, seed=i).packs for i in range(args.games)]
    for packs in deals[:200]:
        assert engine_game(packs) == reference_game(packs), packs
    rounds = [(rate(reference_game, deals), rate(engine_game, deals)) for _ in range(args.rounds)]
    ratios = sorted(engine / reference for reference, engine in rounds)
    reference = statistics.median(r for r, _ in rounds)
    engine = statistics.median(e for _, e in rounds)
    print(f"beggar, 2 players, {args.games} deals x {args.rounds} rounds")
    print(f"reference deque loop: {reference:10.1f} games/s (median)")
    print(f"engine decide+evolve: {engine:10.1f} games/s (median)")
    print(
        f"ratio engine/reference: {statistics.median(ratios):.2f} median, "
        f"{ratios[0]:.2f}..{ratios[-1]:.2f} (target >= 0.50)"
    )
    for game, players in (("shithead", 4), ("autobus", 4)):
        games_per_second, decisions = random_rate(game, players, args.random_games)
        print(f"{game}, classic, {players} random bots, {args.random_games} games")
        print(f"engine: {games_per_second:10.1f} games/s, {decisions:.1f} decisions per game")


if __name__ == "__main__":
    main()
