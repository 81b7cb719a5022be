"""Every unrated game says why (`rated`, `unrated`: a code and a message) wherever the API shows
a game: `getGame`, `listGames`, the tournament's games in `getTournament` and the snapshot of
the game's stream."""

from __future__ import annotations

import time
from typing import Any

from shared.app.bot_turns import play_bot_turns
from shared.app.tournaments import create_tournament, load_tournament, start_game
from shared.messages.codec import encode
from shared.model.tournaments.model import (
    KIND,
    Entrant,
    TournamentCancelled,
    TournamentDefinition,
    pending,
    stream_id,
)
from shared.model.unrated import UNRATED_REASONS
from shared.store.memory import InMemoryEventStore
from tests.support.api import Client, register
from tests.support.streams import parse

Json = dict[str, Any]

AUTOBUS = TournamentDefinition(
    game="autobus",
    entrants=[
        Entrant(bot="heuristic", version="1"),
        Entrant(bot="random", version="1"),
        Entrant(bot="random", version="2"),
    ],
    table_size=2,
    seed="6",
)
"""Three two-player games in one round, every entrant a distinct bot version: rateable."""


def create(client: Client, body: Json) -> str:
    """Creates a game a few milliseconds after the last one; returns its id."""
    time.sleep(0.003)
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


def rating(client: Client, game_id: str) -> tuple[bool | None, str | None]:
    """Returns the game's `rated` and its unrated code, as `getGame` answers and as the list
    has it (they must agree)."""
    answer = client.get(f"/v1/games/{game_id}")
    assert answer.status_code == 200, answer.text
    game = answer.json()
    lines = {line["game_id"]: line for line in client.get("/v1/games?limit=100").json()["games"]}
    line = lines[game_id]
    assert (line["rated"], line["unrated"]) == (game["rated"], game["unrated"])
    unrated = game["unrated"]
    if unrated is not None:
        assert unrated["code"] in UNRATED_REASONS
        assert unrated["message"]
        assert game["rated"] is False
    return game["rated"], None if unrated is None else unrated["code"]


def bound(client: Client, name: str) -> Json:
    """Registers the external Shithead bot `name` (version 1); returns a seat bound to it."""
    register(client, name, admin={})
    return {"kind": "external", "bot": name, "version": "1"}


def test_a_game_between_distinct_versions_may_be_rated_and_a_plain_seat_never_is(
    client: Client,
) -> None:
    seats = [bound(client, "alice"), bound(client, "bob")]
    running = create(client, {"game": "shithead", "seats": seats, "seed": 3})
    assert rating(client, running) == (None, None), "rated once over, null while it runs"
    plain = create(client, {"game": "autobus", "players": 2, "seed": 2})
    assert rating(client, plain) == (False, "unrated_seat")
    assert "seat 0" in client.get(f"/v1/games/{plain}").json()["unrated"]["message"]


def test_one_version_in_two_seats_is_same_version(client: Client) -> None:
    alice = bound(client, "alice")
    game_id = create(client, {"game": "shithead", "seats": [alice, alice], "seed": 1})
    assert rating(client, game_id) == (False, "same_version")
    message = client.get(f"/v1/games/{game_id}").json()["unrated"]["message"]
    assert "alice@1" in message


def test_a_game_without_decisions_is_no_decisions(client: Client) -> None:
    game_id = create(client, {"game": "beggar", "players": 2, "seed": 4})
    assert rating(client, game_id) == (False, "no_decisions")
    assert "Beggar" in client.get(f"/v1/games/{game_id}").json()["unrated"]["message"]


def test_an_aborted_game_is_aborted_and_says_by_whom(client: Client) -> None:
    seats = [bound(client, "alice"), bound(client, "bob")]
    game_id = create(client, {"game": "shithead", "seats": seats, "seed": 5})
    assert client.post(f"/v1/games/{game_id}/abort").status_code == 200
    assert rating(client, game_id) == (False, "aborted")
    assert "host" in client.get(f"/v1/games/{game_id}").json()["unrated"]["message"]


def test_a_fork_is_forked(client: Client) -> None:
    original = create(client, {"game": "autobus", "players": 2, "seed": 7})
    forked = client.post(f"/v1/games/{original}/fork", params={"version": 2})
    assert forked.status_code in (200, 201), forked.text
    assert rating(client, forked.json()["game_id"]) == (False, "forked")


def test_a_cancelled_tournament_s_games_are_tournament_cancelled_and_its_answer_says_so(
    client: Client, store: InMemoryEventStore
) -> None:
    tournament_id = create_tournament(store, AUTOBUS, "t-cancel")
    state, _ = load_tournament(store, tournament_id)
    running = start_game(store, tournament_id, state, pending(state)[0])
    assert rating(client, running) == (None, None)
    games = client.get(f"/v1/tournaments/{tournament_id}").json()["rounds"][0]["games"]
    assert [(game["rated"], game["unrated"]) for game in games] == [(None, None)] * 3
    cancelled = client.post(f"/v1/tournaments/{tournament_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert rating(client, running) == (False, "tournament_cancelled")
    games = client.get(f"/v1/tournaments/{tournament_id}").json()["rounds"][0]["games"]
    assert {game["unrated"]["code"] for game in games} == {"tournament_cancelled"}
    assert all(game["rated"] is False for game in games)


def test_a_game_that_ends_after_its_tournament_was_cancelled_is_tournament_cancelled(
    client: Client, store: InMemoryEventStore
) -> None:
    tournament_id = create_tournament(store, AUTOBUS, "t-late")
    state, _ = load_tournament(store, tournament_id)
    late = start_game(store, tournament_id, state, pending(state)[0])
    stream = stream_id(tournament_id)
    store.append(stream, KIND, store.version(stream), [encode(TournamentCancelled())])
    play_bot_turns(store, late)
    game = client.get(f"/v1/games/{late}").json()
    assert game["status"] != "playing"
    assert rating(client, late) == (False, "tournament_cancelled")
    # The game stream's snapshot is the public game as getGame answers it, its rating included.
    streamed = client.get(f"/v1/games/{late}/stream")
    assert streamed.status_code == 200, streamed.text
    events, _ = parse(streamed.text)
    assert [(e.event, e.data) for e in events] == [("snapshot", game)]


def test_a_tournament_s_recorded_games_say_whether_they_are_rated(client: Client) -> None:
    body = {
        "game": "autobus",
        "entrants": [{"bot": "random", "version": "s"}, {"bot": "random", "version": "s"}],
        "table_size": 2,
        "seed": "3",
    }
    created = client.post("/v1/tournaments", json=body)
    assert created.status_code in (200, 201), created.text
    tournament = client.get(f"/v1/tournaments/{created.json()['tournament_id']}").json()
    games = [game for rnd in tournament["rounds"] for game in rnd["games"]]
    assert games
    assert all(game["rated"] is False for game in games)
    assert {game["unrated"]["code"] for game in games} == {"same_version"}
    for game in games:
        assert rating(client, game["game_id"]) == (False, "same_version")
