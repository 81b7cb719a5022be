"""Rate limits that fit play, through the API in the embedded default: the RateLimit headers
on every answer to a bot token (and none to anyone else), moves that cost nothing, reads of
a bot's own turns paid from their own budget, a bot at the documented pace in as many games
as the cap allows never throttled, and a bot that hammers reads throttled."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.game.http.waiters import StreamConfig
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.ports.ratelimit import InMemoryRateLimiter
from shared.store.memory import InMemoryEventStore
from tests.support.api import ADMIN, KEY, Client, bearer, register

HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")
DEFAULTS = Settings()


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclasses.dataclass
class Service:
    """A client of the service, the store behind it and the clock of its rate limits."""

    client: Client
    store: InMemoryEventStore
    clock: Clock


def service(**settings: Any) -> Iterator[Service]:
    """Yields a service with the admin key, these settings, and rate limits on a hand clock."""
    store, clock = InMemoryEventStore(), Clock()
    chosen = Settings(**{"admin_key": KEY, **settings})
    access = dataclasses.replace(
        Access.embedded(store, chosen),
        limiter=InMemoryRateLimiter(chosen.rate_limit, chosen.rate_window, clock),
        turn_limiter=InMemoryRateLimiter(chosen.turn_rate_limit, chosen.rate_window, clock),
    )
    streams = StreamConfig(keepalive_s=0.05, lifetime_s=0.3)  # a stream's answer ends soon
    app = create_app(store, InProcessDispatcher(store), access=access, streams=streams)
    with TestClient(app) as client:
        yield Service(client, store, clock)


@pytest.fixture
def default() -> Iterator[Service]:
    """Returns a service with the default rate limits."""
    yield from service()


@pytest.fixture
def small() -> Iterator[Service]:
    """Returns a service with small budgets: 5 requests and 3 turn reads a minute."""
    yield from service(rate_limit=5, turn_rate_limit=3, rate_window=60)


def new_game(client: Client, bot: str, seed: int) -> str:
    """Creates a Shithead game of `bot` (seat 0) against the heuristic bot; returns its id."""
    seats = [{"kind": "external", "bot": bot}, {"bot": "heuristic"}]
    body = {"game": "shithead", "seats": seats, "seed": seed}
    answer = client.post("/v1/games", json=body, headers=ADMIN)
    assert answer.status_code == 201, answer.text
    game_id: str = answer.json()["game_id"]
    return game_id


def limits(answer: Any) -> tuple[int, int, int]:
    """Returns the RateLimit headers of an answer: limit, remaining, reset."""
    limit, remaining, reset = (int(answer.headers[name]) for name in HEADERS)
    return limit, remaining, reset


def move_of(view: dict[str, Any]) -> dict[str, Any]:
    """Returns the action posting the first legal action of seat 0's view."""
    return {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}


def test_the_default_turn_budget_is_two_reads_a_turn_a_second_in_every_game_of_the_cap() -> None:
    pace = 1  # the documented pace: at most a turn a second in each game
    reads_per_turn = 2  # the seat's view, and a turns poll or a seat's turn
    expected = reads_per_turn * DEFAULTS.max_games_per_bot * DEFAULTS.rate_window // pace
    assert DEFAULTS.turn_rate_limit == expected == 2400
    assert DEFAULTS.rate_limit == 600


def test_every_answer_to_a_bot_token_says_its_budget_and_counts_down(small: Service) -> None:
    client = small.client
    alice = bearer(register(client, "alice")["token"])
    game = new_game(client, "alice", 1)

    ok = client.get("/v1/bots/me", headers=alice)
    missing = client.get("/v1/games/nope", headers=alice)
    wrong_seat = client.get(f"/v1/games/{game}/view?seat=1", headers=alice)
    bad_query = client.get(f"/v1/games/{game}/events?after=-1", headers=alice)
    assert [a.status_code for a in (ok, missing, wrong_seat, bad_query)] == [200, 404, 403, 400]
    assert [limits(a)[:2] for a in (ok, missing, wrong_seat, bad_query)] == [
        (5, 4),
        (5, 3),
        (5, 2),
        (5, 1),
    ]
    # A bucket of 5 a minute gains one every 12 s: full again 12 s per request taken.
    assert [limits(a)[2] for a in (ok, missing, wrong_seat, bad_query)] == [12, 24, 36, 48]

    small.clock.now = 12.0
    assert limits(client.get("/v1/bots/me", headers=alice))[:2] == (5, 1)
    last = client.get("/v1/bots/me", headers=alice)
    refused = client.get("/v1/bots/me", headers=alice)
    assert (last.status_code, limits(last)[1]) == (200, 0)
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["type"].endswith("rate-limited")
    assert limits(refused) == (5, 0, 60)
    assert int(refused.headers["retry-after"]) == 12
    stream = client.get("/v1/bots/me/events", headers=alice)
    assert (stream.status_code, limits(stream)[:2]) == (429, (5, 0))


def test_a_stream_opened_with_a_bot_token_says_its_budget_in_its_first_answer(
    default: Service,
) -> None:
    alice = bearer(register(default.client, "alice")["token"])
    stream = default.client.get("/v1/bots/me/events", headers=alice)
    assert stream.status_code == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert limits(stream) == (600, 599, 1)


def test_answers_to_anyone_else_carry_no_rate_limit_headers(small: Service) -> None:
    client = small.client
    register(client, "alice")
    game = new_game(client, "alice", 1)
    answers = [
        client.get(f"/v1/games/{game}"),
        client.get(f"/v1/games/{game}/events"),
        client.get("/v1/games/nope"),
        client.get(f"/v1/games/{game}/view?seat=0", headers=ADMIN),
        client.get("/v1/bots/me", headers={"Authorization": "Bearer cab_1.nope"}),
    ]
    assert [a.status_code for a in answers] == [200, 200, 404, 200, 401]
    for answer in answers:
        assert not set(HEADERS) & set(answer.headers), answer.request.url


def test_a_move_costs_nothing_and_lands_even_when_both_budgets_are_spent(
    small: Service,
) -> None:
    client = small.client
    alice = bearer(register(client, "alice")["token"])
    game = new_game(client, "alice", 2)
    for _ in range(5):
        client.get("/v1/bots/me", headers=alice)
    views = [client.get(f"/v1/games/{game}/view?seat=0", headers=alice) for _ in range(3)]
    assert [v.status_code for v in views] == [200, 200, 200]
    assert [limits(v)[:2] for v in views] == [(3, 2), (3, 1), (3, 0)]  # the turns' budget
    assert all("x-cardarena-charge" not in v.headers for v in views)
    assert client.get("/v1/bots/me", headers=alice).status_code == 429
    assert client.get(f"/v1/games/{game}/view?seat=0", headers=alice).status_code == 429

    view = views[-1].json()
    for _ in range(30):
        if not view["legal_actions"]:
            break
        moved = client.post(f"/v1/games/{game}/actions?wait=0", json=move_of(view), headers=alice)
        assert moved.status_code == 200, moved.text
        assert limits(moved)[:2] == (5, 0)
        assert moved.json()["replayed"] is False
        assert "x-cardarena-charge" not in moved.headers  # the internal mark never leaves
        view = moved.json()["turn"]
    assert small.store.version(game) > views[-1].json()["version"]


def test_a_retry_of_a_move_and_an_action_that_is_no_move_are_charged(small: Service) -> None:
    client = small.client
    alice = bearer(register(client, "alice")["token"])
    game = new_game(client, "alice", 3)
    view = client.get(f"/v1/games/{game}/view?seat=0", headers=alice).json()
    retry = {**alice, "Idempotency-Key": "once"}
    url = f"/v1/games/{game}/actions"
    first = client.post(url, json=move_of(view), headers=retry)
    again = client.post(url, json=move_of(view), headers=retry)
    stale = client.post(url, json=move_of(view), headers=alice)
    assert [a.status_code for a in (first, again, stale)] == [200, 200, 409]
    assert again.json()["replayed"] is True
    assert [limits(a)[1] for a in (first, again, stale)] == [5, 4, 3]


def test_a_malformed_action_of_a_bot_is_charged_too(small: Service) -> None:
    client = small.client
    alice = bearer(register(client, "alice")["token"])
    game = new_game(client, "alice", 4)
    url = f"/v1/games/{game}/actions"
    answers = [client.post(url, content=b"{not json", headers=alice) for _ in range(9)]
    assert {a.status_code for a in answers[:8]} == {400}
    assert [limits(a)[1] for a in answers[:5]] == [4, 3, 2, 1, 0]
    assert answers[8].status_code == 429  # 5 from the requests' budget, 3 from the turns'


def play_at_the_documented_pace(default: Service, games: int, rounds: int) -> list[int]:
    """Keeps one bot in `games` games at once (a finished one replaced by a new one) for
    `rounds` seconds, a turn a second in each: each second it polls its turns, and for each
    game waiting reads the seat's turn and view (two reads a turn) and posts one action.
    Returns the statuses of its answers."""
    client = default.client
    alice = bearer(register(client, "alice")["token"])
    seeds = iter(range(10_000))
    running = [new_game(client, "alice", next(seeds)) for _ in range(games)]
    statuses: list[int] = []
    for _ in range(rounds):
        polled = client.get("/v1/bots/me/turns", headers=alice)
        statuses.append(polled.status_code)
        waiting = {turn["game_id"] for turn in polled.json()["turns"]}
        for index, game in enumerate(running):
            if game not in waiting:
                running[index] = new_game(client, "alice", next(seeds))
                continue
            turn = client.get(f"/v1/games/{game}/turn?seat=0", headers=alice)
            view = client.get(f"/v1/games/{game}/view?seat=0", headers=alice)
            move = move_of(view.json())
            moved = client.post(f"/v1/games/{game}/actions", json=move, headers=alice)
            statuses += [turn.status_code, view.status_code, moved.status_code]
        default.clock.now += 1.0
    return statuses


def test_a_bot_in_as_many_games_as_the_cap_at_the_documented_pace_is_never_throttled(
    default: Service,
) -> None:
    games, rounds = DEFAULTS.max_games_per_bot, 70
    statuses = play_at_the_documented_pace(default, games, rounds)
    moves = (len(statuses) - rounds) // 3
    reads = rounds + 2 * moves  # the polls, and a turn and a view a move
    assert set(statuses) == {200}
    assert moves > rounds * games * 0.9  # nearly every game waited every second
    assert reads > DEFAULTS.turn_rate_limit  # past the burst: the refill carries the pace


def test_a_bot_that_hammers_reads_is_throttled(default: Service) -> None:
    client = default.client
    alice = bearer(register(client, "alice")["token"])
    game = new_game(client, "alice", 5)
    events = [client.get(f"/v1/games/{game}/events?seat=0", headers=alice) for _ in range(610)]
    assert [a.status_code for a in events].count(200) == DEFAULTS.rate_limit
    assert events[-1].status_code == 429
    assert int(events[-1].headers["retry-after"]) == math.ceil(DEFAULTS.rate_window / 600)
    views = [client.get(f"/v1/games/{game}/view?seat=0", headers=alice) for _ in range(2410)]
    assert [v.status_code for v in views].count(200) == DEFAULTS.turn_rate_limit
    assert views[-1].status_code == 429
    # A minute later both budgets are full again.
    default.clock.now += DEFAULTS.rate_window
    assert limits(client.get("/v1/bots/me", headers=alice))[1] == DEFAULTS.rate_limit - 1


def test_the_document_declares_the_rate_limit_headers_on_every_answer(default: Service) -> None:
    document = default.client.get("/schema/openapi.json").json()
    declared = document["components"]["headers"]
    assert set(HEADERS) == {name.lower() for name in declared}
    answers = [
        (operation["operationId"], status, response)
        for path in document["paths"].values()
        for operation in path.values()
        for status, response in operation["responses"].items()
    ]
    assert answers
    for operation_id, status, response in answers:
        names = {name.lower() for name in response.get("headers", {})}
        assert set(HEADERS) <= names, (operation_id, status)
        if status == "429":
            assert "retry-after" in names, operation_id
