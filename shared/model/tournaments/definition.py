"""A tournament's definition: what a host asks for, its checks, its name and its warnings.

`validate` raises InvalidTournament naming the field a definition gets wrong; `warnings` says
what the host should know of a valid one. Pure: the registered bots are passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest, InvalidRuleset
from shared.messages.common import Clock
from shared.model.accounts import same_account
from shared.model.registry import BotKind, RegisteredBot, owner_of, resolve_bot
from shared.model.tournaments import formats
from shared.model.tournaments.schedule import InvalidSchedule, Schedule, validate_schedule

Format = Literal["round_robin", "swiss", "duplicate", "knockout", "arena"]


class Entrant(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A bot entered in a tournament: a registered bot's name and version, or a built-in
    strategy's name under a version label. Ratings follow `bot@version`.

    `strategy` and `kind` are filled in when the tournament is created (the registered
    bot's, or `bot` itself as a built-in strategy), so later registrations never change a
    recorded tournament. The seats of an `external` or `webhook` entrant are bound to it.
    """

    bot: str
    """A registered bot's name, or a built-in strategy's."""
    version: str = "1"
    """The version label (default "1"); ratings follow `bot@version`."""
    name: str = ""
    """A display name (default: `bot`)."""
    strategy: str = ""
    """The strategy it plays, filled in at creation."""
    kind: BotKind | None = None
    """How it plays (`builtin`, `external`, `webhook`), filled in at creation."""
    account: str | UnsetType = UNSET
    """The account owning the registered bot when it is not the host's, filled in at creation
    (unset, and not encoded, for the host's bots and built-in strategies)."""

    @property
    def label(self) -> str:
        """Returns the entrant's display name: its name, else `bot@version`."""
        return self.name or f"{self.bot}@{self.version}"


class TournamentDefinition(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What a host asks for: game, ruleset, entrants, table size, format and seed."""

    game: str
    """The game to play."""
    entrants: list[Entrant]
    """The bots entered, in entrant order."""
    name: str | UnsetType = UNSET
    """The tournament's name (1 to 100 characters, not blank); left out: the game's title and
    the format, e.g. "Shithead Swiss". Left out, it is not stored (nor was it before names)."""
    description: str | UnsetType = UNSET
    """What it is for, in a few words (1 to 2000 characters, not blank); optional."""
    table_size: int
    """Seats per table."""
    format: Format = "round_robin"
    """`round_robin`, `swiss`, `knockout`, `duplicate` or `arena`."""
    ruleset: str | dict[str, Any] | None = None
    """A preset's name or the ruleset's fields; none: the classic preset."""
    games_per_table: int = 1
    """Round robin, Swiss and knockout: the games each table plays, its seats rotating from
    one to the next (a knockout table's winner: the most points over them); duplicate: cycles
    of one deal per entrant (each deal at every table the field fills, nobody at two of
    them)."""
    rounds: int = 3
    """Swiss: the number of rounds (an arena refuses any but the default)."""
    seed: str = ""
    """The games' seed: the same definition and seed on the same deployment deal the same
    cards (empty: a random seed, drawn when the tournament is created). Withheld, as empty,
    while the tournament runs."""
    schedule: Schedule | None = None
    """When to run it: once `at` a time or on a `cron` expression; None runs it now."""
    clock: Clock | None = None
    """The clock of every game (it times only external and webhook seats), overriding the
    ruleset's; None: the ruleset's clock, if it sets one, else untimed."""
    duration_seconds: int | UnsetType = UNSET
    """Arena (required there, refused elsewhere): how long it pairs free entrants, in seconds
    (60 to 86400); games still running at the end finish and count. Left out, it is not
    stored (nor was it before arenas)."""


DEFAULT_ROUNDS = 3
"""The default of `rounds`."""


class InvalidTournament(InvalidRequest):
    """A tournament definition cannot be run; `field` names the offending field."""


NAME_LENGTH = 100
"""The longest tournament name."""
DESCRIPTION_LENGTH = 2000
"""The longest tournament description."""
FORMAT_TITLES: dict[str, str] = {
    "round_robin": "round robin",
    "swiss": "Swiss",
    "duplicate": "duplicate",
    "knockout": "knockout",
    "arena": "arena",
}


def display_name(definition: TournamentDefinition) -> str:
    """Returns the tournament's name: the host's, else the game's title and the format."""
    if isinstance(definition.name, str) and definition.name:
        return definition.name
    try:
        title = get_game(definition.game).title
    except GameNotFound:
        title = definition.game
    return f"{title} {FORMAT_TITLES.get(definition.format, definition.format)}"


class TournamentWarning(msgspec.Struct, frozen=True, kw_only=True):
    """Something the host should know about a valid tournament."""

    code: str
    """What it is, for a program: `version-entered-twice` (games where one bot version
    sits in two seats are not rated) or `same-account` (games between bots of one account
    are not rated)."""
    message: str
    """What it is, in words."""


def warnings(definition: TournamentDefinition) -> list[TournamentWarning]:
    """Returns what the host should know of a valid definition: each bot version entered
    twice or more, whose games at one table are never rated (`shared.ports.views.fold`: a
    rating key on one seat only)."""
    if not get_game(definition.game).has_decisions:
        return []
    entries: dict[str, list[int]] = {}
    for index, entrant in enumerate(definition.entrants):
        entries.setdefault(f"{entrant.bot}@{entrant.version}", []).append(index)
    found = [
        TournamentWarning(
            code="version-entered-twice",
            message=(
                f"{key} is entered {len(indexes)} times (entrants"
                f" {', '.join(map(str, indexes))}): a game in which it sits in two seats is"
                " not rated (one bot version playing itself has no rating update); enter"
                " distinct versions to rate every game"
            ),
        )
        for key, indexes in entries.items()
        if len(indexes) > 1
    ]
    return found + _same_account_warnings(definition)


def _same_account_warnings(definition: TournamentDefinition) -> list[TournamentWarning]:
    """Returns a `same-account` warning per account (not the host's) with two or more entrants:
    their games against each other are played but never rated."""
    accounts: dict[str, list[int]] = {}
    for index, entrant in enumerate(definition.entrants):
        if isinstance(entrant.account, str) and same_account(entrant.account, entrant.account):
            accounts.setdefault(entrant.account, []).append(index)
    return [
        TournamentWarning(
            code="same-account",
            message=(
                f"entrants {', '.join(map(str, indexes))} are bots of the account {account}:"
                " their games against each other are played but never rated (one owner never"
                " feeds itself)"
            ),
        )
        for account, indexes in accounts.items()
        if len(indexes) > 1
    ]


def _check_text(definition: TournamentDefinition) -> None:
    """Raises InvalidTournament (`name`, `description`) for a blank or too long text."""
    for name, value, longest in (
        ("name", definition.name, NAME_LENGTH),
        ("description", definition.description, DESCRIPTION_LENGTH),
    ):
        if isinstance(value, UnsetType):
            continue
        if not value.strip():
            raise InvalidTournament(name, "must not be blank (leave it out instead)")
        if len(value) > longest:
            raise InvalidTournament(
                name, f"is {len(value)} characters long; at most {longest} are allowed"
            )


MAX_GAMES = 20_000
"""The most games one tournament may plan: a hosting request (or a schedule, each run) may
not make the platform play an unbounded number of games. Split bigger events."""
ARENA_MAX_GAMES = 2_000
"""The most games one arena starts: once it has started that many, it pairs nobody more and
finishes when they end (its stream, read whole at every game, stays bounded)."""
ARENA_SECONDS = (60, 86_400)
"""The shortest and the longest arena, in seconds."""


def planned_games(definition: TournamentDefinition) -> int:
    """Returns how many games the tournament plays at most (a knockout: fewer than its
    entrants; Swiss: every entrant at a table in every round)."""
    entrants, size = len(definition.entrants), definition.table_size
    if definition.format in ("round_robin", "duplicate"):
        return _games_per_cycle(definition) * definition.games_per_table
    if definition.format == "swiss":
        return definition.rounds * (entrants // max(1, size)) * definition.games_per_table
    if definition.format == "arena":
        return ARENA_MAX_GAMES
    return entrants * definition.games_per_table


def _check_size(definition: TournamentDefinition) -> None:
    """Raises InvalidTournament (naming the field that makes it so) for a tournament of more
    than MAX_GAMES games."""
    planned = planned_games(definition)
    if planned <= MAX_GAMES:
        return
    if definition.format == "swiss":
        field = "rounds" if definition.games_per_table == 1 else "games_per_table"
    elif definition.format == "knockout":
        field = "entrants" if definition.games_per_table == 1 else "games_per_table"
    elif _games_per_cycle(definition) > MAX_GAMES:
        field = "entrants"
    else:
        field = "games_per_table"
    raise InvalidTournament(
        field, f"the tournament would play {planned} games; at most {MAX_GAMES} are allowed"
    )


def _games_per_cycle(definition: TournamentDefinition) -> int:
    """Returns the games the field alone makes, whatever `games_per_table`: its tables (round
    robin), or one cycle of deals (duplicate)."""
    entrants, size = len(definition.entrants), definition.table_size
    if definition.format == "duplicate":
        return entrants * formats.duplicate_tables(entrants, size)
    return math.comb(entrants, size) if 0 <= size <= entrants else 0


def duplicate_minimum(table_size: int) -> int:
    """Returns the smallest field of a duplicate tournament at tables of `table_size`: two
    tables of disjoint entrants, so that each seat of a deal is compared across tables and
    nobody plays the deal twice."""
    return 2 * table_size


def _check_duplicate(definition: TournamentDefinition, bots: Sequence[RegisteredBot]) -> None:
    """Raises InvalidTournament (`entrants`) for a duplicate field too small to play each deal
    at two tables of disjoint entrants, or (`entrants[i].bot`) when one external or webhook
    bot (one token) is entered twice: it would see a deal at two tables."""
    needed = duplicate_minimum(definition.table_size)
    if len(definition.entrants) < needed:
        raise InvalidTournament(
            "entrants",
            f"a duplicate tournament at tables of {definition.table_size} needs at least"
            f" {needed} entrants (each deal at two tables, nobody at both),"
            f" not {len(definition.entrants)}",
        )
    resolved = resolve_entrants(definition, bots).entrants
    owners = [e.account if isinstance(e.account, str) else None for e in resolved]
    for second, owner in enumerate(owners):
        first = next((i for i in range(second) if same_account(owners[i], owner)), None)
        if first is not None:
            raise InvalidTournament(
                "entrants",
                f"entrants {first} and {second} are bots of one account ({owner}): rule"
                " same_account, a duplicate tournament never seats two bots of one account"
                " (they would play one deal at two tables and could pool what they saw)",
            )
    seen: set[str] = set()
    for index, entrant in enumerate(resolved):
        key = f"{entrant.bot}@{entrant.version}"
        if entrant.kind in {"external", "webhook"}:
            if key in seen:
                raise InvalidTournament(
                    f"entrants[{index}].bot",
                    f"{key} is entered twice: in a duplicate tournament a bot with a token"
                    " plays each deal once, so it may hold one entry",
                )
            seen.add(key)


def validate(definition: TournamentDefinition, bots: Sequence[RegisteredBot] = ()) -> None:
    """Raises InvalidTournament naming the field a definition gets wrong.

    Entrants may name the `bots` registered, or the game's built-in strategies.
    """
    try:
        spec = get_game(definition.game)
    except GameNotFound:
        raise InvalidTournament("game", f"unknown game {definition.game!r}") from None
    size = definition.table_size
    if not spec.min_players <= size <= spec.max_players:
        raise InvalidTournament(
            "table_size", f"{spec.title} seats {spec.min_players} to {spec.max_players}, not {size}"
        )
    if len(definition.entrants) < size:
        raise InvalidTournament(
            "entrants", f"{len(definition.entrants)} entrants cannot fill a table of {size}"
        )
    _check_text(definition)
    resolve_entrants(definition, bots)
    if definition.format == "duplicate":
        _check_duplicate(definition, bots)
    if definition.games_per_table < 1:
        raise InvalidTournament("games_per_table", "must be at least 1")
    if definition.format == "swiss" and definition.rounds < 1:
        raise InvalidTournament("rounds", "must be at least 1")
    _check_arena(definition)
    _check_size(definition)
    try:
        spec.validate(spec.ruleset(definition.ruleset), size)
    except InvalidRuleset as error:
        raise InvalidTournament(f"ruleset.{error.field}", error.message) from None
    if definition.schedule is not None:
        try:
            validate_schedule(definition.schedule)
        except InvalidSchedule as error:
            raise InvalidTournament(f"schedule.{error.field}", error.message) from None


def _check_arena(definition: TournamentDefinition) -> None:
    """Raises InvalidTournament for an arena without a `duration_seconds` in bounds, or with
    what an arena does not play by (`games_per_table` other than 1, `rounds` other than the
    default, a `schedule` of ticks is fine); and for `duration_seconds` on another format."""
    duration = definition.duration_seconds
    if definition.format != "arena":
        if not isinstance(duration, UnsetType):
            raise InvalidTournament("duration_seconds", "only an arena tournament has a duration")
        return
    low, high = ARENA_SECONDS
    if isinstance(duration, UnsetType):
        raise InvalidTournament("duration_seconds", f"an arena needs a duration ({low}-{high})")
    if not low <= duration <= high:
        raise InvalidTournament(
            "duration_seconds", f"must be {low} to {high} seconds, not {duration}"
        )
    if definition.games_per_table != 1:
        raise InvalidTournament("games_per_table", "an arena plays one game per table")
    if definition.rounds != DEFAULT_ROUNDS:
        raise InvalidTournament("rounds", "an arena plays for duration_seconds, not rounds")


def resolve_entrants(
    definition: TournamentDefinition, bots: Sequence[RegisteredBot] = ()
) -> TournamentDefinition:
    """Returns `definition` with each entrant's strategy filled in; raises InvalidTournament."""
    entrants = []
    spec = get_game(definition.game)
    for index, entrant in enumerate(definition.entrants):
        field = f"entrants[{index}]"
        key = f"{entrant.bot}@{entrant.version}"
        try:
            kind, strategy = resolve_bot(definition.game, entrant.bot, entrant.version, bots, field)
        except InvalidRequest as error:
            raise InvalidTournament(f"{field}.bot", error.message) from None
        if entrant.strategy and entrant.strategy != strategy:
            raise InvalidTournament(f"{field}.strategy", f"{key} plays {strategy or kind}")
        if entrant.kind is not None and entrant.kind != kind:
            raise InvalidTournament(f"{field}.kind", f"{key} is a {kind} bot")
        account = owner_of(definition.game, entrant.bot, entrant.version, bots)
        if not isinstance(entrant.account, UnsetType) and entrant.account != account:
            raise InvalidTournament(f"{field}.account", f"{key} is not a bot of that account")
        if kind != "builtin" and not spec.has_decisions:
            raise InvalidTournament(
                f"{field}.bot", f"{spec.title} has no decisions; only built-in bots play it"
            )
        entrants.append(
            msgspec.structs.replace(entrant, strategy=strategy, kind=kind, account=account)
        )
    return msgspec.structs.replace(definition, entrants=entrants)


def description_of(definition: TournamentDefinition) -> str | None:
    """Returns the tournament's description, None when it has none."""
    return definition.description if isinstance(definition.description, str) else None
