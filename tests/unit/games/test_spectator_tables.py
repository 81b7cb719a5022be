"""A spectator's table (`GameSpec.table`, `getGame`'s `table`): everything public of a running
game, and no card that some seat may not see, at every step of seeded random games."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from shared.app.loading import load
from shared.catalog import get_game
from shared.games.base import AnyGame
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client
from tests.support.leaks import cards_in

PRIVATE = {"shithead": {"seat", "hand", "zone"}, "autobus": {"seat", "hand"}}
"""The fields of a seat's view that are the seat's own: all the others are public."""


def states(spec: AnyGame, players: int, seed: int) -> Iterator[Any]:
    """Yields every state of a game of random moves from the deal of `seed`."""
    rules = spec.ruleset("classic")
    choose = random.Random(seed)
    state = spec.fold([spec.deal(rules, players, seed)])
    yield state
    while not spec.is_over(state):
        seat = choose.choice(spec.to_move(state))
        state, _ = spec.apply(state, seat, choose.choice(spec.legal_actions(state, seat)))
        yield state


@pytest.mark.parametrize("game", ["shithead", "autobus"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_table_shows_all_a_seat_sees_but_its_own_hand_and_no_card_any_seat_cannot_see(
    game: str, players: int
) -> None:
    spec = get_game(game)
    assert spec.table is not None
    for seed in range(6):
        for state in states(spec, players, seed):
            table = msgspec.to_builtins(spec.table(state))
            shown = cards_in(table)
            for seat in range(players):
                view = msgspec.to_builtins(spec.view(state, seat))
                seen = cards_in(view)
                assert not shown - seen, f"seed {seed}: seat {seat} cannot see {shown - seen}"
                public = {k: v for k, v in view.items() if k not in PRIVATE[game]}
                assert table == public


def test_a_game_without_decisions_has_no_table_its_whole_view_is_public() -> None:
    assert get_game("beggar").table is None


@pytest.mark.parametrize("game", ["shithead", "autobus"])
def test_get_game_answers_anyone_the_spectators_table_of_a_running_game(game: str) -> None:
    store = InMemoryEventStore()
    seats = [{"kind": "external"}, {"kind": "external"}]
    with app_client(store) as client:
        created = client.post("/v1/games", json={"game": game, "seats": seats, "seed": 3})
        game_id = created.json()["game_id"]
        answer = client.get(f"/v1/games/{game_id}").json()

    loaded = load(store, game_id)
    assert loaded.spec.table is not None
    assert answer["status"] == "playing"
    assert answer["table"] == msgspec.to_builtins(loaded.spec.table(loaded.state))
    assert "view" not in answer  # the property test above: no card a seat cannot see
