"""A ruleset's clock: it times the games played under it, a request's clock overrides it, and
a ruleset without one is stored exactly as before."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from shared.app.deadlines import enforce_deadline, watch_of
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.tournaments import run_in_process
from shared.catalog import game_names, get_game
from shared.messages.common import Clock, GameCreated, Seat
from shared.model.clocks import WEBHOOK_CLOCK
from shared.model.tournaments.model import (
    Entrant,
    InvalidTournament,
    TournamentDefinition,
    validate,
)
from shared.store.memory import InMemoryEventStore
from shared.store.port import IdempotencyKeyReused
from tests.support.api import Client

GAMES = game_names()
TIMED_GAMES = [game for game in GAMES if "classic-timed" in get_game(game).presets]
"""The games with a `classic-timed` preset."""
TIMED = Clock(move_seconds=10, bank_seconds=60, strikes_to_forfeit=3)
"""The clock of every game's `classic-timed` preset."""
BOTS = [Seat(kind="bot"), Seat(kind="bot")]
EXTERNAL = Seat(kind="external")
FAR_FUTURE = 10**15
"""A time (ms) past every deadline."""


def created_of(store: InMemoryEventStore, game_id: str) -> GameCreated:
    """Returns the creation event of a stored game."""
    return load(store, game_id).created


# Encoding --------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_an_untimed_ruleset_encodes_exactly_as_before_with_no_clock_key(game: str) -> None:
    spec = get_game(game)
    classic = spec.presets["classic"]
    assert "clock" not in msgspec.to_builtins(classic)
    assert b"clock" not in msgspec.json.encode(spec.deal(classic, 2, 1))
    store = InMemoryEventStore()
    game_id = create_game(store, game, ruleset="classic", seats=BOTS, seed=1).game_id
    creation, start = store.read(game_id)[:2]
    assert b"clock" not in creation.data
    assert b"clock" not in start.data
    assert "clock" not in created_of(store, game_id).ruleset


@pytest.mark.parametrize("game", TIMED_GAMES)
def test_the_timed_preset_is_classic_with_a_clock(game: str) -> None:
    presets = get_game(game).presets
    assert presets["classic-timed"] == msgspec.structs.replace(presets["classic"], clock=TIMED)


# Creation --------------------------------------------------------------------------------


@pytest.mark.parametrize("game", TIMED_GAMES)
def test_a_game_under_a_timed_ruleset_records_the_rulesets_clock(game: str) -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, game, ruleset="classic-timed", seats=BOTS, seed=1).game_id
    created = created_of(store, game_id)
    assert created.clock == TIMED
    assert created.ruleset["clock"] == msgspec.to_builtins(TIMED)


def test_a_ruleset_given_as_fields_may_carry_a_clock() -> None:
    store = InMemoryEventStore()
    ruleset = {"hand": 5, "clock": {"move_seconds": 2.5}}
    game_id = create_game(store, "autobus", ruleset=ruleset, seats=BOTS, seed=1).game_id
    assert created_of(store, game_id).clock == Clock(move_seconds=2.5)


def test_the_requests_clock_overrides_the_rulesets() -> None:
    store = InMemoryEventStore()
    own = Clock(move_seconds=30, bank_seconds=5, strikes_to_forfeit=1)
    game_id = create_game(
        store, "shithead", ruleset="classic-timed", seats=BOTS, seed=1, clock=own
    ).game_id
    created = created_of(store, game_id)
    assert created.clock == own
    assert created.ruleset["clock"] == msgspec.to_builtins(TIMED)


def test_a_rulesets_clock_times_a_webhook_seat_instead_of_the_default() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="webhook", name="hook", version="1"), Seat(kind="bot")]
    untimed = create_game(store, "autobus", seats=seats, seed=1).game_id
    timed = create_game(store, "autobus", ruleset="classic-timed", seats=seats, seed=1).game_id
    assert created_of(store, untimed).clock == WEBHOOK_CLOCK
    assert created_of(store, timed).clock == TIMED


def test_the_timed_preset_times_out_a_client_seat_that_never_moves() -> None:
    store = InMemoryEventStore()
    seats = [EXTERNAL, EXTERNAL]
    game_id = create_game(store, "shithead", ruleset="classic-timed", seats=seats, seed=3).game_id
    loaded = load(store, game_id)
    watch = watch_of(loaded)
    assert watch is not None
    assert watch.deadline_ms is not None
    assert enforce_deadline(store, game_id, watch.turn_version, watch.deadline_ms - 1).status == (
        "early"
    )
    assert enforce_deadline(store, game_id, watch.turn_version, FAR_FUTURE).status == "timed_out"
    assert load(store, game_id).version > loaded.version


def test_a_retried_creation_under_a_timed_ruleset_is_a_replay_and_another_clock_is_not() -> None:
    store = InMemoryEventStore()
    first = create_game(
        store, "autobus", ruleset="classic-timed", seats=BOTS, seed=1, idempotency_key="k"
    )
    again = create_game(
        store, "autobus", ruleset="classic-timed", seats=BOTS, seed=1, idempotency_key="k"
    )
    assert (again.game_id, again.replayed) == (first.game_id, True)
    with pytest.raises(IdempotencyKeyReused):
        create_game(
            store,
            "autobus",
            ruleset={"clock": {"move_seconds": 1}},
            seats=BOTS,
            seed=1,
            idempotency_key="k",
        )


# Tournaments -----------------------------------------------------------------------------


def _tournament(**changes: Any) -> TournamentDefinition:
    """Returns a one-game autobus tournament of two built-in bots, with `changes`."""
    return TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random"), Entrant(bot="heuristic")],
        table_size=2,
        **changes,
    )


@pytest.mark.parametrize(
    ("changes", "clock"),
    [
        ({"ruleset": "classic-timed"}, TIMED),
        ({"ruleset": "classic-timed", "clock": Clock(move_seconds=1)}, Clock(move_seconds=1)),
    ],
)
def test_a_tournaments_ruleset_clock_reaches_its_games_unless_its_own_clock_overrides_it(
    changes: dict[str, Any], clock: Clock
) -> None:
    store = InMemoryEventStore()
    (record,) = run_in_process(store, _tournament(**changes)).records
    assert created_of(store, record.game_id).clock == clock


def test_a_tournament_with_an_invalid_ruleset_clock_is_refused() -> None:
    with pytest.raises(InvalidTournament) as caught:
        validate(_tournament(ruleset={"clock": {"move_seconds": 0}}))
    assert caught.value.field.startswith("ruleset")
    assert "clock.move_seconds" in caught.value.message


# The API ---------------------------------------------------------------------------------


def test_the_api_shows_the_clock_of_a_game_under_a_timed_ruleset(client: Client) -> None:
    response = client.post(
        "/v1/games", json={"game": "autobus", "ruleset": "classic-timed", "players": 2, "seed": 1}
    )
    assert response.status_code == 201, response.text
    game = response.json()
    assert game["clock"] == msgspec.to_builtins(TIMED)
    assert game["ruleset"]["clock"] == msgspec.to_builtins(TIMED)
    assert client.get(f"/v1/games/{game['game_id']}").json()["clock"] == game["clock"]


def test_the_api_lets_the_requests_clock_override_the_rulesets(client: Client) -> None:
    own = {"move_seconds": 30.0, "bank_seconds": 0.0, "strikes_to_forfeit": 2}
    body = {"game": "beggar", "ruleset": "classic-timed", "players": 2, "seed": 1, "clock": own}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.text
    assert response.json()["clock"] == own


def test_the_api_shows_no_clock_for_an_untimed_ruleset(client: Client) -> None:
    response = client.post("/v1/games", json={"game": "beggar", "players": 2, "seed": 1})
    assert response.status_code == 201, response.text
    assert "clock" not in response.json()
    assert "clock" not in response.json()["ruleset"]


@pytest.mark.parametrize(
    ("clock", "path"),
    [
        ({"move_seconds": 0}, "clock.move_seconds"),
        ({"move_seconds": 5, "bank_seconds": -1}, "clock.bank_seconds"),
        ({"move_seconds": 5, "strikes_to_forfeit": 0}, "clock.strikes_to_forfeit"),
        ({"move_seconds": 5, "moves": 3}, "`moves` - at `$.clock`"),
        ({}, "clock"),
        (None, "clock"),
    ],
)
def test_an_invalid_ruleset_clock_is_422_naming_the_ruleset_and_creates_nothing(
    client: Client, store: InMemoryEventStore, clock: Any, path: str
) -> None:
    body = {"game": "autobus", "ruleset": {"clock": clock}, "players": 2, "seed": 1}
    response = client.post("/v1/games", json=body)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == "ruleset"
    assert problem["type"].endswith("invalid-request")
    assert path in problem["detail"]
    assert store.read_feed(count=100) == []
