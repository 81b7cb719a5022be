"""REST v1 tournaments: create one, follow its rounds and games, read its standings."""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated

import msgspec
from litestar import Controller, Response, get, post
from litestar.di import NamedDependency
from litestar.params import HeaderParameter, JSONBody, PathParameter

from services.game.problems import responses
from shared.handlers import BotTurnDispatcher, game_id_for
from shared.store.port import EventStore
from shared.tournaments.model import TournamentDefinition, TournamentState, validate
from shared.tournaments.runner import load_tournament
from shared.tournaments.standings import Standing, standings

TournamentId = Annotated[str, PathParameter(description="The tournament's id.")]
IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description="Makes a retry safe: the same key creates the tournament once.",
    ),
]


class TournamentGame(msgspec.Struct, frozen=True):
    """A scheduled game: its id, its entrants in seat order, its places once over."""

    key: str
    game_id: str
    entrants: list[int]
    places: list[int] | None
    status: str | None


class TournamentRound(msgspec.Struct, frozen=True):
    """A round's games and byes."""

    round: int
    games: list[TournamentGame]
    byes: list[int]
    completed: bool


class Tournament(msgspec.Struct, frozen=True):
    """A tournament: its definition, status, rounds and games, and its winner (knockout)."""

    tournament_id: str
    status: str
    definition: TournamentDefinition
    entrants: list[str]
    rounds: list[TournamentRound]
    games_played: int
    winner: int | None

    @classmethod
    def of(cls, tournament_id: str, state: TournamentState) -> Tournament:
        """Returns the tournament's representation."""
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
                    )
                    for game in rnd.games
                ],
                byes=list(rnd.byes),
                completed=rnd.round <= state.completed,
            )
            for rnd in state.rounds
        ]
        return cls(
            tournament_id=tournament_id,
            status=state.status,
            definition=state.definition,
            entrants=[entrant.label for entrant in state.definition.entrants],
            rounds=rounds,
            games_played=len(state.records),
            winner=state.winner,
        )


class Standings(msgspec.Struct, frozen=True):
    """A tournament's standings, best first."""

    tournament_id: str
    status: str
    standings: list[Standing]


def _tournament_id(key: str | None) -> str:
    """Returns a new tournament id; a creation retried with the same key gets the same id."""
    if key is None:
        return uuid.uuid4().hex
    return hashlib.sha256(f"tournament:{key}".encode()).hexdigest()[:32]


class TournamentsController(Controller):
    """Tournaments: create, read, standings."""

    path = "/v1/tournaments"
    tags = ("tournaments",)

    @post(
        operation_id="createTournament",
        summary="Create a tournament and start it",
        description=(
            "Validates the definition (each error names its field), records the tournament "
            "in its own event stream and starts its first round on the workers (in-process in "
            "the embedded default, where the tournament has finished when this returns)."
        ),
        sync_to_thread=True,
        status_code=201,
        responses=responses(400, 422, 503),
    )
    def create(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        data: JSONBody[TournamentDefinition],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Tournament]:
        validate(data)
        tournament_id = _tournament_id(idempotency_key)
        dispatcher.start_tournament(data, tournament_id)
        state, _ = load_tournament(store, tournament_id)
        headers = {"Location": f"/v1/tournaments/{tournament_id}"}
        return Response(Tournament.of(tournament_id, state), status_code=201, headers=headers)

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="A tournament's status, rounds and games",
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(self, store: NamedDependency[EventStore], tournament_id: TournamentId) -> Tournament:
        state, _ = load_tournament(store, tournament_id)
        return Tournament.of(tournament_id, state)

    @get(
        "/{tournament_id:str}/standings",
        operation_id="getTournamentStandings",
        summary="A tournament's standings: points, wins, mean place, rating, win-rate interval",
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def standings(
        self, store: NamedDependency[EventStore], tournament_id: TournamentId
    ) -> Standings:
        state, _ = load_tournament(store, tournament_id)
        return Standings(tournament_id, state.status, standings(state))
