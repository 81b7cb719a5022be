"""Hospodský autobus names ranks by number (1 ace ... 13 king) everywhere, its actions' `joker_rank`
included; older logs' default actions that name it by character still replay."""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
import pytest

from shared.app.bot_turns import play_bot_turns
from shared.app.deadlines import enforce_deadline, watch_of
from shared.app.games import create_game
from shared.app.loading import load, parse_action
from shared.catalog import get_game, hosting
from shared.errors import IllegalAction, InvalidRequest
from shared.games.autobus.legal import default_action, legal_actions
from shared.games.autobus.messages import (
    AutobusAction,
    CardDiscarded,
    Discard,
    PlayToSequence,
    upgrade_action,
)
from shared.games.autobus.rules import RANKS
from shared.messages.common import Clock, DefaultActionPlayed, Event, Seat
from shared.model import exported_log, log_replay
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client
from tests.support.autobus import apply, refused, table

SALT = "0" * 64
FAR_FUTURE = 10**15
RULESET = {"slots": 8, "jokers": 8}
"""Many jokers and slots, so the forfeited seat discards a joker onto an empty slot."""


def test_a_joker_on_an_empty_slot_is_listed_once_per_rank_number_ace_first() -> None:
    state = table([["X1", "5D"], ["3S"]], slots={(0, 0): (["7S"], 7)})
    joker = [a for a in legal_actions(state, 0) if isinstance(a, Discard) and a.card == "X1"]
    assert [(a.slot, a.joker_rank) for a in joker if a.slot == 0] == [(0, None)]
    for slot in (1, 2, 3):
        assert [a.joker_rank for a in joker if a.slot == slot] == list(range(1, 14))
    for action in joker:
        assert action.joker_rank is None or apply(state, 0, action)[1][0] == CardDiscarded(
            seat=0, card="X1", slot=action.slot, rank=action.joker_rank
        )


@pytest.mark.parametrize("bad", [0, 14, -1, True, "Q"])
def test_the_rules_refuse_a_joker_rank_that_is_no_rank_number(bad: Any) -> None:
    state = table([["X1", "5D"], ["3S"]])
    assert refused(state, 0, Discard(card="X1", slot=1, joker_rank=bad)) == "joker_rank"
    play = PlayToSequence(source="hand", card="X1", sequence=None, joker_rank=bad)
    assert refused(state, 0, play) == "joker_rank"


def test_a_plain_card_takes_no_joker_rank_even_its_own() -> None:
    state = table([["5D", "AS"], ["3S"]])
    assert refused(state, 0, Discard(card="5D", slot=0, joker_rank=5)) == "joker_rank"
    opened = PlayToSequence(source="hand", card="AS", sequence=None, joker_rank=1)
    with pytest.raises(IllegalAction):
        apply(state, 0, opened)


@pytest.mark.parametrize("bad", ["Q", "12", 0, 14, 12.0, True])
def test_a_posted_joker_rank_that_is_no_rank_number_names_the_field(bad: Any) -> None:
    payload = {"type": "Discard", "card": "X1", "slot": 0, "joker_rank": bad}
    with pytest.raises(InvalidRequest) as refusal:
        parse_action(get_game("autobus"), payload)
    assert refusal.value.field == "action"
    assert "joker_rank is a rank number 1-13" in refusal.value.message
    assert "$.joker_rank" in refusal.value.message
    assert parse_action(get_game("autobus"), {**payload, "joker_rank": 12}) == Discard(
        card="X1", slot=0, joker_rank=12
    )


def test_the_document_bounds_joker_rank_as_a_rank_number() -> None:
    schema = msgspec.json.schema(AutobusAction)
    assert schema["$defs"]["Discard"]["properties"]["joker_rank"]["anyOf"][0] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 13,
        "title": "RankNumber",
    }


def test_posting_a_rank_character_is_a_422_naming_joker_rank_and_appends_nothing(
    client: Client,
) -> None:
    seats = [{"kind": "external"}, {"kind": "bot", "bot": "random"}]
    body = {"game": "autobus", "seats": seats, "seed": 3}
    game_id = client.post("/v1/games", json=body).json()["game_id"]
    view = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    card = view["view"]["hand"][0]
    action = {"type": "Discard", "card": card, "slot": 0, "joker_rank": "Q"}
    posted = {"seat": 0, "action": action, "expected_version": view["version"]}
    response = client.post(f"/v1/games/{game_id}/actions", json=posted)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == "action"
    assert "joker_rank is a rank number 1-13" in problem["detail"]
    again = client.get(f"/v1/games/{game_id}/view", params={"seat": 0}).json()
    assert again["version"] == view["version"]


def test_a_stored_character_rank_is_upgraded_to_its_number_and_nothing_else_is() -> None:
    for number, char in enumerate(RANKS, start=1):
        stored = {"type": "Discard", "card": "X1", "slot": 2, "joker_rank": char}
        assert upgrade_action(stored) == {**stored, "joker_rank": number}
    kept_as_they_are: list[dict[str, Any]] = [
        {"type": "Discard", "card": "X1", "slot": 2, "joker_rank": 12},
        {"type": "Discard", "card": "5D", "slot": 2, "joker_rank": None},
        {"type": "Discard", "card": "X1", "slot": 2, "joker_rank": "Z"},
        {"type": "Discard", "card": "X1", "slot": 2, "joker_rank": "QQ"},
        {"type": "UnderTheBus", "card": "5D"},
    ]
    for kept in kept_as_they_are:
        assert upgrade_action(kept) == kept


def _queen_joker_first(state: Any, seat: int) -> Any:
    """A default action that names a queen for a joker wherever it may (else the usual)."""
    for action in legal_actions(state, seat):
        if isinstance(action, Discard) and action.joker_rank == 12:
            return action
    return default_action(state, seat)


def _forfeited_game() -> list[Event]:
    """Returns the finished log of a game whose timed-out seat 0 forfeited, its default actions
    naming a queen for each joker discarded onto an empty slot (as `joker_rank: 12`)."""
    spec = dataclasses.replace(get_game("autobus"), default_action=_queen_joker_first)
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    clock = Clock(move_seconds=1)
    with hosting(spec):
        game_id = create_game(
            store, "autobus", ruleset=RULESET, seats=seats, seed=8, clock=clock, salt=SALT
        ).game_id
        for _ in range(2000):
            play_bot_turns(store, game_id)
            watch = watch_of(load(store, game_id))
            if watch is None:
                break
            enforce_deadline(store, game_id, watch.turn_version, FAR_FUTURE)
        events: list[Event] = spec.codec.decode_all(store.read(game_id))
    assert spec.is_over(load(store, game_id).state)
    return events


def _queens(events: list[Event]) -> list[int]:
    """Returns the indices of the default actions that discard a joker naming a queen."""
    return [
        i
        for i, e in enumerate(events)
        if isinstance(e, DefaultActionPlayed) and e.action.get("joker_rank") == 12
    ]


def _with_joker_rank(events: list[Event], index: int, named: object) -> list[Event]:
    """Returns `events` with the default action at `index` naming `named` for its joker."""
    played = events[index]
    assert isinstance(played, DefaultActionPlayed)
    copy = list(events)
    copy[index] = msgspec.structs.replace(played, action={**played.action, "joker_rank": named})
    return copy


@pytest.fixture(scope="module")
def forfeited() -> list[Event]:
    """The log of `_forfeited_game`, played once for the module."""
    return _forfeited_game()


def test_an_old_log_whose_default_action_names_the_joker_q_replays_clean(
    forfeited: list[Event],
) -> None:
    queens = _queens(forfeited)
    assert queens, "the forfeited seat never discarded a joker onto an empty slot"
    assert log_replay.replay("g", forfeited).ok
    old = forfeited
    for index in queens:
        old = _with_joker_rank(old, index, "Q")
    lines = exported_log.export_lines("g", old)
    assert b'"joker_rank":"Q"' in b"".join(lines)
    report = log_replay.replay_log(lines)
    assert report.ok, report.reason
    assert report.result == log_replay.replay("g", forfeited).result


@pytest.mark.parametrize(
    ("named", "offset", "why"),
    [
        ("J", 2, "rank: 12, not 11"),
        (11, 2, "rank: 12, not 11"),
        ("Z", 1, "not an action of autobus"),
        (99, 1, "not an action of autobus"),
    ],
)
def test_an_old_or_new_default_action_naming_another_rank_than_logged_is_named(
    forfeited: list[Event], named: object, offset: int, why: str
) -> None:
    index = _queens(forfeited)[0]
    report = log_replay.replay_log(
        exported_log.export_lines("g", _with_joker_rank(forfeited, index, named))
    )
    assert not report.ok
    assert report.version == index + offset
    assert why in report.reason


def test_an_old_log_with_the_joker_q_imports_and_exports_as_it_was(
    client: Client, forfeited: list[Event]
) -> None:
    old = forfeited
    for index in _queens(forfeited):
        old = _with_joker_rank(old, index, "Q")
    text = exported_log.export_bytes("old-autobus", old)
    imported = client.post("/v1/games/import", content=text)
    assert imported.status_code == 201, imported.text
    assert client.get("/v1/games/old-autobus/export").content == text
    assert client.get("/v1/games/old-autobus").json()["status"] != "playing"
    tampered = exported_log.export_bytes("old-j", _with_joker_rank(old, _queens(forfeited)[0], "J"))
    refused = client.post("/v1/games/import", content=tampered)
    assert refused.status_code == 422, refused.text
    assert client.get("/v1/games/old-j").status_code == 404
