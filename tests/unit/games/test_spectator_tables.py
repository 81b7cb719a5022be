"""A spectator's table (`GameSpec.table`, `getGame`'s `table`): everything public of a running
game, and no card that some seat may not see, at every step of seeded random games."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from shared.app.loading import load
from shared.catalog import game_names, get_game
from shared.games.base import AnyGame
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client
from tests.support.leaks import cards_in

PRIVATE = {"shithead": {"seat", "hand", "zone"}, "autobus": {"seat", "hand"}}
"""The fields of a seat's view that are the seat's own: all the others are public."""
TABLED = [game for game in game_names() if get_game(game).table is not None]
"""The games with a spectator's table."""
TABLES = [
    (game, players)
    for game in TABLED
    for players in range(get_game(game).min_players, min(get_game(game).max_players, 4) + 1)
]
"""Each game with a table at each number of seats it deals to, up to four."""


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


def test_the_private_fields_are_known_for_every_game_with_a_table() -> None:
    assert sorted(PRIVATE) == TABLED


@pytest.mark.parametrize(("game", "players"), TABLES)
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


@pytest.mark.parametrize("game", game_names())
def test_a_game_has_a_table_unless_it_has_no_decisions_and_its_whole_view_is_public(
    game: str,
) -> None:
    spec = get_game(game)
    assert (spec.table is not None) is spec.has_decisions


@pytest.mark.parametrize("game", TABLED)
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
