"""A ladder's fold (shared.model.ladder_events): folding its stream in steps makes the ladder
folding it at once makes, and each bot's games point at its places in the history."""

from __future__ import annotations

import random

import pytest

from shared.model.ladder_events import (
    BotLeft,
    BotQueued,
    LadderClosed,
    LadderEvent,
    LadderFold,
    LadderGameEnded,
    LadderOpened,
    LadderPaired,
    fold,
)

BOTS = [f"b{i}@1" for i in range(8)]


def stream(seed: int, length: int = 200) -> list[LadderEvent]:
    """Returns a ladder's stream of `length` events drawn with `seed`."""
    rng = random.Random(seed)
    events: list[LadderEvent] = [LadderOpened(ladder_id="l" * 32, game="autobus")]
    live: list[str] = []
    for n in range(length):
        at = f"2026-12-0{1 + n // 50}T00:00:{n % 50:02d}+00:00"
        roll = rng.random()
        if roll < 0.2:
            events.append(BotQueued(bot=rng.choice(BOTS), account="a", at=at))
        elif roll < 0.3:
            events.append(BotLeft(bot=rng.choice(BOTS), at=at))
        elif roll < 0.7:
            tables = [rng.sample(BOTS, 2) for _ in range(rng.randint(1, 3))]
            ids = [f"g{n}-{i}" for i in range(len(tables))]
            live += ids
            events.append(LadderPaired(tables=tables, game_ids=ids, at=at))
        elif live:
            events.append(LadderGameEnded(game_id=live.pop(rng.randrange(len(live))), at=at))
    return [*events, LadderClosed(at="2026-12-05T00:00:00+00:00")]


@pytest.mark.parametrize("seed", range(5))
def test_folding_a_stream_in_steps_makes_the_ladder_folding_it_at_once_makes(seed: int) -> None:
    events = stream(seed)
    folding = LadderFold(events[0])  # type: ignore[arg-type]
    for version, event in enumerate(events[1:], start=2):
        before = folding.ladder(version - 1)
        folding.step(event)
        assert folding.ladder(version) == fold(events[:version], version)
        assert before == fold(events[: version - 1], version - 1), "a step changed a snapshot"


@pytest.mark.parametrize("seed", range(5))
def test_each_bots_games_are_its_places_in_the_history_oldest_first(seed: int) -> None:
    events = stream(seed)
    ladder = fold(events, len(events))
    for bot in BOTS:
        expected = tuple(game.number for game in ladder.history if bot in game.bots)
        assert ladder.games_of.get(bot, ()) == expected
