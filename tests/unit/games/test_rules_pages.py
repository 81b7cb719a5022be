"""The rules pages (docs/rules/) describe what the engines do: every ruleset field, preset,
action, event and illegal-action rule of each game is on its page, every JSON example there
decodes as the game's own types, and the engines, the README and the API point to the pages."""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from services.game.http.openapi.operations import illegal_action_rules
from shared.catalog import game_names, get_game
from shared.games.base import AnyGame
from shared.messages.common import PLATFORM_ACTIONS

ROOT = Path(__file__).resolve().parents[3]


def page_of(spec: AnyGame) -> str:
    """Returns the text of the game's rules page."""
    assert spec.rules_page.startswith("docs/rules/"), spec.name
    return (ROOT / spec.rules_page).read_text()


def names_in(union: object) -> set[str]:
    """Returns the Struct names of a (nested) union."""
    args = typing.get_args(union)
    if not args:
        assert isinstance(union, type)
        return {union.__name__}
    return {name for arg in args for name in names_in(arg)}


def json_examples(text: str) -> Iterator[dict[str, Any]]:
    """Yields every JSON object of the page's ```json blocks (several, wrapped, per block)."""
    decoder = json.JSONDecoder()
    for block in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL):
        at = 0
        while at < len(block):
            if block[at].isspace():
                at += 1
                continue
            value, at = decoder.raw_decode(block, at)
            yield value


GAMES = game_names()


@pytest.mark.parametrize("game", GAMES)
def test_every_ruleset_field_and_preset_is_on_the_rules_page(game: str) -> None:
    spec = get_game(game)
    text = page_of(spec)
    fields = [field.name for field in msgspec.structs.fields(spec.ruleset_type)]
    assert [f for f in fields if f"`{f}`" not in text] == []
    assert [p for p in spec.presets if f"`{p}`" not in text] == []


@pytest.mark.parametrize("game", GAMES)
def test_every_action_event_and_illegal_action_rule_is_on_the_rules_page(game: str) -> None:
    spec = get_game(game)
    text = page_of(spec)
    kinds = names_in(spec.action_type) | names_in(spec.event_type)
    assert sorted(k for k in kinds if f"`{k}`" not in text) == []
    rules = illegal_action_rules()[game]
    assert [rule for rule in rules if f"`{rule}`" not in text] == []


@pytest.mark.parametrize("game", GAMES)
def test_every_json_example_on_the_rules_page_decodes_as_the_games_own_types(game: str) -> None:
    spec = get_game(game)
    actions = msgspec.json.Decoder(spec.action_type | typing.Union[PLATFORM_ACTIONS])  # noqa: UP007
    events = msgspec.json.Decoder(spec.log_type)
    seen = 0
    for example in json_examples(page_of(spec)):
        if not isinstance(example, dict) or "type" not in example:
            continue
        payload = example.get("data", example)
        data = json.dumps(payload).encode()
        kind = payload["type"]
        decoder = actions if kind in names_in(spec.action_type) | {"Resign"} else events
        decoded = decoder.decode(data)
        assert type(decoded).__name__ == kind
        seen += 1
    assert seen >= 3, "the page shows its actions and events by example"


@pytest.mark.parametrize("game", GAMES)
def test_the_engine_and_the_readme_point_to_the_rules_page(game: str) -> None:
    spec = get_game(game)
    module = __import__(spec.decide.__module__.rpartition(".")[0], fromlist=["_"])
    if module.__name__ == "shared.games":
        module = __import__(spec.decide.__module__, fromlist=["_"])
    assert spec.rules_page in (module.__doc__ or "")
    readme = (ROOT / "README.md").read_text()
    assert spec.rules_page in readme
    assert "../shared/rules" not in readme
