"""Schemathesis against the game service's own OpenAPI document, every operation, on two
targets: the app in-process over the in-memory store (schemathesis' ASGI transport), and
`cardarena serve game` running as a process over Redis and PostgreSQL (with a worker and
the projection, as the e2e stack starts them), its document loaded from its
/schema/openapi.json and every case sent over HTTP.

Before the run each target gets a few real resources (`Seeds`): a finished game, a running
game with external seats, registered bots, a running tournament and arena, schedules and open
challenges. Generated ids (and the names a body must get right together, such as a
challenge's opponents) are swapped for theirs part of the time (schemathesis dictionaries),
and every other valid-looking move or import is sent with a real one (a legal move of the
running game, the finished game's export), so cases reach the success paths and their
schemas get checked, not only the 404s of made-up ids and the 422s of made-up moves.

Both targets have an admin key, sent with every case (generated credentials would only ever
reach the 401 path; schemathesis' own cases without credentials still go without); the
operations of a bot's own resources get the seeded bot's token instead. Each case must not
be a 5xx, must answer a status its operation documents and match the documented schema of
that status, and a case the document calls valid must not be refused as malformed (400:
`positive_data_accepted`).
The number of cases run, per target, operation and status, and the operations no case
succeeded on (whose success schemas went unchecked), are printed and written to
tests/artifacts/schemathesis.json.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from litestar.testing import TestClient
from schemathesis import Case
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.core.transport import Response
from schemathesis.schemas import BaseSchema
from schemathesis.specs.openapi.checks import (
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from services.cli.dev import service_ready
from services.game.app import create_app
from services.game.http.pipeline.auth import Access
from services.settings import Settings
from shared.app.runtime import InProcessDispatcher
from shared.store.memory import InMemoryEventStore
from tests.support.stack import running_stack, wait_for

ARTIFACT = Path(__file__).resolve().parents[1] / "artifacts" / "schemathesis.json"
MAX_EXAMPLES = 25
"""Per operation and target: enough to reach the error paths of every field and, through
the seeded ids, the success path of most operations."""

SEEDED = 0.5
"""The share of generated ids (and other bound values) swapped for seeded ones."""

STREAMING = {
    "streamGame": "server-sent events: the body is a stream, not a document to validate",
    "streamBotEvents": "server-sent events: open until the client leaves",
    "streamTournament": (
        "server-sent events: each `data:` line is JSON text, which schemathesis validates as a"
        " string (tests/unit/http/test_tournament_stream_api.py validates every event)"
    ),
}
"""Operations kept out of schema conformance (they are still checked for 5xx elsewhere)."""

LONG_POLLS = ("waitBotTurns", "waitSeatTurn")
"""Operations that may wait up to a minute for a turn: every case of theirs asks for
`wait=0`, so they answer at once (as does postAction's, whose `wait` is for the seat's next
turn)."""

BOT_OPERATIONS = frozenset(
    {
        "getCallingBot",
        "listBotChallenges",
        "listBotGames",
        "waitBotTurns",
        "acceptChallenge",
        "declineChallenge",
        "issueChallenge",
    }
)
"""Operations on a bot's own resources: their cases carry the seeded bot's token."""

TARGETS = {
    "in-process": "the app in the test process over the in-memory store, ASGI transport",
    "running-service": "`cardarena serve game` as a process over Redis and PostgreSQL (with a"
    " worker and the projection), HTTP; its document from /schema/openapi.json",
}
"""The services the cases are sent to: the test's parameter ids and what each one is."""

schemathesis.serializer.alias("application/x-ndjson", "text/plain")
"""An import's body is an export's text (JSON lines): generated strings are sent as they are."""

KEY = "schemathesis-admin-key-0123456789"
ADMIN = {"Authorization": f"Bearer {KEY}"}
SUMMARIES: dict[str, dict[str, Any]] = {}
"""The summary of each target that ran, by name, written out at the end of the module."""


@dataclass(frozen=True)
class Seeds:
    """The resources a target gets before the run; generated requests take their ids."""

    finished_game: str
    export: str
    """The finished game's export: importing it again changes nothing (200)."""
    running_game: str
    """A shithead game of two external seats that are bound to no bot: the admin plays them."""
    bot_token: str
    """The token of `player`, an external shithead bot that the challenges name."""
    tournament: str
    """A running tournament (its games wait for `player`)."""
    arena: str
    """A running arena of `player` and `victim` (a day long; its games wait for them)."""
    schedule_read: str
    schedule_cancelled: str
    challenge_accepted: str
    challenge_declined: str
    challenge_cancelled: str

    def config(self) -> SchemathesisConfig:
        """Returns the schemathesis configuration that binds generated values to the seeds.

        An operation that ends what it acts on (a cancelled schedule, a declined challenge,
        a rotated token) gets a resource of its own, so the others still find theirs alive.
        """

        def bound(name: str, probability: float = SEEDED) -> dict[str, Any]:
            return {"dictionary": name, "probability": probability}

        def only(name: str, **bindings: Any) -> dict[str, Any]:
            return {"include-operation-id": name, "parameters": bindings}

        values: dict[str, list[Any]] = {
            "games": [self.finished_game, self.running_game],
            "running_game": [self.running_game],
            "tournaments": [self.tournament],
            "arena": [self.arena],
            "schedules": [self.schedule_read],
            "schedule_cancelled": [self.schedule_cancelled],
            "challenges": [
                self.challenge_accepted,
                self.challenge_declined,
                self.challenge_cancelled,
            ],
            "challenge_accepted": [self.challenge_accepted],
            "challenge_declined": [self.challenge_declined],
            "challenge_cancelled": [self.challenge_cancelled],
            "bot_names": ["player", "rival", "victim"],
            "victim": ["victim"],
            "new_bots": ["spare", "spare-2"],
            "one": ["1"],
            "builtin": ["builtin"],
            "random": ["random"],
            "empty": [""],
            "rival": ["rival"],
            "player": ["player"],
            "external": ["external"],
            "shithead": ["shithead"],
            "seats": [0, 1],
            "events": [2, 3],
            "two": [2],
            "few": [1, 2],
        }
        # A body is valid as a whole: its fields that must name seeded things together are
        # bound more often than path ids, or too few cases would get every one of them right.
        together = 0.8
        return SchemathesisConfig.from_dict(
            {
                "dictionaries": {name: {"values": entries} for name, entries in values.items()},
                "parameters": {
                    "path.game_id": bound("games"),
                    "path.tournament_id": bound("tournaments"),
                    "path.schedule_id": bound("schedules"),
                    "path.challenge_id": bound("challenges"),
                    "path.name": bound("bot_names"),
                    "path.version": bound("one"),
                    "query.seat": bound("seats"),
                },
                "operations": [
                    only(
                        "postAction",
                        **{"path.game_id": bound("running_game"), "query.wait": 0},
                    ),
                    only("forkGame", **{"query.version": bound("events")}),
                    only("replayGame", **{"query.version": bound("events")}),
                    only("cancelSchedule", **{"path.schedule_id": bound("schedule_cancelled")}),
                    only("acceptChallenge", **{"path.challenge_id": bound("challenge_accepted")}),
                    only("declineChallenge", **{"path.challenge_id": bound("challenge_declined")}),
                    only("cancelChallenge", **{"path.challenge_id": bound("challenge_cancelled")}),
                    only("rotateBotToken", **{"path.name": bound("victim")}),
                    only("revokeBotToken", **{"path.name": bound("victim")}),
                    only("createGame", **{"body.players": bound("two")}),
                    # A built-in strategy joins the arena (random@1 once), and entrants
                    # withdraw from it (again: the same answer).
                    only(
                        "joinArena",
                        **{
                            "path.tournament_id": bound("arena", together),
                            "body.bot": bound("random", together),
                            "body.version": bound("one", together),
                        },
                    ),
                    only(
                        "withdrawFromArena",
                        **{"path.tournament_id": bound("arena"), "path.entrant": bound("few")},
                    ),
                    only(
                        "registerBot",
                        **{
                            "body.name": bound("new_bots", together),
                            "body.game": bound("shithead", together),
                            "body.version": bound("one", together),
                            "body.kind": bound("builtin", together),
                            "body.strategy": bound("random", together),
                            "body.url": bound("empty", together),
                        },
                    ),
                    # Sent with `player`'s token: `player` challenges `rival`.
                    only(
                        "issueChallenge",
                        **{
                            "body.game": bound("shithead", together),
                            "body.opponents[*].bot": bound("rival", together),
                            "body.opponents[*].version": bound("one", together),
                        },
                    ),
                    # Entrants that wait for their moves, and always few games: a tournament
                    # of bots with a huge `games_per_table` or `rounds` (neither is bounded)
                    # would play for hours.
                    only(
                        "createTournament",
                        **{
                            "body.game": bound("shithead", together),
                            "body.table_size": bound("two", together),
                            "body.entrants[*].bot": bound("player", together),
                            "body.entrants[*].kind": bound("external", together),
                            "body.entrants[*].version": bound("one", together),
                            "body.entrants[*].strategy": bound("empty", together),
                            "body.games_per_table": bound("few", 1.0),
                            "body.rounds": bound("few", 1.0),
                        },
                    ),
                    # An evaluation of the host's `rival` against `player`, whose games wait for
                    # its moves, and always one unit: nothing plays on after the case.
                    only(
                        "createEvaluation",
                        **{
                            "body.game": bound("shithead", together),
                            "body.table_size": bound("two", together),
                            "body.candidate.bot": bound("rival", together),
                            "body.candidate.version": bound("one", together),
                            "body.baseline.bot": bound("player", together),
                            "body.baseline.version": bound("one", together),
                            "body.max_games": bound("two", 1.0),
                        },
                    ),
                    *(
                        {"include-operation-id": name, "parameters": {"query.wait": 0}}
                        for name in LONG_POLLS
                    ),
                ],
                "checks": {
                    # A valid request may still be refused for what the document cannot
                    # state (an illegal move, a bot of another game: 422); never as malformed.
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "401", "403", "404", "409", "422"],
                    },
                },
            }
        )


def seed(client: httpx.Client) -> Seeds:
    """Creates the seeded resources through the API (as the admin) and returns their ids,
    once the bots' game is over."""

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = client.post(path, json=body, headers=ADMIN)
        assert response.status_code < 300, f"seeding {path}: {response.text}"
        answer: dict[str, Any] = response.json()
        return answer

    player = post("/v1/bots", {"name": "player", "game": "shithead", "kind": "external"})
    post("/v1/bots", {"name": "victim", "game": "shithead", "kind": "external"})
    post("/v1/bots", {"name": "rival", "game": "shithead", "strategy": "random"})
    bots_game = post("/v1/games", {"game": "beggar", "players": 2, "seed": 1})["game_id"]
    external = [{"kind": "external"}, {"kind": "external"}]
    running = post("/v1/games", {"game": "shithead", "seats": external, "seed": 1})
    entrants = [{"bot": "player"}, {"bot": "rival"}]
    tournament = {"game": "shithead", "entrants": entrants, "table_size": 2}
    yearly = {**tournament, "schedule": {"cron": "0 0 1 1 *"}}
    waiting = [{"bot": "player"}, {"bot": "victim"}]
    arena = {**tournament, "entrants": waiting, "format": "arena", "duration_seconds": 86_400}
    challenge = {"game": "shithead", "opponents": entrants}
    wait_for(lambda: _over(client, bots_game), 60, "the seeded bots' game to finish")
    return Seeds(
        finished_game=bots_game,
        export=client.get(f"/v1/games/{bots_game}/export", headers=ADMIN).text,
        running_game=running["game_id"],
        bot_token=player["token"],
        tournament=post("/v1/tournaments", tournament)["tournament_id"],
        arena=post("/v1/tournaments", arena)["tournament_id"],
        schedule_read=post("/v1/tournaments", yearly)["schedule_id"],
        schedule_cancelled=post("/v1/tournaments", yearly)["schedule_id"],
        challenge_accepted=post("/v1/challenges", challenge)["challenge_id"],
        challenge_declined=post("/v1/challenges", challenge)["challenge_id"],
        challenge_cancelled=post("/v1/challenges", challenge)["challenge_id"],
    )


def _over(client: httpx.Client, game_id: str) -> bool:
    """Returns whether the game is over."""
    status: str = client.get(f"/v1/games/{game_id}", headers=ADMIN).json()["status"]
    return status != "playing"


def legal_move(client: httpx.Client, game_id: str) -> dict[str, Any] | None:
    """Returns a PostAction body of the first legal action of a seat to move, None when the
    game waits for nobody."""
    game = client.get(f"/v1/games/{game_id}", headers=ADMIN).json()
    for seat in game["to_move"]:
        view = client.get(f"/v1/games/{game_id}/view", params={"seat": seat}, headers=ADMIN).json()
        if view["legal_actions"]:
            action = view["legal_actions"][0]
            return {"seat": seat, "action": action, "expected_version": view["version"]}
    return None


def positive_data_accepted(ctx: CheckContext, response: Response, case: Case[Any]) -> bool | None:
    """`positive_data_acceptance`, except for a tournament's `schedule`: its rules (exactly
    one of `at` and `cron`, a cron expression, a time zone name) are stated in prose only,
    and the service refuses a schedule that breaks them as malformed (400)."""
    if response.status_code == 400 and _problem_field(response).startswith("schedule"):
        return None
    return positive_data_acceptance(ctx, response, case)


def _problem_field(response: Response) -> str:
    """Returns the `field` of a problem response, empty if it names none."""
    with contextlib.suppress(ValueError, AttributeError):
        return str(response.json().get("field", ""))
    return ""


@dataclass
class Target:
    """A service under test: its schema, a client for its seeds, and the cases it answered."""

    name: str
    schema: BaseSchema
    client: httpx.Client
    seeds: Seeds
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)
    """Cases by operation label and response status."""
    succeeded: set[str] = field(default_factory=set)
    """The operations that answered a case of their own method with a 2xx."""
    swaps: Counter[str] = field(default_factory=Counter)
    """Positive cases so far of the operations whose bodies no generator gets right (a
    legal move, a game's log), by operation id: every other one is sent with a real one."""
    started: float = field(default_factory=time.monotonic)

    def prepare(self, case: Case[Any]) -> dict[str, str]:
        """Returns the credentials of `case`; swaps a real body into every other positive
        case of postAction and importGame."""
        operation = case.operation.definition.raw.get("operationId", "")
        if operation in ("postAction", "importGame") and _positive(case):
            self.swaps[operation] += 1
            body = self._real_body(case) if self.swaps[operation] % 2 else None
            if body is not None:
                case.body = body
        if operation in BOT_OPERATIONS:
            return {"Authorization": f"Bearer {self.seeds.bot_token}"}
        return ADMIN

    def _real_body(self, case: Case[Any]) -> str | dict[str, Any] | None:
        """Returns the seeded game's export for an import; a legal move of the running game
        for a move on it (None once it is over); None for a move on another game."""
        if case.operation.definition.raw.get("operationId") == "importGame":
            return self.seeds.export
        if case.path_parameters.get("game_id") != self.seeds.running_game:
            return None
        return legal_move(self.client, self.seeds.running_game)

    def summary(self) -> dict[str, Any]:
        """Returns the number of cases run, in all, per status and per operation and status,
        and the operations that never succeeded (their success schemas went unchecked)."""
        per_operation: dict[str, Counter[int]] = {}
        for (label, status), n in sorted(self.answers.items()):
            per_operation.setdefault(label, Counter())[status] += n
        per_status: Counter[int] = sum(per_operation.values(), Counter())
        return {
            "target": TARGETS[self.name],
            "cases": per_status.total(),
            "operations": len(per_operation),
            "seconds": round(time.monotonic() - self.started, 1),
            "per_status": {str(k): v for k, v in sorted(per_status.items())},
            "per_operation": {
                label: {str(k): v for k, v in statuses.items()}
                for label, statuses in per_operation.items()
            },
            "operations_never_succeeding": sorted(set(per_operation) - self.succeeded),
        }


def _positive(case: Case[Any]) -> bool:
    """Returns whether schemathesis generated `case` as valid."""
    return case.meta is not None and case.meta.generation.mode.is_positive


@contextlib.contextmanager
def in_process() -> Iterator[tuple[BaseSchema, httpx.Client, Seeds]]:
    """Yields the schema of the app over the in-memory store, called through ASGI, with a
    client of the app and its seeds."""
    store = InMemoryEventStore()
    settings = Settings(admin_key=KEY, rate_limit=0, max_games_per_bot=0)
    app = create_app(store, InProcessDispatcher(store), access=Access.embedded(store, settings))
    # Not entered, so without a lifespan of its own: schemathesis' ASGI transport runs the
    # app's lifespan, and a second one beside it leaks the first one's event emitter.
    client = TestClient(app)
    seeds = seed(client)
    yield (
        schemathesis.openapi.from_asgi("/schema/openapi.json", app, config=seeds.config()),
        client,
        seeds,
    )


@contextlib.contextmanager
def running_service(
    request: pytest.FixtureRequest,
) -> Iterator[tuple[BaseSchema, httpx.Client, Seeds]]:
    """Yields the schema served by the e2e stack (this test's Redis namespace and database),
    once the game service is ready, with a client of it and its seeds; stops the stack
    afterwards."""
    extra = {
        "CARDARENA_ADMIN_KEY": KEY,
        "CARDARENA_RATE_LIMIT": "0",
        "CARDARENA_MAX_GAMES_PER_BOT": "0",
    }
    with running_stack(
        request.getfixturevalue("redis_url"),
        request.getfixturevalue("redis_client"),
        request.getfixturevalue("namespace"),
        request.getfixturevalue("database_url"),
        extra,
    ) as stack:
        # /ready: the projection has applied the migrations that the views read.
        wait_for(lambda: service_ready(stack.base_url), 60, "the game service to be ready")
        with httpx.Client(base_url=stack.base_url, timeout=30) as client:
            seeds = seed(client)
            url = f"{stack.base_url}/schema/openapi.json"
            yield schemathesis.openapi.from_url(url, config=seeds.config()), client, seeds


@pytest.fixture(params=list(TARGETS))
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """Returns the target named by the parameter; records its summary afterwards."""
    name: str = request.param
    # schemathesis 4.32's lazy schemas read and write `Node._nodeid` (to name each operation's
    # subtest), which pytest 9.2 no longer has; without it every lazy test fails at once.
    request.node._nodeid = request.node.nodeid
    service = in_process() if name == "in-process" else running_service(request)
    with service as (schema, client, seeds):
        started = Target(name, schema, client, seeds)
        try:
            yield started
        finally:
            SUMMARIES[name] = started.summary()


@pytest.fixture
def api_schema(target: Target) -> BaseSchema:
    """Returns the target's schema (schemathesis loads it lazily, per target)."""
    return target.schema


@pytest.fixture(scope="module", autouse=True)
def record_cases() -> Iterator[None]:
    """Prints and writes the number of cases run, per target, at the end."""
    yield
    summary = {
        "cases": sum(s["cases"] for s in SUMMARIES.values()),
        "max_examples_per_operation": MAX_EXAMPLES,
        "seeded_share": SEEDED,
        "targets": SUMMARIES,
        "excluded": STREAMING,
    }
    ARTIFACT.parent.mkdir(exist_ok=True)
    ARTIFACT.write_text(json.dumps(summary, indent=2) + "\n")
    for name, ran in SUMMARIES.items():
        print(
            f"schemathesis {name}: {ran['cases']} cases over {ran['operations']} operations"
            f" in {ran['seconds']} s; {len(ran['operations_never_succeeding'])} never succeeded"
        )


SCHEMA = schemathesis.pytest.from_fixture("api_schema").exclude(operation_id=list(STREAMING))


@SCHEMA.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_operation_answers_documented_non_5xx_responses(
    case: Case[Any], target: Target
) -> None:
    response = case.call_and_validate(
        headers=target.prepare(case),
        checks=[
            not_a_server_error,
            status_code_conformance,
            response_schema_conformance,
            positive_data_accepted,
        ],
    )
    target.answers[case.operation.label, response.status_code] += 1
    # A 2xx to another method (the coverage phase's OPTIONS, say) is no success of this one.
    if response.status_code < 300 and case.method.upper() == case.operation.method.upper():
        target.succeeded.add(case.operation.label)
