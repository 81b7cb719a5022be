"""Arena use cases: an entrant joins a running arena late, or withdraws early.

Both append to the tournament's stream with its expected version (a concurrent change makes
them read again), and then let the arena go on at once (`tournaments.tick`): a joiner is
paired as soon as enough entrants are free. A refusal changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from shared.app.deadlines import now_ms
from shared.app.registry import registered_bots
from shared.app.tournaments import TournamentOver, load_tournament, tick
from shared.messages.codec import encode_all
from shared.model.tournaments.model import (
    KIND,
    Entrant,
    EntrantJoined,
    EntrantWithdrew,
    InvalidTournament,
    TournamentDefinition,
    TournamentState,
    resolve_entrants,
    stream_id,
)
from shared.store.port import ConcurrencyConflict, EventStore

MAX_ENTRANTS = 1000
"""The most entrants an arena holds, late joiners included."""


def _check_open(state: TournamentState, tournament_id: str, now: int) -> None:
    """Raises InvalidTournament (`format`) for a tournament that is no arena, TournamentOver
    for an arena that has ended (its time up, finished or cancelled)."""
    if state.definition.format != "arena":
        raise InvalidTournament(
            "format", f"tournament {tournament_id} is {state.definition.format}: only an arena"
            " takes entrants once it runs"
        )  # fmt: skip
    if state.status != "running" or (state.ends_ms is not None and now >= state.ends_ms):
        raise TournamentOver("tournament_id", f"the arena {tournament_id} has ended")


def join(
    store: EventStore,
    tournament_id: str,
    entrant: Entrant,
    dispatch: Callable[[str], None],
    clock: Callable[[], int] = now_ms,
) -> tuple[TournamentState, int]:
    """Enters `entrant` in a running arena; returns the state and its index.

    Raises UnknownTournament, InvalidTournament (`format`: not an arena; `bot`, `version`,
    `strategy`, `kind`: an entrant that does not resolve, or `bot@version` entered already,
    withdrawn or not; `entrants`: the field is full) and TournamentOver (the arena ended).
    """
    bots = registered_bots(store)
    while True:
        state, version = load_tournament(store, tournament_id)
        _check_open(state, tournament_id, clock())
        d = state.definition
        try:
            one = resolve_entrants(_alone(d, entrant), bots).entrants[0]
        except InvalidTournament as error:
            field = error.field.removeprefix("entrants[0].")
            raise InvalidTournament(field, error.message) from None
        key = f"{one.bot}@{one.version}"
        for index, known in enumerate(d.entrants):
            if f"{known.bot}@{known.version}" == key:
                raise InvalidTournament("bot", f"{key} is entered already (entrant {index})")
        if len(d.entrants) >= MAX_ENTRANTS:
            raise InvalidTournament("entrants", f"an arena holds at most {MAX_ENTRANTS} entrants")
        event = EntrantJoined(entrant=one)
        try:
            store.append(stream_id(tournament_id), KIND, version, encode_all([event]))
        except ConcurrencyConflict:
            continue
        tick(store, tournament_id, dispatch, clock)
        state, _ = load_tournament(store, tournament_id)
        return state, len(d.entrants)


def _alone(definition: TournamentDefinition, entrant: Entrant) -> TournamentDefinition:
    """Returns `definition` with `entrant` as its only entrant (to resolve it alone)."""
    return msgspec.structs.replace(definition, entrants=[entrant])


def withdraw(
    store: EventStore,
    tournament_id: str,
    entrant: int,
    dispatch: Callable[[str], None],
    clock: Callable[[], int] = now_ms,
) -> TournamentState:
    """Withdraws entrant `entrant` of a running arena: it is never paired again; its recorded
    games count, and a game it still plays finishes and counts. Withdrawing again changes
    nothing. Raises UnknownTournament, InvalidTournament (`format`; `entrant`: no such
    entrant) and TournamentOver (the arena ended)."""
    while True:
        state, version = load_tournament(store, tournament_id)
        _check_open(state, tournament_id, clock())
        if not 0 <= entrant < len(state.definition.entrants):
            raise InvalidTournament(
                "entrant", f"no entrant {entrant} (0 to {len(state.definition.entrants) - 1})"
            )
        if entrant in state.withdrawn:
            return state
        event = EntrantWithdrew(entrant=entrant)
        try:
            store.append(stream_id(tournament_id), KIND, version, encode_all([event]))
        except ConcurrencyConflict:
            continue
        tick(store, tournament_id, dispatch, clock)
        state, _ = load_tournament(store, tournament_id)
        return state
