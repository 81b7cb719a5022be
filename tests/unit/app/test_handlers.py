"""The use cases over the in-memory store: create, load, act, play bot turns."""

from __future__ import annotations

import threading

import pytest

from shared.app.bot_turns import next_bot_seat, play_bot_turns
from shared.app.games import act, create_game
from shared.app.loading import as_seen_by, load
from shared.app.runtime import InProcessDispatcher
from shared.catalog import get_game
from shared.errors import IllegalAction, InvalidRequest, UnknownGame
from shared.games.shithead.messages import GameStarted
from shared.messages.common import GameCreated, GameFinished, Seat
from shared.store.memory import InMemoryEventStore
from shared.store.port import IdempotencyKeyReused


def test_creating_a_game_appends_its_creation_and_its_deal() -> None:
    store = InMemoryEventStore()
    outcome = create_game(store, "beggar", players=3, seed=5)
    events = store.read(outcome.game_id)
    assert [e.type for e in events] == ["GameCreated", "GameStarted"]
    loaded = load(store, outcome.game_id)
    assert loaded.version == 2
    assert [seat.bot for seat in loaded.created.seats] == ["turner"] * 3
    assert next_bot_seat(loaded) == 0


def test_bot_turns_play_a_beggar_game_to_its_end_and_a_second_run_appends_nothing() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=4, seed=1).game_id
    moves = play_bot_turns(store, game_id, batch=8)
    loaded = load(store, game_id)
    assert moves > 0
    assert loaded.spec.is_over(loaded.state)
    assert play_bot_turns(store, game_id) == 0
    assert store.version(game_id) == loaded.version


def test_bot_turns_play_the_same_game_as_the_engine_alone() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=2, seed=77).game_id
    play_bot_turns(store, game_id)
    spec = get_game("beggar")
    state = spec.evolve(None, spec.deal(spec.ruleset(None), 2, 77))
    while not spec.is_over(state):
        (seat,) = spec.to_move(state)
        for event in spec.decide(state, seat, spec.legal_actions(state, seat)[0]):
            state = spec.evolve(state, event)
    assert load(store, game_id).state == state


def test_racing_bot_runners_write_every_version_once() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=3, seed=12).game_id
    counts: list[int] = []
    runners = [
        threading.Thread(target=lambda: counts.append(play_bot_turns(store, game_id, batch=2)))
        for _ in range(6)
    ]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join()
    events = store.read(game_id)
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    decoded = get_game("beggar").codec.decode_all(events)
    assert sum(isinstance(e, GameFinished) for e in decoded) == 1
    assert sum(counts) == sum(e.type == "TrickPlayed" for e in events)


def test_the_in_process_dispatcher_finishes_an_all_bot_game() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=2, seed=3).game_id
    InProcessDispatcher(store).dispatch(game_id)
    loaded = load(store, game_id)
    assert loaded.spec.is_over(loaded.state)


def test_a_creation_retried_with_its_key_returns_the_same_game_and_appends_nothing() -> None:
    store = InMemoryEventStore()
    first = create_game(store, "beggar", players=2, seed=4, idempotency_key="k1")
    again = create_game(store, "beggar", players=2, seed=4, idempotency_key="k1")
    assert again.game_id == first.game_id
    assert again.replayed
    assert store.version(first.game_id) == 2


def test_a_creation_key_reused_for_another_game_is_refused() -> None:
    store = InMemoryEventStore()
    create_game(store, "beggar", players=2, seed=4, idempotency_key="k1")
    with pytest.raises(IdempotencyKeyReused):
        create_game(store, "beggar", players=3, seed=4, idempotency_key="k1")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"game": "chess", "players": 2}, "game"),
        ({"game": "beggar", "players": 5}, "players"),
        ({"game": "beggar"}, "seats"),
        ({"game": "beggar", "ruleset": "fancy", "players": 2}, "ruleset"),
        ({"game": "beggar", "ruleset": {"decks": 0}, "players": 2}, "ruleset.decks"),
        ({"game": "beggar", "ruleset": {"colour": 1}, "players": 2}, "ruleset"),
        ({"game": "beggar", "seats": [Seat(kind="external"), Seat()]}, "seats[0].kind"),
        ({"game": "beggar", "seats": [Seat(bot="genius"), Seat()]}, "seats[0].bot"),
        ({"game": "beggar", "seats": [Seat(), Seat()], "players": 3}, "players"),
    ],
)
def test_a_bad_creation_names_the_field_and_writes_nothing(
    kwargs: dict[str, object], field: str
) -> None:
    store = InMemoryEventStore()
    with pytest.raises(InvalidRequest) as caught:
        create_game(store, **kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert store.read_feed() == []


def test_an_action_for_beggar_is_refused_because_it_has_no_decisions() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=2, seed=3).game_id
    with pytest.raises(IllegalAction) as caught:
        act(store, game_id, seat=0, action={"type": "PlayTrick"}, expected_version=2)
    assert caught.value.rule == "no_decisions"
    assert store.version(game_id) == 2


def test_loading_an_unknown_game_raises() -> None:
    with pytest.raises(UnknownGame):
        load(InMemoryEventStore(), "nope")


def test_a_creation_retried_without_a_seed_returns_the_same_game() -> None:
    store = InMemoryEventStore()
    first = create_game(store, "beggar", players=2, idempotency_key="unseeded")
    again = create_game(store, "beggar", players=2, idempotency_key="unseeded")
    assert (again.game_id, again.replayed) == (first.game_id, True)


def test_a_huge_number_of_players_is_refused_before_any_seat_is_built() -> None:
    with pytest.raises(InvalidRequest) as caught:
        create_game(InMemoryEventStore(), "beggar", players=10**9)
    assert caught.value.field == "players"


def test_a_running_game_withholds_the_bot_seed_and_hidden_cards_until_it_is_over() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "shithead", seats=seats, seed=6).game_id
    loaded = load(store, game_id)
    created, started = loaded.spec.codec.decode_all(store.read(game_id, limit=2))
    assert isinstance(created, GameCreated)
    assert created.bot_seed
    seen = as_seen_by(loaded, created, 0)
    assert isinstance(seen, GameCreated)
    assert seen.bot_seed == ""
    hidden = as_seen_by(loaded, started, 0)
    assert isinstance(hidden, GameStarted)
    assert set(hidden.deck) == {"??"}
    over = InMemoryEventStore()
    finished_id = create_game(over, "beggar", players=2, seed=1).game_id
    play_bot_turns(over, finished_id)
    done = load(over, finished_id)
    first = done.spec.codec.decode(over.read(finished_id, limit=1)[0])
    assert as_seen_by(done, first, None) == first
