"""Sealed games over HTTP: a duplicate deal's tables are served as running games while another
table of the deal runs, and only to the callers that hold one of their seats (or the host).

Every read of a game (`getGame`, `getSeatView`, `listGameEvents`, `replayGame`, `streamGame`,
`exportGame`, `getGameVerification`, `forkGame`) asks `sealed` (see
`shared.model.tournaments.sealing`) and then treats a sealed game as running: no whole log, no
seed, no export, no fork. Its public plays are the hidden cards of the deal's other tables,
so a caller that holds none of its seats is refused altogether (`check_unsealed`).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response
from litestar.types import ExceptionHandlersMap

from services.game.http.pipeline.auth import Caller
from services.game.http.pipeline.problems import Problem, problem
from shared.app.loading import LoadedGame
from shared.app.sealing import game_sealed
from shared.messages.common import GameCreated
from shared.ports.archive import EventArchive
from shared.store.port import EventStore


class DealSealed(Exception):
    """The game is a table of a duplicate deal that another table still plays."""

    def __init__(self, game_id: str, tournament_id: str) -> None:
        super().__init__(
            f"game {game_id} is a table of a deal that another table of tournament"
            f" {tournament_id} still plays: it opens when the deal's last table ends; until"
            " then only its seats read it, as a running game"
        )
        self.message = str(self)


def _sealed(_: Request[Any, Any, Any], error: DealSealed) -> Response[Problem]:
    return problem(403, "deal-sealed", error.message, rule="deal_sealed")


HANDLERS: ExceptionHandlersMap = {DealSealed: _sealed}
"""The exception handlers of this module."""


def sealed(store: EventStore, archive: EventArchive, loaded: LoadedGame) -> bool:
    """Returns whether the game is sealed: served as running until its deal's last table ends."""
    return game_sealed(store, archive, loaded.created)


def holds_a_seat(caller: Caller, created: GameCreated) -> bool:
    """Returns whether `caller` is the host or the bot of one of the game's seats."""
    if caller.host:
        return True
    key = caller.key
    return key is not None and any(seat.bound_bot == key for seat in created.seats)


def check_unsealed(
    store: EventStore, archive: EventArchive, loaded: LoadedGame, caller: Caller
) -> bool:
    """Returns whether the game is sealed; raises DealSealed when it is and `caller` holds
    none of its seats."""
    return check_created(store, archive, loaded.game_id, loaded.created, caller)


def check_created(
    store: EventStore, archive: EventArchive, game_id: str, created: GameCreated, caller: Caller
) -> bool:
    """Returns whether the game `created` made is sealed; raises DealSealed when it is and
    `caller` holds none of its seats."""
    if not game_sealed(store, archive, created):
        return False
    if not holds_a_seat(caller, created):
        raise DealSealed(game_id, created.tournament)
    return True
