"""REST v1 evaluations: an account (or the admin) asks whether one of its bot versions is
better than another; the platform plays them on duplicate deals until its SPRT decides.

Reads are public, as a tournament's: an evaluation's games are ordinary games (never rated).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.di import NamedDependency
from litestar.handlers.base import BaseRouteHandler
from litestar.params import JSONBody

from services.game.evaluations.schemas import Evaluation, EvaluationPage, NewEvaluation
from services.game.http.params import EvaluationId
from services.game.http.pipeline.auth import (
    BEARER,
    BEARER_OPTIONAL,
    Caller,
    Forbidden,
    Unauthorized,
    caller_of,
)
from services.game.http.pipeline.owners import HANDLERS as OWNERS
from services.game.http.pipeline.owners import AccountSuspended, owner
from services.game.http.pipeline.problems import Problem, problem, responses
from shared.app.evaluations import (
    NotOwnBot,
    UnknownEvaluation,
    create_evaluation,
    listed,
    load_evaluation,
    start_pending,
)
from shared.model.evaluations import Contestant, EvaluationDefinition
from shared.ports.dispatch import BotTurnDispatcher
from shared.store.port import EventStore

LIST_LIMIT = 100
"""The most evaluations a list answers."""


def evaluator(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """Route guard of an evaluation's creation: the admin key (anyone in open mode), or the key
    of an account that is not suspended. A bot token is 403, no credentials 401."""
    caller = caller_of(connection)
    if caller.host:
        return
    if caller.account is not None:
        if caller.account.suspended:
            raise AccountSuspended(caller.account.name)
        return
    if caller.bot is not None:
        raise Forbidden(f"{caller.bot.key} is a bot; its account's key asks for evaluations")
    raise Unauthorized("send Authorization: Bearer <account key or admin key>")


def _not_own(_: Request[Any, Any, Any], error: NotOwnBot) -> Response[Problem]:
    return problem(403, "forbidden", error.message, field=error.field)


def _unknown(_: Request[Any, Any, Any], error: UnknownEvaluation) -> Response[Problem]:
    detail = f"no evaluation {error.evaluation_id!r}"
    return problem(404, "unknown-evaluation", detail, field="evaluation_id")


def definition_of(data: NewEvaluation, account: str) -> EvaluationDefinition:
    """Returns the evaluation `data` asks for on behalf of `account` (not yet checked)."""
    return EvaluationDefinition(
        game=data.game,
        candidate=Contestant(bot=data.candidate.bot, version=data.candidate.version),
        baseline=Contestant(bot=data.baseline.bot, version=data.baseline.version),
        ruleset=data.ruleset,
        table_size=data.table_size,
        elo0=data.elo0,
        elo1=data.elo1,
        alpha=data.alpha,
        beta=data.beta,
        max_games=data.max_games,
        seed=data.seed if data.seed is not None else secrets.token_hex(8),
        account=account,
        created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )


class EvaluationsController(Controller):
    """Hosted evaluations: create, read, list."""

    path = "/v1/evaluations"
    tags = ("evaluations",)
    exception_handlers = {NotOwnBot: _not_own, UnknownEvaluation: _unknown, **OWNERS}

    @post(
        operation_id="createEvaluation",
        summary="Evaluate a bot version against another by an SPRT on duplicate deals",
        description=(
            "Needs an account key, for two of the account's own bot versions (another "
            "account's bot: 403, field `candidate.bot` or `baseline.bot`), or the admin key "
            "for any two; a bot token is 403, no credentials 401, a suspended account 403 "
            "`account-suspended`. The platform plays units of games on duplicate deals (a "
            "deal played twice with the seats swapped; at a larger `table_size`, once with "
            "the candidate in every seat), built-in bots on the workers and external bots "
            "over the API (their games wait for their moves), at most two units at a time; "
            "after each unit it updates the log-likelihood ratio of Fishtest's GSPRT, and "
            "it stops at the first bound crossed (`H1`: the candidate is better by `elo1` or "
            "more; `H0`: not better than `elo0`) or, `inconclusive`, when `max_games` run "
            "out. Its games are never rated (`unrated.code` `evaluation`). An unknown game "
            "or bot, a table size the game does not take, a bound out of range (alpha or beta "
            "outside (0, 0.5), |elo| over 1000, elo1 not above elo0) or `max_games` outside "
            "[table_size, 100000] is 422 naming the field."
        ),
        sync_to_thread=True,
        status_code=201,
        guards=[evaluator],
        security=BEARER,
        responses=responses(400, 401, 403, 404, 422, 503),
    )
    def create(
        self,
        store: NamedDependency[EventStore],
        dispatcher: NamedDependency[BotTurnDispatcher],
        caller: NamedDependency[Caller],
        data: JSONBody[NewEvaluation],
    ) -> Response[Evaluation]:
        evaluation_id = create_evaluation(store, definition_of(data, owner(caller)))
        start_pending(store, evaluation_id, dispatcher.dispatch_detached)
        state, _ = load_evaluation(store, evaluation_id)
        headers = {"Location": f"/v1/evaluations/{evaluation_id}"}
        return Response(Evaluation.of(evaluation_id, state), status_code=201, headers=headers)

    @get(
        "/{evaluation_id:str}",
        operation_id="getEvaluation",
        summary="An evaluation's test: status, verdict, LLR and its bounds, Elo, games",
        description=(
            "Public, as a tournament. `llr_history` is the LLR after each unit counted (the "
            "chart); `definition.seed` shows once the evaluation has finished."
        ),
        sync_to_thread=True,
        security=BEARER_OPTIONAL,
        responses=responses(400, 404, 503),
    )
    def read(self, store: NamedDependency[EventStore], evaluation_id: EvaluationId) -> Evaluation:
        state, _ = load_evaluation(store, evaluation_id)
        return Evaluation.of(evaluation_id, state)

    @get(
        operation_id="listEvaluations",
        summary="List evaluations, newest first",
        description=(
            f"An account key lists the account's own; any other caller every evaluation (they"
            f" are public). At most {LIST_LIMIT}."
        ),
        sync_to_thread=True,
        security=BEARER_OPTIONAL,
        responses=responses(400, 503),
    )
    def list_evaluations(
        self, store: NamedDependency[EventStore], caller: NamedDependency[Caller]
    ) -> EvaluationPage:
        account = None if caller.host or caller.account is None else caller.account.name
        shown = []
        for evaluation_id in listed(store, account)[:LIST_LIMIT]:
            state, _ = load_evaluation(store, evaluation_id)
            shown.append(Evaluation.of(evaluation_id, state))
        return EvaluationPage(evaluations=shown)
