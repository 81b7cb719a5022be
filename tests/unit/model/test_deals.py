"""Verifiable deals: the commitment at creation, the reveal at the finish, and their check."""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.games import act, create_game
from shared.app.loading import as_seen_by, load
from shared.catalog import game_names, get_game
from shared.messages.common import Event, GameCreated, GameFinished, Seat
from shared.model import deal_keys, deals
from shared.ports import deal_secret
from shared.store.memory import InMemoryEventStore
from tests.support.api import app_client
from tests.support.dealt_logs import SALT, replaced, timed_out_game
from tests.support.payloads import FROZEN_V1, recorded


def finished_game(
    game: str = "shithead", seed: int | str = 7, bots: int = 3, salt: str | None = SALT
) -> tuple[str, list[Event]]:
    """Returns the id and decoded log of a game played to its end by built-in bots."""
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * bots if game != "beggar" else None
    players = None if seats else bots
    game_id = create_game(store, game, seats=seats, players=players, seed=seed, salt=salt).game_id
    play_bot_turns(store, game_id)
    return game_id, get_game(game).codec.decode_all(store.read(game_id))


def test_the_commitment_is_the_sha256_of_the_seed_text_a_colon_and_the_salt() -> None:
    expected = hashlib.sha256(b"7:" + b"0" * 64).hexdigest()
    assert deals.commitment(7, SALT) == deals.commitment("7", SALT) == expected
    assert expected == "a5a47a13b8aba1c7638b5d730c8c9d009e26cbae511b375d9066694901105b55"
    assert deals.commitment("7:1", SALT) == hashlib.sha256(b"7:1:" + b"0" * 64).hexdigest()


@pytest.mark.parametrize("game", game_names())
def test_every_game_deals_the_same_cards_from_a_seed_and_from_its_text(game: str) -> None:
    spec = get_game(game)
    rules = spec.ruleset(None)
    for seed in (0, 7, 2**62 + 3):
        assert spec.deal(rules, 2, seed) == spec.deal(rules, 2, deals.seed_text(seed))


@pytest.mark.parametrize("game", game_names())
def test_a_game_commits_to_its_seed_and_its_finish_reveals_it(game: str) -> None:
    _, events = finished_game(game, seed="deal:3", bots=2, salt=None)
    created, finished = events[0], events[-1]
    assert isinstance(created, GameCreated)
    assert isinstance(finished, GameFinished)
    assert len(created.salt) == 64
    assert created.commitment == deals.commitment("deal:3", created.salt)
    assert (finished.seed, finished.salt) == ("deal:3", created.salt)
    checked = deals.verify(events)
    assert checked.status == "ok", checked
    assert (checked.seed, checked.salt, checked.commitment) == (
        "deal:3",
        created.salt,
        created.commitment,
    )


def test_two_games_from_one_seed_publish_different_commitments() -> None:
    first = finished_game(salt=None)[1][0]
    second = finished_game(salt=None)[1][0]
    assert isinstance(first, GameCreated)
    assert isinstance(second, GameCreated)
    assert first.deal_seed == second.deal_seed
    assert first.commitment != second.commitment


def test_verify_names_the_finish_when_the_revealed_seed_is_changed() -> None:
    _, events = finished_game()
    last = len(events) - 1
    checked = deals.verify(replaced(events, last, seed="8"))
    assert (checked.status, checked.version) == ("failed", len(events))
    assert "do not hash to the commitment" in checked.detail
    salted = deals.verify(replaced(events, last, salt="1" * 64))
    assert (salted.status, salted.version) == ("failed", len(events))


def test_verify_names_the_deal_when_a_dealt_card_is_changed() -> None:
    _, events = finished_game()
    started = events[1]
    hands = [list(hand) for hand in started.hands]  # type: ignore[attr-defined]
    hands[1][0] = "AS" if hands[1][0] != "AS" else "KS"
    checked = deals.verify(replaced(events, 1, hands=hands))
    assert (checked.status, checked.version) == ("failed", 2)
    assert "hands[1][0]" in checked.detail


def test_verify_names_the_creation_when_the_commitment_or_its_secret_is_changed() -> None:
    _, events = finished_game()
    changed = deals.verify(replaced(events, 0, commitment="f" * 64))
    assert (changed.status, changed.version) == ("failed", len(events))
    secret = deals.verify(replaced(events, 0, deal_seed="8"))
    assert (secret.status, secret.version) == ("failed", 1)


def test_a_game_from_before_commitments_has_none_to_verify() -> None:
    codec = get_game("beggar").codec
    events = [
        codec.decode(recorded(type_, bytes.fromhex(data), version))
        for version, (type_, data) in enumerate(FROZEN_V1.items(), start=1)
    ]
    checked = deals.verify(events)
    assert (checked.status, checked.version) == ("no_commitment", None)


def test_a_running_game_is_unrevealed_and_its_check_tells_no_secret() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "shithead", seats=seats, seed=5, salt=SALT).game_id
    loaded = load(store, game_id)
    events = loaded.spec.codec.decode_all(store.read(game_id))
    checked = deals.verify(events)
    assert checked.status == "unrevealed"
    assert (checked.seed, checked.salt) == ("", "")
    assert checked.commitment == loaded.created.commitment


def test_a_running_games_creation_withholds_the_seed_and_salt_and_shows_the_commitment() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=5).game_id
    loaded = load(store, game_id)
    for seat in (0, 1, None):
        seen = as_seen_by(loaded, loaded.created, seat)
        assert isinstance(seen, GameCreated)
        assert (seen.deal_seed, seen.salt, seen.bot_seed) == ("", "", "")
        assert seen.commitment == loaded.created.commitment != ""


def test_the_api_shows_a_running_game_commitment_but_not_its_seed_until_it_is_over() -> None:
    store = InMemoryEventStore()
    with app_client(store) as client:
        body = {"game": "shithead", "seats": [{"kind": "external"}, {}], "seed": 12}
        game_id = client.post("/v1/games", json=body).json()["game_id"]
        for query in ("", "?seat=0", "?seat=1"):
            created = client.get(f"/v1/games/{game_id}/events{query}").json()["events"][0]
            assert created["data"]["commitment"]
            assert created["data"]["deal_seed"] == created["data"]["salt"] == ""
        running = client.get(f"/v1/games/{game_id}/verification").json()
        assert running["status"] == "unrevealed"
        assert "seed" not in running
        assert "salt" not in running
        while not load(store, game_id).spec.is_over(load(store, game_id).state):
            loaded = load(store, game_id)
            legal = loaded.spec.legal_actions(loaded.state, 0)
            view = loaded.spec.view(loaded.state, 0)
            chosen = loaded.spec.bots["heuristic"].choose(view, legal, str(loaded.version))
            action = msgspec.to_builtins(chosen)
            act(store, game_id, seat=0, action=action, expected_version=loaded.version)
            play_bot_turns(store, game_id)
        created = client.get(f"/v1/games/{game_id}/events").json()["events"][0]["data"]
        key = deal_keys.derive(deal_secret.secret_of(store), "game", 12)
        assert created["deal_seed"] == key
        over = client.get(f"/v1/games/{game_id}/verification").json()
    assert (over["status"], over["seed"], over["salt"]) == ("ok", key, created["salt"])


def test_a_finish_by_the_clock_reveals_the_seed_too() -> None:
    store = InMemoryEventStore()
    game_id = timed_out_game(store)
    events = get_game("shithead").codec.decode_all(store.read(game_id))
    finished = events[-1]
    assert isinstance(finished, GameFinished)
    assert finished.seed == "11"
    assert deals.verify(events).status == "ok"
