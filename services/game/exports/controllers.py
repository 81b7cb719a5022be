"""REST v1 exports: a finished game's log as JSON lines, its deal's check, and imports."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import ResponseHeader
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, RequestBody, Schema
from litestar.params import RawBody

from services.game.exports.schemas import ImportedGame
from services.game.http.notes import readable_notes
from services.game.http.params import GameId
from services.game.http.pipeline.auth import BEARER, BEARER_OPTIONAL, Caller, host_only
from services.game.http.pipeline.problems import (
    MEDIA_TYPE,
    Problem,
    ProblemOperation,
    problem,
    responses,
)
from services.game.http.seals import DealSealed, sealed
from shared.app import exports as exchange
from shared.app.loading import load_logged
from shared.model.deals import Verification
from shared.model.exported_log import MEDIA_TYPE as EXPORT_MEDIA_TYPE
from shared.ports.archive import EventArchive, game_log
from shared.store.port import EventStore


def _running(_: Request[Any, Any, Any], error: exchange.GameNotOver) -> Response[Problem]:
    return problem(403, "game-running", error.message, rule="game_running")


def _refused(_: Request[Any, Any, Any], error: exchange.ImportRefused) -> Response[Problem]:
    if error.version is None:
        return problem(422, "invalid-log", error.message, field="header")
    return problem(422, "invalid-log", error.message, event_version=error.version)


def _taken(_: Request[Any, Any, Any], error: exchange.GameIdTaken) -> Response[Problem]:
    return problem(409, "game-exists", error.message, game_id=error.game_id)


def _problem(description: str) -> ResponseSpec:
    """Returns the documentation of one problem response of these operations."""
    return ResponseSpec(
        data_container=Problem,
        description=description,
        media_type=MEDIA_TYPE,
        generate_examples=False,
    )


IMPORT_MAX_BODY_SIZE = 16 * 1024 * 1024
"""The largest import the service reads (16 MiB): a long game's export outgrows the app's 1 MiB."""


@dataclass
class _ImportOperation(ProblemOperation):
    """The import's OpenAPI operation: its body is an export's raw JSON lines."""

    def __post_init__(self) -> None:
        super().__post_init__()
        text = OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING))
        self.request_body = RequestBody(
            content={EXPORT_MEDIA_TYPE: text},
            description="An export: JSON lines, as `exportGame` gives them",
            required=True,
        )


class ExportsController(Controller):
    """Exports: a finished game's log, the check of a game's deal, imports of exported logs."""

    path = "/v1/games"
    tags = ("exports",)
    exception_handlers = {
        exchange.GameNotOver: _running,
        exchange.ImportRefused: _refused,
        exchange.GameIdTaken: _taken,
    }

    @get(
        "/{game_id:str}/export",
        operation_id="exportGame",
        summary="Export a finished game's log",
        description=(
            "The whole log of a finished game as JSON lines (`application/x-ndjson`): a"
            ' header `{"format": "cardarena-game", "schema": 1, "game_id", "game",'
            ' "ruleset", "players", "events", "commitment", "result"}`, then one line per'
            ' event `{"version", "type", "schema", "data"}`. The same game always exports to'
            " the same bytes (no export or store times). A running game is 403 (rule"
            " `game_running`): its log is not public yet. Check a log offline with"
            " `cardarena replay`. A table of a duplicate deal that another table still plays is"
            " 403 too (rule `deal_sealed`). Bot notes (`NoteTaken`) keep their place in the"
            " log, their `text` empty but for the seats whose notes the caller reads: the"
            " seat's bot's token (any version of the bot) or the admin key; so the same game"
            " exports to the same bytes for the same reader."
        ),
        media_type=EXPORT_MEDIA_TYPE,
        sync_to_thread=True,
        security=BEARER_OPTIONAL,
        responses={
            200: ResponseSpec(
                bytes,
                description="The log as JSON lines",
                media_type=EXPORT_MEDIA_TYPE,
                generate_examples=False,  # a random example: the document would change each time
            ),
            **responses(400, 401, 403, 404, 503),
        },
    )
    def export(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        caller: NamedDependency[Caller],
        game_id: GameId,
    ) -> Response[bytes]:
        """Returns the export of a finished game (from the archive once trimmed from Redis),
        with the notes the caller may read."""
        loaded = load_logged(store, archive, game_id)
        if sealed(store, archive, loaded):
            raise DealSealed(game_id, loaded.created.tournament)
        read = functools.partial(game_log, store, archive)
        body = exchange.export_game(read, game_id, notes=readable_notes(caller, loaded))
        return Response(body, media_type=EXPORT_MEDIA_TYPE)

    @get(
        "/{game_id:str}/verification",
        operation_id="getGameVerification",
        summary="Check a game's deal against its commitment",
        description=(
            "Every game publishes at its creation a commitment, the SHA-256 of its seed and a"
            " secret salt (GameCreated's `commitment`), and reveals them at its end"
            " (GameFinished's `seed` and `salt`). `status`: `ok` (the revealed seed and salt"
            " hash to the commitment and deal the logged cards), `failed` (`version` names the"
            " bad event), `unrevealed` (the game runs; only the commitment is shown) or"
            " `no_commitment` (a game created before commitments, or a fork). A table of a"
            " duplicate deal stays `unrevealed` until the deal's last table ends."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def verification(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        game_id: GameId,
    ) -> Verification:
        """Returns the check of the game's deal."""
        loaded = load_logged(store, archive, game_id)
        if sealed(store, archive, loaded):
            detail = "a table of a deal that another table still plays: revealed when all end"
            return Verification("unrevealed", detail, commitment=loaded.created.commitment)
        return exchange.verification(functools.partial(game_log, store, archive), game_id)

    @post(
        "/import",
        operation_id="importGame",
        summary="Import an exported game",
        description=(
            "A hosting operation. The body is an export (`GET /v1/games/{game_id}/export`)."
            " Every event is checked against the rules and the deal against its commitment, as"
            " `cardarena replay` does; a log that does not add up is refused (422, type"
            " `invalid-log`, `event_version` naming the first bad event, or `field` `header`)."
            " The game is stored under its own id, so that exporting it here gives the same"
            " bytes: 201; the same log again changes nothing: 200; another game under that id"
            " is 409 (`game-exists`). Store times are the import's."
        ),
        sync_to_thread=True,
        guards=[host_only],
        security=BEARER,
        status_code=201,
        request_max_body_size=IMPORT_MAX_BODY_SIZE,
        operation_class=_ImportOperation,
        response_headers=[
            ResponseHeader(name="Location", description="The game's URL", documentation_only=True)
        ],
        responses={
            200: ResponseSpec(ImportedGame, description="The same log was imported before"),
            409: _problem("Another game has this game id here (`game_id`)"),
            422: _problem(
                "A log that cannot be read, or an event that does not follow from those before"
                " it by the rules (`event_version`), or a header that does not match the log"
                " (`field` `header`); nothing was imported",
            ),
            **responses(400, 401, 403, 503),
        },
    )
    def import_game(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        body: RawBody,
    ) -> Response[ImportedGame]:
        """Checks the log (the raw request body) and stores its game under its id (a game
        only in the archive, trimmed from Redis, still takes its id)."""
        imported = exchange.import_game(store, body, functools.partial(game_log, store, archive))
        return Response(
            ImportedGame(imported.game_id, imported.version, imported.created),
            status_code=201 if imported.created else 200,
            headers={"Location": f"/v1/games/{imported.game_id}"},
        )
