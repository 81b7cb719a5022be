"""Engine speed, as ratios measured in one run against a plain deque loop of Beggar games.

Beggar: both loops play the same two-player deals with the same rules (pay cards,
collections, loop detection with numerals alike); the figure that matters is their ratio.
Target: the engine reaches at least 0.8 of the reference loop.
Shithead and Hospodský autobus: decisions per second of classic four-player games between
random bots (the bot's choice, the legal actions, decide and evolve: what a simulation or a
bot's rollout pays), and their ratio to the reference loop's Beggar games per second of the
same run, so that machines compare. The games are the same from run to run and version to
version (seeded deals and bots): a digest of every event they write is printed, and the
engines must not change it. Targets (issue 20): five times the ratios measured on main on
2026-12-03 before the work (`BASELINE`).

    uv run python -m bench.engines [--games 2000] [--random-games 200]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from collections import deque
from collections.abc import Callable

import msgspec

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


def random_games(
    game: str, players: int, games: int, digest: bool = False
) -> tuple[float, int, str]:
    """Plays `games` seeded classic games between random bots; returns the seconds taken, the
    decisions made and, with `digest`, a digest of every event written (an untimed run: the
    hashing would cost as much as a fast engine's decision)."""
    spec = get_game(game)
    bot = spec.bots["random"]
    decisions = 0
    hashed = hashlib.sha256()
    encode = msgspec.msgpack.Encoder().encode
    start = time.perf_counter()
    for seed in range(games):
        state = spec.fold([spec.deal(spec.ruleset("classic"), players, seed)])
        while not spec.is_over(state):
            seat = spec.to_move(state)[0]
            action = bot.choose(None, spec.legal_actions(state, seat), f"{seed}:{decisions}")
            state, events = spec.apply(state, seat, action)
            if digest:
                hashed.update(encode(events))
            decisions += 1
    return time.perf_counter() - start, decisions, hashed.hexdigest()[:16]


BASELINE = {"shithead": 5.6, "autobus": 8.0}
"""Decisions per second over the reference loop's Beggar games per second, measured on main
on 2026-12-03 before issue 20's work (the median of three runs of this benchmark); the target
is five times each."""

DIGESTS = {("shithead", 40): "d10992846b324dd1", ("autobus", 40): "cfd3208add8a3618"}
"""The digest of the events of the default run's games (40 a round), as the engines wrote
them on 2026-12-03: a faster engine writes the same events."""


def main() -> None:
    """Prints the rates and their ratios, after checking that both Beggar loops agree.

    The reference loop and each engine alternate over several rounds and the median round
    ratio is reported, so a noisy neighbour slows both sides of a round alike.
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
        f"{ratios[0]:.2f}..{ratios[-1]:.2f} (target >= 0.80)"
    )
    sample = deals[: max(1, args.games // 4)]
    for game, players in (("shithead", 4), ("autobus", 4)):
        per_round = max(1, args.random_games // args.rounds)
        _, decisions, digest = random_games(game, players, per_round, digest=True)
        expected = DIGESTS.get((game, per_round), digest)
        assert digest == expected, f"{game} wrote other events: {digest}, not {expected}"
        measured = []
        for _ in range(args.rounds):
            loop = rate(reference_game, sample)
            seconds, _, _ = random_games(game, players, per_round)
            measured.append((decisions / seconds / loop, decisions / seconds))
        measured.sort()
        ratio, per_second = measured[len(measured) // 2]
        target = 5 * BASELINE[game]
        print(f"{game}, classic, {players} random bots, {per_round} games x {args.rounds} rounds")
        print(f"engine: {per_second:10.0f} decisions/s, {decisions / per_round:.1f} per game")
        print(
            f"ratio decisions/s over reference Beggar games/s: {ratio:.1f} median, "
            f"{measured[0][0]:.1f}..{measured[-1][0]:.1f} (baseline {BASELINE[game]}, "
            f"target >= {target:.0f}); events digest {digest}"
        )


if __name__ == "__main__":
    main()
