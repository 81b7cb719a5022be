"""The public list of recent games (`listGames`): the views' lines, less the tables of a
duplicate deal that another table still plays.

A sealed table (see `services.game.http.seals`) is refused by `getGame` to anyone but its
seats' bots and the host, whatever its own status; the list, which anyone reads, leaves it
out until no other table of its deal runs, so nothing of it (its status, its end) shows
before `getGame` shows it to anyone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from litestar.params import QueryParameter

from shared.app.sealing import duplicate_state, tables_over
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import TournamentState
from shared.model.tournaments.sealing import is_sealed
from shared.ports.archive import EventArchive
from shared.ports.views.port import GameSummary, TournamentViews
from shared.store.port import EventStore

GameStatus = Literal["playing", "finished", "capped", "loop", "draw", "aborted"]
"""A game's status as a filter: `GAME_STATUSES` (a unit test holds them equal)."""
StatusFilter = Annotated[
    GameStatus | None,
    QueryParameter(
        description=(
            "Only games in this status: `playing` (running), or a result's status: `finished`,"
            " `capped`, `loop`, `draw`, `aborted`"
        )
    ),
]
GameFilter = Annotated[
    str | None, QueryParameter(description="Only games of this game, e.g. shithead")
]
ListLimit = Annotated[int, QueryParameter(ge=1, le=100, description="At most this many (1-100)")]

_MOST_READ = 1000
"""The most lines one request reads from the views to fill a page that sealed tables thin."""


class _Seals:
    """Which listed games are sealed tables, each tournament's state read once per request."""

    def __init__(self, store: EventStore, archive: EventArchive) -> None:
        self._store, self._archive = store, archive
        self._over = tables_over(store, archive)
        self._tables: dict[str, tuple[TournamentState, dict[str, str]] | None] = {}

    def sealed(self, line: GameSummary) -> bool:
        """Returns whether the game is a table of a duplicate deal that another table still
        plays (`shared.model.tournaments.sealing.is_sealed`)."""
        if line.tournament_id is None:
            return False
        if line.tournament_id not in self._tables:
            self._tables[line.tournament_id] = self._read(line.tournament_id)
        known = self._tables[line.tournament_id]
        if known is None:
            return False
        state, keys = known
        key = keys.get(line.game_id)
        return key is not None and is_sealed(state, key, self._over)

    def _read(self, tournament_id: str) -> tuple[TournamentState, dict[str, str]] | None:
        """Returns a duplicate tournament's state as its stream holds it now and the schedule
        key of each of its dealt games by game id; None for any other tournament."""
        state = duplicate_state(self._store, self._archive, tournament_id)
        if state is None:
            return None
        keys = {
            game_id_for(game.key): game.key
            for rnd in state.rounds
            for game in rnd.games
            if game.deal
        }
        return state, keys


def _shown(seals: _Seals, lines: Sequence[GameSummary]) -> list[GameSummary]:
    """Returns `lines` without the sealed tables."""
    return [line for line in lines if not seals.sealed(line)]


def recent_games(
    views: TournamentViews,
    store: EventStore,
    archive: EventArchive,
    game: str | None,
    status: str | None,
    limit: int,
) -> list[GameSummary]:
    """Returns up to `limit` of the views' newest games matching the filters that anyone may
    read: a page thinned by sealed tables reads further, up to `_MOST_READ` lines."""
    seals, asked = _Seals(store, archive), limit
    while True:
        lines = views.recent_games(game, status, asked)
        shown = _shown(seals, lines)
        if len(shown) >= limit or len(lines) < asked or asked >= _MOST_READ:
            return shown[:limit]
        asked = min(asked * 4, _MOST_READ)
