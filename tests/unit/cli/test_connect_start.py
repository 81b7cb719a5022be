"""`cardarena connect` at its start: a server it cannot reach, or one that refuses its token,
ends it at once in one line; only a connection that worked is retried when it drops."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient
from litestar.testing.transport import TestClientTransport as ServiceTransport

from services.cli.connect import NeverReached, play_online, play_turn
from services.cli.main import main
from services.cli.programs import Program
from shared.catalog import get_game
from shared.messages.common import NoteTaken
from shared.sdk.client import Client
from shared.store.memory import InMemoryEventStore
from tests.support.local_bots import PYTHON_EXAMPLE, program
from tests.support.stack import free_port


class Stop(Exception):
    """Raised by a test's pause: the loop did retry, which is all the test asks."""


@contextlib.contextmanager
def answering(status: int) -> Iterator[str]:
    """Serves every request with `status` and a problem body while the block runs; yields
    the server's URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"title": "no", "detail": f"status {status}"}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/problem+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serving = threading.Thread(target=server.serve_forever, name="answering")
    serving.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        serving.join(timeout=10)
        server.server_close()


def connect(capsys: pytest.CaptureFixture[str], server: str) -> tuple[int, str]:
    """Runs `cardarena connect` against `server`; returns its exit code and stderr."""
    argv = ["connect", "--server", server, "--token", "t", "--bot", PYTHON_EXAMPLE, "--wait", "1"]
    code = main(argv)
    return code, capsys.readouterr().err


def test_a_server_that_is_not_there_ends_connect_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = f"http://127.0.0.1:{free_port()}"
    code, err = connect(capsys, server)
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"cardarena: error: cannot reach the server at {server}: ")
    assert line.endswith("check --server (is the game service running?)")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_token_ends_connect_at_once(
    capsys: pytest.CaptureFixture[str], status: int
) -> None:
    with answering(status) as server:
        code, err = connect(capsys, server)
    assert code == 1
    (line,) = err.splitlines()
    assert f"the server at {server} refused the bot's token ({status}: status {status})" in line
    assert line.endswith("check --token or CARDARENA_TOKEN")


def scripted(*answers: httpx.Response | Exception) -> Client:
    """Returns a client whose requests get `answers`, in order."""
    left = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        answer = left.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return Client("http://server", token="t", transport=httpx.MockTransport(handle))


def test_a_first_request_that_fails_is_not_retried() -> None:
    client = scripted(httpx.ConnectError("refused"))
    pauses: list[float] = []
    with pytest.raises(NeverReached, match="refused"):
        play_online(client, Program(PYTHON_EXAMPLE), None, pause=pauses.append)
    assert pauses == []


def test_a_first_answer_of_5xx_is_not_retried() -> None:
    client = scripted(httpx.Response(503, json={"title": "unavailable"}))
    with pytest.raises(NeverReached, match="503"):
        play_online(client, Program(PYTHON_EXAMPLE), None, pause=lambda _: None)


def test_a_connection_that_worked_is_retried_when_it_drops() -> None:
    client = scripted(httpx.Response(200, json={"turns": []}), httpx.ConnectError("dropped"))
    said: list[str] = []

    def pause(seconds: float) -> None:
        raise Stop

    with pytest.raises(Stop):
        play_online(client, Program(PYTHON_EXAMPLE), None, report=said.append, pause=pause)
    assert said == ["connection lost (dropped); again in 1 s"]


class Served(httpx.BaseTransport):
    """The in-process service as an httpx transport."""

    def __init__(self, client: TestClient[Litestar]) -> None:
        self.inner = ServiceTransport(client=client)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answers `request` from the service."""
        response = self.inner.handle_request(request)
        response.read()
        return response


def test_connect_posts_a_program_s_note_with_its_move(
    client: TestClient[Litestar], store: InMemoryEventStore
) -> None:
    transport = Served(client)
    base = str(client.base_url)
    with Client(base, transport=transport) as host:
        bot = host.register_bot("noter", game="shithead")
        seats = [{"kind": "external", "bot": "noter"}, {"kind": "external"}]
        game_id = host.create_game("shithead", seats, seed=3)
    notes = Program(program("takes_notes"))
    reports: list[str] = []
    try:
        with Client(base, token=bot.token, transport=transport) as player:
            (turn,) = player.turns(wait=0)
            play_turn(player, notes, turn, reports.append)
    finally:
        notes.stop()
    assert reports == []
    events = get_game("shithead").codec.decode_all(store.read(game_id))
    taken = [event for event in events if isinstance(event, NoteTaken)]
    assert taken == [NoteTaken(seat=0, text="turn 1:\tthe first legal action")]
