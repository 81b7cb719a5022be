"""The values the API encodes one way everywhere, documented once: card codes, ranks, Autobus's
rank numbers (schemas `Card`, `Rank`, `RankNumber`, which every such field refers to), and the
closed sets of status fields (enums). docs/reference/values.md ("Cards, ranks, places and
reasons") says the same in prose."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

from services.game.http.openapi.game_schemas import REF, Components
from services.game.http.schemas import GAME_STATUSES, RESULT_STATUSES
from shared.model.challenges import Status as ChallengeStatus
from shared.model.tournaments.model import Format, TournamentState

VALUES: dict[str, dict[str, Any]] = {
    "Card": {
        "type": "string",
        "pattern": r"^(?:[2-9TJQKA][CDHS]|X[1-9][0-9]*|\?\?)$",
        "description": "A card code: its rank character then its suit character (`C` clubs,"
        " `D` diamonds, `H` hearts, `S` spades), e.g. `AS`, `TD` (T is ten), `2C`; a joker"
        " is `X` and its number in the deck (`X1`, `X2`); `??` is a card the caller may"
        " not know (redacted).",
        "examples": ["AS", "TD", "2C", "X1", "??"],
    },
    "Rank": {
        "type": "string",
        "pattern": "^[2-9TJQKAX]$",
        "description": "A rank: the first character of a card code, `2`-`9`, `T` (ten), `J`,"
        " `Q`, `K`, `A`, or `X` for a joker.",
        "examples": ["2", "T", "A"],
    },
    "RankNumber": {
        "type": "integer",
        "minimum": 1,
        "maximum": 13,
        "description": "A rank as Autobus counts a sequence: 1 (ace), 2-10, 11 (jack), 12"
        " (queen), 13 (king); a joker is counted as the rank it stands for. Autobus uses them"
        " everywhere: its events, view, state and actions (`joker_rank`).",
        "examples": [1, 10, 13],
    },
}
"""The shared value schemas, by the title their annotated types carry (`shared.games.cards`)."""


def tournament_statuses() -> list[str]:
    """Returns the statuses a tournament can be in."""
    return list(typing.get_args(typing.get_type_hints(TournamentState)["status"]))


def _game_statuses() -> list[str]:
    return list(GAME_STATUSES)


def _result_statuses() -> list[str]:
    return list(RESULT_STATUSES)


def _challenge_statuses() -> list[str]:
    return list(typing.get_args(ChallengeStatus))


STATUS_SETS: dict[tuple[str, str], Callable[[], list[str]]] = {
    ("Game", "status"): _game_statuses,
    ("SeatView", "status"): _game_statuses,
    ("GameSummary", "status"): _game_statuses,
    ("Result", "status"): _result_statuses,
    ("TournamentGame", "status"): _result_statuses,
    ("TournamentGameFinished", "status"): _result_statuses,
    ("Tournament", "status"): tournament_statuses,
    ("TournamentSummary", "status"): tournament_statuses,
    ("Standings", "status"): tournament_statuses,
    ("Problem", "challenge_status"): _challenge_statuses,
    ("Ready", "status"): lambda: ["ready", "degraded"],
    ("TournamentSummary", "format"): lambda: list(typing.get_args(Format)),
}
"""The closed set of each status field (and of a tournament summary's format, a plain string
in the views), by component and property."""


def add_values(components: Components) -> None:
    """Adds the shared value schemas to `components`."""
    for name, schema in VALUES.items():
        components.schemas[name] = dict(schema)


def reference_values(document: dict[str, Any]) -> None:
    """Refers every string or integer titled after a shared value to its schema, and sets the
    enum of every status field."""
    _refer(document)
    for (name, prop), values in STATUS_SETS.items():
        schema = document["components"]["schemas"].get(name, {})
        found = schema.get("properties", {}).get(prop)
        if found is not None:
            for arm in [found, *found.get("oneOf", []), *found.get("anyOf", [])]:
                if arm.get("type") == "string":
                    arm["enum"] = values()


def _refer(node: Any) -> None:
    """Replaces in place each schema titled after a shared value by a reference to it."""
    if isinstance(node, dict):
        title = node.get("title")
        if isinstance(title, str) and title in VALUES and node.get("type") == VALUES[title]["type"]:
            kept = {key: node[key] for key in ("description",) if key in node}
            node.clear()
            node.update({"$ref": REF.format(name=title), **kept})
            return
        for value in node.values():
            _refer(value)
    elif isinstance(node, list):
        for item in node:
            _refer(item)
