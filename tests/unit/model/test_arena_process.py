"""The arena as a process: its events, its clock (injected, never the wall's), its end,
late joiners and withdrawals, its scoring and standings."""

from __future__ import annotations

import msgspec
import pytest
from msgspec import UNSET

from services.cli.main import main
from shared.app import arenas
from shared.app.bot_turns import play_bot_turns
from shared.app.tournaments import (
    TournamentOver,
    create_tournament,
    load_tournament,
    record_game,
    run_in_process,
    start_game,
    tick,
    with_entrant_clock,
)
from shared.messages.codec import encode_all
from shared.messages.common import Clock
from shared.model.tournaments.model import (
    CODEC,
    ArenaStarted,
    Entrant,
    EntrantJoined,
    EntrantWithdrew,
    InvalidTournament,
    RoundCompleted,
    RoundScheduled,
    TournamentCreated,
    TournamentDefinition,
    TournamentFinished,
    advance,
    busy,
    evolve,
    stream_id,
    validate,
)
from shared.model.tournaments.standings import standings
from shared.model.tournaments.tiebreaks import ORDER
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret
from shared.ports.views.fold import rated_at
from shared.store.memory import InMemoryEventStore
from shared.store.port import EventStore

START = 1_800_000_000_000
"""The fake clock's start, in ms since the epoch."""


class FakeClock:
    """A clock that moves only when told: `advance` ms at a time."""

    def __init__(self, now: int = START) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def deployment() -> InMemoryEventStore:
    store = InMemoryEventStore()
    deal_secret.attach(store, GivenDealSecret("one deployment's deal secret, 32+ chars"))
    return store


def arena_of(*bots: str, seconds: int = 60, size: int = 2) -> TournamentDefinition:
    return TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot=bot, version=str(i)) for i, bot in enumerate(bots)],
        table_size=size,
        format="arena",
        duration_seconds=seconds,
        seed="arena-seed",
    )


def timed_play(clock: FakeClock, ms: int):  # type: ignore[no-untyped-def]
    """Returns a `play` that plays a game's bot turns and then moves the clock `ms` on."""

    def play(store: InMemoryEventStore, game_id: str) -> None:
        play_bot_turns(store, game_id)
        clock.advance(ms)

    return play


def test_an_arena_plays_games_until_its_time_is_up_then_finishes() -> None:
    clock = FakeClock()
    store = deployment()
    definition = arena_of("random", "heuristic", "random", "heuristic", "random")
    state = run_in_process(
        store, definition, "a1", play=timed_play(clock, 7_000), clock=clock, sleep=_no_sleep
    )
    events = CODEC.decode_all(store.read(stream_id("a1")))
    assert state.status == "finished"
    started = [e for e in events if isinstance(e, ArenaStarted)]
    assert started == [ArenaStarted(started_ms=START, ends_ms=START + 60_000)]
    games = [g for e in events if isinstance(e, RoundScheduled) for g in e.games]
    assert len(state.records) == len(games)
    assert 8 <= len(games) <= 2 * 60 // 7 + 2
    for event in events:
        if isinstance(event, RoundScheduled):
            assert all(len(set(game.table)) == 2 for game in event.games)
    assert isinstance(events[-1], TournamentFinished)
    assert state.winner == standings(state)[0].entrant


def test_an_arena_runs_the_same_on_the_same_clock_and_seed() -> None:
    runs = []
    for _ in range(2):
        clock = FakeClock()
        store = deployment()
        definition = arena_of("random", "heuristic", "random", size=2)
        run_in_process(
            store, definition, "same", play=timed_play(clock, 5_000), clock=clock,
            sleep=_no_sleep,
        )  # fmt: skip
        runs.append(store.read(stream_id("same")))
    assert [r.data for r in runs[0]] == [r.data for r in runs[1]]


def test_no_game_starts_after_the_end_and_games_in_progress_count() -> None:
    clock = FakeClock()
    store = deployment()
    definition = arena_of("random", "heuristic", "random", "heuristic")
    create_tournament(store, definition, "end", clock=clock)
    state, _ = load_tournament(store, "end")
    first, second = state.rounds[0].games
    clock.advance(61_000)
    for game in (first, second):
        game_id = start_game(store, "end", state, game)
        play_bot_turns(store, game_id)
        after = record_game(store, "end", game.key, game_id, clock)
    assert after.status == "finished"
    assert len(after.rounds) == 1
    assert len(after.records) == 2
    assert sum(line.games for line in standings(after)) == 4


def test_the_end_comes_by_a_tick_when_no_game_is_in_progress() -> None:
    clock = FakeClock()
    store = deployment()
    create_tournament(store, arena_of("random", "heuristic"), "idle", clock=clock)
    arenas.withdraw(store, "idle", 0, _none, clock)
    state, _ = load_tournament(store, "idle")
    (game,) = state.rounds[0].games
    game_id = start_game(store, "idle", state, game)
    play_bot_turns(store, game_id)
    clock.advance(10_000)
    after = record_game(store, "idle", game.key, game_id, clock)
    assert after.status == "running"
    assert not busy(after)
    assert tick(store, "idle", _none, clock) == []
    clock.advance(50_000)
    assert tick(store, "idle", _none, clock) == [RoundCompleted(round=1), TournamentFinished()]
    final, _ = load_tournament(store, "idle")
    assert final.status == "finished"
    assert [line.games for line in standings(final)] == [1, 1]


def test_the_points_are_the_table_size_minus_the_place_and_wins_break_ties() -> None:
    assert ORDER["arena"] == ("points", "wins", "sonneborn_berger", "lot")


def test_a_late_joiner_is_paired_with_the_free_entrants_at_once() -> None:
    clock = FakeClock()
    store = deployment()
    create_tournament(store, arena_of("random", "heuristic", "random"), "late", clock=clock)
    state, _ = load_tournament(store, "late")
    (game,) = state.rounds[0].games
    waiting = ({0, 1, 2} - set(game.table)).pop()
    clock.advance(1_000)
    state, index = arenas.join(store, "late", Entrant(bot="heuristic", version="9"), _none, clock)
    assert index == 3
    assert state.definition.entrants[3].strategy == "heuristic"
    assert set(state.rounds[-1].games[0].table) == {waiting, 3}


def test_a_join_is_refused_twice_after_the_end_and_for_another_format() -> None:
    clock = FakeClock()
    store = deployment()
    create_tournament(store, arena_of("random", "heuristic"), "refuse", clock=clock)
    before = store.version(stream_id("refuse"))
    with pytest.raises(InvalidTournament) as twice:
        arenas.join(store, "refuse", Entrant(bot="random", version="0"), _none, clock)
    assert twice.value.field == "bot"
    with pytest.raises(InvalidTournament) as unknown:
        arenas.join(store, "refuse", Entrant(bot="genius"), _none, clock)
    assert unknown.value.field == "bot"
    clock.advance(60_000)
    with pytest.raises(TournamentOver):
        arenas.join(store, "refuse", Entrant(bot="random", version="5"), _none, clock)
    with pytest.raises(TournamentOver):
        arenas.withdraw(store, "refuse", 0, _none, clock)
    assert store.version(stream_id("refuse")) == before
    swiss = msgspec.structs.replace(
        arena_of("random", "heuristic"), format="swiss", duration_seconds=UNSET
    )
    create_tournament(store, swiss, "swiss", clock=clock)
    with pytest.raises(InvalidTournament) as other:
        arenas.join(store, "swiss", Entrant(bot="random", version="5"), _none, clock)
    assert other.value.field == "format"


def test_a_withdrawn_entrant_is_never_paired_again_and_its_games_count() -> None:
    clock = FakeClock()
    store = deployment()
    definition = arena_of("random", "heuristic", "random", "heuristic")
    played: list[int] = []

    def play(store: EventStore, game_id: str) -> None:
        play_bot_turns(store, game_id)
        clock.advance(5_000)
        played.append(1)
        if len(played) == 3:
            arenas.withdraw(store, "gone", 1, _none, clock)

    state = run_in_process(store, definition, "gone", play=play, clock=clock, sleep=_no_sleep)
    events = CODEC.decode_all(store.read(stream_id("gone")))
    at = next(i for i, e in enumerate(events) if isinstance(e, EntrantWithdrew))
    later = [g.table for e in events[at:] if isinstance(e, RoundScheduled) for g in e.games]
    assert later
    assert all(1 not in table for table in later)
    assert state.status == "finished"
    assert next(line for line in standings(state) if line.entrant == 1).games >= 1


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"duration_seconds": UNSET}, "duration_seconds"),
        ({"duration_seconds": 59}, "duration_seconds"),
        ({"duration_seconds": 86_401}, "duration_seconds"),
        ({"rounds": 5}, "rounds"),
        ({"games_per_table": 2}, "games_per_table"),
        ({"format": "swiss"}, "duration_seconds"),
    ],
)
def test_an_arena_definition_names_the_field_it_gets_wrong(
    changes: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidTournament) as error:
        validate(msgspec.structs.replace(arena_of("random", "heuristic"), **changes))
    assert error.value.field == field


def test_an_arena_decides_nothing_without_the_clock_but_its_start_waits_for_it() -> None:
    state = evolve(None, TournamentCreated(definition=arena_of("random", "heuristic")))
    assert advance(state, "t") == []
    events = advance(state, "t", START)
    assert isinstance(events[0], ArenaStarted)
    assert isinstance(events[1], RoundScheduled)
    joined = evolve(state, EntrantJoined(entrant=Entrant(bot="random", version="3")))
    assert len(joined.definition.entrants) == 3


def test_the_arena_events_keep_their_stored_shape() -> None:
    """Frozen payloads: the wire form of the new events, as stored."""
    events = [
        ArenaStarted(started_ms=1, ends_ms=60_001),
        EntrantJoined(
            entrant=Entrant(bot="random", version="3", strategy="random", kind="builtin")
        ),
        EntrantWithdrew(entrant=2),
    ]
    payloads = [msgspec.msgpack.decode(new.data) for new in encode_all(events)]
    assert [new.type for new in encode_all(events)] == [
        "ArenaStarted",
        "EntrantJoined",
        "EntrantWithdrew",
    ]
    assert payloads == [
        {"type": "ArenaStarted", "started_ms": 1, "ends_ms": 60_001},
        {
            "type": "EntrantJoined",
            "entrant": {
                "bot": "random",
                "version": "3",
                "name": "",
                "strategy": "random",
                "kind": "builtin",
            },
        },
        {"type": "EntrantWithdrew", "entrant": 2},
    ]


def _none(_: str) -> None:
    return None


def _no_sleep(_: float) -> None:
    raise AssertionError("the arena slept: it had nobody to pair and no game in progress")


@pytest.mark.parametrize(
    ("extra", "field"),
    [([], "duration_seconds"), (["--duration", "30"], "duration_seconds")],
)
def test_the_cli_refuses_an_arena_without_a_duration_in_bounds(
    capsys: pytest.CaptureFixture[str], extra: list[str], field: str
) -> None:
    bots = ["--bots", "random,heuristic", "--table-size", "2", "--format", "arena"]
    code = main(["tournament", "--game", "autobus", *bots, *extra])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"cardarena: error: {field}")


def test_the_leaderboard_takes_every_game_of_an_arena_in_at_its_end_in_schedule_order() -> None:
    clock = FakeClock()
    store = deployment()
    definition = arena_of("random", "heuristic", "random", "heuristic")
    run_in_process(
        store, definition, "rated", play=timed_play(clock, 9_000), clock=clock, sleep=_no_sleep
    )
    events = CODEC.decode_all(store.read(stream_id("rated")))
    state = None
    rated: list[str] = []
    for event in events:
        state = evolve(state, event)
        rated += [record.key for record in rated_at(state, event)]
    assert state is not None
    schedule = [game.key for rnd in state.rounds for game in rnd.games]
    assert rated == schedule
    assert len(rated) == len(state.records)


def test_an_arena_of_built_in_bots_is_timed_for_the_client_bots_that_may_join_it() -> None:
    clock = Clock(move_seconds=30)
    timed = with_entrant_clock(arena_of("random", "heuristic"), [], clock)
    assert timed.clock == clock
    robin = msgspec.structs.replace(
        arena_of("random", "heuristic"), format="round_robin", duration_seconds=UNSET
    )
    assert with_entrant_clock(robin, [], clock).clock is None
