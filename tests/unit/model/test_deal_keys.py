"""Deal keys: a host's seed keyed with the deployment's secret, a fresh key without one, and a
tournament's seed drawn when none is given and withheld while it runs."""

from __future__ import annotations

import hashlib
import hmac
import re

import msgspec
import pytest

from services.bootstrap.stores import build_store
from services.settings import Settings, load_settings
from shared.app import seeds
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.tournaments import (
    cancel_tournament,
    create_tournament,
    load_tournament,
    start_pending_games,
)
from shared.catalog import get_game
from shared.messages.codec import encode_all
from shared.messages.common import GameCreated, Seat
from shared.model import deal_keys
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import (
    KIND,
    Entrant,
    TournamentCancelled,
    TournamentDefinition,
    stream_id,
)
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client

SECRET = b"a deployment's deal secret, 32+ bytes"
HEX64 = re.compile(r"[0-9a-f]{64}")


def test_a_deal_key_is_the_documented_hmac_of_the_seed_text() -> None:
    message = b"cardarena:deal:v1:game:7"
    expected = hmac.new(SECRET, message, hashlib.sha256).hexdigest()
    assert deal_keys.derive(SECRET, "game", 7) == deal_keys.derive(SECRET, "game", "7") == expected
    assert HEX64.fullmatch(expected)


def test_a_deal_key_differs_by_secret_kind_and_seed() -> None:
    keys = {
        deal_keys.derive(SECRET, "game", "7"),
        deal_keys.derive(SECRET, "tournament", "7"),
        deal_keys.derive(SECRET, "game", "8"),
        deal_keys.derive(SECRET + b"!", "game", "7"),
    }
    assert len(keys) == 4


@pytest.mark.usefixtures("random_deal_secret")
def test_a_fresh_key_is_256_random_bits() -> None:
    drawn = {deal_keys.fresh() for _ in range(100)}
    assert len(drawn) == 100, f"drawn: {sorted(drawn)}"
    assert all(HEX64.fullmatch(key) for key in drawn), f"drawn: {sorted(drawn)}"


@pytest.mark.usefixtures("random_deal_secret")
def test_a_store_deals_with_its_attached_secret_else_one_drawn_for_it() -> None:
    store, other = InMemoryEventStore(), InMemoryEventStore()
    drawn = deal_secret.secret_of(store), deal_secret.secret_of(other)
    assert deal_secret.secret_of(store) == drawn[0] != drawn[1], f"drawn: {drawn}"
    deal_secret.attach(store, GivenDealSecret(SECRET.decode()))
    assert deal_secret.secret_of(store) == SECRET
    assert deal_secret.deal_key(store, "game", 7) == deal_keys.derive(SECRET, "game", 7)
    assert deal_secret.deal_key(store, "game", None) is None


@pytest.mark.usefixtures("random_deal_secret")
def test_the_wiring_deals_with_the_configured_secret() -> None:
    configured = Settings(deal_secret=SECRET.decode())
    assert deal_secret.secret_of(build_store(configured)) == SECRET
    drawn = [deal_secret.secret_of(build_store(Settings())) for _ in range(2)]
    assert drawn[0] != drawn[1], f"drawn: {drawn}"


def test_a_deal_secret_shorter_than_32_characters_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError, match="CARDARENA_DEAL_SECRET"):
        load_settings({"CARDARENA_DEAL_SECRET": "short"})
    assert load_settings({"CARDARENA_DEAL_SECRET": "x" * 32}).deal_secret == "x" * 32


def test_a_game_without_a_seed_is_dealt_from_a_fresh_key() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * 2
    created = [load(store, create_game(store, "shithead", seats=seats).game_id).created]
    created.append(load(store, create_game(store, "shithead", seats=seats).game_id).created)
    assert all(HEX64.fullmatch(c.deal_seed) for c in created)
    assert created[0].deal_seed != created[1].deal_seed


def test_a_hosts_seed_deals_from_its_key_the_same_cards_on_one_deployment() -> None:
    store = InMemoryEventStore()
    deal_secret.attach(store, GivenDealSecret(SECRET.decode()))
    body = {"game": "shithead", "seats": [{"kind": "external"}, {"kind": "external"}], "seed": 7}
    with app_client(store) as client:
        ids = [client.post("/v1/games", json=body).json()["game_id"] for _ in range(2)]
    first, again = (store.read(game_id) for game_id in ids)
    created = get_game("shithead").codec.decode(first[0])
    assert isinstance(created, GameCreated)
    assert created.deal_seed == deal_keys.derive(SECRET, "game", 7)
    assert first[1].data == again[1].data
    spec = get_game("shithead")
    unkeyed = spec.deal(spec.ruleset(None), 2, 7)
    assert msgspec.to_builtins(spec.codec.decode(first[1])) != msgspec.to_builtins(unkeyed)


TOURNAMENT = TournamentDefinition(
    game="autobus",
    entrants=[
        Entrant(bot="random", version="a"),
        Entrant(bot="random", version="b"),
        Entrant(bot="random", version="c"),
    ],
    table_size=2,
)


def test_a_tournament_without_a_seed_draws_one_and_its_games_deal_from_tournament_keys() -> None:
    store = InMemoryEventStore()
    create_tournament(store, TOURNAMENT, "t")
    state, _ = load_tournament(store, "t")
    assert HEX64.fullmatch(state.definition.seed)
    create_tournament(store, TOURNAMENT, "u")
    assert load_tournament(store, "u")[0].definition.seed != state.definition.seed
    given = msgspec.structs.replace(TOURNAMENT, seed="7")
    create_tournament(store, given, "v")
    assert load_tournament(store, "v")[0].definition.seed == "7"


def test_a_tournament_withholds_its_seed_while_it_or_a_game_of_it_runs() -> None:
    store = InMemoryEventStore()
    external = [Entrant(bot="random", version="a"), Entrant(bot="random", version="b")]
    definition = msgspec.structs.replace(TOURNAMENT, entrants=external, seed="7")
    create_tournament(store, definition, "t")
    state, _ = load_tournament(store, "t")
    assert seeds.shown(store, "t", state).seed == ""
    start_pending_games(store, "t", lambda _: None)  # created; its bots have not moved
    # A cancel cut short after its TournamentCancelled, before it aborted the games:
    _, version = load_tournament(store, "t")
    store.append(stream_id("t"), KIND, version, encode_all([TournamentCancelled()]))
    cut_short, _ = load_tournament(store, "t")
    assert seeds.runs(store, "t", cut_short)
    assert seeds.shown(store, "t", cut_short).seed == ""
    cancelled = cancel_tournament(store, "t")  # again: aborts the games still running
    for game in cancelled.rounds[-1].games:
        assert load(store, game_id_for(game.key)).aborted
    assert not seeds.runs(store, "t", cancelled)
    assert seeds.shown(store, "t", cancelled).seed == "7"


def test_a_schedule_shows_no_seed_and_a_tournament_shows_it_once_over() -> None:
    store = InMemoryEventStore()
    body = {**msgspec.to_builtins(TOURNAMENT), "seed": "7"}
    with app_client(store) as client:
        scheduled = client.post(
            "/v1/tournaments", json={**body, "schedule": {"at": "2999-01-01T00:00:00Z"}}
        )
        assert scheduled.status_code == 202, scheduled.text
        assert scheduled.json()["definition"]["seed"] == ""
        listed = client.get("/v1/schedules").json()["schedules"]
        assert [entry["definition"]["seed"] for entry in listed] == [""]
        over = client.post("/v1/tournaments", json=body).json()  # in-process: over at once
        assert (over["status"], over["definition"]["seed"]) == ("finished", "7")
