"""Sealed tables: a duplicate deal's tables are served as running games until all have ended.

A duplicate deal is dealt at several tables (scheduled games of one round sharing a `deal`
label). What one table shows (its log, its seed, even its public plays) tells the others'
seats their opponents' cards, so every table of a deal is sealed while any other table of it
has not ended. Whether a game is sealed follows from the tournament's own stream (its
schedule and records) and, for a tournament that records no more, the tables' own logs:
never from anything a client says. The checks that read the store: `shared.app.sealing`.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shared.model.tournaments.model import TournamentState


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
