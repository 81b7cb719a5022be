"""Bodies of the tournament routes: a tournament, its standings, a page of them, a cancellation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec

from shared.app import seeds
from shared.model.idempotency import game_id_for
from shared.model.tournaments.model import (
    TournamentDefinition,
    TournamentState,
    TournamentWarning,
    description_of,
    display_name,
    warnings,
)
from shared.model.tournaments.standings import Standing
from shared.model.tournaments.tiebreaks import ORDER, Criterion
from shared.model.unrated import Unrated, tournament_game_reason
from shared.ports.views.port import TournamentSummary
from shared.store.port import EventStore


class TournamentGame(msgspec.Struct, frozen=True):
    """A scheduled game: its id, its entrants in seat order, its places once over."""

    key: str
    """The game's key in the tournament's schedule."""
    game_id: str
    """The game's id."""
    entrants: list[int]
    """The entrants (indexes into the tournament's `entrants`) in seat order."""
    places: list[int] | None
    """Each seat's place once the game is over (1 is best, ties share); else null."""
    status: str | None
    """The game's result status once it is over; else null."""
    deal: str = ""
    """Duplicate: the deal it plays (its other tables share the label and the cards)."""
    rated: bool | None = None
    """Whether it counts for the ratings: false with `unrated` saying why, null until the
    tournament records it while nothing rules it out (see `getGame` for a game aborted while
    its tournament runs)."""
    unrated: Unrated | None = None
    """Why it is not rated (`code` and `message`); null when it is, or may still be."""


class TournamentRound(msgspec.Struct, frozen=True):
    """A round's games and byes."""

    round: int
    """The round's number, from 1."""
    games: list[TournamentGame]
    """The round's games."""
    byes: list[int]
    """The entrants that sit this round out."""
    completed: bool
    """Whether every game of the round is over."""


class Tournament(msgspec.Struct, frozen=True):
    """A tournament: its definition, status, rounds and games, and its winner once finished."""

    tournament_id: str
    """The tournament's id."""
    name: str
    """Its name: the host's, else the game's title and the format (e.g. "Shithead Swiss")."""
    description: str | None
    """What it is for, as the host wrote it; null when it has none."""
    status: str
    """`running`, `finished` or `cancelled`."""
    definition: TournamentDefinition
    """What the host asked for (its seed withheld while it runs)."""
    entrants: list[str]
    """The entrants' labels (`bot@version`), in entrant order: an entrant is its index here."""
    rounds: list[TournamentRound]
    """The rounds scheduled so far, in order (an arena: each pairing of free entrants, in the
    order it was made; it has no rounds of its own)."""
    games_played: int
    """The games that are over."""
    winner: int | None
    """The winner's index in `entrants` once the tournament finished (null before, and for a
    cancelled one): a knockout's last entrant; a round robin's, Swiss or duplicate's first
    of the final standings, ranked by the format's tie-breaks (the standings' `order`), a tie
    on every count going to the seeded drawing of lots, never to the order of entry."""
    warnings: list[TournamentWarning] = []
    """What the host should know: `version-entered-twice` when one bot version is entered
    more than once (its games against itself are not rated), `same-account` when two entrants
    are bots of one account (their games against each other are not rated)."""
    started_at: datetime | None = None
    """Arena: when its clock started; null for another format."""
    ends_at: datetime | None = None
    """Arena: when it stops pairing (games then in progress finish and count); null for
    another format."""
    withdrawn: list[int] = []
    """Arena: the entrants that withdrew (never paired again; their games count)."""

    @classmethod
    def of(cls, store: EventStore, tournament_id: str, state: TournamentState) -> Tournament:
        """Returns the tournament's representation: its seed withheld while it runs."""
        records = {record.key: record for record in state.records}
        rounds = [
            TournamentRound(
                round=rnd.round,
                games=[
                    TournamentGame(
                        key=game.key,
                        game_id=game_id_for(game.key),
                        entrants=list(game.table),
                        places=records[game.key].places if game.key in records else None,
                        status=records[game.key].status if game.key in records else None,
                        deal=game.deal,
                        **_rating(state, game.table, game_id_for(game.key)),
                    )
                    for game in rnd.games
                ],
                byes=list(rnd.byes),
                completed=rnd.round <= state.completed
                or all(game.key in records for game in rnd.games),
            )
            for rnd in state.rounds
        ]
        return cls(
            tournament_id=tournament_id,
            name=display_name(state.definition),
            description=description_of(state.definition),
            status=state.status,
            definition=seeds.shown(store, tournament_id, state),
            entrants=[entrant.label for entrant in state.definition.entrants],
            rounds=rounds,
            games_played=len(state.records),
            winner=state.winner,
            warnings=warnings(state.definition),
            started_at=_instant(state.started_ms),
            ends_at=_instant(state.ends_ms),
            withdrawn=sorted(state.withdrawn),
        )


def _instant(ms: int | None) -> datetime | None:
    """Returns the UTC time of `ms` since the epoch, None for None."""
    return None if ms is None else datetime.fromtimestamp(ms / 1000, UTC)


def _rating(state: TournamentState, table: Sequence[int], game_id: str) -> dict[str, Any]:
    """Returns a scheduled game's `rated` and `unrated` fields."""
    rated, unrated = tournament_game_reason(state, table, game_id)
    return {"rated": rated, "unrated": unrated}


class CancelTournament(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Why a host cancels a tournament (optional)."""

    reason: Annotated[str, msgspec.Meta(max_length=500)] = ""
    """Why the host cancels it (at most 500 characters; may be empty)."""


class JoinArena(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Who joins an arena: a bot's token may leave it all out (itself); the admin names `bot`."""

    bot: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None
    """The bot's name (a bot's token: its own, by default)."""
    version: Annotated[str, msgspec.Meta(min_length=1, max_length=100)] | None = None
    """Its version label (a bot's token: its own; the admin: "1" by default)."""
    name: Annotated[str, msgspec.Meta(max_length=100)] = ""
    """A display name (default: `bot@version`)."""


class Standings(msgspec.Struct, frozen=True):
    """A tournament's standings, best first."""

    tournament_id: str
    """The tournament's id."""
    status: str
    """The tournament's status."""
    standings: list[Standing]
    """One line per entrant, best first."""
    order: list[Criterion] = []
    """How the lines are ranked: the format's criteria, each breaking the ties of those
    before it (`stage`: knockout rounds came through; `score`: duplicate score; `points`;
    `wins`: arena, games placed first in;
    `buchholz`, `median_buchholz`, `sonneborn_berger`, `direct_encounter`: the tie-breaks;
    `lot`: the seeded drawing of lots, lower first), as docs/reference/tournaments.md states."""

    @classmethod
    def of(cls, tournament_id: str, state: TournamentState, lines: list[Standing]) -> Standings:
        """Returns the standings answer of a tournament whose lines are `lines`."""
        order = list(ORDER[state.definition.format])
        return cls(tournament_id, state.status, lines, order)


class TournamentPage(msgspec.Struct, frozen=True):
    """Tournaments as the projection holds them, newest first."""

    tournaments: list[TournamentSummary]
    """The tournaments, newest first."""
