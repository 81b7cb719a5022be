"""Events, commands and results that every game shares.

Stored events are a contract: new fields get defaults, nothing is renamed or retyped.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec


class Event(msgspec.Struct, frozen=True, kw_only=True, tag=True, tag_field="type"):
    """Base of every event; the tag is the class name (`"GameCreated"`)."""


class Action(
    msgspec.Struct,
    frozen=True,
    kw_only=True,
    tag=True,
    tag_field="type",
    forbid_unknown_fields=True,
):
    """Base of every command a seat can take; the tag is the class name (`"PlayCards"`)."""


class Resign(Action, frozen=True, kw_only=True):
    """The seat gives the game up: from then on the platform plays its default actions and it
    places last, rated like any loss. Every game with decisions accepts it from a seat of a
    running game, on its turn or not; it is not among a seat's listed legal actions."""


PLATFORM_ACTIONS = (Resign,)
"""The actions every game with decisions accepts beside its own; the platform decides them."""


class Seat(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who plays a seat: a built-in bot strategy run by the platform, or an external client.

    A tournament seat names its entrant (`name`) and the entrant's `version` label; ratings
    are kept per `name@version`. Ad-hoc seats leave `version` empty and are not rated.
    An `external` or `webhook` seat with a `version` is bound to the registered bot
    `name@version` (only its token may play it, see `bound_bot`); a `webhook` seat is
    always bound, its moves come from the bot's URL.
    """

    kind: Literal["bot", "external", "webhook"] = "bot"
    """`bot` (a built-in strategy), `external` (a client with a token) or `webhook` (the platform
    calls the bot's URL)."""
    bot: str | None = None
    """A `bot` seat's strategy; for an `external` or `webhook` seat, the registered bot it is bound
    to."""
    name: str | None = None
    """The seat's display name, or the bound bot's name."""
    version: str = ""
    """The version label: the bound bot's, or a tournament entrant's; empty for an unrated seat."""
    account: str | msgspec.UnsetType = msgspec.UNSET
    """The account owning the seat's registered bot when it is not the host's (unset, and then
    not encoded, for the host's bots and any other seat): a game between two seats of one
    account is never rated (`shared.model.accounts.same_account`)."""
    evaluation: str | msgspec.UnsetType = msgspec.UNSET
    """The hosted evaluation this seat plays for (unset, not encoded, for any other seat): an
    evaluation's game is never rated (`shared.model.evaluations`)."""

    @property
    def bound_bot(self) -> str | None:
        """Returns `name@version` of the registered bot this seat is bound to, None if none."""
        if self.kind == "bot" or not self.name or not self.version:
            return None
        return f"{self.name}@{self.version}"

    @property
    def rating_key(self) -> str | None:
        """Returns the key this seat is rated under (`name@version`), None when unrated."""
        if isinstance(self.evaluation, str):
            return None
        if self.kind != "bot":
            return self.bound_bot
        if not self.version:
            return None
        return f"{self.name or self.bot}@{self.version}"


class Result(msgspec.Struct, frozen=True):
    """How a game ended: one place per seat (1 is best, ties share), and game-specific figures."""

    status: str
    """How the game ended: `finished` by its rules, `capped`, `loop` or `draw` (see
    docs/reference/values.md)."""
    places: list[int]
    """Each seat's finishing place, in seat order: 1 is best, tied seats share a place."""
    reason: str = ""
    """Why the game ended, for a person to read (not a code)."""
    scores: list[int] | None = None
    """A game-specific figure per seat, in seat order (e.g. cards left); null when the game keeps
    none."""
    detail: dict[str, int] = {}
    """Game-specific counts of the whole game (e.g. `moves`, `turns`)."""


class Clock(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A game's clock: a deadline per move, a time bank per seat, and strikes to forfeit.

    A seat that lets its move deadline and then its bank run out gets the game's default
    action and a strike; at `strikes_to_forfeit` strikes it forfeits (see `shared.model.clocks`).
    """

    move_seconds: Annotated[float, msgspec.Meta(gt=0, le=86_400)]
    """Seconds a seat has for each move before its bank starts to drain."""
    bank_seconds: Annotated[float, msgspec.Meta(ge=0, le=864_000)] = 0
    """Seconds of a seat's time bank for the whole game: it drains by the time used beyond
    each move deadline."""
    strikes_to_forfeit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 3
    """Timeouts after which a seat forfeits."""


class GameCreated(Event, frozen=True, kw_only=True):
    """A game was created: which game, with which ruleset and seats. Written by the service."""

    game: str
    """The game's name."""
    ruleset: dict[str, Any]
    """The game's ruleset, every option a field."""
    seats: list[Seat]
    """Who plays each seat, in seat order."""
    created_at: str = ""
    """When the game was created (ISO 8601, UTC)."""
    bot_seed: str = ""
    """Seeds the built-in bots' choices (derived from the game's seed; hidden while it runs)."""
    tournament: str = ""
    """The tournament this game belongs to, if any."""
    tournament_key: str = ""
    """The game's key in its tournament's schedule."""
    clock: Clock | msgspec.UnsetType = msgspec.UNSET
    """The game's clock; unset (and then not even encoded) for an untimed game."""
    forked_from: str | msgspec.UnsetType = msgspec.UNSET
    """A fork's original game (see `shared.app.forks`); unset (not encoded) for any other game."""
    fork_version: int | msgspec.UnsetType = msgspec.UNSET
    """The original's version a fork starts after; unset (not encoded) for any other game."""
    commitment: str = ""
    """The deal's commitment, public from the start: the hex SHA-256 of the seed and a secret
    salt (see `shared.model.deals`); empty for a game created without one (before it existed, a
    fork)."""
    deal_seed: str = ""
    """The seed the game was dealt from, as text; secret while the game runs (withheld like
    `bot_seed`), revealed by its `GameFinished`."""
    salt: str = ""
    """The commitment's secret salt (64 hex digits); withheld while the game runs."""


class GameFinished(Event, frozen=True, kw_only=True):
    """The game is over; `result` holds the places and the reason.

    The platform fills in `seed` and `salt` from the game's `GameCreated` (the engines leave
    them empty): the reveal of the deal's commitment (see `shared.model.deals`); empty for a game
    created without one.
    """

    result: Result
    """How the game ended: a place per seat and the reason (an aborted game: no places)."""
    seed: str = ""
    """The seed the game was dealt from, as text (see `shared.model.deals.seed_text`)."""
    salt: str = ""
    """The secret salt of the game's commitment."""


class ClockEvent(Event, frozen=True, kw_only=True):
    """Base of the events the platform appends to any game's log about a seat: its clock's,
    and a resignation (`SeatResigned`).

    Every game's codec decodes them and its evolve leaves its state unchanged on them;
    `shared.model.clocks` folds them into the game's clock: strikes, forfeits, time banks.
    """


class TurnTimedOut(ClockEvent, frozen=True, kw_only=True):
    """`seat` let its move deadline and its time bank run out; `strikes` counts its timeouts."""

    seat: int
    """The seat that ran out of time."""
    strikes: int
    """The seat's timeouts so far."""


class SeatForfeited(ClockEvent, frozen=True, kw_only=True):
    """`seat` reached the strikes to forfeit: it plays only default actions and places last."""

    seat: int
    """The seat that forfeited."""


class DefaultActionPlayed(ClockEvent, frozen=True, kw_only=True):
    """The platform played the game's default action for `seat`; the game's events follow.

    `reason` is `timeout` (the seat ran out of time) or `forfeited` (it forfeited before).
    """

    seat: int
    """The seat played for."""
    action: dict[str, Any]
    """The action played, one of the seat's legal actions."""
    reason: Literal["timeout", "forfeited"]
    """`timeout` (the seat ran out of time) or `forfeited` (it forfeited before)."""


class WebhookFailed(ClockEvent, frozen=True, kw_only=True):
    """A call to `seat`'s webhook brought no legal action; the clock keeps running.

    `reason`: `timeout`, `connection_error`, `url_refused` (the URL is, or resolves to, a
    private address), `http_status`, `invalid_answer`, `illegal_action` or `no_webhook`;
    `detail` says more (a status, a rule, an error).
    """

    seat: int
    """The webhook seat."""
    reason: str
    """Why the call brought no legal action: `timeout`, `connection_error`, `url_refused`,
    `http_status`, `invalid_answer`, `illegal_action` or `no_webhook`."""
    detail: str = ""
    """More about it: a status, a rule, an error (at most 500 characters)."""


class SeatResigned(ClockEvent, frozen=True, kw_only=True):
    """`seat` resigned (it posted `Resign`): like a forfeited seat, it plays only default
    actions from now on and places last; a resignation that leaves at most one seat that has
    neither resigned nor forfeited ends the game at once (its `GameFinished` follows)."""

    seat: int
    """The seat that resigned."""


class NoteTaken(ClockEvent, frozen=True, kw_only=True):
    """`seat`'s bot took a private note with its move: the events of that move (or its
    resignation) follow. The engines never see it (`GameSpec.step` skips it like the clock's
    events). Its `text` is withheld (empty) from every reader while the game runs, and after
    it from all but the seat's bot, its account and the host (see `shared.model.notes`)."""

    seat: int
    """The seat whose bot took the note."""
    text: str = ""
    """What the bot was thinking: at most 1024 bytes of UTF-8, no control character but
    newline and tab; empty where the reader may not read it."""


ABORTED = "aborted"
"""The status of an aborted game's result (see `GameAborted`)."""


class GameAborted(GameFinished, frozen=True, kw_only=True):
    """The platform ended the game with no result: nobody places, nothing is rated, the
    seats' bots are free again. `result.status` is `aborted`, `result.places` is empty and
    `result.reason` says why: `host` (the host aborted it), `tournament_cancelled` (its
    tournament was cancelled), `stale` (nobody moved for CARDARENA_STALE_GAME_SECONDS) or
    `account_suspended` (the host suspended the account of one of its bots).
    Like any `GameFinished`, it reveals the deal's `seed` and `salt`."""


CLOCK_EVENTS = (
    TurnTimedOut,
    SeatForfeited,
    DefaultActionPlayed,
    WebhookFailed,
    SeatResigned,
    NoteTaken,
)
"""Every event type of the platform's about a seat (the clock's, a resignation, a note),
decoded by every game's codec; every evolve leaves its state unchanged on them."""

PLATFORM_EVENTS = (*CLOCK_EVENTS, GameAborted)
"""Every event type the platform appends to any game's log beside the engine's own."""
