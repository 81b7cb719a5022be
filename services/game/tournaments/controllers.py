"""REST v1 tournaments: create one, follow its rounds and games, read its standings."""

from __future__ import annotations

import hashlib
import uuid
from typing import Annotated

import msgspec
from litestar import Controller, Response, delete, get, post
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import HeaderParameter, JSONBody, PathParameter, QueryParameter

from services.game.http.params import TournamentId, client_key_of
from services.game.http.pipeline.auth import (
    BEARER,
    Access,
    Caller,
    Forbidden,
    Unauthorized,
    host_only,
)
from services.game.http.pipeline.limits import BOT_BODY_SIZE
from services.game.http.pipeline.problems import check_game_filter, responses
from services.game.http.scheduled import ScheduleDetail, detail, schedule_id_for
from services.game.tournaments.schemas import (
    CancelTournament,
    JoinArena,
    Standings,
    Tournament,
    TournamentPage,
)
from shared.app import arenas
from shared.app.registry import registered_bots
from shared.app.sealing import tables_over
from shared.app.tournaments import (
    cancel_tournament,
    create_tournament,
    ensure_tournament,
    load_tournament,
    with_entrant_clock,
)
from shared.model.idempotency import ClientKey, tournament_created
from shared.model.tournaments.model import (
    Entrant,
    InvalidTournament,
    TournamentDefinition,
    TournamentState,
    stream_id,
    validate,
)
from shared.model.tournaments.sealing import unsealed
from shared.model.tournaments.standings import standings
from shared.ports.archive import EventArchive
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.scheduler import Scheduler
from shared.ports.views.port import TournamentStatus, TournamentViews
from shared.store.port import ConcurrencyConflict, EventStore

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(
        name="Idempotency-Key",
        required=False,
        min_length=1,
        max_length=200,
        description=(
            "Makes a retry safe: the same key and body create the tournament once (200 for"
            " the retry); the same key with another body is refused (422)."
        ),
    ),
]


StatusFilter = Annotated[
    TournamentStatus | None,
    QueryParameter(description="Only tournaments in this status: running, finished, cancelled"),
]
GameFilter = Annotated[
    str | None, QueryParameter(description="Only tournaments of this game, e.g. shithead")
]
PageLimit = Annotated[int, QueryParameter(ge=1, le=500, description="At most this many (1-500)")]
EntrantNumber = Annotated[
    str,
    PathParameter(
        description="The entrant's index in the tournament's `entrants`.",
        # Read as text and checked after the tournament (`_entrant_index`), so that an unknown
        # tournament is its 404 whatever the index, and a bad index a 422 naming `entrant`.
        schema_extra={"type": "integer", "minimum": 0},
    ),
]


def _tournament_id(key: ClientKey | None) -> str:
    """Returns a new tournament id; a creation retried with the same key gets the same id."""
    if key is None:
        return uuid.uuid4().hex
    return hashlib.sha256(f"tournament:{key}".encode()).hexdigest()[:32]


def _shown(store: EventStore, archive: EventArchive, state: TournamentState) -> TournamentState:
    """Returns what the tournament shows of itself: no places of a sealed duplicate table
    (see `shared.model.tournaments.sealing`) until its deal's last table ends."""
    return unsealed(state, tables_over(store, archive))


def _record(
    store: EventStore, data: TournamentDefinition, tournament_id: str, key: ClientKey | None
) -> bool:
    """Records the tournament unless it is; returns whether this is a replay of its creation
    with `key`. Raises IdempotencyKeyReused when `key` first created another definition,
    ConcurrencyConflict when the tournament exists and its key's record is gone."""
    if key is None:
        ensure_tournament(store, data, tournament_id)
        return False
    stream, created = stream_id(tournament_id), tournament_created(tournament_id)
    fingerprint = hashlib.sha256(msgspec.json.encode(data)).hexdigest()
    if store.recall(stream, created, fingerprint) is not None:
        return True
    try:
        create_tournament(store, data, tournament_id, fingerprint)
    except ConcurrencyConflict:  # a twin request recorded it first, or the record expired
        if store.recall(stream, created, fingerprint) is None:
            raise
        return True
    return False


def _signed_in(caller: Caller) -> None:
    """Raises Unauthorized unless `caller` is the admin (anyone in open mode) or a bot."""
    if caller.bot is None and not caller.host:
        raise Unauthorized("send Authorization: Bearer <the bot's token or the admin key>")


def _joiner(caller: Caller, data: JoinArena | None) -> Entrant:
    """Returns the entrant `caller` may enter: a bot token itself only (its name and version
    by default), the admin any bot it names (`bot`, 422 when left out)."""
    data = data or JoinArena()
    if caller.bot is not None:
        bot, version = caller.bot.name, caller.bot.version
        if data.bot not in (None, bot) or data.version not in (None, version):
            raise Forbidden(f"{caller.bot.key} may enter itself only")
        return Entrant(bot=bot, version=version, name=data.name)
    if not caller.host:
        raise Unauthorized("send Authorization: Bearer <the bot's token or the admin key>")
    if data.bot is None:
        raise InvalidTournament("bot", "the admin names the bot to enter")
    return Entrant(bot=data.bot, version=data.version or "1", name=data.name)


def _entrant_index(entrant: str) -> int:
    """Returns the entrant number the path gives; raises InvalidTournament (`entrant`) for
    anything but a whole number of at most six digits."""
    if not (entrant.isascii() and entrant.isdigit() and len(entrant) <= 6):
        raise InvalidTournament("entrant", f"{entrant!r} is no entrant number (0, 1, ...)")
    return int(entrant)


def _may_withdraw(caller: Caller, state: TournamentState, entrant: int) -> None:
    """Raises Unauthorized or Forbidden unless `caller` is the admin or the bot entered as
    `entrant` (an entrant out of range is the use case's 422)."""
    if caller.host:
        return
    if caller.bot is None:
        raise Unauthorized("send Authorization: Bearer <the bot's token or the admin key>")
    entrants = state.definition.entrants
    if 0 <= entrant < len(entrants):
        known = entrants[entrant]
        if f"{known.bot}@{known.version}" == caller.bot.key:
            return
    raise Forbidden(f"{caller.bot.key} may withdraw itself only")


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
            "the embedded default, where the tournament has finished when this returns). "
            "A definition with a `schedule` (`at` a time, or a five-field `cron` expression "
            "with an optional `timezone`) is not started now: it is stored with the scheduler "
            "and answered 202 with the schedule (Location: /v1/schedules/{id}). A hosting "
            "operation: needs the admin key (in open mode, nothing). An entrant may be an "
            "external or webhook bot: its seats are bound to it, and a definition that sets no "
            "`clock` (nor its ruleset) records the deployment's default clock of such entrants "
            "(CARDARENA_ENTRANT_MOVE_SECONDS), so a silent entrant forfeits. "
            "400: a body that does not "
            "parse, or a `schedule` that is not exactly one of `at` (an ISO time with its "
            "zone) and `cron` (five fields, with an IANA `timezone`). 422 (`field` named): an "
            "unknown game; a `table_size` the game cannot seat; fewer entrants than "
            "`table_size`; an entrant that is no built-in strategy or registered bot of the "
            "game, or whose `strategy` or `kind` disagrees with it (`entrants[i].bot`, "
            "`.strategy`, `.kind`); an external or webhook bot in a game without decisions; "
            "`games_per_table` or (swiss) `rounds` below 1; a `name` or `description` that is "
            "blank or longer than 100 (name) or 2000 (description) characters; a ruleset the "
            "game refuses "
            "(`ruleset.<field>`); a schedule `at` in the past (`schedule.at`); more than 20,000 "
            "games in all (`games_per_table`, `entrants` or `rounds`, whichever drives the "
            "count); a `duplicate` field of fewer than twice `table_size` entrants "
            "(`entrants`: each deal is played at two or more tables, nobody at two of them), "
            "or one external or webhook bot entered twice (`entrants[i].bot`); an `arena` "
            "without `duration_seconds` in 60-86400, or with `rounds` or `games_per_table` "
            "other than their defaults, or `duration_seconds` on another format (each names "
            "its field); an "
            "`Idempotency-Key` first used with another body (`idempotency-key-reused`). A "
            "retry with the same key and body answers 200 and the tournament first created. A "
            "duplicate tournament plays `games_per_table` cycles of one deal per entrant, each "
            "deal at every table the field fills (entrants // table_size), and keeps each "
            "deal's tables sealed (their places, logs and seeds) until the last of them ends. "
            "An `arena` pairs its free entrants at once for `duration_seconds` (each pairing "
            "one of its `rounds`; see docs/reference/tournaments.md), and bots join and leave "
            "it while it runs (`joinArena`, `withdrawFromArena`). "
            "A round robin, Swiss or knockout table plays `games_per_table` games, its seats "
            "rotating. The answer's `warnings` say what the host should know of a valid "
            "definition: `version-entered-twice` when one bot version is entered more than "
            "once, since a game in which it sits in two seats is not rated; `same-account` "
            "when two entrants are bots of one account (not the host's), whose games against "
            "each other are not rated (a duplicate tournament refuses them: 422, `entrants`)."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[host_only],
        security=BEARER,
        responses={
            **responses(400, 401, 403, 409, 422, 503),
            200: ResponseSpec(
                data_container=Tournament,
                description="A retried creation: the tournament first created",
                generate_examples=False,
            ),
            202: ResponseSpec(
                data_container=ScheduleDetail,
                description="Scheduled: each run creates a tournament",
                generate_examples=False,
            ),
        },
    )
    def create(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        scheduler: NamedDependency[Scheduler],
        access: NamedDependency[Access],
        data: JSONBody[TournamentDefinition],
        idempotency_key: IdempotencyKey = None,
    ) -> Response[Tournament | ScheduleDetail]:
        bots = registered_bots(store)
        validate(data, bots)
        data = with_entrant_clock(data, bots, access.entrant_clock)
        if data.schedule is not None:
            entry = scheduler.add(schedule_id_for(idempotency_key), data)
            location = {"Location": f"/v1/schedules/{entry.schedule_id}"}
            return Response(detail(store, entry), status_code=202, headers=location)
        key = client_key_of(None, idempotency_key)  # a host-only route
        tournament_id = _tournament_id(key)
        replayed = _record(store, data, tournament_id, key)  # before the answer says so
        dispatcher.start_tournament(data, tournament_id)
        state, _ = load_tournament(store, tournament_id)
        headers = {"Location": f"/v1/tournaments/{tournament_id}"}
        status = 200 if replayed else 201
        shown = Tournament.of(store, tournament_id, state)
        return Response(shown, status_code=status, headers=headers)

    @get(
        "/{tournament_id:str}",
        operation_id="getTournament",
        summary="A tournament's status, rounds and games",
        description=(
            "While the tournament runs (a cancelled one: while a game of it still plays), "
            "`definition.seed` shows as empty; it shows once the tournament has ended."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        tournament_id: TournamentId,
    ) -> Tournament:
        state, _ = load_tournament(store, tournament_id)
        return Tournament.of(store, tournament_id, _shown(store, archive, state))

    @get(
        "/{tournament_id:str}/standings",
        operation_id="getTournamentStandings",
        summary="A tournament's standings: points, tie-breaks, rank, wins, mean place, rating",
        description=(
            "One line per entrant, best first, ranked by the format's criteria (`order`): "
            "Swiss: points, Buchholz, median Buchholz (cut-1 under 5 rounds), "
            "Sonneborn-Berger, direct encounter; round robin: points, Sonneborn-Berger, direct "
            "encounter; duplicate: score, points, Sonneborn-Berger; knockout: rounds came "
            "through (`stage`), points; arena: points, games won (`wins`), Sonneborn-Berger; "
            "then a drawing of lots seeded by the tournament's "
            "seed, never the order of entry. Each line answers its `rank` and its `tiebreaks`. "
            "An entrant with no game yet answers null for `mean_place` and the win-rate "
            "interval."
        ),
        sync_to_thread=True,
        responses=responses(400, 404, 503),
    )
    def standings(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        tournament_id: TournamentId,
    ) -> Standings:
        state, _ = load_tournament(store, tournament_id)
        return Standings.of(tournament_id, state, standings(_shown(store, archive, state)))

    @get(
        operation_id="listTournaments",
        summary="List tournaments, newest first",
        description=(
            "Reads the tournament views (PostgreSQL behind the projection, which may lag the "
            "event store by its delay; the embedded default folds the store itself). Filters: "
            "`status`, `game`; `limit` 1 to 500 (default 50)."
        ),
        sync_to_thread=True,
        responses=responses(400, 503),
    )
    def list_tournaments(
        self,
        views: NamedDependency[TournamentViews],
        status: StatusFilter = None,
        game: GameFilter = None,
        limit: PageLimit = 50,
    ) -> TournamentPage:
        """Returns up to `limit` tournaments, newest first, matching the filters."""
        check_game_filter(game)
        return TournamentPage(views.tournaments(status, game, limit))

    @post(
        "/{tournament_id:str}/cancel",
        operation_id="cancelTournament",
        summary="Cancel a running tournament",
        description=(
            "No new game starts; its games still running are aborted (`GameAborted`, reason "
            "`tournament_cancelled`: no result, not rated, their bots' slots freed). "
            "Cancelling again returns the cancelled tournament; a finished one is 409. "
            "A hosting operation: needs the admin key (in open mode, nothing)."
        ),
        sync_to_thread=True,
        status_code=200,
        guards=[host_only],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    def cancel(
        self,
        store: NamedDependency[EventStore],
        archive: NamedDependency[EventArchive],
        tournament_id: TournamentId,
        data: JSONBody[CancelTournament | None] = None,
    ) -> Tournament:
        reason = data.reason if data is not None else ""
        state = cancel_tournament(store, tournament_id, reason)
        return Tournament.of(store, tournament_id, _shown(store, archive, state))

    @post(
        "/{tournament_id:str}/entrants",
        operation_id="joinArena",
        summary="Join a running arena",
        description=(
            "Enters a bot in a running `arena` tournament: it is paired as soon as enough "
            "entrants are free. A bot's token enters that bot itself (the body may be left "
            "out; a `bot` or `version` other than its own is 403); the admin key enters any "
            "registered bot or built-in strategy it names. Answers 201 with the tournament "
            "(the new entrant is the last of `entrants`). 409 (`tournament-over`): the arena "
            "has ended (its time up, finished or cancelled). 422 (`field` named): not an arena "
            "(`format`); a bot that is no built-in strategy or registered bot of the game "
            "(`bot`); `bot@version` entered already, withdrawn or not (`bot`); a full field "
            "(`entrants`, 1000 at most)."
        ),
        sync_to_thread=True,
        status_code=201,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
        request_max_body_size=BOT_BODY_SIZE,
    )
    def join(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        caller: NamedDependency[Caller],
        tournament_id: TournamentId,
        data: JSONBody[JoinArena | None] = None,
    ) -> Tournament:
        _signed_in(caller)
        load_tournament(store, tournament_id)
        entrant = _joiner(caller, data)
        state, _ = arenas.join(store, tournament_id, entrant, dispatcher.dispatch_detached)
        return Tournament.of(store, tournament_id, state)

    @delete(
        "/{tournament_id:str}/entrants/{entrant:str}",
        operation_id="withdrawFromArena",
        summary="Withdraw an entrant from a running arena",
        description=(
            "The entrant is never paired again; its recorded games count, and a game it still "
            "plays finishes and counts. The bot's own token or the admin key (another bot's "
            "token is 403). Withdrawing again answers the tournament unchanged. 409 "
            "(`tournament-over`): the arena has ended. 422 (`field` named): not an arena "
            "(`format`), no such entrant (`entrant`)."
        ),
        sync_to_thread=True,
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
    )
    def withdraw(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        caller: NamedDependency[Caller],
        tournament_id: TournamentId,
        entrant: EntrantNumber,
    ) -> Tournament:
        _signed_in(caller)
        state, _ = load_tournament(store, tournament_id)
        index = _entrant_index(entrant)
        _may_withdraw(caller, state, index)
        state = arenas.withdraw(store, tournament_id, index, dispatcher.dispatch_detached)
        return Tournament.of(store, tournament_id, state)
