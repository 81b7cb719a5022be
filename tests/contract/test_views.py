"""The TournamentViews contract, run against the in-memory twin and the PostgreSQL projection.

The PostgreSQL case writes to a real Redis store and runs the real projector (Redis
consumer group, small batches) into a migrated database before each read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import msgspec
import pytest
import redis

from services.ops.migrate import migrate
from services.projection.projector import Projector
from services.projection.views import PostgresTournamentViews
from shared.app.bot_turns import play_bot_turns
from shared.app.forks import fork_game
from shared.app.games import abort_game, create_game
from shared.app.loading import load
from shared.app.tournaments import create_tournament, load_tournament, run_in_process, start_game
from shared.messages.codec import encode
from shared.messages.common import Seat
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import (
    KIND,
    Entrant,
    TournamentCancelled,
    TournamentDefinition,
    TournamentState,
    display_name,
    pending,
    stream_id,
)
from shared.model.tournaments.standings import standings, tournament_ratings
from shared.ports.views.fold import to_datetime
from shared.ports.views.memory import InMemoryTournamentViews
from shared.ports.views.port import TournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore
from shared.store.redis_store import RedisEventStore

SHITHEAD = TournamentDefinition(
    game="shithead",
    entrants=[
        Entrant(bot="heuristic", version="h"),
        Entrant(bot="random", version="a"),
        Entrant(bot="random", version="b"),
        Entrant(bot="random", version="c"),
    ],
    table_size=2,
    seed="5",
)
"""Six two-player games; every entrant a distinct bot version, so every game is rated."""
SHITHEAD_KEYS = ["heuristic@h", "random@a", "random@b", "random@c"]
"""The rating keys of SHITHEAD's entrants, in entrant order."""
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
BEGGAR = TournamentDefinition(
    game="beggar",
    entrants=[Entrant(bot="turner", version="1"), Entrant(bot="turner", version="2")],
    table_size=2,
)
MIRROR = TournamentDefinition(
    game="autobus",
    entrants=[
        Entrant(bot="random", version="same"),
        Entrant(bot="random", version="same", name="twin"),
    ],
    table_size=2,
    seed="7",
)
"""One bot version on both seats: played and standing, never rated."""
WAITING = TournamentDefinition(game="autobus", entrants=AUTOBUS.entrants, table_size=3)
"""Created with its first round scheduled, never played."""


@dataclass
class Backend:
    """An event store, and the views of what it holds (projected first, where they lag)."""

    store: EventStore
    views: Callable[[], TournamentViews]


@dataclass
class Scenario:
    """The tournaments written to a backend's store, by id, in creation order, and the ids of
    the ad-hoc games (of no tournament): the finished one and the running one."""

    states: dict[str, TournamentState]
    finished_game: str
    running_game: str


def _memory_backend() -> Backend:
    """Returns an in-memory store and the in-memory twin folding it."""
    store = InMemoryEventStore()
    views = InMemoryTournamentViews(store)
    return Backend(store, lambda: views)


def _postgres_backend(client: redis.Redis, namespace: str, database_url: str) -> Backend:
    """Returns a Redis store and the PostgreSQL views the real projector keeps from its feed."""
    migrate(database_url)
    store = RedisEventStore(client, namespace)
    consumer = store.consumer("projection", "p1")
    views = PostgresTournamentViews(database_url)

    def projected() -> TournamentViews:
        with Projector(database_url, consumer) as projector:
            while projector.run_once(count=250):
                pass
        return views

    return Backend(store, projected)


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.integration)])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Returns each implementation in turn."""
    if request.param == "memory":
        return _memory_backend()
    client: redis.Redis = request.getfixturevalue("redis_client")
    namespace: str = request.getfixturevalue("namespace")
    database_url: str = request.getfixturevalue("database_url")
    return _postgres_backend(client, namespace, database_url)


@pytest.fixture
def scenario(backend: Backend) -> Scenario:
    """Writes five tournaments and two ad-hoc games (the first finished) to the backend's store."""
    store = backend.store
    states = {"t-shithead": run_in_process(store, SHITHEAD, "t-shithead")}
    adhoc = create_game(store, "autobus", seats=[Seat(bot="heuristic"), Seat(bot="random")])
    play_bot_turns(store, adhoc.game_id)
    states["t-autobus"] = run_in_process(store, AUTOBUS, "t-autobus")
    states["t-beggar"] = run_in_process(store, BEGGAR, "t-beggar")
    states["t-mirror"] = run_in_process(store, MIRROR, "t-mirror")
    create_tournament(store, WAITING, "t-waiting")
    states["t-waiting"] = load_tournament(store, "t-waiting")[0]
    running = create_game(store, "autobus", seats=[Seat(bot="random", version="9")] * 2)
    return Scenario(states, adhoc.game_id, running.game_id)


def test_tournaments_are_listed_newest_first_with_their_progress(
    backend: Backend, scenario: Scenario
) -> None:
    listed = backend.views().tournaments()
    assert [t.tournament_id for t in listed] == list(reversed(scenario.states))
    shithead = listed[-1]
    assert (shithead.game, shithead.format, shithead.status) == (
        "shithead",
        "round_robin",
        "finished",
    )
    assert shithead.entrants == SHITHEAD_KEYS
    assert (shithead.table_size, shithead.rounds) == (2, 1)
    assert (shithead.games_scheduled, shithead.games_played) == (6, 6)
    first = standings(scenario.states[shithead.tournament_id])[0].entrant
    assert shithead.winner == first == scenario.states[shithead.tournament_id].winner
    waiting = listed[0]
    assert (waiting.status, waiting.games_scheduled, waiting.games_played) == ("running", 1, 0)
    assert listed[0].created_at >= listed[-1].created_at


def test_tournaments_filter_by_status_and_game_and_stop_at_the_limit(
    backend: Backend, scenario: Scenario
) -> None:
    views = backend.views()
    assert [t.tournament_id for t in views.tournaments(status="running")] == ["t-waiting"]
    assert [t.tournament_id for t in views.tournaments(game="autobus")] == [
        "t-waiting",
        "t-mirror",
        "t-autobus",
    ]
    finished_autobus = views.tournaments(status="finished", game="autobus")
    assert [t.tournament_id for t in finished_autobus] == ["t-mirror", "t-autobus"]
    assert [t.tournament_id for t in views.tournaments(limit=2)] == ["t-waiting", "t-mirror"]
    assert views.tournaments(status="cancelled") == []
    assert views.tournaments(game="chess") == []


def test_tournaments_are_listed_with_their_names_and_descriptions(
    backend: Backend, scenario: Scenario
) -> None:
    named = msgspec.structs.replace(
        WAITING, name="Friday night autobus", description="Three bots, one table."
    )
    create_tournament(backend.store, named, "t-named")
    listed = {t.tournament_id: t for t in backend.views().tournaments()}
    assert (listed["t-named"].name, listed["t-named"].description) == (
        "Friday night autobus",
        "Three bots, one table.",
    )
    # A tournament its host did not name (stored without a name, as every tournament was
    # before names) is listed under the game's title and its format, with no description.
    assert (listed["t-shithead"].name, listed["t-shithead"].description) == (
        "Shithead round robin",
        None,
    )
    for tournament_id, state in scenario.states.items():
        line = listed[tournament_id]
        assert line.name == display_name(state.definition)
        assert line.description is None


def test_standings_are_those_of_the_folded_tournament(backend: Backend, scenario: Scenario) -> None:
    views = backend.views()
    for tournament_id, state in scenario.states.items():
        projected = views.standings(tournament_id)
        assert projected is not None
        assert (projected.tournament_id, projected.status) == (tournament_id, state.status)
        assert projected.standings == standings(state)
    assert views.standings("t-unknown") is None
    waiting = views.standings("t-waiting")
    assert waiting is not None
    assert [line.games for line in waiting.standings] == [0, 0, 0]


def test_a_later_event_of_a_tournament_changes_its_views(
    backend: Backend, scenario: Scenario
) -> None:
    assert [t.status for t in backend.views().tournaments(limit=1)] == ["running"]
    stream = stream_id("t-waiting")
    backend.store.append(
        stream, KIND, backend.store.version(stream), [encode(TournamentCancelled(reason="host"))]
    )
    views = backend.views()
    assert [t.tournament_id for t in views.tournaments(status="cancelled")] == ["t-waiting"]
    assert views.tournaments(status="running") == []
    cancelled = views.standings("t-waiting")
    assert cancelled is not None
    assert cancelled.status == "cancelled"


def test_the_leaderboard_rates_each_bot_version_by_its_games_in_the_standings_order(
    backend: Backend, scenario: Scenario
) -> None:
    # The leaderboard takes a tournament's games in schedule order, as its standings do, and
    # t-shithead is the only rated Shithead play, so both ratings must be equal.
    expected = tournament_ratings(scenario.states["t-shithead"])
    assert expected is not None
    board = backend.views().leaderboard("shithead")
    assert {entry.key: (entry.mu, entry.sigma) for entry in board} == {
        SHITHEAD_KEYS[entrant]: (rating.mu, rating.sigma) for entrant, rating in expected.items()
    }
    assert [entry.games for entry in board] == [3, 3, 3, 3]
    assert all(entry.ordinal == entry.mu - 3 * entry.sigma for entry in board)
    assert [entry.ordinal for entry in board] == sorted((e.ordinal for e in board), reverse=True)
    assert backend.views().leaderboard("shithead", limit=2) == board[:2]


def test_unrated_play_leaves_no_rating(backend: Backend, scenario: Scenario) -> None:
    views = backend.views()
    assert views.leaderboard("beggar") == []
    assert views.rating_history("autobus", "random@same") == []
    assert {entry.key for entry in views.leaderboard("autobus")} == {
        "heuristic@1",
        "random@1",
        "random@2",
    }
    assert "random@9" not in {entry.key for entry in views.leaderboard("autobus")}
    assert views.leaderboard("chess") == []


def test_a_rating_history_follows_a_bot_version_game_by_game(
    backend: Backend, scenario: Scenario
) -> None:
    views = backend.views()
    state = scenario.states["t-shithead"]
    records = {record.key: record for record in state.records}
    for entry in views.leaderboard("shithead"):
        index = SHITHEAD_KEYS.index(entry.key)
        played = [
            (records[game.key].game_id, records[game.key].places[game.table.index(index)])
            for game in state.rounds[0].games
            if index in game.table
        ]
        history = views.rating_history("shithead", entry.key)
        assert [(point.game_id, point.place) for point in history] == played
        assert [point.games for point in history] == [1, 2, 3]
        last = history[-1]
        assert (last.key, last.mu, last.sigma, last.ordinal) == (
            entry.key,
            entry.mu,
            entry.sigma,
            entry.ordinal,
        )
        assert [p.finished_at for p in history] == sorted(p.finished_at for p in history)
    assert views.rating_history("autobus", "nobody@1") == []


def _later_game(store: EventStore) -> str:
    """Creates an ad-hoc game a few milliseconds after the store's last creation; returns its id."""
    time.sleep(0.005)  # creation times are milliseconds, ties sort by id: keep the order plain
    return create_game(store, "autobus", seats=[Seat(bot="heuristic"), Seat(bot="random")]).game_id


def test_standalone_games_are_the_running_games_of_no_tournament_oldest_first(
    backend: Backend, scenario: Scenario
) -> None:
    store = backend.store
    waiting, _ = load_tournament(store, "t-waiting")
    tournament_game = start_game(store, "t-waiting", waiting, pending(waiting)[0])
    newer = _later_game(store)
    finished = _later_game(store)
    play_bot_turns(store, finished)
    listed = backend.views().standalone_games(10)
    assert listed == [scenario.running_game, newer]
    assert scenario.finished_game not in listed
    assert tournament_game not in listed, "a tournament's running game is the tournament's"


def test_standalone_games_stop_at_the_limit(backend: Backend, scenario: Scenario) -> None:
    newer = _later_game(backend.store)
    views = backend.views()
    assert views.standalone_games(2) == [scenario.running_game, newer]
    assert views.standalone_games(1) == [scenario.running_game]
    assert views.standalone_games(0) == []


def test_a_standalone_game_leaves_the_list_when_it_finishes(
    backend: Backend, scenario: Scenario
) -> None:
    assert backend.views().standalone_games(10) == [scenario.running_game]
    play_bot_turns(backend.store, scenario.running_game)
    assert backend.views().standalone_games(10) == []


def get_game_result_status(store: EventStore, game_id: str) -> str:
    """Returns the result's status of a game that is over, as its stream folds."""
    loaded = load(store, game_id)
    result = loaded.spec.result(loaded.state)
    assert result is not None
    return result.status


def _created_ms(store: EventStore, game_id: str) -> int:
    """Returns when the game's GameCreated was recorded (ms)."""
    return store.read(game_id, limit=1)[0].recorded_at


def _every_game(store: EventStore, scenario: Scenario) -> dict[str, str | None]:
    """Returns each game the scenario played or started, with its tournament (None: ad hoc)."""
    games: dict[str, str | None] = {scenario.finished_game: None, scenario.running_game: None}
    for tournament_id, state in scenario.states.items():
        games.update({record.game_id: tournament_id for record in state.records})
    return games


def test_recent_games_are_every_game_newest_first_with_its_seats_status_and_tournament(
    backend: Backend, scenario: Scenario
) -> None:
    store = backend.store
    games = _every_game(store, scenario)
    listed = backend.views().recent_games(limit=100)
    newest = sorted(games, key=lambda game_id: (_created_ms(store, game_id), game_id))[::-1]
    assert [line.game_id for line in listed] == newest
    assert {line.game_id: line.tournament_id for line in listed} == games
    running = listed[0]
    assert (running.game, running.status, running.finished_at) == ("autobus", "playing", None)
    assert running.seats == ["random@9", "random@9"]
    adhoc = next(line for line in listed if line.game_id == scenario.finished_game)
    assert adhoc.seats == ["heuristic", "random"]
    assert adhoc.status == get_game_result_status(store, scenario.finished_game)
    assert adhoc.finished_at is not None
    assert adhoc.finished_at >= adhoc.created_at
    first = scenario.states["t-shithead"].rounds[0].games[0]
    shithead = next(line for line in listed if line.game_id == game_id_for(first.key))
    assert shithead.seats == [SHITHEAD_KEYS[entrant] for entrant in first.table]
    assert (shithead.game, shithead.tournament_id) == ("shithead", "t-shithead")
    for line in listed:
        assert line.created_at == to_datetime(_created_ms(store, line.game_id))
        assert (line.status == "playing") == (line.finished_at is None)


def test_recent_games_filter_by_game_and_status_and_stop_at_the_limit(
    backend: Backend, scenario: Scenario
) -> None:
    views = backend.views()
    everything = views.recent_games(limit=100)
    beggar = scenario.states["t-beggar"].records
    assert [line.game_id for line in views.recent_games(game="beggar")] == [
        record.game_id for record in reversed(beggar)
    ]
    assert [line.game_id for line in views.recent_games(status="playing")] == [
        scenario.running_game
    ]
    autobus = [line for line in everything if line.game == "autobus"]
    assert views.recent_games(game="autobus", limit=100) == autobus
    ended = [line for line in autobus if line.status == "finished"]
    assert views.recent_games(game="autobus", status="finished", limit=100) == ended
    assert views.recent_games(limit=3) == everything[:3]
    assert len(views.recent_games()) == min(20, len(everything))
    assert views.recent_games(status="aborted") == []
    assert views.recent_games(game="chess") == []


def test_a_game_s_line_follows_it_to_its_end_and_an_aborted_game_lists_as_aborted(
    backend: Backend, scenario: Scenario
) -> None:
    store = backend.store
    play_bot_turns(store, scenario.running_game)
    newer = _later_game(store)
    abort_game(store, newer, "host")
    listed = backend.views().recent_games(limit=2)
    assert [line.game_id for line in listed] == [newer, scenario.running_game]
    aborted, ended = listed
    assert (aborted.status, aborted.tournament_id) == ("aborted", None)
    assert aborted.finished_at is not None
    assert ended.status == get_game_result_status(store, scenario.running_game)
    assert ended.status != "playing"
    assert ended.finished_at is not None
    assert backend.views().recent_games(status="playing") == []
    assert [line.game_id for line in backend.views().recent_games(status="aborted")] == [newer]


def test_a_tournament_s_running_game_lists_with_its_tournament(
    backend: Backend, scenario: Scenario
) -> None:
    store = backend.store
    waiting, _ = load_tournament(store, "t-waiting")
    started = start_game(store, "t-waiting", waiting, pending(waiting)[0])
    playing = backend.views().recent_games(status="playing")
    assert {line.game_id: line.tournament_id for line in playing} == {
        started: "t-waiting",
        scenario.running_game: None,
    }


def _codes(views: TournamentViews) -> dict[str, tuple[bool | None, str | None]]:
    """Returns each listed game's rated flag and unrated code, by game id."""
    return {
        line.game_id: (line.rated, line.unrated.code if line.unrated else None)
        for line in views.recent_games(limit=100)
    }


def test_every_listed_game_says_whether_it_is_rated_and_why_not(
    backend: Backend, scenario: Scenario
) -> None:
    codes = _codes(backend.views())
    states = scenario.states
    for record in states["t-shithead"].records + states["t-autobus"].records:
        assert codes[record.game_id] == (True, None)
    for record in states["t-beggar"].records:
        assert codes[record.game_id] == (False, "no_decisions")
    for record in states["t-mirror"].records:
        assert codes[record.game_id] == (False, "same_version")
    assert codes[scenario.finished_game] == (False, "unrated_seat")
    assert codes[scenario.running_game] == (False, "same_version"), "known before its end"
    assert all(
        line.unrated.message for line in backend.views().recent_games(limit=100) if line.unrated
    )


def test_an_aborted_and_a_forked_game_say_so(backend: Backend, scenario: Scenario) -> None:
    store = backend.store
    aborted = _later_game(store)
    abort_game(store, aborted, "host")
    original = load(store, scenario.finished_game)
    forked = fork_game(store, original, store.read(scenario.finished_game), 2).game_id
    rateable = _later_game(store)
    codes = _codes(backend.views())
    assert codes[aborted] == (False, "aborted")
    assert codes[forked] == (False, "forked")
    assert codes[rateable] == (False, "unrated_seat")
    lines = {line.game_id: line for line in backend.views().recent_games(limit=100)}
    unrated = lines[aborted].unrated
    assert unrated is not None
    assert "aborted" in unrated.message
    assert "host" in unrated.message


def test_a_game_of_a_cancelled_tournament_that_it_never_recorded_says_so(
    backend: Backend, scenario: Scenario
) -> None:
    store = backend.store
    create_tournament(store, AUTOBUS, "t-cancelled")
    state, _ = load_tournament(store, "t-cancelled")
    running = start_game(store, "t-cancelled", state, pending(state)[0])
    ends_after = start_game(store, "t-cancelled", state, pending(state)[1])
    assert _codes(backend.views())[running] == (None, None), "rateable while it runs"
    stream = stream_id("t-cancelled")
    store.append(stream, KIND, store.version(stream), [encode(TournamentCancelled())])
    abort_game(store, running, "tournament_cancelled", tournament=True)
    play_bot_turns(store, ends_after)  # ends after the cancellation: never recorded
    codes = _codes(backend.views())
    assert codes[running] == (False, "tournament_cancelled")
    assert codes[ends_after] == (False, "tournament_cancelled")
