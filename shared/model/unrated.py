"""Why a game is not rated: one typed reason, decided from the game's log and, for a
tournament's game, its tournament's state.

The rules are those the ratings fold by (`shared.ports.views.fold.rated_game`,
`rated_at`): a game is rated when it is not a fork, its game has decisions, it was not
aborted, every seat has a rating key (`Seat.rating_key`), no key sits in two seats, and, for a
tournament's game, its tournament recorded it (a game that ends after its tournament was
cancelled is never recorded and counts for nothing). When several reasons hold, the first of
`UNRATED_REASONS` is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound
from shared.messages.common import Seat
from shared.model.accounts import shared_account
from shared.model.tournaments.model import TournamentState

UnratedCode = Literal[
    "forked",
    "evaluation",
    "no_decisions",
    "tournament_cancelled",
    "aborted",
    "unrated_seat",
    "same_version",
    "same_account",
]
"""Why a game is not rated, as a code."""

UNRATED_REASONS: tuple[UnratedCode, ...] = (
    "forked",
    "evaluation",
    "no_decisions",
    "tournament_cancelled",
    "aborted",
    "unrated_seat",
    "same_version",
    "same_account",
)
"""Every reason, in the order of precedence when several hold."""

TOURNAMENT_CANCELLED = "tournament_cancelled"
"""The reason of a GameAborted that a tournament's cancellation appended."""


class Unrated(msgspec.Struct, frozen=True):
    """Why a game is not rated: a code a program reads and a sentence a person reads."""

    code: UnratedCode
    """`forked` (a what-if fork of another game), `evaluation` (a game of a hosted evaluation:
    one owner's two bot versions measured against each other), `no_decisions` (a game such as
    Beggar-my-neighbour, which no choice decides), `tournament_cancelled` (its tournament was
    cancelled before it recorded the game), `aborted` (the platform or the host ended it with
    no result), `unrated_seat` (a seat has no bot version to rate), `same_version` (one bot
    version sits in two seats) or `same_account` (two seats' bots belong to one account, other
    than the host's: one owner never feeds itself rating)."""
    message: str
    """The reason for a person to read."""


def seats_reason(game: str, seats: Sequence[Seat]) -> Unrated | None:
    """Returns why a game of `game` between `seats` can never be rated, whatever its end:
    `no_decisions`, `evaluation`, `unrated_seat`, `same_version` or `same_account`; None when
    nothing in its seats forbids it."""
    try:
        spec = get_game(game)
    except GameNotFound:
        return Unrated("no_decisions", f"{game} is not a game the platform rates")
    if not spec.has_decisions:
        return Unrated("no_decisions", f"{spec.title} has no decisions: nothing to rate")
    evaluations = [seat.evaluation for seat in seats if isinstance(seat.evaluation, str)]
    if evaluations:
        return Unrated(
            "evaluation",
            f"a game of the evaluation {evaluations[0]}: an evaluation's games are never rated",
        )
    keys = [seat.rating_key for seat in seats]
    for index, key in enumerate(keys):
        if key is None:
            return Unrated(
                "unrated_seat", f"seat {index} has no bot version (name@version) to rate"
            )
    for index, key in enumerate(keys):
        if key in keys[:index]:
            return Unrated(
                "same_version",
                f"{key} sits in seats {keys.index(key)} and {index}: a bot version playing"
                " itself is never rated",
            )
    owners = [seat.account if isinstance(seat.account, str) else None for seat in seats]
    pair = shared_account(owners)
    if pair is not None:
        return Unrated(
            "same_account",
            f"seats {pair[0]} and {pair[1]} are bots of one account ({owners[pair[0]]}): games"
            " between one account's bots are played but never rated",
        )
    return None


def unrated_reason(
    game: str,
    seats: Sequence[Seat],
    *,
    forked: bool = False,
    abort_reason: str | None = None,
    cancelled_unrecorded: bool = False,
) -> Unrated | None:
    """Returns why the game is not rated, None when it is rated (or, while it runs, may be).

    `abort_reason` is the reason of its GameAborted (None when it was not aborted);
    `cancelled_unrecorded` whether it is a game of a cancelled tournament that the tournament
    never recorded."""
    if forked:
        return Unrated("forked", "a fork (a what-if of another game) is never rated")
    if (static := seats_reason(game, seats)) is not None and static.code in {
        "no_decisions",
        "evaluation",
    }:
        return static
    if abort_reason == TOURNAMENT_CANCELLED or (abort_reason is None and cancelled_unrecorded):
        return Unrated(
            "tournament_cancelled",
            "its tournament was cancelled before recording it: it counts for nothing",
        )
    if abort_reason is not None:
        why = f" ({abort_reason})" if abort_reason else ""
        return Unrated("aborted", f"the game was aborted{why}: it has no result")
    return static


def rated_flag(unrated: Unrated | None, over: bool) -> bool | None:
    """Returns whether the game is (or, once over, will be) rated: False with a reason, True
    once over without one, None while it runs and nothing rules it out yet."""
    if unrated is not None:
        return False
    return True if over else None


def tournament_game_reason(
    state: TournamentState, table: Sequence[int], game_id: str
) -> tuple[bool | None, Unrated | None]:
    """Returns whether a tournament's scheduled game (its `table` of entrants) is rated and
    why not, from the tournament's state alone: a recorded game by its seats; an unrecorded
    one of a cancelled tournament counts for nothing; else by its seats, rated null until it
    is recorded."""
    d = state.definition
    seats = [
        Seat(
            kind="bot",
            name=d.entrants[entrant].bot,
            version=d.entrants[entrant].version,
            account=d.entrants[entrant].account,
        )
        for entrant in table
    ]
    recorded = any(record.game_id == game_id for record in state.records)
    unrated = unrated_reason(
        d.game, seats, cancelled_unrecorded=state.status == "cancelled" and not recorded
    )
    return rated_flag(unrated, recorded), unrated
