"""A tournament's seed: drawn when the host gives none, withheld while any of its games runs.

Every game of a tournament is dealt from the deal key of the seed its schedule gave it
(`shared.model.tournaments.formats.game_seed` of the tournament's seed, keyed with the
deployment's deal secret by `shared.model.deal_keys`), so the seed alone predicts no card. It is
withheld all the same from whatever shows the tournament (its routes, a schedule, the
projection's row) while the tournament runs, and a cancelled one while a game of it still
plays; it shows once the tournament has ended, for a host to run it again.
"""

from __future__ import annotations

import threading
import weakref

import msgspec

from shared.app.games import game_id_for, load
from shared.errors import UnknownGame
from shared.model import deal_keys
from shared.model.tournaments.model import TournamentDefinition, TournamentState, pending
from shared.store.port import EventStore

WITHHELD = ""
"""What a withheld seed shows as."""


def drawn(definition: TournamentDefinition) -> TournamentDefinition:
    """Returns `definition` with a fresh random seed (256 bits) when the host gave none."""
    if definition.seed:
        return definition
    return msgspec.structs.replace(definition, seed=deal_keys.fresh())


def withheld(definition: TournamentDefinition) -> TournamentDefinition:
    """Returns `definition` with its seed withheld."""
    return msgspec.structs.replace(definition, seed=WITHHELD)


def may_run(state: TournamentState) -> bool:
    """Returns whether a game of the tournament may still run, as far as its own stream tells:
    running, or cancelled (its last round's unrecorded games play on)."""
    return state.status == "running" or (state.status == "cancelled" and bool(pending(state)))


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
