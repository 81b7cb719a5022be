"""Request and response bodies of the games routes: create a game, list games and events, take
actions."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from services.game.http.schemas import EventItem, SeatSpec, SeatView
from shared.app.loading import Outcome
from shared.messages.common import Clock
from shared.ports.views.port import GameSummary

NonNegative = Annotated[int, msgspec.Meta(ge=0)]
PlayerCount = Annotated[int, msgspec.Meta(ge=0, le=64)]
"""Bounded here so that a huge count cannot make the service build a huge table."""


class CreateGame(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Creates a game: its name, a ruleset (a preset name or fields), seats or a player count."""

    game: str
    """The game to create."""
    ruleset: str | dict[str, Any] | None = None
    """A preset's name or the ruleset's fields (none: the game's `classic` preset); each game's
    fields and presets are in its rules page, `docs/rules/` in the repository."""
    seats: list[SeatSpec] | None = None
    """Who plays each seat, in seat order (none: `players` built-in bots)."""
    players: PlayerCount | None = None
    """The number of seats, each a built-in bot, when `seats` is not given."""
    seed: int | str | None = None
    """The same seed on the same deployment deals the same cards, keyed with its deal secret
    (see docs/how-to/replays.md, Seeds); none: fresh random cards."""
    clock: Clock | None = None
    """Times the client seats: `{"move_seconds", "bank_seconds", "strikes_to_forfeit"}`,
    overriding the ruleset's clock; none: the ruleset's, else untimed (a game with a webhook
    seat still gets a clock)."""


class PostAction(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One action of `seat`, taken at `expected_version`; `action` is tagged by its `type`."""

    seat: NonNegative
    """The seat that acts."""
    action: dict[str, Any]
    """The action, one of the seat's legal actions (or a platform action such as `Resign`), tagged
    by its `type`; each game's actions are in its rules page, `docs/rules/` in the repository."""
    expected_version: NonNegative
    """The game's version the action was chosen at; any other answers 409 and writes nothing."""
    note: str | None = None
    """A private note on the move (what the bot was thinking): at most 1024 bytes of UTF-8, no
    control character but newline and tab (else 422, field `note`, and nothing is stored). It
    is stored with the move as a `NoteTaken` event right before the move's events (the move
    then writes one event more); nobody reads its text while the game runs, and after it only
    the seat's bot (any version of it) and the host."""


class EventPage(msgspec.Struct, frozen=True):
    """Events of a game in version order, after a given version; `version` is the stream's."""

    game_id: str
    """The game's id."""
    version: int
    """The game's version: the number of events in its log."""
    events: list[EventItem]
    """The events after the asked version, in version order, as the caller may see them."""


class GamePage(msgspec.Struct, frozen=True):
    """Recent games as the views hold them, newest first."""

    games: list[GameSummary]
    """The games, newest first."""


class ActionAccepted(msgspec.Struct, frozen=True, omit_defaults=True):
    """An applied action: the versions it wrote, or those of the first try when `replayed`."""

    game_id: str
    """The game's id."""
    version: int
    """The game's version after the action: post the next action at this version."""
    first_version: int
    """The version of the first event the action wrote."""
    replayed: bool
    """True when this answers a retry (the same Idempotency-Key and body): nothing new was
    written."""
    turn: SeatView | None = None
    """Asked for with `wait`: the seat's view once the game waits for it again or is over."""

    @classmethod
    def of(cls, outcome: Outcome) -> ActionAccepted:
        """Returns the body of an action's outcome."""
        return cls(outcome.game_id, outcome.version, outcome.first_version, outcome.replayed)
