"""Exported game logs (JSON lines): the format, written and read back.

An export is UTF-8 JSON lines, each line one JSON object, `\\n` after each:

    {"format":"cardarena-game","schema":1,"game_id":...,"game":...,"ruleset":{...},
     "players":4,"events":618,"commitment":"...","result":{...}}
    {"version":1,"type":"GameCreated","schema":1,"data":{"type":"GameCreated",...}}
    {"version":2,"type":"GameStarted","schema":1,"data":{...}}
    ...

The header (`Header`) says what the log holds; everything in it derives from the events,
so it is checked against them. Each event line carries its version (1, 2, ... without
gaps), its type tag, its envelope schema (`shared.messages.envelope.SCHEMA_VERSION`) and the event
as JSON. Nothing in an export depends on when or where it was made (no export time, no
store times: `recorded_at` is left out), so exporting, importing elsewhere and exporting
again gives the same bytes.

The offline replay of a log (`replay_log`) is `shared.model.log_replay`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec

from shared.catalog import get_game
from shared.errors import GameNotFound
from shared.messages.common import (
    Event,
    GameCreated,
    GameFinished,
    Result,
)
from shared.messages.envelope import SCHEMA_VERSION
from shared.messages.text import find_unstorable
from shared.model.deals import difference

FORMAT = "cardarena-game"
"""The `format` of an export's header."""
SCHEMA = 1
"""The export format's version, in its header; readers refuse any other."""
MEDIA_TYPE = "application/x-ndjson"

_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The game ids an import accepts (the service's are 32 hex digits)."""


class Header(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An export's first line: what the log holds, all of it derived from its events."""

    format: str
    schema: int
    game_id: str
    game: str
    ruleset: dict[str, Any]
    players: int
    events: int
    """How many event lines follow."""
    commitment: str
    """The deal's commitment (empty for a game without one)."""
    result: Result | None
    """The result its GameFinished records (None when the log holds none)."""


class EventLine(msgspec.Struct, frozen=True):
    """One event line: its version, type tag, envelope schema and the event as JSON."""

    version: int
    type: str
    schema: int
    data: Any


class _EventLineIn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An event line as read: the event left raw, to decode with its game's types."""

    version: int
    type: str
    schema: int
    data: msgspec.Raw


class InvalidLog(ValueError):
    """A log that cannot be read or does not add up; `version` names the first bad event
    (None: the header)."""

    def __init__(self, version: int | None, reason: str) -> None:
        where = "header" if version is None else f"v{version}"
        super().__init__(f"{where}: {reason}")
        self.version = version
        self.reason = reason


@dataclass(frozen=True)
class GameLog:
    """A read export: its header and its events, decoded (index i holds version i + 1)."""

    header: Header
    events: list[Event]


_encoder = msgspec.json.Encoder()


@cache
def _decoder(game: str) -> msgspec.json.Decoder[Any]:
    """Returns the JSON decoder of `game`'s events (its union and the common ones)."""
    return msgspec.json.Decoder(get_game(game).log_type)


def header_of(game_id: str, events: Sequence[Event]) -> Header:
    """Returns the header of the log `events` of `game_id`; raises InvalidLog when it does not
    begin with GameCreated."""
    if not events or not isinstance(events[0], GameCreated):
        raise InvalidLog(1, "the log does not begin with GameCreated")
    created = events[0]
    finishes = [event.result for event in events if isinstance(event, GameFinished)]
    return Header(
        format=FORMAT,
        schema=SCHEMA,
        game_id=game_id,
        game=created.game,
        ruleset=created.ruleset,
        players=len(created.seats),
        events=len(events),
        commitment=created.commitment,
        result=finishes[-1] if finishes else None,
    )


def export_lines(game_id: str, events: Sequence[Event]) -> list[bytes]:
    """Returns the export of a game's log (`events` in version order, from 1): the header,
    then one line per event, each ending in a newline."""
    lines = [_encoder.encode(header_of(game_id, events)) + b"\n"]
    for version, event in enumerate(events, start=1):
        tag = str(type(event).__struct_config__.tag)
        line = EventLine(version, tag, SCHEMA_VERSION, event)
        lines.append(_encoder.encode(line) + b"\n")
    return lines


def export_bytes(game_id: str, events: Sequence[Event]) -> bytes:
    """Returns the export of a game's log as one UTF-8 text (see `export_lines`)."""
    return b"".join(export_lines(game_id, events))


def read_log(lines: Iterable[str | bytes]) -> GameLog:
    """Returns the header and the decoded events of an export's lines (blank lines are
    skipped); raises InvalidLog naming the first line that cannot be read, or the header
    when it does not match the events."""
    rows = [line for line in lines if line.strip()]
    if not rows:
        raise InvalidLog(None, "the log is empty")
    header = read_header(rows[0])
    events: list[Event] = []
    read_events(header, rows[1:], events)
    _check_header(header, events)
    return GameLog(header, events)


def read_events(header: Header, rows: Sequence[str | bytes], events: list[Event]) -> None:
    """Decodes the event lines `rows` onto `events`, in order; raises InvalidLog at the first
    line that cannot be read (`events` then holds those before it)."""
    decode = _decoder(header.game)
    for expected, row in enumerate(rows, start=1):
        try:
            line = msgspec.json.decode(row, type=_EventLineIn)
        except msgspec.DecodeError as error:
            raise InvalidLog(expected, f"not an event line: {error}") from None
        if line.version != expected:
            what = "missing" if line.version > expected else "out of order"
            raise InvalidLog(expected, f"{what}: the line holds version {line.version}")
        if line.schema != SCHEMA_VERSION:
            raise InvalidLog(expected, f"schema {line.schema} is not {SCHEMA_VERSION}")
        try:
            event: Event = decode.decode(line.data)
        except msgspec.DecodeError as error:
            raise InvalidLog(expected, f"not a {header.game} event: {error}") from None
        tag = type(event).__struct_config__.tag
        if tag != line.type:
            raise InvalidLog(expected, f"the line says {line.type}, its data is {tag}")
        if (bad := find_unstorable(msgspec.to_builtins(event))) is not None:
            raise InvalidLog(expected, f"{bad[0] or 'the event'} holds {bad[1]}")
        events.append(event)


def read_header(row: str | bytes) -> Header:
    """Returns an export's header line, checked for its format, schema, game and id."""
    try:
        header = msgspec.json.decode(row, type=Header)
    except msgspec.DecodeError as error:
        raise InvalidLog(None, f"not a {FORMAT} header: {error}") from None
    if header.format != FORMAT:
        raise InvalidLog(None, f"format {header.format!r} is not {FORMAT!r}")
    if header.schema != SCHEMA:
        raise InvalidLog(None, f"schema {header.schema} is not {SCHEMA}")
    if not _GAME_ID.fullmatch(header.game_id):
        raise InvalidLog(None, "game_id must be 1 to 64 letters, digits, '-' or '_'")
    try:
        get_game(header.game)
    except GameNotFound:
        raise InvalidLog(None, f"unknown game {header.game!r}") from None
    return header


def _check_header(header: Header, events: Sequence[Event]) -> None:
    """Raises InvalidLog unless the header is the one the events give."""
    if len(events) < header.events:
        raise InvalidLog(len(events) + 1, f"missing: the header says {header.events} events")
    if len(events) > header.events:
        raise InvalidLog(header.events + 1, f"the header says {header.events} events")
    expected = header_of(header.game_id, events)
    mismatch = difference(msgspec.to_builtins(header), msgspec.to_builtins(expected))
    if mismatch is not None:
        raise InvalidLog(None, f"does not match the log: {mismatch}")
