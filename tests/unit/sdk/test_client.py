"""The Python client's pure parts: reading server-sent events."""

from __future__ import annotations

from shared.sdk.client import StreamEvent, parse_sse


def test_server_sent_events_are_read_with_their_type_id_and_json_data() -> None:
    lines = [
        ": keep-alive",
        "event: snapshot",
        "id: 3",
        'data: {"version": 3}',
        "",
        "",
        "data: plain",
        "data: text",
        "",
        "event: your_turn",
        'data: {"seat": 1}',
    ]
    assert list(parse_sse(iter([*lines, ""]))) == [
        StreamEvent("snapshot", "3", {"version": 3}),
        StreamEvent("message", None, "plain\ntext"),
        StreamEvent("your_turn", None, {"seat": 1}),
    ]
