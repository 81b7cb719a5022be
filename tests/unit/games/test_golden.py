"""Golden playthroughs: seeded games with fixed bots, stored as JSON lines under tests/golden.

A change of rules or bots that changes one of these files must be deliberate: regenerate
with `CARDARENA_UPDATE_GOLDEN=1 uv run pytest tests/unit/games/test_golden.py` and review the diff.
"""

from __future__ import annotations

import os

import msgspec
import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.loading import load
from shared.catalog import game_names, get_game
from shared.messages.common import Seat
from shared.store.memory import InMemoryEventStore
from tests.support.golden import GOLDEN, PLAYTHROUGHS

SALT = "0" * 64
"""The deal commitment's salt of every golden game (a game's is random), so files are stable."""


def playthrough(game: str, preset: str, bots: list[str], seed: int) -> str:
    """Plays the game on the in-memory platform and returns its log as JSON lines."""
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot=bot) for bot in bots]
    game_id = create_game(store, game, ruleset=preset, seats=seats, seed=seed, salt=SALT).game_id
    play_bot_turns(store, game_id)
    spec = get_game(game)
    lines = [
        msgspec.json.encode(
            {"version": item.version, "type": item.type, "data": spec.codec.decode(item)}
        ).decode()
        for item in store.read(game_id)
    ]
    loaded = load(store, game_id)
    assert spec.is_over(loaded.state)
    return "\n".join(lines) + "\n"


def test_every_game_has_a_golden_playthrough() -> None:
    assert sorted({game for game, *_ in PLAYTHROUGHS.values()}) == game_names()


@pytest.mark.parametrize("name", sorted(PLAYTHROUGHS))
def test_a_seeded_playthrough_matches_its_golden_file(name: str) -> None:
    path = GOLDEN / f"{name}.jsonl"
    produced = playthrough(*PLAYTHROUGHS[name])
    if os.environ.get("CARDARENA_UPDATE_GOLDEN") == "1":
        path.write_text(produced)
    assert path.exists(), f"no golden file {path.name}: regenerate with CARDARENA_UPDATE_GOLDEN=1"
    assert produced == path.read_text()


@pytest.mark.parametrize("name", sorted(PLAYTHROUGHS))
def test_a_golden_file_folds_to_a_finished_game(name: str) -> None:
    game = PLAYTHROUGHS[name][0]
    spec = get_game(game)
    lines = (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    events = [msgspec.convert(msgspec.json.decode(line)["data"], spec.log_type) for line in lines]
    assert spec.is_over(spec.fold(events))
