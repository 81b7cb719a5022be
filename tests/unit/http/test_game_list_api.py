"""The public list of recent games (`GET /v1/games`, `listGames`), in the embedded default."""

from __future__ import annotations

import time
import typing
from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.games.listing import GameStatus
from services.game.http.schemas import GAME_STATUSES
from shared.app.bot_turns import play_bot_turns
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import create_tournament, load_tournament, start_game
from shared.messages.codec import encode
from shared.model.tournaments.model import (
    KIND,
    Entrant,
    GameRecorded,
    TournamentDefinition,
    stream_id,
)
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import GameSummary, ViewsUnavailable
from shared.store.port import EventStore
from tests.support.api import Client
from tests.support.openapi_check import Checker, Exchange

Json = dict[str, Any]
LINE_FIELDS = {
    "game_id",
    "game",
    "status",
    "seats",
    "created_at",
    "finished_at",
    "tournament_id",
    "rated",
    "unrated",
}
"""Every field of a line: nothing else (no seed, no ruleset, no card)."""


def create(client: Client, body: Json) -> str:
    """Creates a game a few milliseconds after the last one; returns its id."""
    time.sleep(0.003)  # creation times are milliseconds: keep the newest-first order plain
    created = client.post("/v1/games", json=body)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


def listed(client: Client, **params: Any) -> list[Json]:
    """Returns the lines of a 200 answer to `GET /v1/games` with `params`."""
    answer = client.get("/v1/games", params=params)
    assert answer.status_code == 200, answer.text
    games: list[Json] = answer.json()["games"]
    return games


def test_games_are_listed_newest_first_with_their_seats_status_and_nothing_secret(
    client: Client,
) -> None:
    beggar = create(client, {"game": "beggar", "players": 2, "seed": 4})
    seats = [{"kind": "external", "name": "someone"}, {"bot": "heuristic"}]
    running = create(client, {"game": "shithead", "seats": seats, "seed": 5})
    lines = listed(client)
    assert [line["game_id"] for line in lines] == [running, beggar]
    assert all(set(line) == LINE_FIELDS for line in lines)
    playing, ended = lines
    assert (playing["game"], playing["status"], playing["finished_at"]) == (
        "shithead",
        "playing",
        None,
    )
    assert playing["seats"] == ["someone", "heuristic"]
    assert playing["tournament_id"] is None
    game = client.get(f"/v1/games/{beggar}").json()
    assert (ended["game"], ended["status"]) == ("beggar", game["status"])
    assert ended["status"] != "playing"
    assert ended["finished_at"] >= ended["created_at"]


def test_the_list_filters_by_game_and_status_and_stops_at_the_limit(client: Client) -> None:
    first = create(client, {"game": "beggar", "players": 2, "seed": 1})
    second = create(client, {"game": "beggar", "players": 2, "seed": 2})
    seats = [{"kind": "external", "name": "someone"}, {"bot": "random"}]
    running = create(client, {"game": "autobus", "seats": seats, "seed": 3})
    assert [line["game_id"] for line in listed(client, game="beggar")] == [second, first]
    assert [line["game_id"] for line in listed(client, status="playing")] == [running]
    assert [line["game_id"] for line in listed(client, limit=2)] == [running, second]
    assert listed(client, game="autobus", status="playing", limit=100)[0]["game_id"] == running
    assert listed(client, game="shithead") == []
    assert listed(client, status="aborted") == []
    ended = {line["status"] for line in listed(client, game="beggar")}
    for status in ended:
        assert {line["game_id"] for line in listed(client, status=status)} <= {first, second}


def test_the_default_page_is_the_20_newest(client: Client) -> None:
    made = [create(client, {"game": "beggar", "players": 2, "seed": n}) for n in range(21)]
    assert [line["game_id"] for line in listed(client)] == made[::-1][:20]
    assert len(listed(client, limit=100)) == 21


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "over"}, "status"),
        ({"status": ""}, "status"),
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"game": "chess"}, "game"),
    ],
)
def test_a_bad_filter_is_a_400_naming_its_field(client: Client, params: Json, field: str) -> None:
    answer = client.get("/v1/games", params=params)
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    assert answer.json()["field"] == field


def test_the_status_filter_takes_every_game_status() -> None:
    assert typing.get_args(GameStatus) == GAME_STATUSES


class _UnavailableViews(InMemoryTournamentViews):
    """Views whose database cannot be reached."""

    def recent_games(
        self, game: str | None = None, status: str | None = None, limit: int = 20
    ) -> list[GameSummary]:
        raise ViewsUnavailable("the views' database is unavailable")


def test_unavailable_views_are_a_503_with_retry_after(store: EventStore) -> None:
    app = create_app(store, InProcessDispatcher(store), views=_UnavailableViews(store))
    with TestClient(app) as client:
        answer = client.get("/v1/games")
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"]


def test_the_list_neither_clashes_with_creating_a_game_nor_takes_other_methods(
    client: Client,
) -> None:
    assert client.post("/v1/games", json={"game": "beggar", "players": 2}).status_code == 201
    assert client.delete("/v1/games").status_code == 405
    assert client.put("/v1/games", json={}).status_code == 405


def test_the_answers_validate_against_the_document(client: Client) -> None:
    create(client, {"game": "beggar", "players": 2})
    create(client, {"game": "autobus", "players": 2})
    checker = Checker(client.get("/schema/openapi.json").json())
    answers = [
        client.get("/v1/games"),
        client.get("/v1/games", params={"status": "playing", "game": "autobus"}),
        client.get("/v1/games", params={"status": "nope"}),
    ]
    errors = [error for answer in answers for error in checker.errors(Exchange.of(answer))]
    assert errors == []
    assert set(checker.checked) == {("listGames", 200), ("listGames", 400)}


DUPLICATE = TournamentDefinition(
    game="autobus",
    entrants=[Entrant(bot="random", version=str(i)) for i in range(4)],
    table_size=2,
    format="duplicate",
    seed="8",
)
"""Four entrants at two tables: each deal is played at both tables."""


def _record(store: EventStore, round_no: int, key: str, game_id: str) -> None:
    """Records a table of the tournament `t` as its process would once it ended."""
    stream = stream_id("t")
    recorded = GameRecorded(round=round_no, key=key, game_id=game_id, places=[1, 2], status="x")
    store.append(stream, KIND, store.version(stream), [encode(recorded)])


def test_a_duplicate_deal_s_tables_are_left_out_while_another_of_them_plays(
    store: EventStore, client: Client
) -> None:
    create_tournament(store, DUPLICATE, "t")
    state, _ = load_tournament(store, "t")
    first, second = (game for game in state.rounds[0].games if game.deal == "0")
    early = start_game(store, "t", state, first)
    late = start_game(store, "t", state, second)
    ids = {early, late}

    def shown() -> dict[str, str]:
        return {
            line["game_id"]: line["status"]
            for line in listed(client, limit=100)
            if line["game_id"] in ids
        }

    assert shown() == {}, "both tables run: each is sealed by the other"
    play_bot_turns(store, early)
    assert shown() == {}, "the first ended unrecorded: it is sealed, and so is the second"
    assert listed(client, status="playing", limit=100) == []
    _record(store, 1, first.key, early)
    assert shown() == {late: "playing"}, "the first is recorded: the second hides nothing"
    assert [line["game_id"] for line in listed(client, status="playing")] == [late]
    play_bot_turns(store, late)
    _record(store, 1, second.key, late)
    lines = {line["game_id"]: line for line in listed(client, limit=100)}
    assert ids <= set(lines), "the deal is over: both tables show"
    assert {lines[game_id]["tournament_id"] for game_id in ids} == {"t"}
    assert all(lines[game_id]["status"] != "playing" for game_id in ids)
