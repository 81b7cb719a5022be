"""Hostile input: malformed and absurd requests get a 4xx problem and change nothing; no
seat's view or readable events name a card it may not know; a bot token never reads or acts
for another seat; tampered exports are refused naming the first bad event.

The HTTP tests run the game service in-process over the in-memory store (the rules, the
request parsing and the problems are the same over Redis; the store's own races are in
test_concurrency). Hypothesis draws the games, seats, tokens and mutations.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.catalog import game_names, get_game
from shared.games.autobus.messages import CardUnderTheBus
from shared.games.base import AnyGame
from shared.messages.common import Event
from shared.model.log_replay import replay_log
from shared.store.memory import InMemoryEventStore
from tests.support import autobus as autobus_props
from tests.support import shithead as shithead_props
from tests.support.leaks import cards_in

Client = TestClient[Litestar]
KEY = "hostile-admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {KEY}"}
JSON = {"content-type": "application/json"}
HUGE_INT = 2**70
PROPERTY = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def feed_length(store: InMemoryEventStore) -> int:
    """Returns how many events the store's feed holds."""
    return len(store.read_feed("0", 10**9))


def assert_problem(response: Any, *allowed: int) -> dict[str, Any]:
    """Checks a 4xx (one of `allowed`, if given) with a problem-details body; returns it."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    if allowed:
        assert response.status_code in allowed, (response.status_code, response.text[:300])
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == response.status_code
    assert body["title"]
    return body


def finished_game(client: Client, game: str = "shithead", seed: int = 5) -> str:
    """Creates a game of built-in bots (played out at once); returns its id."""
    body = {"game": game, "seats": [{"bot": "random"}, {"bot": "random"}], "seed": seed}
    if game == "beggar":
        body = {"game": game, "players": 2, "seed": seed}
    created = client.post("/v1/games", json=body, headers=ADMIN)
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    assert client.get(f"/v1/games/{game_id}").json()["status"] != "playing"
    return game_id


def service(store: InMemoryEventStore) -> Litestar:
    """Returns the game service over `store`, with the admin key and no rate limit."""
    access = Access.embedded(store, Settings(admin_key=KEY, rate_limit=0))
    return create_app(store, InProcessDispatcher(store), access=access)


class World:
    """The service with the admin key, three registered external bots in one running game,
    a finished game and a challenge."""

    def __init__(self) -> None:
        self.store = InMemoryEventStore()
        self.client: Client = TestClient(service(self.store))

    def start(self) -> None:
        """Registers alice, bob and carol and seats them in one Shithead game."""
        self.tokens: dict[str, str] = {}
        for name in ("alice", "bob", "carol"):
            spec = {"name": name, "game": "shithead", "kind": "external"}
            registered = self.client.post("/v1/bots", json=spec, headers=ADMIN)
            assert registered.status_code == 201, registered.text
            self.tokens[name] = registered.json()["token"]
        seats = [{"kind": "external", "bot": name} for name in ("alice", "bob", "carol")]
        body = {"game": "shithead", "seats": seats, "seed": 11}
        created = self.client.post("/v1/games", json=body, headers=ADMIN)
        assert created.status_code == 201, created.text
        self.game_id: str = created.json()["game_id"]
        self.finished = finished_game(self.client)
        challenge = {"game": "shithead", "opponents": [{"bot": "bob"}]}
        issued = self.client.post(
            "/v1/challenges",
            json=challenge,
            headers={"Authorization": f"Bearer {self.tokens['alice']}"},
        )
        assert issued.status_code == 201, issued.text
        self.challenge_id: str = issued.json()["challenge_id"]


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    """Returns the started world, shared by this module's HTTP tests (none of them changes it)."""
    built = World()
    with built.client:
        built.start()
        yield built


# --- Malformed and absurd requests -----------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


def hostile_bodies(valid: dict[str, Any], numeric: str) -> dict[str, bytes]:
    """Returns hostile variants of an endpoint's `valid` body, `numeric` naming a field
    whose value must be a small number."""

    def with_value(raw: bytes) -> bytes:
        return json.dumps({**valid, numeric: "@"}).encode().replace(b'"@"', raw)

    return {
        "10 MB": json.dumps({**valid, "padding": "x" * 10_000_000}).encode(),
        "deep arrays": DEEP,
        "deep field": with_value(DEEP),
        "unknown field": json.dumps({**valid, "surprise": 1}).encode(),
        "wrong type": json.dumps({**valid, numeric: ["not", "a", "number"]}).encode(),
        "object for array": json.dumps([valid]).encode(),
        "2**70": with_value(str(HUGE_INT).encode()),
        "-2**70": with_value(str(-HUGE_INT).encode()),
        "1e400": with_value(b"1e400"),
        "NaN": with_value(b"NaN"),
        "Infinity": with_value(b"Infinity"),
        "invalid UTF-8": json.dumps(valid).encode()[:-1] + b', "x": "\xff\xfe\xc3"}',
        "truncated": json.dumps(valid).encode()[:-1],
        "empty": b"",
        "null": b"null",
        "not JSON": b"<game>shithead</game>",
        "NUL bytes": b"\x00" * 64,
    }


def post_endpoints(world: World) -> list[tuple[str, dict[str, Any], str]]:
    """Returns every POST endpoint that reads a body, with a valid-looking body and a numeric
    field (token rotation and a challenge's cancellation read none)."""
    g, c = world.game_id, world.challenge_id
    return [
        ("/v1/games", {"game": "shithead", "players": 2}, "players"),
        (
            f"/v1/games/{g}/actions",
            {"seat": 0, "action": {"type": "Ready"}, "expected_version": 2},
            "expected_version",
        ),
        (f"/v1/games/{world.finished}/fork?version=3", {"seed": 1}, "seats"),
        ("/v1/bots", {"name": "mallory", "game": "shithead", "strategy": "random"}, "version"),
        (
            "/v1/tournaments",
            {"game": "beggar", "entrants": [{"bot": "turner"}, {"bot": "random"}]},
            "table_size",
        ),
        ("/v1/tournaments/nope/cancel", {"reason": "r"}, "reason"),
        ("/v1/challenges", {"game": "shithead", "opponents": [{"bot": "bob"}]}, "expires_in"),
        (f"/v1/challenges/{c}/accept", {}, "x"),
        (f"/v1/challenges/{c}/decline", {"reason": "r"}, "reason"),
    ]


OPTIONAL_BODY = {"fork", "token", "cancel", "accept", "decline"}


def test_hostile_bodies_on_every_post_endpoint_get_a_4xx_problem_and_change_nothing(
    world: World,
) -> None:
    before = feed_length(world.store)
    tried: Counter[int] = Counter()
    for path, valid, numeric in post_endpoints(world):
        for name, body in hostile_bodies(valid, numeric).items():
            if name in {"empty", "null"} and path.split("?")[0].rsplit("/", 1)[-1] in OPTIONAL_BODY:
                continue  # no body (or null) is a valid request there
            for content_type in ("application/json", "text/plain", "application/xml"):
                if content_type != "application/json" and name not in {"unknown field", "2**70"}:
                    continue
                response = world.client.post(
                    path, content=body, headers={**ADMIN, "content-type": content_type}
                )
                assert 400 <= response.status_code < 500, (path, name, response.text[:300])
                assert_problem(response)
                if name == "10 MB" and response.status_code not in {401, 403}:
                    assert response.status_code == 413, (path, response.text[:200])
                tried[response.status_code] += 1
            assert feed_length(world.store) == before, (path, name)
    print(f"hostile bodies: {sum(tried.values())} requests, statuses {dict(sorted(tried.items()))}")


def test_an_oversized_import_is_413_and_a_deep_or_garbled_one_a_4xx(world: World) -> None:
    before = feed_length(world.store)
    for body in (b"x" * (17 * 1024 * 1024), DEEP, b"\xff\xfe" * 1000, b"{}\n" * 1000, b""):
        response = world.client.post(
            "/v1/games/import",
            content=body,
            headers={**ADMIN, "content-type": "application/x-ndjson"},
        )
        assert_problem(response, 400, 413, 422)
    assert feed_length(world.store) == before


def absurd_reads(world: World) -> list[str]:
    """Returns GETs with absurd path or query parameters."""
    g = world.game_id
    return [
        f"/v1/games/{g}/view?seat={HUGE_INT}",
        f"/v1/games/{g}/view?seat=-1",
        f"/v1/games/{g}/view?seat=1e400",
        f"/v1/games/{g}/view?seat=NaN",
        f"/v1/games/{g}/view?seat=%FF%FE",
        f"/v1/games/{g}/view",
        f"/v1/games/{g}/events?after=-{HUGE_INT}",
        f"/v1/games/{g}/events?limit={HUGE_INT}",
        f"/v1/games/{g}/events?limit=0",
        f"/v1/games/{g}/events?seat={HUGE_INT}",
        f"/v1/games/{g}/replay?version={HUGE_INT}",
        f"/v1/games/{g}/replay?version=NaN",
        f"/v1/games/{g}/replay?seat=-{HUGE_INT}",
        f"/v1/games/{g}/stream?seat={HUGE_INT}",
        f"/v1/games/{'x' * 20_000}",
        "/v1/games/%00%FF/view?seat=0",
        "/v1/games/..%2F..%2Fetc%2Fpasswd",
        f"/v1/tournaments?limit={HUGE_INT}",
        "/v1/tournaments?status=%FF",
        "/v1/tournaments/%00",
        f"/v1/leaderboards/shithead?limit={HUGE_INT}",
        "/v1/leaderboards/%FF%FE",
        "/v1/bots?game=nope",
        f"/v1/bots/{'a' * 20_000}/1",
        "/v1/bots/me/turns?wait=1e400",
        f"/v1/bots/me/turns?wait={HUGE_INT}",
        "/v1/challenges/%00",
        "/v1/schedules/%FF",
    ]


def test_absurd_query_and_path_parameters_get_a_4xx_problem(world: World) -> None:
    before = feed_length(world.store)
    for path in absurd_reads(world):
        response = world.client.get(path, headers=ADMIN)
        assert_problem(response)
    assert feed_length(world.store) == before


# --- No card a seat may not know -------------------------------------------------------


class Knowledge:
    """What a seat may know of a game as its events go by (the rules pages' hidden
    information; the known_to of tests/unit's property tests), for each game of `MODELLED`."""

    def __init__(self, game: str, players: int) -> None:
        self.game = game
        self.taken: list[Counter[str]] = [Counter() for _ in range(players)]
        self.turned: Counter[str] = Counter()

    def saw(self, event: Event, first: bool) -> None:
        """Records what `event` shows everyone."""
        if self.game == "shithead":
            shithead_props.publicly_taken(self.taken, event)
        elif isinstance(event, CardUnderTheBus):
            # The card goes face down under its main pile, but shown: everyone may check that
            # it fits no slot (rules page, "under the bus").
            self.turned[event.card] += 1
        elif self.game == "beggar" and not first:
            # Packs are face down: a seat knows the cards turned so far, all of them public.
            self.turned |= cards_in(msgspec.to_builtins(event))

    def known(self, state: Any, seat: int) -> Counter[str]:
        """Returns the cards `seat` may know in `state`."""
        if self.game == "shithead":
            return shithead_props.known_to(state, seat, self.taken)
        if self.game == "autobus":
            public: Counter[str] = Counter(state.completed) + self.turned
            return autobus_props.known_to(state, seat) + public
        return self.turned | Counter[str](state.pile)


MODELLED = ["autobus", "beggar", "shithead"]
"""The games whose hidden information `Knowledge` models, by their rules pages."""


def test_the_hidden_information_of_every_game_is_modelled() -> None:
    assert game_names() == MODELLED


def random_playthrough(
    spec: AnyGame, players: int, seed: int, steps: int
) -> Iterator[tuple[Any, Event]]:
    """Yields the state after each event of a seeded random game, with the event, up to
    `steps` decisions (or its end)."""
    ruleset = spec.presets["classic"]
    if spec.name == "shithead":
        ruleset = shithead_props.ruleset_for("classic", players)
    start = spec.deal(ruleset, players, seed)
    state = spec.evolve(None, start)
    yield state, start
    rng = random.Random(seed)
    for _ in range(steps):
        waiting = spec.to_move(state)
        if not waiting:
            return
        seat = rng.choice(waiting)
        for event in spec.decide(state, seat, rng.choice(spec.legal_actions(state, seat))):
            state = spec.evolve(state, event)
            yield state, event


@pytest.mark.parametrize("game", game_names())
@PROPERTY
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 2**32),
    steps=st.integers(0, 300),
    seat=st.integers(0, 3),
)
def test_no_view_or_readable_event_names_a_card_the_seat_may_not_know(
    game: str, players: int, seed: int, steps: int, seat: int
) -> None:
    spec = get_game(game)
    seat %= players
    knowledge = Knowledge(game, players)
    for count, (state, event) in enumerate(random_playthrough(spec, players, seed, steps)):
        knowledge.saw(event, first=count == 0)
        if spec.is_over(state):
            break  # a finished game's log is public
        allowed = knowledge.known(state, seat)
        view = msgspec.to_builtins(spec.view(state, seat))
        assert cards_in(view) <= allowed, (cards_in(view) - allowed, count)
        seen = msgspec.to_builtins(spec.redact(event, seat))
        assert cards_in(seen) <= allowed, (type(event).__name__, cards_in(seen) - allowed)
        spectator = msgspec.to_builtins(spec.redact(event, None))
        assert cards_in(spectator) <= cards_in(seen), type(event).__name__


def test_a_running_games_log_withholds_the_seeds_and_every_hidden_card(world: World) -> None:
    events = world.client.get(f"/v1/games/{world.game_id}/events").json()["events"]
    created = events[0]["data"]
    assert (created["bot_seed"], created["deal_seed"], created["salt"]) == ("", "", "")
    started = events[1]["data"]
    assert not cards_in(started["hands"]), "a spectator sees no hand"
    assert not cards_in(started["face_down"])
    assert not cards_in(started["deck"])


# --- A bot token never reads or acts for another seat ----------------------------------

ENDPOINTS = ("view", "events", "actions", "stream", "replay")


@PROPERTY
@given(
    who=st.sampled_from(["alice", "bob", "carol", "none", "garbage", "admin-ish"]),
    seat=st.integers(0, 3),
    endpoint=st.sampled_from(ENDPOINTS),
)
def test_a_bot_token_reads_and_acts_only_for_its_own_seat(
    world: World, who: str, seat: int, endpoint: str
) -> None:
    names = ["alice", "bob", "carol"]
    credentials = {
        "none": {},
        "garbage": {"Authorization": "Bearer cab_0000000000000000.deadbeef"},
        "admin-ish": {"Authorization": f"Bearer {KEY}x"},
    }
    headers = credentials.get(who, {"Authorization": f"Bearer {world.tokens.get(who)}"})
    own = who in names and names.index(who) == seat
    if own and endpoint == "stream":
        return  # its own stream stays open while the game runs (test_streams_api covers it)
    g = world.game_id
    version = world.store.version(g)
    path = f"/v1/games/{g}/{endpoint}"
    if endpoint == "actions":
        view = world.client.get(f"/v1/games/{g}/view", params={"seat": seat}, headers=ADMIN)
        legal = view.json()["legal_actions"] if view.status_code == 200 else []
        action = legal[0] if legal else {"type": "Ready"}
        body = {"seat": seat, "action": action, "expected_version": version}
        response = world.client.post(path, json=body, headers=headers)
    else:
        response = world.client.get(path, params={"seat": seat}, headers=headers)
    if seat >= len(names):
        assert_problem(response, 401, 403, 422)
    elif own:
        assert response.status_code in {200, 409, 422}, response.text[:300]
        if endpoint == "actions" and response.status_code == 200:
            return  # its own move: the game moved on, rightly
    else:
        assert_problem(response, 401, 403)
    assert world.store.version(g) == version


# --- Tampered exports ------------------------------------------------------------------


@pytest.fixture(scope="module")
def export() -> bytes:
    """Returns the export of a finished Shithead game."""
    store = InMemoryEventStore()
    with TestClient(service(store)) as client:
        game_id = finished_game(client, seed=21)
        response = client.get(f"/v1/games/{game_id}/export")
        assert response.status_code == 200
        return response.content


CARD_RANKS = "23456789TJQKA"
CARD_SUITS = "CDHS"


def _flip_card(lines: list[bytes], data: st.DataObject) -> list[bytes]:
    index = data.draw(st.integers(1, len(lines) - 1), label="line")
    row = json.loads(lines[index])
    cards = sorted(cards_in(row["data"]))
    if not cards:
        return lines
    old = data.draw(st.sampled_from(cards), label="card")
    new = data.draw(st.sampled_from([r + s for r in CARD_RANKS for s in CARD_SUITS]), label="new")
    text = lines[index].decode().replace(f'"{old}"', f'"{new}"', 1)
    return [*lines[:index], text.encode(), *lines[index + 1 :]]


def _drop_line(lines: list[bytes], data: st.DataObject) -> list[bytes]:
    index = data.draw(st.integers(0, len(lines) - 1), label="line")
    return [*lines[:index], *lines[index + 1 :]]


def _swap_lines(lines: list[bytes], data: st.DataObject) -> list[bytes]:
    first = data.draw(st.integers(0, len(lines) - 2), label="line")
    second = data.draw(st.integers(first + 1, len(lines) - 1), label="other")
    swapped = list(lines)
    swapped[first], swapped[second] = swapped[second], swapped[first]
    return swapped


def _change_number(lines: list[bytes], data: st.DataObject) -> list[bytes]:
    index = data.draw(st.integers(0, len(lines) - 1), label="line")
    row = json.loads(lines[index])
    numbers = [
        (key, value)
        for key, value in (row.get("data") or row).items()
        if isinstance(value, int) and not isinstance(value, bool)
    ]
    if not numbers:
        return lines
    key, value = data.draw(st.sampled_from(numbers), label="field")
    delta = data.draw(st.sampled_from([1, -1, 7, HUGE_INT]), label="delta")
    target = row.get("data") if "data" in row else row
    target[key] = value + delta
    return [*lines[:index], json.dumps(row).encode(), *lines[index + 1 :]]


MUTATIONS = {
    "flip a card": _flip_card,
    "drop a line": _drop_line,
    "swap two lines": _swap_lines,
    "change a number": _change_number,
}


def _same_content(a: list[bytes], b: list[bytes]) -> bool:
    """Returns whether two logs hold the same JSON, line by line."""
    return len(a) == len(b) and all(
        json.loads(x) == json.loads(y) for x, y in zip(a, b, strict=True)
    )


@PROPERTY
@given(mutation=st.sampled_from(sorted(MUTATIONS)), data=st.data())
def test_a_tampered_export_is_refused_by_import_and_replay_naming_the_first_bad_event(
    export: bytes, mutation: str, data: st.DataObject
) -> None:
    lines = [line for line in export.split(b"\n") if line.strip()]
    tampered = MUTATIONS[mutation](lines, data)
    changed = not _same_content(lines, tampered)
    body = b"\n".join(tampered) + b"\n"
    report = replay_log(body.decode().splitlines())
    store = InMemoryEventStore()
    with TestClient(service(store)) as client:
        response = client.post(
            "/v1/games/import",
            content=body,
            headers={**ADMIN, "content-type": "application/x-ndjson"},
        )
    if not changed:
        assert report.ok, report.reason
        assert response.status_code == 201, response.text[:300]
        return
    assert not report.ok, mutation
    problem = assert_problem(response, 422)
    assert problem["type"].endswith("invalid-log")
    if report.version is None:
        assert problem.get("field") == "header", problem
    else:
        assert problem.get("event_version") == report.version, (problem, report.reason)
    assert feed_length(store) == 0
