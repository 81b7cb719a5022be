"""Every game through one generic suite: each game the catalogue hosts, and High card, a toy
game this module hosts (tests/support/toy_game.py) to show that the suite, the API, the
replay and the export need nothing of a game but its `GameSpec`.

Seeded deals of every preset at the fewest and the most seats it deals to, played by the
random bot and by each built-in bot, are checked after every decision: the game waits for
someone until it ends, within a bound, and each seat it waits for has a legal action (and
no other seat has one); `apply` is `decide` then `fold`; the state holds every dealt card
and no other; a seat's view shows no card the game never showed that seat (its redacted
events), and every card a seat sees is public or its own; a spectator's table shows nothing
a seat cannot see. Then games of built-in bots are exported and replayed offline, and played
through the API and read back.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.app import create_app
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.loading import load
from shared.app.runtime import InProcessDispatcher
from shared.bots.generic import RandomBot
from shared.catalog import game_names, get_game, hosting
from shared.errors import InvalidRuleset
from shared.games.base import AnyGame, Bot
from shared.messages.common import Event, Seat
from shared.model import exported_log, log_replay
from shared.store.memory import InMemoryEventStore
from tests.support.leaks import cards_in
from tests.support.toy_game import HIGH_CARD

Client = TestClient[Litestar]

with hosting(HIGH_CARD):
    SPECS: dict[str, AnyGame] = {name: get_game(name) for name in game_names()}
"""Every game of the catalogue, and the toy game this module hosts for each test."""

SEEDS = range(3)
"""The deals each case plays: a few, to stay fast (each game's own property tests sweep more)."""
MAX_DECISIONS = 100_000
"""A bound no game's own cap comes near: a game still running past it does not end."""
RANDOM = RandomBot()


@pytest.fixture(autouse=True, scope="module")
def _hosted() -> Iterator[None]:
    """Hosts the toy game beside the catalogue's for every test of this module."""
    with hosting(HIGH_CARD):
        yield


def rulesets(spec: AnyGame) -> list[str]:
    """Returns the presets that play differently: one of those that differ only in their
    clock (which times the platform, not the rules), in name order."""
    found: dict[bytes, str] = {}
    for name in sorted(spec.presets):
        fields = msgspec.to_builtins(spec.presets[name])
        fields.pop("clock", None)
        found.setdefault(msgspec.json.encode(fields, order="sorted"), name)
    return sorted(found.values())


def seat_counts(spec: AnyGame, preset: str) -> list[int]:
    """Returns the fewest and the most seats that the preset deals to."""
    admitted = []
    for players in range(spec.min_players, spec.max_players + 1):
        try:
            spec.validate(spec.presets[preset], players)
        except InvalidRuleset:
            continue
        admitted.append(players)
    assert admitted, f"{spec.name}'s {preset} deals to no number of seats"
    return sorted({admitted[0], admitted[-1]})


def default_preset(spec: AnyGame) -> str:
    """Returns the name of the preset a game is played under when none is named."""
    return next(name for name, rules in spec.presets.items() if rules == spec.ruleset(None))


PRESET_CASES = [
    pytest.param(name, preset, players, id=f"{name}-{preset}-{players}p")
    for name, spec in SPECS.items()
    for preset in rulesets(spec)
    for players in seat_counts(spec, preset)
]
BOT_CASES = [
    pytest.param(name, bot, players, id=f"{name}-{bot}-{players}p")
    for name, spec in SPECS.items()
    for bot in spec.bots
    for players in seat_counts(spec, default_preset(spec))
]
TABLE_CASES = [
    pytest.param(name, players, id=f"{name}-{players}p")
    for name, spec in SPECS.items()
    for players in seat_counts(spec, default_preset(spec))
]


def as_json(value: Any) -> Any:
    """Returns `value` as its JSON reads back (tuples and sets as lists)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def cards(value: Any) -> Counter[str]:
    """Returns every card that `value` names, as many times as it names each."""
    return cards_in(as_json(value))


@dataclass
class Playthrough:
    """A seeded game played decision by decision under the generic checks."""

    spec: AnyGame
    players: int
    seed: int
    state: Any = None
    log: list[Event] = field(default_factory=list)
    dealt: Counter[str] = field(default_factory=Counter)
    """Every card of the deal."""
    shown: list[set[str]] = field(default_factory=list)
    """Per seat, every card its redacted events named so far."""
    public: set[str] = field(default_factory=set)
    """Every card the events, as a spectator sees them, named so far."""
    decisions: int = 0

    def deal(self, preset: str) -> None:
        """Deals the preset and checks the table before the first decision."""
        started = self.spec.deal(self.spec.presets[preset], self.players, self.seed)
        self.state, self.log = self.spec.fold([started]), [started]
        self.dealt = cards(started)
        self.shown = [set() for _ in range(self.players)]
        self.learn([started])
        for seat in range(self.players):
            unseen = self.shown[seat] - set(cards(self.spec.view(self.state, seat)))
            assert not unseen, f"{self.where()}: the deal shows seat {seat} {unseen}, its view not"
        if self.spec.table is not None:
            untabled = self.public - set(cards(self.spec.table(self.state)))
            assert not untabled, f"{self.where()}: the deal shows {untabled}, the table not"
        self.check()

    def learn(self, events: list[Event]) -> None:
        """Adds the cards of `events`, as each seat and a spectator see them."""
        for event in events:
            for seat in range(self.players):
                self.shown[seat] |= set(cards(self.spec.redact(event, seat)))
            self.public |= set(cards(self.spec.redact(event, None)))

    def where(self) -> str:
        """Returns the seed and the decision, to name a failure."""
        return f"{self.spec.name} seed {self.seed}, {self.players} seats, decision {self.decisions}"

    def check(self) -> None:
        """Checks every invariant of the current state."""
        spec, state, where = self.spec, self.state, self.where()
        held = cards(state)
        assert self.dealt <= held, f"{where}: cards lost {self.dealt - held}"
        foreign = set(held) - set(self.dealt)
        assert not foreign, f"{where}: cards never dealt {foreign}"
        views = [cards(spec.view(state, seat)) for seat in range(self.players)]
        for seat, seen in enumerate(views):
            unshown = set(seen) - self.shown[seat]
            assert not unshown, f"{where}: seat {seat} sees {unshown}, never shown to it"
        self.check_privates([seen & self.dealt for seen in views])
        if spec.table is not None:
            table = cards(spec.table(state))
            assert set(table) <= self.public, f"{where}: the table shows {table}"
            for seat, seen in enumerate(views):
                assert table <= seen, f"{where}: seat {seat} cannot see {table - seen}"
        self.check_turn()

    def check_privates(self, views: list[Counter[str]]) -> None:
        """Checks that every card a seat sees is public (every seat sees it) or its own: no two
        seats see more copies of a card between them than the deal holds."""
        common = views[0].copy()
        for seen in views[1:]:
            common &= seen
        counted = common.copy()
        for seen in views:
            counted += seen - common
        assert counted <= self.dealt, f"{self.where()}: seen by two seats {counted - self.dealt}"

    def check_turn(self) -> None:
        """Checks who may move: the seats the game waits for, each with a legal action, until
        it ends with a place for every seat."""
        spec, state, where = self.spec, self.state, self.where()
        waiting = spec.to_move(state)
        for seat in range(self.players):
            legal = spec.legal_actions(state, seat)
            assert bool(legal) is (seat in waiting), f"{where}: seat {seat} may take {legal}"
        if not spec.is_over(state):
            assert waiting, f"{where}: a running game waits for nobody"
            assert spec.result(state) is None
            return
        assert not waiting
        result = spec.result(state)
        assert result is not None, where
        assert len(result.places) == self.players, where
        assert min(result.places) == 1, where
        assert max(result.places) <= self.players, where

    def decide(self, bots: list[Bot[Any]], choose: random.Random) -> None:
        """Plays one decision of a seat the game waits for, by that seat's bot."""
        spec, state = self.spec, self.state
        seat = choose.choice(spec.to_move(state))
        legal = spec.legal_actions(state, seat)
        action = bots[seat].choose(spec.view(state, seat), legal, f"{self.seed}:{self.decisions}")
        assert action in legal, f"{self.where()}: seat {seat}'s bot chose {action}"
        events = spec.decide(state, seat, action)
        after = spec.fold(events, state)
        assert spec.apply(state, seat, action) == (after, events), "apply is decide, then fold"
        self.state, self.decisions = after, self.decisions + 1
        self.log += events
        self.learn(events)
        self.check()

    def play(self, bots: list[Bot[Any]]) -> None:
        """Plays the game to its end, checking it after every decision."""
        choose = random.Random(self.seed)
        while not self.spec.is_over(self.state):
            assert self.decisions < MAX_DECISIONS, f"{self.where()}: the game does not end"
            self.decide(bots, choose)
        assert self.spec.fold(self.log) == self.state, "the log folds to the game played"


def play(name: str, preset: str, players: int, seed: int, bots: list[Bot[Any]]) -> Playthrough:
    """Returns a seeded game of `bots` (one per seat) played to its end under the checks."""
    game = Playthrough(SPECS[name], players, seed)
    game.deal(preset)
    game.play(bots)
    return game


def bot_seats(spec: AnyGame, players: int) -> list[Seat]:
    """Returns seats of the game's built-in bots, each of them in turn from seat 0."""
    names = list(spec.bots)
    return [Seat(kind="bot", bot=names[seat % len(names)]) for seat in range(players)]


# Play ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "preset", "players"), PRESET_CASES)
def test_random_play_of_every_preset_keeps_every_invariant_after_every_decision(
    name: str, preset: str, players: int
) -> None:
    for seed in SEEDS:
        play(name, preset, players, seed, [RANDOM] * players)


@pytest.mark.parametrize(("name", "bot", "players"), BOT_CASES)
def test_each_built_in_bot_plays_seeded_deals_to_the_end_keeping_every_invariant(
    name: str, bot: str, players: int
) -> None:
    spec = SPECS[name]
    bots = [spec.bots[bot], *[RANDOM] * (players - 1)]
    for seed in SEEDS[:2]:
        play(name, default_preset(spec), players, seed, bots)


def test_the_suite_covers_every_game_of_the_catalogue_and_the_toy_game() -> None:
    assert set(SPECS) == {*game_names(), HIGH_CARD.name}
    covered = {case.values[0] for case in PRESET_CASES}
    assert covered == set(SPECS) == {case.values[0] for case in BOT_CASES}


# Export and replay -----------------------------------------------------------------------


@pytest.mark.parametrize(("name", "players"), TABLE_CASES)
def test_a_finished_game_of_built_in_bots_exports_and_replays_offline(
    name: str, players: int
) -> None:
    spec = SPECS[name]
    for seed in SEEDS[:2]:
        store = InMemoryEventStore()
        seats = bot_seats(spec, players)
        game_id = create_game(store, name, seats=seats, seed=f"{name}:{seed}").game_id
        play_bot_turns(store, game_id)
        loaded = load(store, game_id)
        assert spec.is_over(loaded.state)
        events = spec.codec.decode_all(store.read(game_id))

        lines = exported_log.export_lines(game_id, events)
        read = exported_log.read_log(lines)
        assert read.events == events
        assert exported_log.export_lines(game_id, read.events) == lines
        report = log_replay.replay_log(lines)
        assert report.ok, (seed, report.version, report.reason)
        assert report.result == spec.result(loaded.state)
        assert report.verification is not None
        assert report.verification.status == "ok"


# The API ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(_hosted: None) -> Iterator[Client]:
    """Returns a client of the embedded service over a store of this module's own."""
    store = InMemoryEventStore()
    with TestClient(create_app(store, InProcessDispatcher(store))) as served:
        yield served


def answer(client: Client, path: str, **params: Any) -> Any:
    """Returns the JSON body of a 200 to GET `path`."""
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize(("name", "players"), TABLE_CASES)
def test_a_game_of_built_in_bots_created_through_the_api_ends_reads_back_and_replays(
    client: Client, name: str, players: int
) -> None:
    spec = SPECS[name]
    seats = [{"kind": "bot", "bot": seat.bot} for seat in bot_seats(spec, players)]
    created = client.post("/v1/games", json={"game": name, "seats": seats, "seed": 5})
    assert created.status_code == 201, created.text
    game_id = created.json()["game_id"]

    game = answer(client, f"/v1/games/{game_id}")
    replay = answer(client, f"/v1/games/{game_id}/replay")
    exported = client.get(f"/v1/games/{game_id}/export")
    assert exported.status_code == 200, exported.text

    assert (game["game"], game["status"], game["to_move"]) == (name, game["result"]["status"], [])
    log = exported_log.read_log(exported.content.splitlines())
    state = spec.fold(log.events)
    assert game["result"] == as_json(spec.result(state))
    assert (replay["over"], replay["version"]) == (True, game["version"])
    assert replay["state"] == as_json(state)
    assert replay["result"] == game["result"]
    report = log_replay.replay_log(exported.content.splitlines())
    assert report.ok, (report.version, report.reason)
    assert as_json(report.result) == game["result"]
    for seat in range(players):
        seen = answer(client, f"/v1/games/{game_id}/view", seat=seat)
        assert seen["view"] == as_json(spec.view(state, seat))
        assert seen["legal_actions"] == []
