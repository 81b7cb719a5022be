"""Field descriptions come from attribute docstrings, a base class's included and a renamed
field under its encoded name; an action another game's schema allows is refused as an
invalid value (422), never as malformed (400), so the document's union is not a lie."""

from __future__ import annotations

import msgspec
from litestar import Litestar
from litestar.testing import TestClient

from services.game.http.openapi.descriptions import field_docs, tag_doc
from shared.messages.common import Event, Resign


class _Base(msgspec.Struct, frozen=True):
    inherited: int
    """Documented in the base."""
    overridden: int
    """The base's text."""


class _Child(_Base, frozen=True, rename={"renamed": "shownAs"}):
    overridden: int
    """The child's text."""
    renamed: str = ""
    """Encoded under another name."""
    undocumented: str = ""


class _Happened(Event, frozen=True, kw_only=True):
    seat: int
    """The seat."""


def test_docstrings_of_base_classes_and_renamed_fields_are_read() -> None:
    docs = field_docs(_Child)
    assert docs["inherited"] == "Documented in the base."
    assert docs["overridden"] == "The child's text."
    assert docs["shownAs"] == "Encoded under another name."
    assert "undocumented" not in docs


def test_a_tagged_struct_s_tag_is_described_as_its_kind() -> None:
    assert tag_doc(_Happened) == "The kind of this event: always `_Happened`."
    assert tag_doc(Resign) == "The kind of this action: always `Resign`."
    assert tag_doc(_Base) is None


def test_another_game_s_action_is_an_invalid_value_not_a_malformed_body(
    client: TestClient[Litestar],
) -> None:
    seats = [{"kind": "external"}, {"kind": "external"}]
    game = client.post("/v1/games", json={"game": "shithead", "seats": seats}).json()
    autobus = {"type": "UnderTheBus", "card": "AS"}
    body = {"seat": 0, "action": autobus, "expected_version": game["version"]}
    response = client.post(f"/v1/games/{game['game_id']}/actions", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["type"] == "urn:cardarena:problem:invalid-request"
    assert response.json()["field"] == "action"
