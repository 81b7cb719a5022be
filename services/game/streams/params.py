"""The streams' parameters and the checks and problems around them: the three `Last-Event-ID`
forms (a game's version, a feed position, a tournament's message), a bot's games' status, and
the problems of admitting a stream or long poll (a full house, a token's cap) or resuming one
the feed no longer holds."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response
from litestar.exceptions import ValidationException
from litestar.params import HeaderParameter, QueryParameter
from litestar.types import ExceptionHandlersMap

from services.game.http.pipeline.problems import Problem, problem
from services.game.http.waiters import StreamsBusy, TooManyStreams
from services.game.streams.tournament_feed import EVENT_ID, BadEventId, parse_event_id
from shared.store.port import EventStore, InvalidCursor, cursor_positions, position_key


def _busy(_: Request[Any, Any, Any], error: StreamsBusy) -> Response[Problem]:
    headers = {"Retry-After": str(error.retry_after)}
    return problem(503, "streams-busy", error.message, headers=headers, limit=error.limit)


def _too_many(_: Request[Any, Any, Any], error: TooManyStreams) -> Response[Problem]:
    headers = {"Retry-After": str(error.retry_after)}
    return problem(429, "too-many-streams", error.message, headers=headers, limit=error.limit)


STREAM_PROBLEMS: ExceptionHandlersMap = {StreamsBusy: _busy, TooManyStreams: _too_many}
"""The problems of admitting a stream or long poll: a full house (503), a token's cap (429)."""


LastVersion = Annotated[
    int | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        ge=0,
        description="Resume after this version (the last `id:` received): no snapshot, no gap",
        schema_extra={"minimum": 0},  # Litestar 2 leaves an optional parameter's 0 bound out
    ),
]
LastPosition = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        pattern=r"^\d{1,20}(-\d{1,20})?(,\d{1,20}(-\d{1,20})?){0,1023}$",
        description="Replay the starts and finishes after this feed position (the last `id:`)",
    ),
]
LastMessage = Annotated[
    str | None,
    HeaderParameter(
        name="Last-Event-ID",
        required=False,
        description=(
            "Resume after this message (the last `id:` received, `V-i`): what came after it,"
            " nothing twice"
        ),
        schema_extra={"pattern": EVENT_ID.pattern},
    ),
]
GAME_STATUSES = ("playing",)
"""The statuses `listBotGames` lists games in (the finished ones are in the leaderboards,
the tournaments' standings and the replays)."""
GameStatus = Annotated[
    str,
    QueryParameter(
        description="Only the games in this status: `playing` (the running games)",
        schema_extra={"enum": list(GAME_STATUSES)},
    ),
]
MAX_ID_PART = 2**64 - 1
"""The largest part of a Redis stream id (`ms-seq`, each an unsigned 64-bit integer)."""


def check_position(position: str | None, partitions: int = 1) -> None:
    """Raises a 400 naming `Last-Event-ID` unless `position` is None or a feed cursor of a
    store of `partitions` partitions that it can read after (each position's parts at most
    2**64 - 1, not both)."""
    if position is None:
        return
    try:
        keys = [position_key(part) for part in cursor_positions(position, partitions)]
    except InvalidCursor as error:
        message = f"not a feed cursor of this service: {error}"
        raise ValidationException(
            message, extra=[{"key": "last_event_id", "message": message, "source": "header"}]
        ) from None
    if any(max(key) > MAX_ID_PART or key == (MAX_ID_PART, MAX_ID_PART) for key in keys):
        message = "no feed position is there: each part is at most 2**64 - 1"
        raise ValidationException(
            message, extra=[{"key": "last_event_id", "message": message, "source": "header"}]
        )


def resume_after(last_event_id: str | None) -> tuple[int, int] | None:
    """Returns the message a Last-Event-ID resumes after; raises a 400 naming the header."""
    if last_event_id is None:
        return None
    try:
        return parse_event_id(last_event_id)
    except BadEventId as error:
        message = str(error)
        raise ValidationException(
            message, extra=[{"key": "last_event_id", "message": message, "source": "header"}]
        ) from None


class CursorTrimmed(Exception):
    """A Last-Event-ID older than what the feed keeps: resuming from it would skip events."""

    def __init__(self, partition: int, trimmed: str) -> None:
        super().__init__(
            f"the feed no longer holds what follows Last-Event-ID (partition {partition} is"
            f" trimmed up to {trimmed}): reconnect without Last-Event-ID"
        )


def check_kept(store: EventStore, cursor: str) -> None:
    """Raises CursorTrimmed when the feed trimmed entries after `cursor` in a partition."""
    for partition, position in enumerate(cursor_positions(cursor, store.partitions)):
        trimmed = store.feed_trimmed(partition)
        if trimmed != "0" and position_key(position) < position_key(trimmed):
            raise CursorTrimmed(partition, trimmed)


def _feed_trimmed(_: Request[Any, Any, Any], error: CursorTrimmed) -> Response[Problem]:
    return problem(410, "feed-trimmed", str(error), field="Last-Event-ID", rule="feed_trimmed")


BOT_STREAM_PROBLEMS: ExceptionHandlersMap = {**STREAM_PROBLEMS, CursorTrimmed: _feed_trimmed}
"""The problems of a bot's streams: admitting one, or resuming one the feed trimmed (410)."""
