"""Request parameters shared by the game service's controllers."""

from __future__ import annotations

from typing import Annotated

from litestar.params import HeaderParameter, PathParameter, QueryParameter

from services.game.http.pipeline.auth import Caller
from shared.model.idempotency import HOST, ClientKey, scoped

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description=(
            "Makes a retry safe: the same key and body return the first result. A key is"
            " the caller's own: another caller's key, or the platform's, never meets it."
        ),
    ),
]
GameId = Annotated[str, PathParameter(description="The game's id, as its creation returned it.")]
TournamentId = Annotated[str, PathParameter(description="The tournament's id.")]
EvaluationId = Annotated[str, PathParameter(description="The evaluation's id.", max_length=64)]
BotName = Annotated[str, PathParameter(description="The bot's name.")]
BotVersion = Annotated[str, PathParameter(description="The bot's version label.")]
AccountName = Annotated[str, PathParameter(description="The account's name.")]
SeatNumber = Annotated[int, QueryParameter(ge=0, description="A 0-based seat of the game")]
ViewerSeat = Annotated[
    int | None,
    QueryParameter(
        ge=0,
        description="The seat whose eyes to see a running game with; none: a spectator",
        schema_extra={"minimum": 0},  # Litestar 2 leaves an optional parameter's 0 bound out
    ),
]
Wait = Annotated[
    int,
    QueryParameter(ge=0, le=60, description="Seconds to wait for a turn when none waits (0-60)"),
]
NextTurnWait = Annotated[
    int | None,
    QueryParameter(
        ge=0,
        le=60,
        description=(
            "Answer with the seat's next turn too (`turn`): its view once the game waits for"
            " the seat again or is over, waiting up to this many seconds (0-60) for that"
        ),
        schema_extra={"minimum": 0},
    ),
]


def client_key_of(caller: Caller | None, key: str | None) -> ClientKey | None:
    """Returns the store's key of a request's `Idempotency-Key` (None: none sent), scoped to
    its caller: a bot's `name@version`, else the host (`caller` None: a host-only route)."""
    if caller is not None and caller.bot is not None:
        return scoped(caller.bot.key, key)
    return scoped(HOST if caller is None or caller.host else "anyone", key)
