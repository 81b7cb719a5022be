"""Request parameters shared by the game service's controllers."""

from __future__ import annotations

from typing import Annotated

from litestar.params import HeaderParameter, PathParameter, QueryParameter

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="Makes a retry safe: the same key and body return the first result.",
    ),
]
GameId = Annotated[str, PathParameter(description="The game's id, as its creation returned it.")]
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
