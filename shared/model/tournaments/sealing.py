"""Sealed tables: a duplicate deal's tables are served as running games until all have ended.

A duplicate deal is dealt at several tables (scheduled games of one round sharing a `deal`
label). What one table shows (its log, its seed, even its public plays) tells the others'
seats their opponents' cards, so every table of a deal is sealed while any other table of it
has not ended. Whether a game is sealed follows from the tournament's own stream (its
schedule and records) and, for a tournament that records no more, the tables' own logs:
never from anything a client says.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

import msgspec

from shared.app.games import game_id_for
from shared.app.tournaments import CODEC, stream_id
from shared.errors import UnknownGame
from shared.messages.common import GameCreated
from shared.model.tournaments.model import TournamentState, evolve
from shared.ports.archive import EventArchive, game_log, load_logged
from shared.store.port import EventStore


def other_tables(state: TournamentState, key: str) -> list[str]:
    """Returns the keys of the other tables of the deal of the game scheduled under `key`
    that have no record yet (none: a game of no deal, or unknown to the tournament)."""
    recorded = {record.key for record in state.records}
    for rnd in state.rounds:
        deal = next((game.deal for game in rnd.games if game.key == key), None)
        if deal is not None:
            return [
                game.key
                for game in rnd.games
                if deal and game.deal == deal and game.key != key and game.key not in recorded
            ]
    return []


def is_sealed(state: TournamentState, key: str, is_over: Callable[[str], bool]) -> bool:
    """Returns whether the game scheduled under `key` is sealed: another table of its deal has
    not ended. A running tournament records each table once it ends, so a table without a
    record counts as running; one that records no more (cancelled) asks `is_over(key)`."""
    pending = other_tables(state, key)
    if state.status == "running":
        return bool(pending)
    return not all(is_over(other) for other in pending)


def sealed_records(state: TournamentState, is_over: Callable[[str], bool]) -> set[str]:
    """Returns the keys of the recorded games that are sealed (see `is_sealed`), every deal
    looked at once."""
    recorded = {record.key for record in state.records}
    sealed: set[str] = set()
    for rnd in state.rounds:
        deals: dict[str, list[str]] = {}
        for game in rnd.games:
            if game.deal:
                deals.setdefault(game.deal, []).append(game.key)
        for keys in deals.values():
            pending = [key for key in keys if key not in recorded]
            if pending and (state.status == "running" or not all(map(is_over, pending))):
                sealed.update(key for key in keys if key in recorded)
    return sealed


def unsealed(state: TournamentState, is_over: Callable[[str], bool]) -> TournamentState:
    """Returns `state` without the records of sealed games: what the tournament may show of
    itself (a sealed table's places say how its deal fell)."""
    sealed = sealed_records(state, is_over)
    if not sealed:
        return state
    records = tuple(record for record in state.records if record.key not in sealed)
    return msgspec.structs.replace(state, records=records)


class TournamentStates:
    """This process's folded tournament states, each extended by the events it has not seen,
    so that checking a seal costs a read of what the tournament gained since the last one."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._states: OrderedDict[str, tuple[int, TournamentState]] = OrderedDict()
        self._lock = threading.Lock()

    def state(
        self, store: EventStore, archive: EventArchive, tournament_id: str
    ) -> TournamentState | None:
        """Returns the tournament's state as its stream (else the archive's copy) holds it
        now; None when neither knows it."""
        stream = stream_id(tournament_id)
        with self._lock:
            known = self._states.get(tournament_id)
        version, state = known if known is not None else (0, None)
        recorded = (
            store.read(stream, after=version) if version else game_log(store, archive, stream)
        )
        for event in CODEC.decode_all(recorded):
            state = evolve(state, event)
        if state is None:
            return None
        version = recorded[-1].version if recorded else version
        with self._lock:
            self._states[tournament_id] = (version, state)
            self._states.move_to_end(tournament_id)
            while len(self._states) > self._size:
                self._states.popitem(last=False)
        return state


_states: weakref.WeakKeyDictionary[EventStore, TournamentStates] = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def states_of(store: EventStore) -> TournamentStates:
    """Returns this process's tournament states of `store` (one per store object)."""
    with _states_lock:
        states = _states.get(store)
        if states is None:
            states = _states[store] = TournamentStates()
        return states


def game_sealed(store: EventStore, archive: EventArchive, created: GameCreated) -> bool:
    """Returns whether the game `created` made is sealed (see `is_sealed`): only a
    tournament's game can be, and a table of a deal of a tournament that records no more
    asks the other tables' logs whether they ended."""
    if not created.tournament:
        return False
    state = states_of(store).state(store, archive, created.tournament)
    if state is None or state.definition.format != "duplicate":
        return False
    return is_sealed(state, created.tournament_key, tables_over(store, archive))


def tables_over(store: EventStore, archive: EventArchive) -> Callable[[str], bool]:
    """Returns whether the table scheduled under a key has ended, as its log says (a table
    never created never runs: ended)."""

    def over(key: str) -> bool:
        try:
            table = load_logged(store, archive, game_id_for(key))
        except UnknownGame:
            return True
        return table.spec.is_over(table.state)

    return over
