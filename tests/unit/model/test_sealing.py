"""Sealed tables: which games of a duplicate deal are served as running, from tournament state."""

from __future__ import annotations

import msgspec

from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.loading import as_seen_by, load
from shared.app.sealing import TournamentStates
from shared.app.tournaments import create_tournament, load_tournament
from shared.messages.common import GameCreated, GameFinished
from shared.model.tournaments.model import (
    Entrant,
    GameRecorded,
    TournamentCancelled,
    TournamentDefinition,
    TournamentState,
    evolve,
    stream_id,
)
from shared.model.tournaments.sealing import is_sealed, other_tables, sealed_records, unsealed
from shared.ports.archive import InMemoryEventArchive
from shared.store.memory import InMemoryEventStore


def tournament(fmt: str = "duplicate") -> TournamentState:
    """Returns a freshly scheduled tournament of four built-in entrants at tables of two."""
    store = InMemoryEventStore()
    definition = TournamentDefinition(
        game="autobus",
        entrants=[Entrant(bot="random", version=str(i)) for i in range(4)],
        table_size=2,
        format=fmt,  # type: ignore[arg-type]
    )
    create_tournament(store, definition, "t")
    return load_tournament(store, "t")[0]


def record(state: TournamentState, key: str) -> TournamentState:
    """Returns `state` after its game `key` was recorded (seat 0 won)."""
    return evolve(
        state,
        GameRecorded(round=1, key=key, game_id=f"game-{key}", places=[1, 2], status="finished"),
    )


def never(_: str) -> bool:
    """No table has ended."""
    return False


def test_a_table_is_sealed_until_every_other_table_of_its_deal_is_recorded() -> None:
    state = tournament()
    first, second = (g.key for g in state.rounds[0].games if g.deal == "0")
    assert other_tables(state, first) == [second]
    assert is_sealed(state, first, never)
    state = record(state, first)
    assert is_sealed(state, first, never)  # its other table runs
    assert not is_sealed(state, second, never)  # only itself is left: nothing to hide from
    state = record(state, second)
    assert not is_sealed(state, first, never)
    assert not is_sealed(state, second, never)


def test_a_game_of_no_deal_is_never_sealed() -> None:
    state = tournament("round_robin")
    key = state.rounds[0].games[0].key
    assert other_tables(state, key) == []
    assert not is_sealed(state, key, never)
    assert not is_sealed(state, "unknown", never)


def test_a_cancelled_tournament_asks_the_unrecorded_tables_whether_they_ended() -> None:
    state = tournament()
    first, second = (g.key for g in state.rounds[0].games if g.deal == "0")
    state = evolve(record(state, first), TournamentCancelled(reason="stop"))
    assert is_sealed(state, first, never)
    assert not is_sealed(state, first, lambda key: key == second)
    assert sealed_records(state, never) == {first}
    assert sealed_records(state, lambda key: True) == set()


def test_unsealed_drops_the_places_of_sealed_tables_only() -> None:
    state = tournament()
    deal0 = [g.key for g in state.rounds[0].games if g.deal == "0"]
    deal1 = [g.key for g in state.rounds[0].games if g.deal == "1"]
    for key in [*deal0, deal1[0]]:
        state = record(state, key)
    shown = unsealed(state, never)
    assert sorted(r.key for r in shown.records) == sorted(deal0)
    assert unsealed(record(state, deal1[1]), never).records == record(state, deal1[1]).records


def test_the_states_extend_from_the_stream_and_fall_back_to_the_archive() -> None:
    store, archive = InMemoryEventStore(), InMemoryEventArchive()
    definition = TournamentDefinition(
        game="beggar",
        entrants=[Entrant(bot="turner", version=str(i)) for i in range(4)],
        table_size=2,
    )
    create_tournament(store, definition, "t")
    states = TournamentStates()
    assert states.state(store, archive, "missing") is None
    first = states.state(store, archive, "t")
    assert first == load_tournament(store, "t")[0]
    archive.add(store.read(stream_id("t")))
    store.drop(stream_id("t"))
    assert TournamentStates().state(store, archive, "t") == first


def test_a_sealed_finished_game_is_seen_as_a_running_one() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "beggar", players=2, seed="3").game_id
    play_bot_turns(store, game_id)
    loaded = load(store, game_id)
    assert loaded.spec.is_over(loaded.state)
    events = loaded.spec.codec.decode_all(store.read(game_id))
    created, finished = events[0], events[-1]
    assert isinstance(created, GameCreated)
    assert isinstance(finished, GameFinished)
    assert finished.seed
    assert as_seen_by(loaded, finished, None) == finished
    hidden = as_seen_by(loaded, finished, None, sealed=True)
    assert isinstance(hidden, GameFinished)
    assert (hidden.seed, hidden.salt, hidden.result) == ("", "", finished.result)
    seen = as_seen_by(loaded, created, None, sealed=True)
    assert isinstance(seen, GameCreated)
    assert (seen.deal_seed, seen.salt, seen.commitment) == ("", "", created.commitment)
    dealt = as_seen_by(loaded, events[1], None, sealed=True)
    assert "??" in msgspec.json.encode(dealt).decode()
