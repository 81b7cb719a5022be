"""Bodies of the streams and long polls: a bot's turns and open challenges, the data of its
`game_started` and `game_finished` events, and the data of a tournament stream's events."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from shared.messages.common import Result
from shared.model.challenges import Challenge
from shared.model.tournaments.model import Format
from shared.model.tournaments.standings import Standing
from shared.model.unrated import Unrated


class Turn(msgspec.Struct, frozen=True, omit_defaults=True):
    """A game waiting for a bot's seat: post one of `legal_actions` at `version`.

    It carries the seat's view as `getSeatView` answers it at `version` (`view`, `status`,
    `to_move`, `legal_actions`, `deadline`), so a bot needs no other read to move.
    """

    game_id: str
    """The game waiting for the seat."""
    game: str
    """The game's name in the catalogue (`shithead`, `autobus`, `beggar`)."""
    seat: int
    """The bot's seat (0-based) the game waits for."""
    version: int
    """The game's version: post the action with this `expected_version`."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post now, in the rules' stable order."""
    deadline: int | msgspec.UnsetType = msgspec.UNSET
    """In a timed game: when the seat's time runs out, in ms since the epoch."""
    view: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    """All the seat may know of the game at `version` (the `view` of `getSeatView`); other
    seats' hidden cards are never in it."""
    status: Literal["playing"] | msgspec.UnsetType = msgspec.UNSET
    """The game's status at `version` (`playing`: it waits for the seat)."""
    to_move: list[int] | msgspec.UnsetType = msgspec.UNSET
    """The seats the game waits for at `version` (this one among them)."""


class ChallengeList(msgspec.Struct, frozen=True):
    """The open challenges waiting for the calling bot's answer, oldest first."""

    challenges: list[Challenge]
    """The open challenges, oldest first."""


class Turns(msgspec.Struct, frozen=True):
    """The games waiting for the calling bot's move (empty when none came in time)."""

    turns: list[Turn]
    """The games waiting for the bot, one item per seat."""


class StartedGame(msgspec.Struct, frozen=True):
    """The data of a bot's `game_started` event: a game it has seats in was created."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name."""
    seats: list[int]
    """The bot's seats in it."""


class GameOver(msgspec.Struct, frozen=True):
    """The data of a bot's `game_finished` event: a game it has seats in is over; an aborted
    game's `result` has status `aborted`, no places, and its reason (`host`,
    `tournament_cancelled`, `stale`)."""

    game_id: str
    """The game's id."""
    seats: list[int]
    """The bot's seats in it."""
    result: Result
    """How the game ended."""


class BotGame(msgspec.Struct, frozen=True):
    """One running game the calling bot is seated in."""

    game_id: str
    """The game's id."""
    game: str
    """The game's name in the catalogue."""
    seats: list[int]
    """The seats (0-based) bound to the calling bot, in seat order."""
    version: int
    """The game's version now: a seat's turn is posted at it."""
    status: Literal["playing"]
    """The game's status (`playing`)."""
    to_move: list[int]
    """The seats the game waits for now (any seat, the bot's or not)."""
    created_at: str
    """When the game was created (ISO 8601)."""


class BotGames(msgspec.Struct, frozen=True):
    """The calling bot's games in the status asked for, oldest first."""

    games: list[BotGame]
    """Each game with the bot's seats in it."""


class DeclinedChallenge(msgspec.Struct, frozen=True):
    """The data of a challenger's `challenge_declined` event: a bot declined its challenge,
    which is closed."""

    challenge_id: str
    """The challenge (the body of `getChallenge` has the rest)."""
    game: str
    """The game it was for."""
    bot: str
    """The bot that declined (`name@version`)."""
    reason: str
    """Why, as the bot gave it ("" when it gave none)."""
    at: str
    """When (ISO 8601)."""


class CancelledChallenge(msgspec.Struct, frozen=True):
    """The data of a challenger's `challenge_cancelled` event: its challenge was withdrawn."""

    challenge_id: str
    """The challenge."""
    game: str
    """The game it was for."""
    by: str
    """Who withdrew it: the challenger (`name@version`), or "" for the host."""
    at: str
    """When (ISO 8601)."""


class ExpiredChallenge(msgspec.Struct, frozen=True):
    """The data of a challenger's `challenge_expired` event: its challenge passed its
    `expires_at` before every bot accepted, and is closed."""

    challenge_id: str
    """The challenge."""
    game: str
    """The game it was for."""
    expires_at: str
    """When it expired (ISO 8601)."""
    pending: list[str]
    """The bots that had not answered."""


class StartedTournament(msgspec.Struct, frozen=True):
    """The data of an entrant's `tournament_started` event: a tournament it is entered in
    was created and starts its first round."""

    tournament_id: str
    """The tournament (`getTournament`)."""
    game: str
    """The game it plays."""
    format: Format
    """`round_robin`, `swiss`, `knockout` or `duplicate`."""
    table_size: int
    """Seats at each table."""
    entries: list[int]
    """The calling bot's entries: their indices in the tournament's `entrants`."""
    entrants: int
    """How many entries the field has."""


class RoundGame(msgspec.Struct, frozen=True):
    """One game of a round that seats the calling bot."""

    game_id: str
    """The game (created as the round starts; `game_started` follows)."""
    seats: list[int]
    """The bot's seats in it."""


class StartedRound(msgspec.Struct, frozen=True):
    """The data of an entrant's `round_started` event: a round of its tournament was drawn."""

    tournament_id: str
    """The tournament."""
    round: int
    """The round (1 first)."""
    games: list[RoundGame]
    """The bot's games in this round (none when it sits the round out)."""
    bye: bool
    """Whether one of the bot's entries sits this round out."""


class FinishedTournament(msgspec.Struct, frozen=True):
    """The data of an entrant's `tournament_finished` event: its tournament is over."""

    tournament_id: str
    """The tournament (`getTournamentStandings` has its table)."""
    status: Literal["finished", "cancelled"]
    """`finished`, or `cancelled` by the host."""
    winner: int | None
    """The index in `entrants` of the winner, when the tournament names one."""
    reason: str
    """A cancellation's reason ("" otherwise)."""


class TournamentStandingsChanged(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `standings` event: the standings as they are now."""

    tournament_id: str
    """The tournament's id."""
    status: Literal["running", "finished", "cancelled"]
    """The tournament's status."""
    standings: list[Standing]
    """One line per entrant, best first (the lines of `getStandings`), counting only the games
    the tournament may show (a sealed duplicate table's record waits for its deal's end)."""


class StreamedGame(msgspec.Struct, frozen=True):
    """A game of a tournament's round: its schedule key, id, entrants and deal."""

    key: str
    """The game's key in the tournament's schedule."""
    game_id: str
    """The game's id (`getGame`, `streamGame`); the game is created right after its round is
    scheduled, so a read may find it missing for a moment."""
    entrants: list[int]
    """The entrants (indexes into the tournament's `entrants`) in seat order."""
    deal: str = ""
    """Duplicate: the deal it plays (its other tables share it)."""


class TournamentRoundStarted(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `round_started` event: a round was scheduled."""

    tournament_id: str
    """The tournament's id."""
    round: int
    """The round's number, from 1."""
    games: list[StreamedGame]
    """The round's games."""
    byes: list[int]
    """The entrants that sit the round out."""


class TournamentGameStarted(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `game_started` event: a game of a round was fixed
    (one per game, right after its round's `round_started`)."""

    tournament_id: str
    """The tournament's id."""
    round: int
    """The game's round."""
    game: StreamedGame
    """The game."""


class TournamentGameFinished(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `game_finished` event: the tournament recorded a
    game's result."""

    tournament_id: str
    """The tournament's id."""
    round: int
    """The game's round."""
    key: str
    """The game's key in the tournament's schedule."""
    game_id: str
    """The game's id."""
    entrants: list[int]
    """The entrants (indexes into the tournament's `entrants`) in seat order."""
    places: list[int]
    """Each seat's place, in seat order (1 is best, ties share)."""
    status: str
    """The result's status (`finished`, `capped`, `loop`, `draw`)."""
    rated: bool
    """Whether the game counts for the ratings."""
    unrated: Unrated | None
    """Why it does not (`code`, `message`); null when it does."""


class TournamentStreamFinished(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `tournament_finished` event: the last event."""

    tournament_id: str
    """The tournament's id."""
    winner: int | None
    """The winner's index in the tournament's `entrants`."""
    winner_label: str | None
    """The winner's label."""


class TournamentStreamCancelled(msgspec.Struct, frozen=True):
    """The data of a tournament stream's `tournament_cancelled` event: the last event."""

    tournament_id: str
    """The tournament's id."""
    reason: str
    """Why the host cancelled it (may be empty)."""
    unrecorded: list[str]
    """The ids of the scheduled games it never recorded: they count for nothing and are not
    rated (`tournament_cancelled`); those still running are aborted."""
