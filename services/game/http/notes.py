"""Who reads a game's bot notes (`shared.model.notes`): the one rule, for every read path.

Nobody reads a note while its game runs (or while its duplicate deal is sealed). After it,
a seat's notes are read by the seat's owner: today the seat's bot (a request with a token of
any version of that bot) and the host (the admin key; in open mode, anyone). When bots
belong to accounts, `may_read_notes` is the one place that learns of them.
"""

from __future__ import annotations

from services.game.http.auth import Caller
from shared.app.loading import LoadedGame
from shared.messages.common import Seat


def may_read_notes(caller: Caller, seat: Seat) -> bool:
    """Returns whether `caller` may read the notes of `seat` in a game that is over: the host,
    or a bot of the name the seat is bound to (any of its versions)."""
    if caller.bot is not None:
        return seat.bound_bot is not None and seat.name == caller.bot.name
    return caller.host


def readable_notes(caller: Caller, loaded: LoadedGame, *, sealed: bool = False) -> frozenset[int]:
    """Returns the seats of `loaded` whose notes `caller` may read now: none while the game
    runs or is `sealed`, else those `may_read_notes` allows."""
    if sealed or not loaded.spec.is_over(loaded.state):
        return frozenset()
    seats = loaded.created.seats
    return frozenset(index for index, seat in enumerate(seats) if may_read_notes(caller, seat))
