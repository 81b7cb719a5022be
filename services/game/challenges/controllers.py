"""REST v1 challenges: a bot (or the host) challenges registered bots; accept, decline, cancel."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import JSONBody, PathParameter

from services.game.challenges.schemas import Decline, IssueChallenge
from services.game.http.pipeline.auth import BEARER, Access, Caller, Unauthorized, calling_bot
from services.game.http.pipeline.limits import BOT_BODY_SIZE
from services.game.http.pipeline.problems import Problem, problem, responses
from shared.app import challenges as challenge_app
from shared.app.registry import registered_bots
from shared.app.starting import admit_challenge, refuse_suspended, start_challenge
from shared.model.challenges import (
    Challenge,
    ChallengeClosed,
    NotYours,
    Refused,
    TooManyOpen,
    UnknownChallenge,
)
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore

ChallengeId = Annotated[str, PathParameter(description="The challenge's id.")]


def _now() -> datetime:
    return datetime.now(UTC)


def _read(store: EventStore, challenge_id: str, caller: Caller) -> Challenge:
    """Returns the challenge if `caller` is the host or a bot it involves."""
    challenge, _ = challenge_app.read(store, challenge_id, _now())
    if caller.host or (caller.key is not None and challenge.involves(caller.key)):
        return challenge
    if caller.bot is None:
        raise Unauthorized("send the admin key or the token of a bot the challenge involves")
    raise NotYours(f"challenge {challenge_id} does not involve {caller.bot.key}")


def _unknown(_: Request[Any, Any, Any], error: UnknownChallenge) -> Response[Problem]:
    detail = f"no challenge {error.challenge_id!r}"
    return problem(404, "unknown-challenge", detail, challenge_id=error.challenge_id)


def _closed(_: Request[Any, Any, Any], error: ChallengeClosed) -> Response[Problem]:
    return problem(409, "challenge-closed", error.message, challenge_status=error.challenge.status)


def _not_yours(_: Request[Any, Any, Any], error: NotYours) -> Response[Problem]:
    return problem(403, "forbidden", error.message)


def _refused(_: Request[Any, Any, Any], error: Refused) -> Response[Problem]:
    return problem(403, "challenge-refused", error.message, field=error.field, rule=error.rule)


def _too_many(_: Request[Any, Any, Any], error: TooManyOpen) -> Response[Problem]:
    headers = {"Retry-After": str(error.retry_after)}
    return problem(429, "too-many-challenges", error.message, headers=headers, limit=error.limit)


def _issue(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    access: Access,
    caller: Caller,
    data: IssueChallenge,
) -> Challenge:
    """Issues `data` as `caller` (a bot holds one of its places of open challenges while it
    waits for answers) and starts it when nobody has to answer."""
    now, bot = _now(), caller.bot
    slots, cap = access.challenges, access.max_open_challenges
    reservation = None if bot is None else challenge_app.hold_open(slots, store, bot.key, cap, now)
    try:
        challenge = challenge_app.issue(
            store,
            game=data.game,
            ruleset=data.ruleset,
            opponents=data.opponents,
            bots=registered_bots(store),
            challenger=bot,
            now=now,
            clock=data.clock,
            expires_in=data.expires_in,
            entrant_clock=access.entrant_clock,
        )
    except BaseException:
        if bot is not None and reservation is not None:
            slots.cancel(bot.key, reservation)
        raise
    if bot is not None and reservation is not None:
        slots.confirm(bot.key, reservation, challenge.challenge_id)
    return start_challenge(store, access.game_cap, dispatcher, challenge)


class ChallengesController(Controller):
    """Challenges between registered bots."""

    path = "/v1/challenges"
    tags = ("challenges",)
    exception_handlers = {
        UnknownChallenge: _unknown,
        ChallengeClosed: _closed,
        NotYours: _not_yours,
        Refused: _refused,
        TooManyOpen: _too_many,
    }

    @post(
        operation_id="issueChallenge",
        summary="Challenge registered bots to a game",
        description=(
            "With a bot token, the calling bot challenges the `opponents` (registered bots"
            ' of the same game, or the game\'s built-in strategies by name, e.g. `{"bot":'
            ' "heuristic"}`, when no bot is registered under that `bot@version`) and takes'
            " seat 0; with the admin key (in open mode, nothing) the host matches the"
            " opponents alone. A name that is neither is 422 naming `opponents[i]` and listing"
            " the strategies and registered bots. External opponents get a `challenge`"
            " event on `/v1/bots/me/events` and answer with accept or decline; built-in"
            " strategies, built-in and webhook bots accept at once (a challenge of only those"
            " starts its game when it is issued), a webhook bot only as its"
            " `accept_challenges` allows"
            " (else 403 `challenge-refused`, naming the `field` and the `rule`). When every"
            " bot has accepted the game starts with the seats bound to the bots (`status`"
            " `started`, `game_id`). The challenge expires after `expires_in` seconds unless"
            " answered. A bot holds at most `CARDARENA_MAX_OPEN_CHALLENGES` open challenges"
            " (default 20): one more is 429 `too-many-challenges` with the `limit` and a"
            " `Retry-After` until the first of them expires."
        ),
        sync_to_thread=True,
        status_code=201,
        security=BEARER,
        responses=responses(400, 401, 403, 422, 429, 503),
        request_max_body_size=BOT_BODY_SIZE,
    )
    def issue(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        data: JSONBody[IssueChallenge],
    ) -> Response[Challenge]:
        if caller.bot is None and not caller.host:
            raise Unauthorized("send a bot token, or the admin key to match bots as the host")
        challenge = _issue(store, dispatcher, access, caller, data)
        headers = {"Location": f"/v1/challenges/{challenge.challenge_id}"}
        return Response(challenge, status_code=201, headers=headers)

    @get(
        "/{challenge_id:str}",
        operation_id="getChallenge",
        summary="A challenge: its bots, answers and status",
        description="For the host and the bots the challenge involves.",
        sync_to_thread=True,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 503),
    )
    def read(
        self,
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
        challenge_id: ChallengeId,
    ) -> Challenge:
        return _read(store, challenge_id, caller)

    @post(
        "/{challenge_id:str}/accept",
        operation_id="acceptChallenge",
        summary="Accept a challenge (the challenged bot's token)",
        description=(
            "The last acceptance starts the game (`status` `started`, `game_id`); a game a"
            " bot cannot join for its cap of running games is 422 and nothing is recorded."
            " Accepting again returns the challenge; a closed challenge is 409."
        ),
        sync_to_thread=True,
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 422, 503),
    )
    def accept(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        access: NamedDependency[Access],
        caller: NamedDependency[Caller],
        challenge_id: ChallengeId,
    ) -> Challenge:
        bot = calling_bot(caller, "only a challenged bot answers")
        current, _ = challenge_app.read(store, challenge_id, _now())
        refuse_suspended(store, current)
        last = current.status == "open" and current.pending == [bot]
        admission = admit_challenge(access.game_cap, store, current) if last else None
        try:
            answered = challenge_app.answer(store, challenge_id, bot, accept=True, now=_now())
        except BaseException:
            if admission is not None:
                admission.cancel()
            raise
        return start_challenge(store, access.game_cap, dispatcher, answered, admission)

    @post(
        "/{challenge_id:str}/decline",
        operation_id="declineChallenge",
        summary="Decline a challenge (the challenged bot's token)",
        description="Closes the challenge; the challenger sees the `reason`. A closed one is 409.",
        sync_to_thread=True,
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 503),
        request_max_body_size=BOT_BODY_SIZE,
    )
    def decline(
        self,
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
        challenge_id: ChallengeId,
        data: JSONBody[Decline | None] = None,
    ) -> Challenge:
        reason = data.reason if data is not None else ""
        bot = calling_bot(caller, "only a challenged bot answers")
        return challenge_app.answer(
            store, challenge_id, bot, accept=False, now=_now(), reason=reason
        )

    @post(
        "/{challenge_id:str}/cancel",
        operation_id="cancelChallenge",
        summary="Withdraw an open challenge (its challenger, or the host)",
        description="Cancelling again returns the challenge; a started or declined one is 409.",
        sync_to_thread=True,
        status_code=200,
        security=BEARER,
        responses=responses(400, 401, 403, 404, 409, 503),
    )
    def cancel(
        self,
        store: NamedDependency[EventStore],
        caller: NamedDependency[Caller],
        challenge_id: ChallengeId,
    ) -> Challenge:
        if caller.bot is None and not caller.host:
            raise Unauthorized("send the challenger's bot token or the admin key")
        by = "" if caller.bot is None else caller.bot.key
        return challenge_app.cancel(store, challenge_id, by, _now())
