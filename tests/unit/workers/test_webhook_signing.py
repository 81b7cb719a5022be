"""Webhook requests: the signature over timestamp and body, and the checks of an answer."""

from __future__ import annotations

import hashlib
import hmac

import msgspec
import pytest

from services.workers.webhooks import signature, verify_signature
from shared.app.deadlines import WebhookRefused, answer_events, webhook_turn
from shared.app.games import create_game
from shared.app.loading import load
from shared.messages.common import Clock, NoteTaken, Seat
from shared.store.memory import InMemoryEventStore

SECRET = "whsec_test"
BODY = b'{"game_id":"g","seat":0}'
NOW = 1_800_000_000


def test_the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_raw_body() -> None:
    expected = hmac.new(SECRET.encode(), b"1800000000." + BODY, hashlib.sha256).hexdigest()
    assert signature(SECRET, NOW, BODY) == f"sha256={expected}"


def test_a_signed_request_verifies_within_the_tolerance() -> None:
    signed = signature(SECRET, NOW, BODY)
    assert verify_signature(SECRET, str(NOW), BODY, signed, now=NOW + 299)


@pytest.mark.parametrize(
    ("secret", "timestamp", "body", "now"),
    [
        ("whsec_other", str(NOW), BODY, NOW),
        (SECRET, str(NOW), BODY + b" ", NOW),
        (SECRET, str(NOW + 1), BODY, NOW),
        (SECRET, str(NOW), BODY, NOW + 301),
        (SECRET, "yesterday", BODY, NOW),
    ],
    ids=["another_secret", "changed_body", "changed_timestamp", "replayed_late", "bad_timestamp"],
)
def test_anything_changed_or_replayed_late_does_not_verify(
    secret: str, timestamp: str, body: bytes, now: int
) -> None:
    signed = signature(SECRET, NOW, BODY)
    assert not verify_signature(secret, timestamp, body, signed, now=now)


def _webhook_game() -> tuple[InMemoryEventStore, str]:
    """Returns a store holding an autobus game whose seat 0 is a webhook's (no clock asked)."""
    store = InMemoryEventStore()
    seats = [Seat(kind="webhook", name="hook", version="1"), Seat(kind="bot", bot="random")]
    game_id = create_game(store, "autobus", seats=seats, seed=1).game_id
    return store, game_id


def test_a_webhook_game_created_without_a_clock_gets_the_webhook_clock() -> None:
    store, game_id = _webhook_game()
    loaded = load(store, game_id)
    assert loaded.created.clock == Clock(move_seconds=10, bank_seconds=60)


def test_a_webhook_turn_carries_the_view_the_legal_actions_version_and_deadline() -> None:
    store, game_id = _webhook_game()
    loaded = load(store, game_id)
    assert loaded.clock is not None
    turn = webhook_turn(loaded, 0, loaded.clock.turn_version)
    assert turn is not None
    assert (turn.game_id, turn.seat, turn.version) == (game_id, 0, loaded.version)
    assert turn.deadline == loaded.clock.deadline_ms(0)
    assert turn.legal_actions == msgspec.to_builtins(loaded.spec.legal_actions(loaded.state, 0))
    assert webhook_turn(loaded, 1, loaded.clock.turn_version) is None
    assert webhook_turn(loaded, 0, loaded.clock.turn_version - 1) is None


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("not an object", "invalid_answer"),
        ({"move": {}}, "invalid_answer"),
        ({"action": {"type": "Fly"}}, "invalid_answer"),
        ({"action": {"type": "Discard", "card": "ZZ", "slot": 0}}, "illegal_action"),
    ],
)
def test_an_answer_that_is_no_legal_action_is_refused_with_a_reason(
    answer: object, reason: str
) -> None:
    store, game_id = _webhook_game()
    with pytest.raises(WebhookRefused) as refused:
        answer_events(load(store, game_id), 0, answer)
    assert refused.value.reason == reason


def test_a_legal_answer_becomes_the_games_events() -> None:
    store, game_id = _webhook_game()
    loaded = load(store, game_id)
    legal = loaded.spec.legal_actions(loaded.state, 0)[-1]
    events = answer_events(loaded, 0, {"action": msgspec.to_builtins(legal)})
    assert events == loaded.spec.decide(loaded.state, 0, legal)


def test_a_legal_answer_with_a_note_takes_the_note_before_the_games_events() -> None:
    store, game_id = _webhook_game()
    loaded = load(store, game_id)
    legal = loaded.spec.legal_actions(loaded.state, 0)[-1]
    answer = {"action": msgspec.to_builtins(legal), "note": "hook-secret\tthinking"}
    events = answer_events(loaded, 0, answer)
    assert events == [
        NoteTaken(seat=0, text="hook-secret\tthinking"),
        *loaded.spec.decide(loaded.state, 0, legal),
    ]


@pytest.mark.parametrize("note", ["x" * 1025, "bell\x07", 7, ["a"]])
def test_an_answer_whose_note_cannot_be_one_is_refused_whole_without_echoing_it(
    note: object,
) -> None:
    store, game_id = _webhook_game()
    loaded = load(store, game_id)
    legal = loaded.spec.legal_actions(loaded.state, 0)[-1]
    with pytest.raises(WebhookRefused) as refused:
        answer_events(loaded, 0, {"action": msgspec.to_builtins(legal), "note": note})
    assert refused.value.reason == "invalid_answer"
    assert refused.value.detail.startswith("note: ")
    assert "bell" not in refused.value.detail
    assert "xxxx" not in refused.value.detail
