"""Use cases of exported logs: export a finished game from the store, import one into it.

An import checks the whole log offline first (`shared.model.log_replay.replay_log`: every
event by the rules, the deal by its commitment) and appends it in one append under the game's own
id, so that exporting it again gives the same bytes. Importing the same log again changes
nothing; a log whose id holds another game is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from shared.errors import UnknownGame
from shared.games.base import AnyGame
from shared.messages.codec import encode_all
from shared.messages.common import Event
from shared.messages.envelope import RecordedEvent
from shared.model import exported_log as export
from shared.model import log_replay
from shared.model.deals import Verification, verify
from shared.model.notes import withheld
from shared.ports.archive import decoded_log
from shared.store.port import ConcurrencyConflict, EventStore

LogReader = Callable[[str], Sequence[RecordedEvent]]
"""Returns a game's recorded events in version order (empty: no such game)."""


class GameNotOver(Exception):
    """Only a finished game's log is public, and so exported."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is still running: only a finished game is exported")
        self.game_id = game_id
        self.message = str(self)


class ImportRefused(Exception):
    """The log is unreadable, tampered or illegal; `version` names the first bad event
    (None: the header)."""

    def __init__(self, version: int | None, reason: str) -> None:
        where = "the header" if version is None else f"event version {version}"
        super().__init__(f"{where}: {reason}")
        self.version = version
        self.reason = reason
        self.message = str(self)


class GameIdTaken(Exception):
    """The imported log's game id holds another game here."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} exists here with another log")
        self.game_id = game_id
        self.message = str(self)


@dataclass(frozen=True)
class Imported:
    """An imported game: its id, its version, and whether this import appended it (False:
    the same log was there already)."""

    game_id: str
    version: int
    created: bool


def _decoded(game_id: str, recorded: Sequence[RecordedEvent]) -> tuple[AnyGame, list[Event]]:
    """Returns the spec and decoded events of a game's recorded log; raises UnknownGame."""
    spec, _, events = decoded_log(game_id, list(recorded))
    return spec, events


def game_events(read: LogReader, game_id: str) -> list[Event]:
    """Returns a game's decoded log; raises UnknownGame."""
    return _decoded(game_id, read(game_id))[1]


def export_game(read: LogReader, game_id: str, *, notes: Collection[int] = ()) -> bytes:
    """Returns the export of a finished game (`shared.model.exported_log`), the text of each
    note withheld but those of the seats `notes`; raises UnknownGame and GameNotOver."""
    spec, events = _decoded(game_id, read(game_id))
    if not spec.is_over(spec.fold(events)):
        raise GameNotOver(game_id)
    return export.export_bytes(game_id, [withheld(event, notes) for event in events])


def verification(read: LogReader, game_id: str) -> Verification:
    """Returns the check of a game's deal against its commitment (`unrevealed` while it
    runs: nothing secret is in it); raises UnknownGame."""
    return verify(game_events(read, game_id))


def import_game(store: EventStore, text: bytes | str, read: LogReader | None = None) -> Imported:
    """Checks an exported log and appends it under its game id; returns the game.

    Raises ImportRefused (naming the first bad event) and GameIdTaken. `read` reads a game's
    log here (default: the store), to tell a repeated import from another game.
    """
    try:
        log = export.read_log(text.splitlines())
    except export.InvalidLog as error:
        raise ImportRefused(error.version, error.reason) from None
    game_id, events = log.header.game_id, log.events
    report = log_replay.replay(game_id, events)
    if not report.ok:
        raise ImportRefused(report.version, report.reason)
    canonical = _withheld_export(game_id, events)
    reader = read if read is not None else store.read
    for _ in range(2):
        existing = reader(game_id)
        if existing:
            return _same(game_id, existing, canonical)
        try:
            result = store.append(game_id, log.header.game, 0, encode_all(events))
        except ConcurrencyConflict:
            continue  # another import (or a game) came first: compare with it
        return Imported(game_id, result.last_version, created=True)
    raise GameIdTaken(game_id)


def _withheld_export(game_id: str, events: Sequence[Event]) -> bytes:
    """Returns the export of `events` with every note withheld: what tells a repeated import
    apart from another game (an export is the same log whoever's notes it shows)."""
    return export.export_bytes(game_id, [withheld(event) for event in events])


def _same(game_id: str, existing: Sequence[RecordedEvent], canonical: bytes) -> Imported:
    """Returns the existing game when its log is the imported one; raises GameIdTaken."""
    try:
        _, events = _decoded(game_id, existing)
        same = _withheld_export(game_id, events) == canonical
    except (UnknownGame, export.InvalidLog):
        same = False
    if not same:
        raise GameIdTaken(game_id)
    return Imported(game_id, len(existing), created=False)
