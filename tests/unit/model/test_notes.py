"""Bot notes in the log: what a note may hold, the offline replay that checks a note beside its
move, forks that never start between a note and its move, and imports of an export whose
notes are withheld."""

from __future__ import annotations

import pytest

from shared.app import exports
from shared.app.games import act, create_game
from shared.app.loading import load
from shared.errors import InvalidRequest
from shared.messages.common import Event, NoteTaken, Resign, Seat
from shared.model import exported_log as export
from shared.model import log_replay, notes
from shared.store.memory import InMemoryEventStore

CLIENTS = [Seat(kind="external", name="alice"), Seat(kind="external", name="bob")]


def played(store: InMemoryEventStore, seats: list[Seat] = CLIENTS) -> tuple[str, list[Event]]:
    """Returns a Shithead game in which seat 0 moved with a note and seat 1 then resigned
    with one (the game is over), and its decoded log."""
    game_id = create_game(store, "shithead", seats=seats, seed=11).game_id
    loaded = load(store, game_id)
    action = loaded.spec.legal_actions(loaded.state, 0)[0]
    act(store, game_id, seat=0, action=action, expected_version=loaded.version, note="first")
    version = store.version(game_id)
    act(store, game_id, seat=1, action=Resign(), expected_version=version, note="last\nline")
    return game_id, load(store, game_id).spec.codec.decode_all(store.read(game_id))


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("", False),
        ("plain\ttab\nnewline", False),
        ("€" * 341, False),
        ("€" * 342, True),
        ("\x00", True),
        ("\x1b[31m", True),
        ("\x9b", True),
        ("\u2028", False),
    ],
)
def test_a_note_holds_at_most_1024_bytes_and_no_control_character_but_tab_and_newline(
    text: str, refused: bool
) -> None:
    assert (notes.problem(text) is not None) is refused


def test_a_refused_note_raises_invalid_request_naming_note_and_no_note_is_empty() -> None:
    with pytest.raises(InvalidRequest) as raised:
        notes.checked("x" * 1025)
    assert raised.value.field == "note"
    assert notes.checked(None) == notes.checked("") == ""


def test_a_log_with_notes_replays_clean_and_each_note_opens_its_moves_step() -> None:
    _, events = played(InMemoryEventStore())
    noted = [i + 1 for i, e in enumerate(events) if isinstance(e, NoteTaken)]
    assert len(noted) == 2
    report = log_replay.replay("g", events)
    assert report.ok, report.reason
    assert any(line.startswith(f"v{noted[0]} note of seat 0;") for line in report.turns)
    ends = log_replay.step_ends(events)
    assert noted[0] - 1 in ends
    assert noted[0] not in ends, "a fork never starts between a note and its move"


def test_a_withheld_note_replays_clean_too() -> None:
    _, events = played(InMemoryEventStore())
    assert log_replay.replay("g", [notes.withheld(e) for e in events]).ok


def test_the_replay_names_a_note_that_cannot_stand_where_the_log_holds_it() -> None:
    _, events = played(InMemoryEventStore())
    at = next(i for i, e in enumerate(events) if isinstance(e, NoteTaken))
    cases = {
        "no client's seat": [*events[:at], NoteTaken(seat=5, text="x"), *events[at + 1 :]],
        "at most 1024 bytes": [*events[:at], NoteTaken(seat=0, text="x" * 1025), *events[at + 1 :]],
        "followed by its move": [*events[:at], events[at], *events[at:]],
        "missing": [*events[: at + 1]],
    }
    for says, log in cases.items():
        report = log_replay.replay("g", log)
        assert not report.ok
        assert report.version == at + 1, says
        assert says in report.reason, (says, report.reason)


def test_a_note_of_a_built_in_bots_seat_is_refused_by_the_replay() -> None:
    store = InMemoryEventStore()
    game_id = create_game(store, "shithead", seats=[CLIENTS[0], Seat()], seed=11).game_id
    loaded = load(store, game_id)
    action = loaded.spec.legal_actions(loaded.state, 0)[0]
    act(store, game_id, seat=0, action=action, expected_version=loaded.version, note="n")
    events = loaded.spec.codec.decode_all(store.read(game_id))
    bad = [NoteTaken(seat=1, text="n") if isinstance(e, NoteTaken) else e for e in events]
    report = log_replay.replay("g", bad)
    assert report.version == 3
    assert "no client's seat" in report.reason


def test_an_export_with_notes_withheld_imports_and_matches_the_game_it_came_from() -> None:
    store = InMemoryEventStore()
    game_id, _ = played(store)
    owners = exports.export_game(store.read, game_id, notes={0, 1})
    public = exports.export_game(store.read, game_id)
    assert b"first" in owners
    assert b"first" not in public
    assert export.read_log(public.splitlines()).header.events == store.version(game_id)
    assert not exports.import_game(store, public).created
    assert not exports.import_game(store, owners).created
    elsewhere = InMemoryEventStore()
    assert exports.import_game(elsewhere, public).created
    assert exports.export_game(elsewhere.read, game_id, notes={0, 1}) == public
