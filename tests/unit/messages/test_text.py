"""What the stores can hold (`shared.messages.text`), and the positions `Last-Event-ID` names."""

from __future__ import annotations

import pytest
from litestar.exceptions import ValidationException

from services.game.streams.params import check_position
from shared.messages.text import find_unstorable, printable, unstorable


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain", None),
        ("émoji 😀", None),
        ("a\x00b", "NUL (U+0000)"),
        ("x\ud800", "a lone surrogate (U+D800)"),
        ("\udfff", "a lone surrogate (U+DFFF)"),
    ],
)
def test_unstorable_names_what_no_store_can_hold(text: str, found: str | None) -> None:
    assert unstorable(text) == found


def test_find_unstorable_names_the_path_of_the_first_bad_string_or_key() -> None:
    body = {"game": "shithead", "seats": [{"name": "ok"}, {"name": "a\x00"}], "seed": "\x00"}
    assert find_unstorable(body) == ("seats[1].name", "NUL (U+0000)")
    assert find_unstorable({"ruleset": {"k\x00": 1}}) == ("ruleset", "a key holding NUL (U+0000)")
    assert find_unstorable({"k\x00": 1}) == ("body", "a key holding NUL (U+0000)")
    assert find_unstorable("\x00") == ("", "NUL (U+0000)")
    assert find_unstorable({"a": [1, 2.5, None, True, {"b": "fine"}]}) is None


def test_printable_escapes_what_no_store_can_hold_and_cuts_long_text() -> None:
    assert printable("a\x00b\ud800") == "a\\x00b\\ud800"
    assert unstorable(printable("a\x00b\ud800")) is None
    assert len(printable("x" * 1000, limit=20)) == 20


@pytest.mark.parametrize(
    "position", [None, "0", "0-0", "1796156085660-3", f"{2**64 - 1}", f"{2**64 - 1}-0"]
)
def test_a_feed_position_a_stream_id_can_hold_is_accepted(position: str | None) -> None:
    check_position(position)


@pytest.mark.parametrize("position", [f"{2**64}", f"1-{2**64}", f"{2**64 - 1}-{2**64 - 1}"])
def test_a_feed_position_past_64_bits_is_refused_naming_last_event_id(position: str) -> None:
    with pytest.raises(ValidationException) as refused:
        check_position(position)
    assert refused.value.extra == [
        {"key": "last_event_id", "message": refused.value.detail, "source": "header"}
    ]
