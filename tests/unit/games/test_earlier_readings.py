"""Logs written before a rules change still check out offline and import: the replay reads
their ruleset as the engine read it then (`GameSpec.earlier_readings`), and only where the
stored ruleset leaves that reading open.

The files under tests/golden/earlier/ were written by the code of 2026-12-02: an Autobus game
that ended as a draw after a quiet round although seats could still play, and a
holland-kocsma game in which a blind deck card burned the pile and the same seat went on."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from shared.app.exports import export_game, import_game
from shared.catalog import get_game
from shared.messages.common import Event, GameFinished
from shared.model import exported_log as export
from shared.model import log_replay, replay_account
from shared.store.memory import InMemoryEventStore
from tests.support.golden import golden

EARLIER = Path(__file__).resolve().parents[2] / "golden" / "earlier"
AUTOBUS = "autobus-classic-2p-random-2026-12-02"
SHITHEAD = "shithead-holland-kocsma-2p-random-2026-12-02"


def earlier_log(name: str) -> list[Event]:
    """Returns the decoded events of a log written before a rules change."""
    spec = get_game(name.split("-", maxsplit=1)[0])
    lines = (EARLIER / f"{name}.jsonl").read_text().splitlines()
    return [msgspec.convert(msgspec.json.decode(line)["data"], spec.log_type) for line in lines]


def replayed(events: list[Event]) -> log_replay.ReplayReport:
    """Returns the offline replay of `events` as an export."""
    return log_replay.replay_log(export.export_bytes("g-1", events).splitlines())


@pytest.mark.parametrize(
    ("name", "reading"),
    [(AUTOBUS, "draw=quiet_round"), (SHITHEAD, "deck_burn_plays_again=True")],
)
def test_a_log_written_before_a_rules_change_replays_clean_under_the_reading_of_its_day(
    name: str, reading: str
) -> None:
    events = earlier_log(name)
    report = replayed(events)
    assert report.ok, report.reason
    assert report.reading == reading
    assert isinstance(events[-1], GameFinished)
    assert report.result == events[-1].result
    assert report.verification is not None
    assert report.verification.status == "ok"
    assert f"rules: as read before a rules change ({reading})" in replay_account.account(report)


def test_the_earlier_autobus_log_ended_where_todays_rules_go_on() -> None:
    events = earlier_log(AUTOBUS)
    finished = events[-1]
    assert isinstance(finished, GameFinished)
    assert finished.result.reason == "no_sequence_play_in_a_round"
    spec = get_game("autobus")
    state = spec.fold(events[:-1])
    assert any(spec.legal_actions(state, seat) for seat in range(2))


def test_a_log_of_todays_rules_replays_under_todays_reading() -> None:
    report = replayed(golden("autobus-classic-2p-random"))
    assert report.ok
    assert report.reading == ""


def test_a_ruleset_that_states_todays_reading_gets_no_earlier_one() -> None:
    events = earlier_log(AUTOBUS)
    created, started = events[0], events[1]
    stated = msgspec.structs.replace(started.ruleset, draw="no_move_possible")  # type: ignore[attr-defined]
    created = msgspec.structs.replace(created, ruleset=msgspec.to_builtins(stated))
    started = msgspec.structs.replace(started, ruleset=stated)
    report = replayed([created, started, *events[2:]])
    assert not report.ok
    assert report.version == len(events)
    assert report.reading == ""


def test_a_tampered_earlier_log_is_still_refused() -> None:
    events = earlier_log(SHITHEAD)
    burn = next(i for i, e in enumerate(events) if type(e).__name__ == "PileBurned")
    tampered = [*events[: burn + 1], *events[burn + 2 :]]
    report = replayed(tampered)
    assert not report.ok
    assert report.reading == ""


@pytest.mark.parametrize("name", [AUTOBUS, SHITHEAD])
def test_a_log_written_before_a_rules_change_imports_and_exports_byte_for_byte(name: str) -> None:
    text = export.export_bytes("g-earlier", earlier_log(name))
    store = InMemoryEventStore()
    import_game(store, text)
    assert export_game(store.read, "g-earlier") == text
