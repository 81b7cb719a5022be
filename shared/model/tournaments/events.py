"""A tournament stream's events (re-exported by `shared.model.tournaments.model`, whose
process folds them). Stored events never change shape: new fields get defaults."""

from __future__ import annotations

import msgspec

from shared.messages.common import Event
from shared.model.tournaments.definition import Entrant, TournamentDefinition
from shared.model.tournaments.formats import Table


class TournamentEvent(Event, frozen=True, kw_only=True):
    """Base of a tournament stream's events."""


class TournamentCreated(TournamentEvent, frozen=True, kw_only=True):
    """A tournament was defined."""

    definition: TournamentDefinition


class ScheduledGame(msgspec.Struct, frozen=True, kw_only=True):
    """A game of a round: the key its game is created with, its table and its deal seed."""

    key: str
    table: Table
    seed: str
    deal: str = ""


class RoundScheduled(TournamentEvent, frozen=True, kw_only=True):
    """A round's games were fixed; `byes` sit it out."""

    round: int
    games: list[ScheduledGame]
    byes: list[int] = []


class GameRecorded(TournamentEvent, frozen=True, kw_only=True):
    """A game of the tournament ended: the places of its table's entrants, in seat order."""

    round: int
    key: str
    game_id: str
    places: list[int]
    status: str


class RoundCompleted(TournamentEvent, frozen=True, kw_only=True):
    """Every game of a round has been recorded."""

    round: int


class TournamentFinished(TournamentEvent, frozen=True, kw_only=True):
    """The tournament is over; `winner` is the knockout's last entrant, else the first of the
    final standings (`ranking`). A stream written before that rule named no winner of a
    round robin, Swiss or duplicate: folding it names the standings' first all the same."""

    winner: int | None = None


class TournamentCancelled(TournamentEvent, frozen=True, kw_only=True):
    """A host cancelled the tournament; games already running finish but count for nothing."""

    reason: str = ""


class ArenaStarted(TournamentEvent, frozen=True, kw_only=True):
    """An arena's clock started: it pairs free entrants until `ends_ms` (ms since the epoch)."""

    started_ms: int
    ends_ms: int


class EntrantJoined(TournamentEvent, frozen=True, kw_only=True):
    """An entrant joined a running arena late; its index is the field's size before it."""

    entrant: Entrant


class EntrantWithdrew(TournamentEvent, frozen=True, kw_only=True):
    """An entrant left an arena: it is never paired again; its recorded games count, and a
    game it still plays finishes and counts."""

    entrant: int


AnyTournamentEvent = (
    TournamentCreated
    | RoundScheduled
    | GameRecorded
    | RoundCompleted
    | TournamentFinished
    | TournamentCancelled
    | ArenaStarted
    | EntrantJoined
    | EntrantWithdrew
)
