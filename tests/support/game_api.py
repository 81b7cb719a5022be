"""The game service's REST API behaviours that hold over every event store (`GameApiBehaviours`,
run over the in-memory store by tests/unit/http/test_game_api.py and over Redis by
tests/integration/test_game_api_redis.py), and test-bump, the toy game they host."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.bots.generic import FirstLegalBot
from shared.catalog import get_game
from shared.errors import IllegalAction, InvalidRuleset
from shared.games.base import GameSpec
from shared.games.cards import standard_deck
from shared.messages.codec import to_json
from shared.messages.common import Action, Event, GameCreated, GameFinished, Result
from shared.store.port import EventStore
from tests.support.api import Client, problem
from tests.support.results import assert_shithead_places


class BumpRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Test-bump options: the game ends after `limit` bumps."""

    limit: int = 4


class Bump(Action, frozen=True):
    """The seat to move bumps the counter."""


class BumpStarted(Event, frozen=True):
    """A test-bump game started."""

    ruleset: BumpRules
    players: int


class Bumped(Event, frozen=True):
    """`seat` bumped the counter."""

    seat: int


class BumpState(msgspec.Struct, frozen=True):
    """Seats take turns bumping, seat 0 first, until the limit."""

    players: int
    limit: int
    bumps: int = 0
    result: Result | None = None


def _evolve(state: BumpState | None, event: Event) -> BumpState:
    """Returns the state after `event`."""
    if isinstance(event, BumpStarted):
        return BumpState(event.players, event.ruleset.limit)
    assert state is not None
    if isinstance(event, Bumped):
        return msgspec.structs.replace(state, bumps=state.bumps + 1)
    assert isinstance(event, GameFinished)
    return msgspec.structs.replace(state, result=event.result)


def _to_move(state: BumpState) -> list[int]:
    """Returns the seat whose bump is due, nothing once the game is over."""
    return [] if state.result is not None else [state.bumps % state.players]


def _decide(state: BumpState, seat: int, action: Action) -> list[Event]:
    """Returns the bump of `seat`, and the finish when it is the last."""
    if seat not in _to_move(state):
        raise IllegalAction("not_your_turn", f"seat {seat} is not to move")
    if state.bumps + 1 < state.limit:
        return [Bumped(seat)]
    return [Bumped(seat), GameFinished(result=Result("finished", [1] * state.players))]


def _validate(rules: BumpRules, players: int) -> None:
    """Raises InvalidRuleset unless one or two players play."""
    if not 1 <= players <= 2:
        raise InvalidRuleset("players", f"test-bump takes 1 or 2 players, not {players}")


BUMP: GameSpec[BumpState, BumpRules, BumpState, Bump] = GameSpec(
    name="test-bump",
    title="Test bump",
    min_players=1,
    max_players=2,
    has_decisions=True,
    ruleset_type=BumpRules,
    presets={"classic": BumpRules()},
    action_type=Bump,
    event_type=GameCreated | BumpStarted | Bumped | GameFinished,
    deal=lambda rules, players, seed: BumpStarted(rules, players),
    evolve=_evolve,
    decide=_decide,
    view=lambda state, seat: state,
    legal_actions=lambda state, seat: [Bump()] if seat in _to_move(state) else [],
    to_move=_to_move,
    is_over=lambda state: state.result is not None,
    result=lambda state: state.result,
    validate=_validate,
    bots={"bumper": FirstLegalBot()},
)


BUMP_SEATS = [{"kind": "external"}, {"kind": "bot"}]
"""Seat 0 is posted by the test client; seat 1, a bot, bumps as soon as it is due."""


def feed_size(store: EventStore) -> int:
    """Returns how many events the store holds over every game."""
    return len(store.read_feed(count=100_000))


def create(client: Client, **body: Any) -> dict[str, Any]:
    """Creates a game, checks the 201, and returns its body."""
    response = client.post("/v1/games", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def bump_at(version: int, seat: int = 0) -> dict[str, Any]:
    """Returns an action body: `seat` bumps at `version`."""
    return {"seat": seat, "action": {"type": "Bump"}, "expected_version": version}


SHITHEAD_SEATS = [
    {"kind": "external"},
    {"kind": "external"},
    {"kind": "bot", "bot": "random"},
    {"kind": "bot", "bot": "random"},
]


SHITHEAD = {"game": "shithead", "ruleset": "classic", "seats": SHITHEAD_SEATS, "seed": 11}
"""A classic four-player Shithead game: seats 0 and 1 are posted by the test, 2 and 3 are bots."""


EXTERNAL = (0, 1)


HIDDEN = "??"


def seat_view(client: Client, game_id: str, seat: int) -> dict[str, Any]:
    """Returns the view of `seat`, after checking the 200."""
    response = client.get(f"/v1/games/{game_id}/view", params={"seat": seat})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def due_view(client: Client, game_id: str) -> dict[str, Any] | None:
    """Returns the view of the first external seat due, None when the game waits for none."""
    to_move = seat_view(client, game_id, 0)["to_move"]
    due = [seat for seat in to_move if seat in EXTERNAL]
    return seat_view(client, game_id, due[0]) if due else None


def take(
    client: Client, view: dict[str, Any], action: dict[str, Any], key: str | None = None
) -> Any:
    """Posts `action` for the seat of `view` at the view's version; returns the response."""
    body = {"seat": view["seat"], "action": action, "expected_version": view["version"]}
    headers = {"Idempotency-Key": key} if key else None
    return client.post(f"/v1/games/{view['game_id']}/actions", json=body, headers=headers)


def play_until(
    client: Client, game_id: str, done: Callable[[dict[str, Any]], bool]
) -> dict[str, Any] | None:
    """Plays the first legal action for each due external seat until `done(view)` holds.

    Returns the view of the due seat for which it holds, None when the game ended first.
    """
    for move in range(10_000):
        view = due_view(client, game_id)
        if view is None or done(view):
            return view
        assert view["legal_actions"], view
        response = take(client, view, view["legal_actions"][0], key=f"move-{move}")
        assert response.status_code == 200, response.text
    pytest.fail("the game did not end in 10,000 external moves")


def stored_events(store: EventStore, game_id: str) -> list[dict[str, Any]]:
    """Returns the whole stored log of a game as JSON-ready dicts, unredacted."""
    spec = get_game("shithead")
    return [to_json(event) for event in spec.codec.decode_all(store.read(game_id))]


def listed_events(client: Client, game_id: str, **params: Any) -> list[dict[str, Any]]:
    """Returns the `data` of every event the API lists for a game with `params`."""
    response = client.get(f"/v1/games/{game_id}/events", params=params)
    assert response.status_code == 200, response.text
    return [event["data"] for event in response.json()["events"]]


def hidden_cards(store: EventStore, game_id: str, seat: int) -> set[str]:
    """Returns the cards `seat` may not know now: other hands (less the cards public events
    put there, such as a face-up card swapped in), every face-down card, the deck."""
    state = load(store, game_id).state
    public = getattr(state, "known", None) or [() for _ in state.hands]
    others = [
        card
        for other, hand in enumerate(state.hands)
        if other != seat
        for card in Counter(hand) - Counter(public[other])
    ]
    face_down = [card for cards in state.face_down for card in cards]
    return {*others, *face_down, *state.deck}


def strings_in(body: Any) -> set[str]:
    """Returns every string anywhere in a JSON-like body."""
    if isinstance(body, str):
        return {body}
    if isinstance(body, dict):
        return {text for value in body.values() for text in strings_in(value)}
    if isinstance(body, list):
        return {text for value in body for text in strings_in(value)}
    return set()


class GameApiBehaviours:
    """Behaviours of the API over any event store; a subclass provides the `store` fixture."""

    @pytest.fixture
    def client(self, store: EventStore) -> Iterator[Client]:
        """Returns a test client of the app over `store`, bot turns played in-process."""
        with TestClient(create_app(store, InProcessDispatcher(store))) as client:
            yield client

    def test_a_four_player_beggar_game_is_played_to_its_end_on_creation(
        self, client: Client, store: EventStore
    ) -> None:
        response = client.post("/v1/games", json={"game": "beggar", "players": 4, "seed": 7})
        assert response.status_code == 201, response.text
        game = response.json()
        assert response.headers["location"] == f"/v1/games/{game['game_id']}"
        assert game["game"] == "beggar"
        assert game["status"] in {"finished", "loop", "capped"}
        assert game["status"] == game["result"]["status"]
        assert game["to_move"] == []
        assert len(game["seats"]) == 4
        assert game["version"] == store.version(game["game_id"])
        assert game["view"]["status"] == game["status"]
        assert client.get(f"/v1/games/{game['game_id']}").json() == game

    def test_events_are_listed_in_version_order_from_1_to_the_last(self, client: Client) -> None:
        game = create(client, game="beggar", players=4, seed=7)
        page = client.get(f"/v1/games/{game['game_id']}/events").json()
        events = page["events"]
        assert [event["version"] for event in events] == list(range(1, game["version"] + 1))
        assert [event["type"] for event in events[:2]] == ["GameCreated", "GameStarted"]
        assert events[-1]["type"] == "GameFinished"
        assert all(event["data"]["type"] == event["type"] for event in events)
        assert all(event["recorded_at"] > 0 for event in events)
        assert events[0]["data"]["seats"] == game["seats"]

    def test_events_after_a_version_come_at_most_limit_at_a_time(self, client: Client) -> None:
        game = create(client, game="beggar", players=2, seed=3)
        url = f"/v1/games/{game['game_id']}/events"
        page = client.get(url, params={"after": 2, "limit": 3}).json()
        assert [event["version"] for event in page["events"]] == [3, 4, 5]
        assert page["version"] == game["version"]
        assert client.get(url, params={"after": game["version"]}).json()["events"] == []

    def test_a_retried_creation_with_the_same_key_returns_the_same_game_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        body = {"game": "beggar", "players": 3, "seed": 11}
        first = client.post("/v1/games", json=body, headers={"Idempotency-Key": "create-1"})
        assert first.status_code == 201, first.text
        size = feed_size(store)
        again = client.post("/v1/games", json=body, headers={"Idempotency-Key": "create-1"})
        assert again.status_code == 200, again.text
        assert again.json() == first.json()
        assert again.headers["location"] == first.headers["location"]
        assert feed_size(store) == size

    def test_a_retried_creation_without_a_seed_returns_the_same_game(self, client: Client) -> None:
        body = {"game": "beggar", "players": 2}
        first = client.post("/v1/games", json=body, headers={"Idempotency-Key": "unseeded"})
        again = client.post("/v1/games", json=body, headers={"Idempotency-Key": "unseeded"})
        assert (first.status_code, again.status_code) == (201, 200), again.text
        assert again.json()["game_id"] == first.json()["game_id"]

    def test_a_creation_key_reused_with_another_body_is_422_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        headers = {"Idempotency-Key": "create-2"}
        client.post("/v1/games", json={"game": "beggar", "players": 2, "seed": 1}, headers=headers)
        size = feed_size(store)
        response = client.post(
            "/v1/games", json={"game": "beggar", "players": 3, "seed": 1}, headers=headers
        )
        assert problem(response, 422)["field"] == "Idempotency-Key"
        assert feed_size(store) == size

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"game": "chess", "players": 2}, "game"),
            ({"game": "beggar", "players": 2, "ruleset": "tournament"}, "ruleset"),
            ({"game": "beggar", "players": 2, "ruleset": {"decks": 0}}, "ruleset.decks"),
            ({"game": "beggar", "players": 2, "ruleset": {"jokers": True}}, "ruleset"),
            ({"game": "beggar", "players": 5}, "players"),
            ({"game": "beggar"}, "seats"),
            ({"game": "beggar", "seats": [{"kind": "external"}, {}]}, "seats[0].kind"),
            ({"game": "beggar", "seats": [{}, {"bot": "nobody"}]}, "seats[1].bot"),
            ({"game": "beggar", "seats": [{}, {}], "players": 3}, "players"),
        ],
    )
    def test_an_impossible_game_is_422_naming_the_field_and_appends_nothing(
        self, client: Client, store: EventStore, body: dict[str, Any], field: str
    ) -> None:
        body = problem(client.post("/v1/games", json=body), 422)
        assert body["field"] == field
        assert body["type"].endswith("invalid-request")
        assert feed_size(store) == 0

    @pytest.mark.parametrize(
        ("content", "field"),
        [
            (b'{"game": "beggar", "players": ', "body"),
            (b"", "body"),
            (b"[]", "body"),
            (b"{}", "game"),
            (b'{"game": 1}', "game"),
            (b'{"game": "beggar", "players": "two"}', "players"),
            (b'{"game": "beggar", "players": 1000000000}', "players"),
            (b'{"game": "beggar", "players": 2, "colour": "red"}', "colour"),
            (b'{"game": "beggar", "seats": [{"kind": "robot"}]}', "seats[0].kind"),
            (b'{"game": "beggar", "seats": [{}, {"owner": "me"}]}', "seats[1].owner"),
        ],
    )
    def test_a_malformed_creation_is_400_naming_the_field_and_appends_nothing(
        self, client: Client, store: EventStore, content: bytes, field: str
    ) -> None:
        response = client.post(
            "/v1/games", content=content, headers={"content-type": "application/json"}
        )
        body = problem(response, 400)
        assert body["field"] == field
        assert feed_size(store) == 0

    def test_an_empty_idempotency_key_is_400_naming_the_header(
        self, client: Client, store: EventStore
    ) -> None:
        response = client.post(
            "/v1/games", json={"game": "beggar", "players": 2}, headers={"Idempotency-Key": ""}
        )
        assert problem(response, 400)["field"] == "Idempotency-Key"
        assert feed_size(store) == 0

    @pytest.mark.parametrize(
        ("method", "path", "body"),
        [
            ("GET", "/v1/games/nope", None),
            ("GET", "/v1/games/nope/events", None),
            ("GET", "/v1/games/nope/view?seat=0", None),
            ("POST", "/v1/games/nope/actions", bump_at(2)),
        ],
    )
    def test_an_unknown_game_is_404_on_every_route(
        self, client: Client, store: EventStore, method: str, path: str, body: Any
    ) -> None:
        response = client.request(method, path, json=body)
        assert problem(response, 404)["game_id"] == "nope"
        assert feed_size(store) == 0

    def test_an_action_posted_to_beggar_is_422_no_decisions_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game = create(client, game="beggar", players=2, seed=5)
        action = {"seat": 0, "action": {"type": "PlayTrick"}, "expected_version": game["version"]}
        response = client.post(f"/v1/games/{game['game_id']}/actions", json=action)
        assert problem(response, 422)["rule"] == "no_decisions"
        assert store.version(game["game_id"]) == game["version"]

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"action": {"type": "Bump"}, "expected_version": 2}, "seat"),
            ({"seat": "first", "action": {"type": "Bump"}, "expected_version": 2}, "seat"),
            ({"seat": -1, "action": {"type": "Bump"}, "expected_version": 2}, "seat"),
            ({"seat": 0, "action": "Bump", "expected_version": 2}, "action"),
            ({"seat": 0, "action": {"type": "Bump"}}, "expected_version"),
            ({"seat": 0, "action": {"type": "Bump"}, "expected_version": 2, "at": 1}, "at"),
        ],
    )
    def test_a_malformed_action_is_400_naming_the_field_and_appends_nothing(
        self, client: Client, store: EventStore, body: dict[str, Any], field: str
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        response = client.post(f"/v1/games/{game['game_id']}/actions", json=body)
        assert problem(response, 400)["field"] == field
        assert store.version(game["game_id"]) == game["version"]

    def test_a_game_with_decisions_waits_for_its_external_seat_and_shows_no_view(
        self, client: Client
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        assert (game["version"], game["status"], game["to_move"]) == (2, "playing", [0])
        assert game["result"] is None
        assert "view" not in game

    def test_an_action_is_applied_and_the_bot_due_next_plays_at_once(self, client: Client) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        url = f"/v1/games/{game['game_id']}"
        response = client.post(f"{url}/actions", json=bump_at(2))
        assert response.status_code == 200, response.text
        assert response.json() == {
            "game_id": game["game_id"],
            "version": 3,
            "first_version": 3,
            "replayed": False,
        }
        after = client.get(url).json()
        assert (after["version"], after["to_move"]) == (4, [0])

    def test_a_stale_expected_version_is_409_with_the_current_version_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        url = f"/v1/games/{game['game_id']}/actions"
        assert client.post(url, json=bump_at(2)).status_code == 200
        body = problem(client.post(url, json=bump_at(2)), 409)
        assert body["current_version"] == 4
        assert store.version(game["game_id"]) == 4

    def test_a_retried_action_with_the_same_key_replays_the_first_outcome_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        url = f"/v1/games/{game['game_id']}/actions"
        headers = {"Idempotency-Key": "bump-1"}
        first = client.post(url, json=bump_at(2), headers=headers).json()
        again = client.post(url, json=bump_at(2), headers=headers)
        assert again.status_code == 200, again.text
        assert again.json() == {**first, "replayed": True}
        assert store.version(game["game_id"]) == 4

    def test_an_action_key_reused_with_another_body_is_422_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        url = f"/v1/games/{game['game_id']}/actions"
        headers = {"Idempotency-Key": "bump-2"}
        client.post(url, json=bump_at(2), headers=headers)
        response = client.post(url, json=bump_at(4), headers=headers)
        assert problem(response, 422)["field"] == "Idempotency-Key"
        assert store.version(game["game_id"]) == 4

    @pytest.mark.parametrize(
        ("action", "member", "name"),
        [
            (bump_at(2, seat=1), "rule", "bot_seat"),
            (bump_at(2, seat=2), "field", "seat"),
            ({**bump_at(2), "action": {"type": "Jump"}}, "field", "action"),
        ],
    )
    def test_an_action_that_breaks_a_rule_or_names_nothing_is_422_and_appends_nothing(
        self, client: Client, store: EventStore, action: dict[str, Any], member: str, name: str
    ) -> None:
        game = create(client, game="test-bump", seats=BUMP_SEATS)
        response = client.post(f"/v1/games/{game['game_id']}/actions", json=action)
        assert problem(response, 422)[member] == name
        assert store.version(game["game_id"]) == 2

    def test_a_shithead_game_waits_for_its_external_seats_once_the_bots_have_swapped(
        self, client: Client, store: EventStore
    ) -> None:
        game = create(client, **SHITHEAD)
        assert (game["status"], game["to_move"], game["result"]) == ("playing", [0, 1], None)
        assert "view" not in game
        view = seat_view(client, game["game_id"], 0)
        assert (view["seat"], view["version"], view["status"]) == (0, game["version"], "playing")
        assert view["to_move"] == [0, 1]
        assert view["view"]["phase"] == "swap"
        assert view["view"]["ready"] == [False, False, True, True]
        assert view["view"]["hand"] == list(load(store, game["game_id"]).state.hands[0])
        assert {"type": "Ready"} in view["legal_actions"]
        assert {action["type"] for action in view["legal_actions"]} == {"Ready", "Swap"}
        hidden = hidden_cards(store, game["game_id"], 0)
        assert hidden
        assert not strings_in(view) & hidden
        assert not strings_in(game) & hidden

    def test_a_seat_view_of_a_seat_the_game_does_not_have_is_422_naming_the_seat(
        self, client: Client
    ) -> None:
        game = create(client, **SHITHEAD)
        response = client.get(f"/v1/games/{game['game_id']}/view", params={"seat": 4})
        assert problem(response, 422)["field"] == "seat"
        response = client.get(f"/v1/games/{game['game_id']}/events", params={"seat": 4})
        assert problem(response, 422)["field"] == "seat"

    @pytest.mark.parametrize("query", ["", "?seat=first", "?seat=-1"])
    def test_a_seat_view_without_a_seat_number_is_400_naming_the_seat(
        self, client: Client, query: str
    ) -> None:
        game = create(client, **SHITHEAD)
        response = client.get(f"/v1/games/{game['game_id']}/view{query}")
        assert problem(response, 400)["field"] == "seat"

    def test_the_external_seats_of_a_shithead_game_play_it_through_http_to_its_end(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]
        assert play_until(client, game_id, lambda _: False) is None
        game = client.get(f"/v1/games/{game_id}").json()
        assert game["status"] in {"finished", "capped"}
        assert game["status"] == game["result"]["status"]
        assert_shithead_places(game["result"])
        assert (game["to_move"], game["version"]) == ([], store.version(game_id))
        for seat in EXTERNAL:
            view = seat_view(client, game_id, seat)
            assert (view["status"], view["legal_actions"]) == (game["status"], [])
        stored = stored_events(store, game_id)
        assert {event["type"] for event in stored} >= {"PlayerReady", "CardsPlayed", "CardsDrawn"}
        assert listed_events(client, game_id, seat=0) == stored
        assert listed_events(client, game_id) == stored

    def test_a_shithead_seat_acting_out_of_turn_is_422_not_your_turn_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]
        view = play_until(client, game_id, lambda v: v["view"]["phase"] == "play")
        assert view is not None
        other = seat_view(client, game_id, 1 - view["seat"])
        assert other["legal_actions"] == []
        card = other["view"]["hand"][0]
        response = take(client, other, {"type": "PlayCards", "cards": [card]})
        assert problem(response, 422)["rule"] == "not_your_turn"
        assert store.version(game_id) == view["version"]

    def test_a_shithead_play_of_a_card_not_held_is_422_naming_the_rule_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]

        def plays_from_the_hand(view: dict[str, Any]) -> bool:
            seen = view["view"]
            return seen["phase"] == "play" and seen["zone"] == "hand" and not seen["opening"]

        view = play_until(client, game_id, plays_from_the_hand)
        assert view is not None
        own = {*view["view"]["hand"], *view["view"]["face_up"][view["seat"]]}
        card = next(card for card in standard_deck() if card not in own)
        response = take(client, view, {"type": "PlayCards", "cards": [card]})
        assert problem(response, 422)["rule"] == "card_not_held"
        assert store.version(game_id) == view["version"]

    def test_a_shithead_action_at_a_stale_version_is_409_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]
        first, second = seat_view(client, game_id, 0), seat_view(client, game_id, 1)
        assert take(client, first, {"type": "Ready"}).status_code == 200
        body = problem(take(client, second, {"type": "Ready"}), 409)
        assert body["current_version"] == first["version"] + 1
        assert store.version(game_id) == first["version"] + 1

    def test_a_retried_shithead_action_with_the_same_key_replays_and_appends_nothing(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]
        view = seat_view(client, game_id, 0)
        action = view["legal_actions"][-1]
        first = take(client, view, action, key="swap-1")
        assert first.status_code == 200, first.text
        version = store.version(game_id)
        again = take(client, view, action, key="swap-1")
        assert again.status_code == 200, again.text
        assert again.json() == {**first.json(), "replayed": True}
        assert store.version(game_id) == version

    def test_the_events_of_a_running_shithead_game_hide_what_the_seat_may_not_know(
        self, client: Client, store: EventStore
    ) -> None:
        game_id = create(client, **SHITHEAD)["game_id"]

        def another_seat_drew(_: dict[str, Any]) -> bool:
            stored = stored_events(store, game_id)
            return any(e["type"] == "CardsDrawn" and e["seat"] != 0 for e in stored)

        assert play_until(client, game_id, another_seat_drew) is not None
        stored = stored_events(store, game_id)
        for seat in (0, None):
            listed = listed_events(client, game_id, **({} if seat is None else {"seat": seat}))
            assert len(listed) == len(stored)
            for shown, event in zip(listed, stored, strict=True):
                if event["type"] == "GameStarted":
                    hands = event["hands"]
                    assert shown["hands"] == [
                        cards if s == seat else [HIDDEN] * len(cards)
                        for s, cards in enumerate(hands)
                    ]
                    assert shown["face_down"] == [[HIDDEN] * 3] * 4
                    assert shown["deck"] == [HIDDEN] * len(event["deck"])
                    assert shown["face_up"] == event["face_up"]
                elif event["type"] == "CardsDrawn" and event["seat"] != seat:
                    assert shown == {**event, "cards": [HIDDEN] * len(event["cards"])}
                elif event["type"] == "GameCreated":
                    assert event["bot_seed"]
                    assert event["deal_seed"]
                    assert event["salt"]
                    assert shown["commitment"] == event["commitment"] != ""
                    assert shown == {**event, "bot_seed": "", "deal_seed": "", "salt": ""}
                else:
                    assert shown == event

    def test_health_is_ok(self, client: Client) -> None:
        response = client.get("/health")
        assert (response.status_code, response.json()) == (200, {"status": "ok"})
