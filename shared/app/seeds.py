"""A tournament's seed as the platform shows it: withheld while a game of the tournament
still plays, which only the games' streams tell (the pure rules:
`shared.model.tournaments.seeds`)."""

from __future__ import annotations

import threading
import weakref

from shared.app.loading import load
from shared.errors import UnknownGame
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import TournamentDefinition, TournamentState, pending
from shared.model.tournaments.seeds import withheld
from shared.store.port import EventStore

_over: weakref.WeakKeyDictionary[EventStore, dict[str, int]] = weakref.WeakKeyDictionary()
"""Per store: for each cancelled tournament, how many of its last round's unrecorded games
were seen over (a game over stays over, and a cancelled tournament starts none)."""


_over_lock = threading.Lock()


def runs(store: EventStore, tournament_id: str, state: TournamentState) -> bool:
    """Returns whether the tournament runs, or a game of it still plays (a cancelled one's:
    its unrecorded games are read in order up to the first still playing; those seen over
    are not read again in this process). A game the store does not hold (not created yet,
    or its stream dropped once archived) is not playing, but read again next time."""
    if state.status != "cancelled":
        return state.status == "running"
    games = pending(state)
    with _over_lock:
        start = _over.setdefault(store, {}).get(tournament_id, 0)
    settled, playing = start, False
    for index in range(start, len(games)):
        try:
            loaded = load(store, game_id_for(games[index].key))
        except UnknownGame:
            continue
        if not loaded.spec.is_over(loaded.state):
            playing = True
            break
        if settled == index:
            settled = index + 1
    with _over_lock:
        _over[store][tournament_id] = settled
    return playing


def shown(store: EventStore, tournament_id: str, state: TournamentState) -> TournamentDefinition:
    """Returns the tournament's definition as anyone may see it: its seed withheld while it
    runs (`runs`)."""
    return withheld(state.definition) if runs(store, tournament_id, state) else state.definition
