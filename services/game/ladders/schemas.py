"""Bodies of the ladder routes: a ladder to open, and a ladder as the API shows it."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from shared.model.ladder_events import Ladder, LadderGame, QueuedBot
from shared.ports.views.port import LeaderboardEntry

RECENT = 20
"""How many of a ladder's last games its view lists."""


class OpenLadder(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A ladder to open: the game, its ruleset and the table size."""

    game: str
    """The game its bots play."""
    ruleset: str | dict[str, Any] | None = None
    """A preset's name or the ruleset's fields (none: the game's classic ruleset)."""
    table_size: Annotated[int, msgspec.Meta(ge=2, le=16)] = 2
    """Seats at each of its tables (2 to 16, and as many as the game seats)."""


class JoinLadder(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The bot the host puts in a ladder's queue (a bot's token joins itself, with no body)."""

    bot: str
    """The registered bot's name (e.g. one of the host's built-in bots)."""
    version: str = "1"
    """Its version label (default "1")."""


class LadderView(msgspec.Struct, frozen=True):
    """A ladder: its game, the bots waiting, the games in progress, its last games and the
    ranking of the bots that played it (the leaderboard's)."""

    ladder_id: str
    """The ladder's id."""
    game: str
    """The game its bots play."""
    ruleset: str | dict[str, Any] | None
    """A preset's name or the ruleset's fields; null: the classic preset."""
    table_size: int
    """Seats at each of its tables."""
    open: bool
    """Whether it pairs (false once the host closed it)."""
    opened_at: str
    """When the host opened it (ISO 8601, UTC)."""
    queue: list[QueuedBot]
    """The bots in its queue, in the order they joined."""
    live: list[LadderGame]
    """Its games in progress."""
    games: int
    """How many games it has paired."""
    recent: list[LadderGame]
    """Its last games (at most 20), newest first."""
    ranking: list[LeaderboardEntry]
    """The game's leaderboard, restricted to the bots that played this ladder, best first
    (read from the projection's views, which may lag)."""


def view(ladder: Ladder, board: list[LeaderboardEntry]) -> LadderView:
    """Returns `ladder` as the API shows it, ranked by `board` (the game's leaderboard)."""
    played = {bot for game in ladder.history for bot in game.bots}
    return LadderView(
        ladder_id=ladder.ladder_id,
        game=ladder.game,
        ruleset=ladder.ruleset,
        table_size=ladder.table_size,
        open=ladder.open,
        opened_at=ladder.opened_at,
        queue=ladder.queue,
        live=ladder.live,
        games=len(ladder.history),
        recent=list(reversed(ladder.history[-RECENT:])),
        ranking=[entry for entry in board if entry.key in played],
    )
