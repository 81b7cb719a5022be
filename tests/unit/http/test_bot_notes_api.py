"""Bot notes through the API, tried as an attacker would: nobody reads a note while its game
runs, through any read; after it, the seat's bot (any version) and the host read it, and no
other bot nor anyone anonymous; a note that cannot be one is refused whole; no note reaches
the logs or the metrics."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from services.ops.logs import configure_logging
from shared.app.loading import load
from shared.messages.common import NoteTaken
from shared.model.log_replay import replay_log
from tests.support.api import ADMIN, bearer, problem
from tests.support.streams import ALICE, BOB, SHORT, World, opened

ALICE_NOTE = "alice-secret: keep the ten\n\tfor the pile"
BOB_NOTE = "bob-secret: give up"
SECRETS = ("alice-secret", "bob-secret")


@pytest.fixture
def world() -> Iterator[World]:
    """Returns the service with alice, bob, alice@2 and carol registered (tokens by key)."""
    with opened(SHORT) as built:
        for spec in ({"name": "alice", "version": "2"}, {"name": "carol"}):
            body = {**spec, "game": "shithead", "kind": "external"}
            created = built.client.post("/v1/bots", json=body, headers=ADMIN)
            assert created.status_code == 201, created.text
            built.tokens[f"{spec['name']}@{spec.get('version', '1')}"] = created.json()["token"]
        yield built


def move(world: World, game_id: str, seat: int, token: str, **extra: Any) -> Any:
    """Posts the first legal action of `seat` with `token` (and `extra` body fields)."""
    view = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": seat}, headers=bearer(token)
    ).json()
    body = {
        "seat": seat,
        "action": view["legal_actions"][0],
        "expected_version": view["version"],
        **extra,
    }
    return world.client.post(f"/v1/games/{game_id}/actions", json=body, headers=bearer(token))


def noted_game(world: World) -> str:
    """Returns a running game (alice at seat 0, bob at 1) whose first move carried alice's
    note."""
    game_id = world.game(ALICE, BOB)
    loaded = load(world.store, game_id)
    assert 0 in loaded.spec.to_move(loaded.state), "the pinned deal (seed 5): seat 0 moves"
    answered = move(world, game_id, 0, world.tokens["alice"], note=ALICE_NOTE)
    assert answered.status_code == 200, answered.text
    return game_id


def finished(world: World, game_id: str) -> None:
    """Ends the game: bob resigns, with a note."""
    version = world.store.version(game_id)
    body = {"seat": 1, "action": {"type": "Resign"}, "expected_version": version}
    body["note"] = BOB_NOTE
    resigned = world.client.post(
        f"/v1/games/{game_id}/actions", json=body, headers=bearer(world.tokens["bob"])
    )
    assert resigned.status_code == 200, resigned.text


def stored_notes(world: World, game_id: str) -> list[NoteTaken]:
    """Returns the notes the store holds for the game, in order."""
    loaded = load(world.store, game_id)
    events = loaded.spec.codec.decode_all(world.store.read(game_id))
    return [event for event in events if isinstance(event, NoteTaken)]


def readers(world: World) -> dict[str, dict[str, str]]:
    """Returns each reader's headers: anonymous, the admin, and every bot's token."""
    return {"anonymous": {}, "admin": ADMIN, **{k: bearer(t) for k, t in world.tokens.items()}}


def seen_notes(world: World, game_id: str, headers: dict[str, str]) -> list[str]:
    """Returns the note texts `listGameEvents` shows the reader `headers`, in order."""
    page = world.client.get(f"/v1/games/{game_id}/events", headers=headers)
    assert page.status_code == 200, page.text
    return [e["data"]["text"] for e in page.json()["events"] if e["type"] == "NoteTaken"]


def test_a_note_is_stored_before_its_move_and_the_move_writes_one_event_more(
    world: World,
) -> None:
    game_id = world.game(ALICE, BOB)
    answered = move(world, game_id, 0, world.tokens["alice"], note=ALICE_NOTE)
    assert answered.status_code == 200, answered.text
    body = answered.json()
    assert (body["first_version"], body["version"]) == (3, world.store.version(game_id))
    assert stored_notes(world, game_id) == [NoteTaken(seat=0, text=ALICE_NOTE)]
    plain = move(world, game_id, 1, world.tokens["bob"])
    assert plain.status_code == 200, plain.text
    assert len(stored_notes(world, game_id)) == 1


def test_nobody_reads_a_note_while_the_game_runs_through_any_read(world: World) -> None:
    game_id = noted_game(world)
    for name, headers in readers(world).items():
        assert seen_notes(world, game_id, headers) == [""], name
        for seat in (0, 1):
            params = {"seat": seat}
            for path in ("events", "view", "replay"):
                url = f"/v1/games/{game_id}/{path}"
                got = world.client.get(url, params=params, headers=headers)
                assert not any(secret in got.text for secret in SECRETS), (name, path, seat)
        exported = world.client.get(f"/v1/games/{game_id}/export", headers=headers)
        assert problem(exported, 403, "game-running")["rule"] == "game_running"
        assert "alice-secret" not in exported.text
    streams: list[tuple[str | None, dict[str, int]]] = [
        (world.tokens["alice"], {"seat": 0}),
        (None, {}),
        (KEY_TOKEN, {}),
    ]
    for token, params in streams:
        events, _ = world.stream(game_id, token, **params)
        assert events, "the stream sent its snapshot"
        assert not any("alice-secret" in json.dumps(e.data) for e in events)
    forked = world.client.post(f"/v1/games/{game_id}/fork", params={"version": 2}, headers=ADMIN)
    assert problem(forked, 403)["rule"] == "game_running"
    assert [note.text for note in stored_notes(world, game_id)] == [ALICE_NOTE]


KEY_TOKEN = ADMIN["Authorization"].removeprefix("Bearer ")


def test_after_the_game_only_the_seats_bot_of_any_version_and_the_host_read_its_notes(
    world: World,
) -> None:
    game_id = noted_game(world)
    finished(world, game_id)
    expected = {
        "anonymous": ["", ""],
        "carol@1": ["", ""],
        "admin": [ALICE_NOTE, BOB_NOTE],
        "alice": [ALICE_NOTE, ""],
        "alice@2": [ALICE_NOTE, ""],
        "bob": ["", BOB_NOTE],
    }
    all_readers = readers(world)
    for name, notes in expected.items():
        headers = all_readers[name]
        assert seen_notes(world, game_id, headers) == notes, name
        replay = world.client.get(f"/v1/games/{game_id}/replay", headers=headers).json()
        shown = [e["data"]["text"] for e in replay["events"] if e["type"] == "NoteTaken"]
        assert shown == notes, name
        exported = world.client.get(f"/v1/games/{game_id}/export", headers=headers)
        assert exported.status_code == 200, exported.text
        lines = [json.loads(line) for line in exported.text.splitlines()]
        in_export = [line["data"]["text"] for line in lines[1:] if line["type"] == "NoteTaken"]
        assert in_export == notes, name
        report = replay_log(exported.text.splitlines())
        assert report.ok, (name, report.reason)
        assert report.verification is not None
        assert report.verification.status == "ok"


def test_a_game_stream_never_carries_a_note_even_to_its_bot_after_the_game(
    world: World,
) -> None:
    game_id = noted_game(world)
    finished(world, game_id)
    for token in (world.tokens["alice"], KEY_TOKEN, None):
        events, _ = world.stream(game_id, token, last=0)
        assert any(e.event == "event" for e in events)
        assert not any("alice-secret" in json.dumps(e.data) for e in events)


def test_a_fork_of_a_finished_game_copies_its_notes_with_their_text_withheld(
    world: World,
) -> None:
    game_id = noted_game(world)
    after_move = world.store.version(game_id)
    finished(world, game_id)
    forked = world.client.post(
        f"/v1/games/{game_id}/fork",
        params={"version": after_move},
        json={"seats": [ALICE, BOB]},
        headers=ADMIN,
    )
    assert forked.status_code == 201, forked.text
    fork_id = forked.json()["game_id"]
    assert [note.text for note in stored_notes(world, fork_id)] == [""]
    finished(world, fork_id)
    assert seen_notes(world, fork_id, bearer(world.tokens["alice"])) == ["", ""]
    assert seen_notes(world, fork_id, bearer(world.tokens["bob"])) == ["", BOB_NOTE]


@pytest.mark.parametrize(
    ("note", "says"),
    [
        ("é" * 513, "at most 1024 bytes of UTF-8, not 1026"),
        ("a\x07b", "U+0007"),
        ("line\r\n", "U+000D"),
        ("\x7f", "U+007F"),
        ("\u0085", "U+0085"),
    ],
)
def test_a_note_too_long_or_with_a_control_character_is_422_naming_note_and_stores_nothing(
    world: World, note: str, says: str
) -> None:
    game_id = world.game(ALICE, BOB)
    version = world.store.version(game_id)
    refused = move(world, game_id, 0, world.tokens["alice"], note=note)
    body = problem(refused, 422)
    assert body["field"] == "note"
    assert says in body["detail"]
    assert world.store.version(game_id) == version
    assert stored_notes(world, game_id) == []


def test_a_note_of_exactly_1024_bytes_with_newlines_and_tabs_is_taken(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    note = "\t\n" + "é" * 511
    assert len(note.encode()) == 1024
    taken = move(world, game_id, 0, world.tokens["alice"], note=note)
    assert taken.status_code == 200, taken.text
    assert stored_notes(world, game_id) == [NoteTaken(seat=0, text=note)]


def test_a_retry_replays_only_with_the_same_note(world: World) -> None:
    game_id = world.game(ALICE, BOB)
    key = {"Idempotency-Key": "move-1"}
    view = world.client.get(
        f"/v1/games/{game_id}/view", params={"seat": 0}, headers=bearer(world.tokens["alice"])
    ).json()
    body = {"seat": 0, "action": view["legal_actions"][0], "expected_version": view["version"]}
    headers = {**bearer(world.tokens["alice"]), **key}
    url = f"/v1/games/{game_id}/actions"
    first = world.client.post(url, json={**body, "note": "one"}, headers=headers)
    again = world.client.post(url, json={**body, "note": "one"}, headers=headers)
    other = world.client.post(url, json={**body, "note": "two"}, headers=headers)
    assert first.status_code == 200
    assert again.json()["replayed"] is True
    assert problem(other, 422)["field"] == "Idempotency-Key"
    assert [note.text for note in stored_notes(world, game_id)] == ["one"]


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    """Routes the logs, as `cardarena serve` does, into a buffer; restores logging after."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    buffer = io.StringIO()
    configure_logging(json=True, stream=buffer, level=logging.DEBUG)
    try:
        yield buffer
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in handlers:
            root.addHandler(handler)
        root.setLevel(level)
        structlog.reset_defaults()


def test_a_note_never_reaches_the_logs_nor_the_metrics(
    world: World, json_logs: io.StringIO
) -> None:
    game_id = noted_game(world)
    refused = move(world, game_id, 1, world.tokens["bob"], note="bob-secret\x07")
    assert refused.status_code == 422
    finished(world, game_id)
    for headers in readers(world).values():
        world.client.get(f"/v1/games/{game_id}/events", headers=headers)
        world.client.get(f"/v1/games/{game_id}/export", headers=headers)
    logged = json_logs.getvalue()
    assert "action accepted" in logged
    assert not any(secret in logged for secret in SECRETS)
    metrics = world.client.get("/metrics", headers=ADMIN)
    assert metrics.status_code == 200
    assert not any(secret in metrics.text for secret in SECRETS)
