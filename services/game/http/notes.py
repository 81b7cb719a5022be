"""Who reads a game's bot notes (`shared.model.notes`): the one rule, for every read path.

Nobody reads a note while its game runs (or while its duplicate deal is sealed). After it,
a seat's notes are read by the seat's owners: the seat's bot (a request with a token of any
version of that bot), the account the bot belongs to (its account key; the seat records it,
`Seat.account`, unless it is the host's) and the host (the admin key; in open mode, anyone).
"""

from __future__ import annotations

from services.game.http.pipeline.auth import Caller
from shared.app.loading import LoadedGame
from shared.messages.common import Seat


def may_read_notes(caller: Caller, seat: Seat) -> bool:
    """Returns whether `caller` may read the notes of `seat` in a game that is over: the host,
    a bot of the name the seat is bound to (any of its versions), or the account that bot
    belongs to (a bot of the host's account: the host)."""
    if caller.bot is not None:
        return seat.bound_bot is not None and seat.name == caller.bot.name
    if caller.account is not None:
        return seat.bound_bot is not None and seat.account == caller.account.name
    return caller.host


def readable_notes(caller: Caller, loaded: LoadedGame, *, sealed: bool = False) -> frozenset[int]:
    """Returns the seats of `loaded` whose notes `caller` may read now: none while the game
    runs or is `sealed`, else those `may_read_notes` allows."""
    if sealed or not loaded.spec.is_over(loaded.state):
        return frozenset()
    seats = loaded.created.seats
    return frozenset(index for index, seat in enumerate(seats) if may_read_notes(caller, seat))
