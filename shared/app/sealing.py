"""Sealed tables as the platform checks them: a tournament's state as its stream holds it now,
and whether a table's log says it ended (the pure rules: `shared.model.tournaments.sealing`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shared.app.cache import FoldCache, PerStore
from shared.app.loading import load_logged
from shared.errors import UnknownGame
from shared.messages.common import GameCreated
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import CODEC, TournamentState, evolve, stream_id
from shared.model.tournaments.sealing import is_sealed
from shared.ports.archive import EventArchive, game_log
from shared.store.port import EventStore


@dataclass(frozen=True)
class _Folded:
    """A tournament's state folded up to `version` of its stream."""

    tournament_id: str
    version: int
    state: TournamentState


class TournamentStates:
    """This process's folded tournament states, each extended by the events it has not seen,
    so that checking a seal costs a read of what the tournament gained since the last one."""

    def __init__(self, size: int = 1024) -> None:
        self._folds: FoldCache[_Folded] = FoldCache(
            key=lambda folded: folded.tournament_id,
            version=lambda folded: folded.version,
            size=size,
        )

    def state(
        self, store: EventStore, archive: EventArchive, tournament_id: str
    ) -> TournamentState | None:
        """Returns the tournament's state as its stream (else the archive's copy) holds it
        now; None when neither knows it."""
        stream = stream_id(tournament_id)
        known = self._folds.get(tournament_id)
        version, state = (known.version, known.state) if known is not None else (0, None)
        recorded = (
            store.read(stream, after=version) if version else game_log(store, archive, stream)
        )
        for event in CODEC.decode_all(recorded):
            state = evolve(state, event)
        if state is None:
            return None
        version = recorded[-1].version if recorded else version
        self._folds.put(_Folded(tournament_id, version, state))
        return state


_states: PerStore[TournamentStates] = PerStore(TournamentStates)


def states_of(store: EventStore) -> TournamentStates:
    """Returns this process's tournament states of `store` (one per store object)."""
    return _states.of(store)


def game_sealed(store: EventStore, archive: EventArchive, created: GameCreated) -> bool:
    """Returns whether the game `created` made is sealed (see `is_sealed`): only a
    tournament's game can be, and a table of a deal of a tournament that records no more
    asks the other tables' logs whether they ended."""
    if not created.tournament:
        return False
    state = duplicate_state(store, archive, created.tournament)
    if state is None:
        return False
    return is_sealed(state, created.tournament_key, tables_over(store, archive))


def duplicate_state(
    store: EventStore, archive: EventArchive, tournament_id: str
) -> TournamentState | None:
    """Returns the tournament's state as its stream holds it now when it is a duplicate
    tournament (the only format whose tables can be sealed); None otherwise."""
    state = states_of(store).state(store, archive, tournament_id)
    return state if state is not None and state.definition.format == "duplicate" else None


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
