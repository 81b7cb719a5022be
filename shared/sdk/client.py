"""A small typed client of the cardarena API (httpx), for third-party bots written in Python.

    host = Client("http://127.0.0.1:8000", token=ADMIN_KEY)
    token = host.register_bot("alice", game="shithead", kind="external").token
    bot = Client("http://127.0.0.1:8000", token=token)
    for turn in bot.turns(wait=30):                  # or bot.events() for server-sent events
        bot.play(turn.game_id, turn.seat, choose)    # one request a move, to the game's end

`act` sends an automatic Idempotency-Key (so a retry after a timeout appends once) and,
on 409 (someone moved first, or the version moved on), re-reads the view and asks the
caller's `choose` again. Errors are raised as `ApiError` with the problem-details body.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import msgspec


class ApiError(Exception):
    """The API answered with an error; `problem` is its RFC 9457 body."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(f"{status}: {problem.get('detail') or problem.get('title')}")
        self.status = status
        self.problem = problem


class RegisteredBot(msgspec.Struct, frozen=True, kw_only=True):
    """A registered bot; `token` only in the answer that issued it."""

    name: str
    """The bot's name."""
    version: str
    """Its version label."""
    key: str
    """`name@version`, as standings and leaderboards show it."""
    game: str
    """The game it plays."""
    strategy: str = ""
    """A built-in bot's strategy (`""` for an external or webhook bot)."""
    description: str = ""
    """What its registration says of it."""
    registered_at: str = ""
    """When it was registered (ISO 8601, UTC)."""
    kind: str = "builtin"
    """`builtin`, `external` or `webhook`."""
    token: str | None = None
    """Its bearer token: only in the answer that issued it."""
    signing_secret: str | None = None
    """A webhook bot's signing secret: only in the answer that issued it."""


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    """A game waiting for one of the bot's seats, with the seat's view at `version`."""

    game_id: str
    """The game."""
    game: str
    """Which game it is (`shithead`, ...)."""
    seat: int
    """The bot's seat that is to move."""
    version: int
    """The game's version: post the action with it as `expected_version`."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post, each an object with its `type`."""
    deadline: int | None = None
    """When the seat's time runs out (ms since the epoch), in a game with a clock."""
    view: dict[str, Any] | None = None
    """The seat's view at `version` (as `getSeatView` answers it)."""
    status: str | None = None
    """The game's status at `version` (`playing`)."""
    to_move: list[int] | None = None
    """The seats the game waits for at `version`."""


class SeatView(msgspec.Struct, frozen=True, kw_only=True):
    """What a seat may know, its legal actions and the version to act at."""

    game_id: str
    """The game."""
    seat: int
    """The seat this view is of."""
    version: int
    """The game's version: post an action with it as `expected_version`."""
    status: str
    """`playing`, or how the game ended."""
    to_move: list[int]
    """The seats the game waits for."""
    view: dict[str, Any]
    """All the seat may know of the game (its shape is the game's)."""
    legal_actions: list[dict[str, Any]]
    """The actions the seat may post now (empty unless the game waits for it)."""
    deadline: int | None = None
    """When the seat's time runs out (ms since the epoch), while the game waits for it."""


class StreamEvent(msgspec.Struct, frozen=True):
    """One server-sent event: its type, id and JSON data."""

    event: str
    id: str | None
    data: Any


Chooser = Callable[[SeatView], dict[str, Any]]
"""Picks one of a view's legal actions."""

Noter = Callable[[SeatView, dict[str, Any]], str | None]
"""Returns the private note of a move (None: none), given the view and the action chosen."""


class Client:
    """The cardarena API over HTTP, as a host (admin key) or a bot (its token)."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        max_backoff: float = 60.0,
    ) -> None:
        self.max_backoff = max_backoff
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=base_url, headers=headers, timeout=timeout, transport=transport
        )

    def close(self) -> None:
        """Closes the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, method: str, url: str, **kwargs: Any) -> Any:
        """Sends a request; returns the decoded JSON body (None for 204), raises ApiError.

        A 429 is waited out (its Retry-After, up to `max_backoff` seconds) and sent again
        once; a request with an Idempotency-Key is safe to send again.
        """
        response = self._http.request(method, url, **kwargs)
        if response.status_code == 429:
            delay = float(response.headers.get("Retry-After", "1"))
            if delay <= self.max_backoff:
                time.sleep(delay)
                response = self._http.request(method, url, **kwargs)
        if response.status_code >= 400:
            try:
                problem = response.json()
            except ValueError:
                problem = {"detail": response.text}
            raise ApiError(response.status_code, problem)
        return None if response.status_code == 204 else response.json()

    # Hosting -------------------------------------------------------------------------

    def register_bot(
        self,
        name: str,
        *,
        game: str,
        kind: str = "external",
        version: str = "1",
        strategy: str | None = None,
        url: str | None = None,
    ) -> RegisteredBot:
        """Registers a bot (a host operation); an external or webhook bot's token comes once."""
        body: dict[str, Any] = {"name": name, "game": game, "kind": kind, "version": version}
        if strategy is not None:
            body["strategy"] = strategy
        if url is not None:
            body["url"] = url
        return msgspec.convert(self._call("POST", "/v1/bots", json=body), RegisteredBot)

    def create_game(self, game: str, seats: list[dict[str, Any]], **fields: Any) -> str:
        """Creates a game (a host operation) with an automatic Idempotency-Key; returns its id."""
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        body = {"game": game, "seats": seats, **fields}
        created = self._call("POST", "/v1/games", json=body, headers=headers)
        return str(created["game_id"])

    def game(self, game_id: str) -> dict[str, Any]:
        """Returns a game's public summary."""
        result: dict[str, Any] = self._call("GET", f"/v1/games/{game_id}")
        return result

    # Challenges ----------------------------------------------------------------------

    def challenge(
        self, game: str, opponents: list[tuple[str, str]], **fields: Any
    ) -> dict[str, Any]:
        """Challenges registered bots ((name, version) each) to `game`; returns the challenge.

        With a bot token the calling bot takes seat 0; `fields` may add `ruleset`, `clock`
        and `expires_in`.
        """
        body = {
            "game": game,
            "opponents": [{"bot": name, "version": version} for name, version in opponents],
            **fields,
        }
        result: dict[str, Any] = self._call("POST", "/v1/challenges", json=body)
        return result

    def get_challenge(self, challenge_id: str) -> dict[str, Any]:
        """Returns a challenge this bot issued or is seated by (or any, for the host)."""
        result: dict[str, Any] = self._call("GET", f"/v1/challenges/{challenge_id}")
        return result

    def challenges(self) -> list[dict[str, Any]]:
        """Returns the open challenges waiting for this bot's answer, oldest first."""
        body = self._call("GET", "/v1/bots/me/challenges")
        found: list[dict[str, Any]] = body["challenges"]
        return found

    def accept_challenge(self, challenge_id: str) -> dict[str, Any]:
        """Accepts a challenge; the last acceptance starts its game (`game_id`)."""
        result: dict[str, Any] = self._call("POST", f"/v1/challenges/{challenge_id}/accept")
        return result

    def decline_challenge(self, challenge_id: str, reason: str = "") -> dict[str, Any]:
        """Declines a challenge, closing it."""
        url = f"/v1/challenges/{challenge_id}/decline"
        result: dict[str, Any] = self._call("POST", url, json={"reason": reason})
        return result

    # Playing -------------------------------------------------------------------------

    def turns(self, wait: int = 30) -> list[Turn]:
        """Returns the games waiting for this bot's move, waiting up to `wait` s for one."""
        body = self._call("GET", "/v1/bots/me/turns", params={"wait": wait}, timeout=wait + 30)
        return msgspec.convert(body["turns"], list[Turn])

    def view(self, game_id: str, seat: int) -> SeatView:
        """Returns what `seat` may know, with its legal actions and version."""
        body = self._call("GET", f"/v1/games/{game_id}/view", params={"seat": seat})
        return msgspec.convert(body, SeatView)

    def wait_turn(self, game_id: str, seat: int, wait: int = 30) -> SeatView:
        """Returns `seat`'s view once the game waits for the seat or is over, waiting up to
        `wait` s (then its view as it stands, with no legal actions)."""
        body = self._call(
            "GET",
            f"/v1/games/{game_id}/turn",
            params={"seat": seat, "wait": wait},
            timeout=wait + 30,
        )
        return msgspec.convert(body, SeatView)

    def act(
        self,
        game_id: str,
        seat: int,
        choose: Chooser,
        *,
        view: SeatView | None = None,
        attempts: int = 5,
        wait: int | None = None,
        note: str | Noter | None = None,
    ) -> dict[str, Any] | None:
        """Posts `choose(view)` at the view's version; on 409 re-reads the view and chooses again.

        Each attempt carries its own Idempotency-Key, reused if the same attempt is retried
        after a transport error, so an action is appended at most once. Returns the answer,
        or None when the seat no longer has a move (the game moved on or ended). With
        `wait`, the answer's `turn` is the seat's next turn, waited for up to `wait` s.
        `note` is the move's private note (or a `Noter` of the view and the action chosen):
        at most 1024 bytes of UTF-8, read only by this bot and the host once the game is over.
        """
        for _ in range(attempts):
            view = view or self.view(game_id, seat)
            if not view.legal_actions:
                return None
            action = choose(view)
            body = {"seat": seat, "action": action, "expected_version": view.version}
            text = note(view, action) if callable(note) else note
            if text:
                body["note"] = text
            headers = {"Idempotency-Key": uuid.uuid4().hex}
            try:
                return self._post_action(game_id, body, headers, wait)
            except ApiError as error:
                if error.status != 409:
                    raise
                view = None
        raise ApiError(409, {"detail": f"no action landed after {attempts} attempts"})

    def play(
        self,
        game_id: str,
        seat: int,
        choose: Chooser,
        wait: int = 30,
        note: Noter | None = None,
    ) -> SeatView:
        """Plays `seat` until the game is over, one request a move: each action's answer
        carries the seat's next turn (and `note`'s private note, see `act`). Returns the
        seat's last view."""
        view = self.wait_turn(game_id, seat, wait)
        while view.status == "playing":
            answer = self.act(game_id, seat, choose, view=view, wait=wait, note=note)
            turn = None if answer is None else answer.get("turn")
            if turn is None:  # no move for the seat now (its wait ran out, a 409), or no turn
                view = self.wait_turn(game_id, seat, wait)
            else:
                view = msgspec.convert(turn, SeatView)
        return view

    def _post_action(
        self,
        game_id: str,
        body: dict[str, Any],
        headers: dict[str, str],
        wait: int | None = None,
        retries: int = 3,
    ) -> dict[str, Any]:
        """Posts an action, retrying a transport error with the same Idempotency-Key."""
        options: dict[str, Any] = {}
        if wait is not None:
            options = {"params": {"wait": wait}, "timeout": wait + 30}
        for attempt in range(retries + 1):
            try:
                result: dict[str, Any] = self._call(
                    "POST", f"/v1/games/{game_id}/actions", json=body, headers=headers, **options
                )
                return result
            except httpx.TransportError:
                if attempt == retries:
                    raise
        raise AssertionError("unreachable")

    def events(self, last_event_id: str | None = None) -> Iterator[StreamEvent]:
        """Yields this bot's server-sent events (`your_turn`, `game_started`, ...) as they come."""
        yield from self._stream("/v1/bots/me/events", last_event_id)

    def game_stream(
        self, game_id: str, seat: int | None = None, last_event_id: str | None = None
    ) -> Iterator[StreamEvent]:
        """Yields a game's server-sent events as `seat` (None: a spectator) may see them."""
        params = {} if seat is None else {"seat": seat}
        yield from self._stream(f"/v1/games/{game_id}/stream", last_event_id, params)

    def _stream(
        self, url: str, last_event_id: str | None, params: dict[str, Any] | None = None
    ) -> Iterator[StreamEvent]:
        """Yields the events of a server-sent-events response; comments are skipped."""
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        with self._http.stream(
            "GET", url, params=params, headers=headers, timeout=httpx.Timeout(30, read=None)
        ) as response:
            if response.status_code >= 400:
                response.read()
                raise ApiError(response.status_code, response.json())
            yield from parse_sse(response.iter_lines())


class SseParser:
    """Reads server-sent-event lines one at a time (the text/event-stream format): `feed`
    returns the event a blank line completes. For synchronous and asynchronous readers alike.
    """

    def __init__(self) -> None:
        self._event = "message"
        self._id: str | None = None
        self._data: list[str] = []

    def feed(self, line: str) -> StreamEvent | None:
        """Takes one line (without its end); returns the event it completes, if any."""
        if not line:
            done = None
            if self._data:
                text = "\n".join(self._data)
                try:
                    payload: Any = json.loads(text)
                except ValueError:
                    payload = text
                done = StreamEvent(self._event, self._id, payload)
            self._event, self._id, self._data = "message", None, []
            return done
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        elif name == "data":
            self._data.append(value)
        return None


def parse_sse(lines: Iterator[str]) -> Iterator[StreamEvent]:
    """Yields the events of server-sent-event `lines` (the text/event-stream format)."""
    parser = SseParser()
    for line in lines:
        if (event := parser.feed(line)) is not None:
            yield event
