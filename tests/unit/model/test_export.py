"""Exported logs: byte-stable export and import, and the offline replay that checks them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import msgspec
import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.bot_turns import play_bot_turns
from shared.app.forks import fork_game
from shared.app.games import act, create_game
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names, get_game, hosting
from shared.errors import InvalidRequest
from shared.games.cards import rank_of
from shared.games.shithead.messages import PlayCards
from shared.games.shithead.state import zone_of
from shared.messages.common import (
    ClockEvent,
    DefaultActionPlayed,
    Event,
    GameFinished,
    Seat,
    SeatForfeited,
    TurnTimedOut,
    WebhookFailed,
)
from shared.model import exported_log as export
from shared.model import log_replay, replay_account
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client, app_client
from tests.support.dealt_logs import replaced, timed_out_game
from tests.support.golden import PLAYTHROUGHS, golden

GOLDEN_NAMES = sorted(PLAYTHROUGHS)
KEY = "export-admin-key-0123"


def shithead() -> list[Event]:
    """Returns the log of a golden four-player Shithead game."""
    return golden("shithead-classic-4p-heuristic")


def first(events: list[Event], wanted: Callable[[Event], bool], after: int = 2) -> int:
    """Returns the index of the first event from `after` on that is `wanted`."""
    return next(i for i in range(after, len(events)) if wanted(events[i]))


def is_draw(event: Event) -> bool:
    """Returns whether `event` is a Shithead draw of at least one card."""
    return type(event).__name__ == "CardsDrawn" and bool(getattr(event, "cards", None))


def bad_version(lines: list[bytes]) -> int | None:
    """Returns the first bad version the replay of `lines` names (asserting it is bad)."""
    report = log_replay.replay_log(lines)
    assert not report.ok, report
    return report.version


@pytest.fixture
def app() -> Iterator[Client]:
    """Returns a client of a service over an empty in-memory store."""
    store = InMemoryEventStore()
    with app_client(store) as client:
        yield client


def finished_via_api(client: Client, game: str = "autobus") -> str:
    """Returns the id of a game of built-in bots, created (and so played) through the API."""
    created = client.post("/v1/games", json={"game": game, "players": 2, "seed": 21})
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


# The format ------------------------------------------------------------------------------


def test_an_export_is_a_header_then_one_json_line_per_event() -> None:
    events = golden("beggar-classic-3p-turner")
    lines = export.export_lines("g-1", events)
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    header = msgspec.json.decode(lines[0])
    assert header == {
        "format": "cardarena-game",
        "schema": 1,
        "game_id": "g-1",
        "game": "beggar",
        "ruleset": {"decks": 1, "max_cards": 100000},
        "players": 3,
        "events": len(events),
        "commitment": "c1dde1b87e94efcbff2e04f1de1ab0b0e7ecdf88e4c251d11c077a0b208c3cda",
        "result": msgspec.to_builtins(events[-1]).get("result"),
    }
    second = msgspec.json.decode(lines[2])
    assert (second["version"], second["type"], second["schema"]) == (2, "GameStarted", 1)
    assert second["data"] == msgspec.to_builtins(events[1])


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_reading_an_export_and_exporting_it_again_gives_the_same_bytes(name: str) -> None:
    text = export.export_bytes("g-1", golden(name))
    log = export.read_log(text.splitlines())
    assert export.export_bytes(log.header.game_id, log.events) == text


# Replays of whole games ------------------------------------------------------------------


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_every_golden_game_replays_clean_and_its_deal_verifies(name: str) -> None:
    events = golden(name)
    report = log_replay.replay_log(export.export_bytes(name, events).splitlines())
    assert report.ok, report.reason
    finished = events[-1]
    assert isinstance(finished, GameFinished)
    assert report.result == finished.result
    assert report.verification is not None
    assert report.verification.status == "ok"
    assert report.turns[0].startswith("v1 GameCreated")
    lines = replay_account.account(report)
    assert lines[-2].startswith("result: ")
    assert lines[-1].startswith("deal: ok")


@pytest.fixture
def without_action_of() -> Iterator[None]:
    """Hosts every game as one whose engine cannot say which action an event records (a
    hosted game stands in for the built-in one of its name), so that its replay tries each
    legal action."""
    with hosting(*(replace(get_game(name), action_of=None) for name in game_names())):
        yield


@pytest.mark.usefixtures("without_action_of")
@pytest.mark.parametrize(
    "name", [min(n for n in GOLDEN_NAMES if PLAYTHROUGHS[n][0] == game) for game in game_names()]
)
def test_a_game_without_action_recovery_replays_by_trying_every_legal_action(name: str) -> None:
    events = golden(name)
    assert log_replay.replay(name, events).ok
    assert log_replay.replay(name, [*events[:6], *events[7:]]).version == 7


def test_a_timed_game_with_webhook_failures_timeouts_and_a_forfeit_replays_clean() -> None:
    store = InMemoryEventStore()
    game_id = timed_out_game(store)
    events = get_game("shithead").codec.decode_all(store.read(game_id))
    kinds = {type(e) for e in events if isinstance(e, ClockEvent)}
    assert kinds == {WebhookFailed, TurnTimedOut, SeatForfeited, DefaultActionPlayed}
    report = log_replay.replay(game_id, events)
    assert report.ok, report.reason
    assert report.result is not None
    assert report.result.places[0] == 3
    assert any("SeatForfeited" in turn or "TurnTimedOut" in turn for turn in report.turns)


def test_a_timeout_the_clock_did_not_give_is_refused() -> None:
    store = InMemoryEventStore()
    events = get_game("shithead").codec.decode_all(store.read(timed_out_game(store)))
    strike = first(events, lambda e: isinstance(e, TurnTimedOut))
    doubled = replaced(events, strike, strikes=2)
    assert log_replay.replay("g", doubled).version == strike + 1
    forfeit = first(events, lambda e: isinstance(e, SeatForfeited))
    early = [*events[:forfeit], *events[forfeit + 1 :]]
    assert log_replay.replay("g", early).version == forfeit + 1


def test_an_untimed_games_log_may_hold_no_clock_events() -> None:
    events = golden("autobus-classic-2p-random")
    action_of = get_game("autobus").action_of
    assert action_of is not None
    turn = first(events, lambda e: action_of(e) is not None, 5)
    injected = [*events[:turn], TurnTimedOut(seat=0, strikes=1), *events[turn:]]
    report = log_replay.replay("g", injected)
    assert (report.ok, report.version) == (False, turn + 1)
    assert "untimed" in report.reason


# Tampered logs ---------------------------------------------------------------------------


def test_a_changed_drawn_card_is_named_by_its_version() -> None:
    events = shithead()
    drawn = first(events, is_draw)
    cards = list(events[drawn].cards)  # type: ignore[attr-defined]
    cards[0] = "2C" if cards[0] != "2C" else "3C"
    lines = export.export_bytes("g", replaced(events, drawn, cards=cards)).splitlines()
    assert bad_version(lines) == drawn + 1
    assert "cards[0]" in log_replay.replay_log(lines).reason


def test_a_played_card_the_seat_does_not_hold_is_named_by_its_version() -> None:
    events = shithead()
    played = first(events, lambda e: type(e).__name__ == "CardsPlayed")
    held = set(events[1].hands[events[played].seat])  # type: ignore[attr-defined]
    other = next(card for card in ("AS", "AH", "AD", "AC", "KS") if card not in held)
    lines = export.export_bytes("g", replaced(events, played, cards=[other])).splitlines()
    assert bad_version(lines) == played + 1


def test_a_changed_dealt_card_is_named_as_the_deal() -> None:
    events = shithead()
    deck = list(events[1].deck)  # type: ignore[attr-defined]
    deck[0], deck[1] = deck[1], deck[0]
    report = log_replay.replay_log(
        export.export_bytes("g", replaced(events, 1, deck=deck)).splitlines()
    )
    assert (report.ok, report.version) == (False, 2)


def test_a_changed_result_is_named_by_the_finish() -> None:
    events = shithead()
    finished = events[-1]
    assert isinstance(finished, GameFinished)
    result = msgspec.structs.replace(finished.result, places=finished.result.places[::-1])
    lines = export.export_bytes("g", replaced(events, len(events) - 1, result=result)).splitlines()
    assert bad_version(lines) == len(events)


@pytest.mark.parametrize("index", [40, 41, 100, 250])
def test_a_dropped_event_is_named_whether_or_not_the_versions_are_renumbered(index: int) -> None:
    events = shithead()
    lines = export.export_bytes("g", events).splitlines()
    assert bad_version([*lines[: index + 1], *lines[index + 2 :]]) == index + 1
    renumbered = export.export_bytes("g", [*events[:index], *events[index + 1 :]])
    assert bad_version(renumbered.splitlines()) == index + 1


@pytest.mark.parametrize("index", [40, 100, 250])
def test_a_swapped_pair_of_events_is_named_whether_or_not_renumbered(index: int) -> None:
    events = shithead()
    assert events[index] != events[index + 1]
    lines = export.export_bytes("g", events).splitlines()
    swapped_lines = [*lines[: index + 1], lines[index + 2], lines[index + 1], *lines[index + 3 :]]
    assert bad_version(swapped_lines) == index + 1
    swapped = [*events[:index], events[index + 1], events[index], *events[index + 2 :]]
    assert bad_version(export.export_bytes("g", swapped).splitlines()) == index + 1


def test_a_log_cut_before_the_end_is_named_at_its_first_missing_event() -> None:
    events = shithead()
    cut = export.export_bytes("g", events[:-3]).splitlines()
    assert bad_version(cut) == len(events) - 2
    lines = export.export_bytes("g", events).splitlines()
    assert bad_version(lines[:-3]) == len(events) - 2


def test_a_header_that_does_not_match_its_log_is_refused() -> None:
    lines = export.export_bytes("g", golden("beggar-classic-3p-turner")).splitlines()
    header = msgspec.json.decode(lines[0])
    for change in ({"players": 4}, {"game_id": "g{1}"}, {"format": "other"}, {"extra": 1}):
        report = log_replay.replay_log([msgspec.json.encode({**header, **change}), *lines[1:]])
        assert (report.ok, report.version) == (False, None), change
    assert log_replay.replay_log([]).version is None


def test_an_unreadable_event_line_is_named_by_its_version() -> None:
    lines = export.export_bytes("g", golden("beggar-classic-3p-turner")).splitlines()
    lines[4] = lines[4].replace(b'"type":"TrickPlayed"', b'"type":"Bogus"', 2)
    assert bad_version(lines) == 4
    lines[4] = b"{not json"
    assert bad_version(lines) == 4


# The API ---------------------------------------------------------------------------------


def test_export_import_export_through_the_api_gives_the_same_bytes(app: Client) -> None:
    game_id = finished_via_api(app)
    exported = app.get(f"/v1/games/{game_id}/export")
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"] == "application/x-ndjson"
    other = InMemoryEventStore()
    with app_client(other) as elsewhere:
        imported = elsewhere.post("/v1/games/import", content=exported.content)
        assert imported.status_code == 201, imported.text
        expected = {"game_id": game_id, "version": other.version(game_id), "created": True}
        assert imported.json() == expected
        assert imported.headers["location"] == f"/v1/games/{game_id}"
        again = elsewhere.get(f"/v1/games/{game_id}/export")
        assert again.content == exported.content
        repeated = elsewhere.post("/v1/games/import", content=exported.content)
        assert (repeated.status_code, repeated.json()["created"]) == (200, False)
        assert elsewhere.get(f"/v1/games/{game_id}").json()["status"] != "playing"
        verified = elsewhere.get(f"/v1/games/{game_id}/verification").json()
    assert verified["status"] == "ok"
    assert len(other.read_feed(count=10_000)) == other.version(game_id)


def test_an_import_over_another_game_with_that_id_is_409_and_appends_nothing(app: Client) -> None:
    game_id = finished_via_api(app)
    text = app.get(f"/v1/games/{game_id}/export").content
    other = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * 2
    created = create_game(other, "autobus", seats=seats, seed=3).game_id
    play_bot_turns(other, created)
    clash = text.replace(game_id.encode(), created.encode(), 1)
    version = other.version(created)
    with app_client(other) as elsewhere:
        response = elsewhere.post("/v1/games/import", content=clash)
    assert response.status_code == 409, response.text
    assert response.json()["game_id"] == created
    assert other.version(created) == version


@pytest.mark.parametrize(
    ("tamper", "version"),
    [
        ("drop", 31),
        ("swap", 31),
        ("card", None),
    ],
)
def test_a_tampered_import_is_422_naming_the_first_bad_event_and_imports_nothing(
    tamper: str, version: int | None
) -> None:
    events = shithead()
    lines = export.export_bytes("g1", events).splitlines()
    if tamper == "drop":
        lines = [*lines[:31], *lines[32:]]
    elif tamper == "swap":
        lines = [*lines[:31], lines[32], lines[31], *lines[33:]]
    else:
        drawn = first(events, is_draw)
        cards = ["KS" if events[drawn].cards[0] != "KS" else "QS"]  # type: ignore[attr-defined]
        lines = export.export_bytes("g1", replaced(events, drawn, cards=cards)).splitlines()
        version = drawn + 1
    store = InMemoryEventStore()
    with app_client(store) as client:
        response = client.post("/v1/games/import", content=b"\n".join(lines))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["type"].endswith("invalid-log")
    assert body["event_version"] == version
    assert f"event version {version}" in body["detail"]
    assert store.read_feed() == []


def test_a_log_with_a_bad_header_is_422_naming_the_header() -> None:
    store = InMemoryEventStore()
    with app_client(store) as client:
        response = client.post("/v1/games/import", content=b'{"format": "other"}\n')
    assert response.status_code == 422
    assert response.json()["field"] == "header"
    assert store.read_feed() == []


def test_a_running_game_is_not_exported(app: Client) -> None:
    body = {"game": "shithead", "seats": [{"kind": "external"}, {}], "seed": 3}
    game_id = app.post("/v1/games", json=body).json()["game_id"]
    response = app.get(f"/v1/games/{game_id}/export")
    assert response.status_code == 403
    assert response.json()["rule"] == "game_running"
    assert app.get("/v1/games/nope/export").status_code == 404
    assert app.get("/v1/games/nope/verification").status_code == 404


def test_importing_is_a_hosting_operation() -> None:
    store = InMemoryEventStore()
    access = Access.embedded(store, Settings(admin_key=KEY))
    text = export.export_bytes("g1", golden("beggar-classic-3p-turner"))
    with TestClient(create_app(store, InProcessDispatcher(store), access=access)) as client:
        refused = client.post("/v1/games/import", content=text)
        assert refused.status_code == 401
        assert store.read_feed() == []
        headers = {"authorization": f"Bearer {KEY}"}
        accepted = client.post("/v1/games/import", content=text, headers=headers)
        assert accepted.status_code == 201, accepted.text
        assert client.get("/v1/games/g1/export").content == text


def test_every_golden_game_survives_an_import_and_an_export() -> None:
    store = InMemoryEventStore()
    with app_client(store) as client:
        for name in GOLDEN_NAMES:
            text = export.export_bytes(name, golden(name))
            assert client.post("/v1/games/import", content=text).status_code == 201
            assert client.get(f"/v1/games/{name}/export").content == text


@pytest.mark.parametrize("version", [3, 41])
def test_a_fork_replays_clean_from_its_copied_events(version: int) -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * 3
    original = create_game(store, "shithead", seats=seats, seed=4).game_id
    play_bot_turns(store, original)
    loaded = load(store, original)
    fork = fork_game(store, loaded, store.read(original), version, seed=1).game_id
    play_bot_turns(store, fork)
    report = log_replay.replay(fork, get_game("shithead").codec.decode_all(store.read(fork)))
    assert report.ok, report.reason
    assert report.verification is not None
    assert report.verification.status == "no_commitment"
    assert original in report.verification.detail


@pytest.mark.parametrize(
    ("version", "between"),
    [(40, "39 to 41): a fork starts between moves, at 38 or 41"), (42, "at 41 or 44")],
)
def test_a_fork_inside_a_move_is_refused_naming_the_moves_ends(version: int, between: str) -> None:
    """Seed 4: v39-41 are a play, its draw and the burn; v42-44 a play, its draw, the pass."""
    store = InMemoryEventStore()
    seats = [Seat(kind="bot", bot="random")] * 3
    original = create_game(store, "shithead", seats=seats, seed=4).game_id
    play_bot_turns(store, original)
    before = len(store.read_feed(count=100_000))

    with pytest.raises(InvalidRequest) as refused:
        fork_game(store, load(store, original), store.read(original), version, seed=1)

    assert refused.value.field == "version"
    assert between in refused.value.message
    assert len(store.read_feed(count=100_000)) == before


FORKED = {"shithead": (2, 3), "autobus": (3, 3), "beggar": (3, 3)}
"""Per game, the seats and the seed of the game forked at every move's end. Seeded: the test
costs the square of the game's length, and a random Shithead game of random bots can run to
thousands of events (the CI timeout); these seeds deal games of 155, 211 and 15 events."""


def test_every_game_is_forked_at_every_move() -> None:
    assert sorted(FORKED) == game_names()


@pytest.mark.parametrize("game", sorted(FORKED))
def test_a_fork_is_accepted_exactly_between_moves_and_every_accepted_fork_ends(game: str) -> None:
    players, seed = FORKED[game]
    store = InMemoryEventStore()
    spec = get_game(game)
    seats = [Seat(kind="bot", bot="random")] * players
    original = create_game(store, game, seats=seats, seed=seed).game_id
    play_bot_turns(store, original)
    log, loaded = store.read(original), load(store, original)
    events = spec.codec.decode_all(log)
    ends = log_replay.step_ends(events)
    assert ends[0] == 2
    assert ends[-1] == len(log)

    for version in range(2, len(log)):
        if version not in ends:
            with pytest.raises(InvalidRequest, match="inside a move") as refused:
                fork_game(store, loaded, log, version, seed=version)
            assert refused.value.field == "version"
            continue
        assert spec.to_move(spec.fold(events[:version]))
        fork = fork_game(store, loaded, log, version, seed=version).game_id
        play_bot_turns(store, fork)
        assert spec.is_over(load(store, fork).state), version
    assert len(ends) > len(log) // 3  # most events are moves of their own: the test sees forks


def test_a_client_playing_another_suit_than_the_listed_play_replays_clean() -> None:
    store = InMemoryEventStore()
    seats = [Seat(kind="external"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "shithead", seats=seats, seed=9).game_id
    play_bot_turns(store, game_id)
    other_suits = 0
    while not (loaded := load(store, game_id)).spec.is_over(loaded.state):
        spec, state = loaded.spec, loaded.state
        legal = spec.legal_actions(state, 0)
        action = spec.bots["heuristic"].choose(spec.view(state, 0), legal, str(loaded.version))
        if isinstance(action, PlayCards) and zone_of(state, 0) == "hand":
            rank = rank_of(action.cards[0])
            same = [c for c in state.hands[0] if rank_of(c) == rank and c not in action.cards]
            if len(action.cards) == 1 and same:
                action, other_suits = PlayCards(cards=[same[0]]), other_suits + 1
        body = msgspec.to_builtins(action)
        act(store, game_id, seat=0, action=body, expected_version=loaded.version)
        play_bot_turns(store, game_id)
    assert other_suits > 0
    report = log_replay.replay(game_id, get_game("shithead").codec.decode_all(store.read(game_id)))
    assert report.ok, report.reason


@pytest.mark.parametrize("game", game_names())
def test_seeded_random_games_of_every_size_replay_clean(game: str) -> None:
    spec = get_game(game)
    for players in range(spec.min_players, min(spec.max_players, 4) + 1):
        for seed in range(3):
            store = InMemoryEventStore()
            seats = [Seat(kind="bot", bot="random")] * players
            game_id = create_game(store, game, seats=seats, seed=f"{players}:{seed}").game_id
            play_bot_turns(store, game_id)
            report = log_replay.replay(game_id, spec.codec.decode_all(store.read(game_id)))
            assert report.ok, (players, seed, report.version, report.reason)
