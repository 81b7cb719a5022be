"""The golden playthroughs under tests/golden: seeded games with fixed bots, as JSON lines."""

from __future__ import annotations

from pathlib import Path

import msgspec

from shared.catalog import get_game
from shared.messages.common import (
    Event,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
PLAYTHROUGHS = {
    "shithead-classic-2p-random": ("shithead", "classic", ["random", "random"], 1),
    "shithead-holland-kocsma-4p-random": ("shithead", "holland-kocsma", ["random"] * 4, 2),
    "shithead-classic-4p-heuristic": ("shithead", "classic", ["heuristic", "random"] * 2, 7),
    "shithead-swedish-3p-heuristic": ("shithead", "swedish", ["heuristic", "random", "random"], 43),
    "beggar-classic-3p-turner": ("beggar", "classic", ["turner"] * 3, 3),
    "autobus-classic-2p-random": ("autobus", "classic", ["random"] * 2, 4),
    "autobus-classic-3p-random": ("autobus", "classic", ["random"] * 3, 5),
    "autobus-classic-2p-heuristic": ("autobus", "classic", ["heuristic", "random"], 6),
}


def golden(name: str) -> list[Event]:
    """Returns the decoded events of a golden playthrough."""
    spec = get_game(PLAYTHROUGHS[name][0])
    lines = (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    return [msgspec.convert(msgspec.json.decode(line)["data"], spec.log_type) for line in lines]
