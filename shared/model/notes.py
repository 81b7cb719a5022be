"""Bot notes: a private note a move may carry, what one may hold, and who reads it when.

A client seat's move (a posted action, a webhook's answer, a local program's line) may carry
a note: what the bot was thinking. The platform appends it as a `NoteTaken` right before the
move's events, in the same append, so it is stored with the move and never reaches an engine
(`GameSpec.step` skips it). Its text is withheld (`withheld`: empty) from every reader while
the game runs; after the game only the seat's bot, its account and the host read it (the
service decides who is who: `services.game.http.notes`). Everything else about the log stays
public: that a move carried a note (its event, its version) is visible, its text is not.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import msgspec

from shared.errors import InvalidRequest
from shared.messages.common import Event, NoteTaken, Seat, SeatResigned

MAX_NOTE_BYTES = 1024
"""The most bytes of UTF-8 a note may hold."""

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
"""What a note may not hold: control characters other than tab and newline, lone surrogates."""

NOTED_KINDS = frozenset({"external", "webhook"})
"""The seats whose moves may carry a note: a client's (a built-in bot takes none)."""


def problem(text: str) -> str | None:
    """Returns why `text` cannot be a note (too long, a control character), None when it can."""
    found = _CONTROL.search(text)
    if found is not None:
        return (
            f"a note holds no control character but newline and tab; it holds"
            f" U+{ord(found.group()):04X} at {found.start()}"
        )
    size = len(text.encode())
    if size > MAX_NOTE_BYTES:
        return f"a note holds at most {MAX_NOTE_BYTES} bytes of UTF-8, not {size}"
    return None


def checked(text: str | None) -> str:
    """Returns the note `text` (None: no note, an empty text); raises InvalidRequest naming
    the field `note` when it cannot be one."""
    if not text:
        return ""
    reason = problem(text)
    if reason is not None:
        raise InvalidRequest("note", reason)
    return text


def noted(seat: int, note: str, events: Sequence[Event]) -> list[Event]:
    """Returns a move's `events` as appended with `seat`'s `note`: after its `NoteTaken`
    (none for an empty note)."""
    return [NoteTaken(seat=seat, text=note), *events] if note else list(events)


def withheld(event: Event, readable: Collection[int] = ()) -> Event:
    """Returns `event` as a reader who may read the notes of the seats `readable` sees it:
    a `NoteTaken` of any other seat with its text withheld; any other event unchanged."""
    if isinstance(event, NoteTaken) and event.text and event.seat not in readable:
        return msgspec.structs.replace(event, text="")
    return event


def logged_problem(
    note: NoteTaken, seats: Sequence[Seat], waiting: Collection[int], following: Event | None
) -> str | None:
    """Returns why `note` cannot stand where a log holds it (before `following`, the game
    waiting for `waiting`), None when it can: a client seat's note, of a seat to move or
    that resigns next, whose text is a note's (empty: withheld)."""
    if not 0 <= note.seat < len(seats) or seats[note.seat].kind not in NOTED_KINDS:
        return f"seat {note.seat} is no client's seat: only a client's move carries a note"
    resigns = isinstance(following, SeatResigned) and following.seat == note.seat
    if following is None or isinstance(following, NoteTaken):
        return "missing: a note is followed by its move"
    if note.seat not in waiting and not resigns:
        return f"seat {note.seat} is not to move: its note has no move"
    return problem(note.text)
