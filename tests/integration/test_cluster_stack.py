"""The game service on a real Redis Cluster (issue 17), wired from settings as `cardarena serve
game` wires it (CARDARENA_REDIS_CLUSTER=true): its event store, rate limiters, game slots,
deal secret and outbox all on the cluster.

A scenario of games (bots, external seats played to their end over HTTP with bot tokens),
bot registrations, a challenge and a tournament answers on the cluster exactly as on the
standalone Redis, never 500 (before the partitioned store: every POST /v1/games a 500,
CROSSSLOT, and POST /v1/bots a 500, MOVED). With the broker away, bot turns wait in the
cluster's outbox. Once the cluster lost a primary that has no replica (CLUSTERDOWN after the
node timeout), every request that needs the store answers 503 with Retry-After and a problem
body within a bound, and /ready is 503.
"""

from __future__ import annotations

import concurrent.futures
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient

from services.bootstrap import stores
from services.bootstrap.game import build_access, build_dispatcher, build_readiness
from services.bootstrap.stores import build_store
from services.game.app import create_app
from services.ops.migrate import migrate
from services.settings import Settings, load_settings
from shared.app.runtime import InProcessDispatcher, OutboxDispatcher
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.outbox import Pending
from shared.store import redis_deal_secret
from shared.store.redis_deal_secret import RedisDealSecret
from shared.store.redis_limits import RedisGameSlots
from shared.store.redis_outbox import RedisOutbox
from tests.support.api import ADMIN, KEY
from tests.support.redis_cluster import LocalCluster

pytestmark = pytest.mark.cluster

RULES = {"max_moves": 300}
"""Shithead with a move cap, so that a game played over HTTP ends in bounded time."""
BOUND_S = 40.0
"""How long one request may take before it counts as hung: far past the cluster client's
retries on a lost node (its socket timeout is 10 s)."""
TOURNAMENT = {
    "game": "beggar",
    "entrants": [{"bot": "turner"}, {"bot": "random"}],
    "table_size": 2,
    "seed": "3",
}

ENDED = {"finished", "draw", "capped"}
"""How a game can be over (capped: the move cap reached; which one depends on the deal)."""
KEYED_GAME = {"game": "beggar", "players": 2, "seed": 8}

DRAWN_SECRET = "5e" * 32
"""The deal secret the stacks draw (64 hex digits, as `RedisDealSecret` draws one)."""

Api = TestClient[Any]


class _Drawn:
    """Stands in for the `secrets` module of `RedisDealSecret`: draws `value` every time."""

    def __init__(self, value: str) -> None:
        self.value = value

    def token_hex(self, nbytes: int) -> str:
        assert len(self.value) == 2 * nbytes
        return self.value


def _settings(redis_url: str, namespace: str, *, cluster: bool, **env: str) -> Settings:
    """Returns the game service's settings on `redis_url` under `namespace`, with an admin
    key and a rate limit that the scenario stays under (every bot request still counts). The
    buckets refill over a day, so that the scenario's stay in Redis after it (a bucket's key
    expires once it is full again)."""
    return load_settings(
        {
            "CARDARENA_STORE": "redis",
            "REDIS_URL": redis_url,
            "CARDARENA_REDIS_CLUSTER": "true" if cluster else "false",
            "CARDARENA_NAMESPACE": namespace,
            "CARDARENA_ADMIN_KEY": KEY,
            "CARDARENA_RATE_LIMIT": "100000",
            "CARDARENA_RATE_WINDOW": "86400",
            **env,
        }
    )


def _app(settings: Settings, dispatcher: Callable[..., BotTurnDispatcher] | None = None) -> Api:
    """Returns a test client of the game service built from `settings` as `serve_game`
    builds it (store with its deal secret, access, readiness), bot turns in-process unless
    `dispatcher(settings, store)` says otherwise."""
    store = build_store(settings)
    dispatch = (dispatcher or (lambda _, s: InProcessDispatcher(s)))(settings, store)
    app = create_app(
        store,
        dispatch,
        access=build_access(settings, store),
        readiness=build_readiness(settings, store),
    )
    return TestClient(app)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _json(response: httpx.Response, status: int) -> Any:
    """Returns the body of `response` after checking its status."""
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


class Scenario:
    """Requests of the scenario, each answer's status kept under a label to compare runs."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.answers: list[tuple[str, int]] = []

    def send(self, label: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = self.api.request(method, path, **kwargs)
        self.answers.append((label, response.status_code))
        return response

    def play_out(self, game_id: str, tokens: dict[int, str]) -> str:
        """Plays the first legal action of each seat with its token until the game is over;
        keeps one answer for all the moves (each must be 200); returns the final status."""
        for _ in range(5000):
            for seat, token in tokens.items():
                view = self.api.get(
                    f"/v1/games/{game_id}/view", params={"seat": seat}, headers=_bearer(token)
                )
                view_body = _json(view, 200)
                if view_body["status"] != "playing":
                    self.answers.append(("play out: every move", 200))
                    return str(view_body["status"])
                if view_body["legal_actions"]:
                    body = {
                        "seat": seat,
                        "action": view_body["legal_actions"][0],
                        "expected_version": view_body["version"],
                    }
                    move = self.api.post(
                        f"/v1/games/{game_id}/actions", json=body, headers=_bearer(token)
                    )
                    _json(move, 200)
        pytest.fail(f"game {game_id} did not end")

    def run(self) -> dict[str, Any]:
        """Runs the scenario; returns what the caller checks in the store."""
        _json(self.send("ready", "GET", "/ready"), 200)
        bots = self.send(
            "game of bots",
            "POST",
            "/v1/games",
            json={"game": "beggar", "players": 2},
            headers=ADMIN,
        )
        assert _json(bots, 201)["status"] in ENDED
        keyed = {**ADMIN, "Idempotency-Key": "table-1"}
        first = self.send("keyed game", "POST", "/v1/games", json=KEYED_GAME, headers=keyed)
        again = self.send("keyed again", "POST", "/v1/games", json=KEYED_GAME, headers=keyed)
        assert _json(again, 200)["game_id"] == _json(first, 201)["game_id"]

        tokens = {}
        for name in ("alice", "bob"):
            body = {"name": name, "game": "shithead", "kind": "external"}
            tokens[name] = _json(
                self.send(f"register {name}", "POST", "/v1/bots", json=body, headers=ADMIN), 201
            )["token"]
        body = {"name": "alice", "game": "shithead", "kind": "external"}
        _json(self.send("register alice again", "POST", "/v1/bots", json=body, headers=ADMIN), 200)
        me = self.send("alice's token", "GET", "/v1/bots/me", headers=_bearer(tokens["alice"]))
        assert _json(me, 200)["key"] == "alice@1"

        seats = [{"kind": "external", "bot": "alice"}, {"kind": "bot", "bot": "random"}]
        game = {"game": "shithead", "ruleset": RULES, "seats": seats, "seed": 4}
        mixed = _json(self.send("alice v bot", "POST", "/v1/games", json=game, headers=ADMIN), 201)
        wrong = self.send(
            "bob for alice's seat",
            "POST",
            f"/v1/games/{mixed['game_id']}/actions",
            json={"seat": 0, "action": {"type": "ready"}, "expected_version": mixed["version"]},
            headers=_bearer(tokens["bob"]),
        )
        assert wrong.status_code == 403, wrong.text
        assert self.play_out(mixed["game_id"], {0: tokens["alice"]}) in ENDED

        seats = [{"kind": "external"}, {"kind": "external"}]
        game = {"game": "shithead", "ruleset": RULES, "seats": seats, "seed": 5}
        hosted = _json(
            self.send("hosted seats", "POST", "/v1/games", json=game, headers=ADMIN), 201
        )
        assert self.play_out(hosted["game_id"], {0: KEY, 1: KEY}) in ENDED

        challenge = {"game": "shithead", "ruleset": RULES, "opponents": [{"bot": "bob"}]}
        issued = self.send(
            "challenge", "POST", "/v1/challenges", json=challenge, headers=_bearer(tokens["alice"])
        )
        challenge_id = _json(issued, 201)["challenge_id"]
        accepted = self.send(
            "accept",
            "POST",
            f"/v1/challenges/{challenge_id}/accept",
            headers=_bearer(tokens["bob"]),
        )
        started = _json(accepted, 200)
        assert started["status"] == "started"

        created = self.send("tournament", "POST", "/v1/tournaments", json=TOURNAMENT, headers=ADMIN)
        tournament = _json(created, 201)
        assert tournament["status"] == "finished"
        standings = self.send(
            "standings", "GET", f"/v1/tournaments/{tournament['tournament_id']}/standings"
        )
        _json(standings, 200)
        return {"challenge_game": started["game_id"]}


def test_the_stack_answers_on_a_cluster_as_on_standalone_redis_and_keeps_its_state_there(
    redis_cluster: LocalCluster,
    redis_url: str,
    namespace: str,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The stacks keep their deal secret in Redis, as a deployment without CARDARENA_DEAL_SECRET
    # does (the tests' given secret set aside), and draw the same one, so that both deal alike.
    monkeypatch.setattr(stores, "RedisDealSecret", RedisDealSecret)
    monkeypatch.setattr(redis_deal_secret, "secrets", _Drawn(DRAWN_SECRET))
    migrate(database_url)
    on_cluster = f"stack:{uuid.uuid4().hex[:8]}:"
    standalone = _settings(redis_url, namespace, cluster=False, DATABASE_URL=database_url)
    clustered = _settings(redis_cluster.url, on_cluster, cluster=True, DATABASE_URL=database_url)
    with _app(standalone) as api:
        expected = Scenario(api)
        expected.run()
    with _app(clustered) as api:
        seen = Scenario(api)
        found = seen.run()

    assert all(status < 500 for _, status in seen.answers), seen.answers
    assert seen.answers == expected.answers
    with redis_cluster.client() as client:
        keys = {key.decode() for key in client.scan_iter(match=f"{on_cluster}*", count=1000)}
        assert client.get(f"{on_cluster}deal-secret") == DRAWN_SECRET.encode(), keys
        assert any(key.startswith(f"{on_cluster}ratelimit:") for key in keys), keys
        slots = RedisGameSlots(client, on_cluster)
        assert found["challenge_game"] in slots.games("bob@1")
    homes = {redis_cluster.node_for_key(key).address for key in keys}
    assert len(homes) == len(redis_cluster.primaries()), (
        "the stack's keys spread over every primary"
    )


def test_with_the_broker_away_bot_turns_wait_in_the_clusters_outbox(
    redis_cluster: LocalCluster,
) -> None:
    namespace = f"outbox:{uuid.uuid4().hex[:8]}:"
    settings = _settings(
        redis_cluster.url,
        namespace,
        cluster=True,
        CARDARENA_DISPATCH="celery",
        CELERY_BROKER_URL="redis://127.0.0.1:1/0",  # nothing listens on port 1
        CARDARENA_QUEUE=f"{namespace}bots",
    )
    holder: list[OutboxDispatcher] = []

    def dispatcher(settings: Settings, store: Any) -> BotTurnDispatcher:
        made = build_dispatcher(settings, store)
        assert isinstance(made, OutboxDispatcher), made
        holder.append(made)
        return made

    try:
        with _app(settings, dispatcher) as api:
            game = _json(
                api.post("/v1/games", json={"game": "beggar", "players": 2}, headers=ADMIN), 201
            )
            tournament = _json(api.post("/v1/tournaments", json=TOURNAMENT, headers=ADMIN), 201)
    finally:
        for made in holder:
            made.close()
    assert game["status"] == "playing"
    with redis_cluster.client() as client:
        kept = {entry.pending.key for entry in RedisOutbox(client, namespace).entries()}
    assert Pending("game", game["game_id"]).key in kept
    assert Pending("tournament", tournament["tournament_id"]).key in kept


@pytest.fixture
def failed_cluster(
    redis_cluster_factory: Callable[..., LocalCluster], database_url: str
) -> Iterator[tuple[LocalCluster, Api, dict[str, Any]]]:
    """Returns a cluster of this test's own that lost a primary without a replica (every node
    says cluster_state:fail), the game service on it, and what it held before: a game of two
    external seats, a move due on it, and a registered bot's token."""
    migrate(database_url)
    cluster = redis_cluster_factory(primaries=3, replicas=0)
    settings = _settings(
        cluster.url, f"down:{uuid.uuid4().hex[:8]}:", cluster=True, DATABASE_URL=database_url
    )
    with _app(settings) as api:
        _json(api.get("/ready"), 200)
        seats = [{"kind": "external"}, {"kind": "external"}]
        game = {"game": "shithead", "ruleset": RULES, "seats": seats, "seed": 7}
        created = _json(api.post("/v1/games", json=game, headers=ADMIN), 201)
        view = _json(api.get(f"/v1/games/{created['game_id']}/view?seat=0", headers=ADMIN), 200)
        move = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
        body = {"name": "alice", "game": "shithead", "kind": "external"}
        token = _json(api.post("/v1/bots", json=body, headers=ADMIN), 201)["token"]
        victim = next(node for node in cluster.primaries() if node is not cluster.nodes[0])
        cluster.kill(victim)
        cluster.wait_state("fail")
        yield cluster, api, {"game_id": created["game_id"], "move": move, "token": token}


def _bounded(request: Callable[[], httpx.Response]) -> httpx.Response:
    """Returns the answer of `request`, failing the test when it takes past BOUND_S (hung)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(request).result(timeout=BOUND_S)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"a request hung past {BOUND_S}s on a failed cluster")
    finally:
        pool.shutdown(wait=False)


def _assert_unavailable(response: httpx.Response) -> None:
    """Asserts a 503 problem with Retry-After (never a 500)."""
    assert response.status_code == 503, (response.status_code, response.text)
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 503
    assert body["type"]
    assert body["detail"]


def test_on_a_cluster_down_every_request_that_needs_the_store_is_503_with_retry_after(
    failed_cluster: tuple[LocalCluster, Api, dict[str, Any]],
) -> None:
    _, api, held = failed_cluster
    game_id, alice = held["game_id"], _bearer(held["token"])
    requests: list[Callable[[], httpx.Response]] = [
        lambda: api.post("/v1/games", json={"game": "beggar", "players": 2}, headers=ADMIN),
        lambda: api.post(
            "/v1/games",
            json={"game": "beggar", "players": 2},
            headers={**ADMIN, "Idempotency-Key": "k-1"},
        ),
        lambda: api.post(
            f"/v1/games/{game_id}/actions",
            json=held["move"],
            headers={**ADMIN, "Idempotency-Key": "m-1"},
        ),
        lambda: api.get(f"/v1/games/{game_id}", headers=ADMIN),
        lambda: api.get(f"/v1/games/{game_id}/view", params={"seat": 0}, headers=ADMIN),
        lambda: api.get(f"/v1/games/{game_id}/events", headers=ADMIN),
        lambda: api.post(
            "/v1/bots", json={"name": "bob", "game": "shithead", "kind": "external"}, headers=ADMIN
        ),
        lambda: api.get("/v1/bots/me", headers=alice),
        lambda: api.post(
            "/v1/challenges",
            json={"game": "shithead", "opponents": [{"bot": "deep"}]},
            headers=alice,
        ),
        lambda: api.post("/v1/tournaments", json=TOURNAMENT, headers=ADMIN),
        lambda: api.get("/v1/tournaments"),
    ]
    for request in requests:
        _assert_unavailable(_bounded(request))
    assert _bounded(lambda: api.get("/health")).status_code == 200


def test_on_a_cluster_down_ready_is_503_naming_redis(
    failed_cluster: tuple[LocalCluster, Api, dict[str, Any]],
) -> None:
    _, api, _ = failed_cluster
    ready = _bounded(lambda: api.get("/ready"))
    _assert_unavailable(ready)
    assert ready.json()["detail"].startswith("redis"), ready.json()
