"""The catalogue's answer: every hosted game, as pages and clients list them."""

from __future__ import annotations

from typing import Any

import msgspec

from shared.games.base import AnyGame


class CatalogGame(msgspec.Struct, frozen=True):
    """One hosted game: its name, its title, the seats it takes, its rulesets and its bots."""

    name: str
    """The game's name: the `game` of a game, a tournament or a leaderboard."""
    title: str
    """The game's title, as pages show it."""
    min_players: int
    """The fewest seats a game of it takes."""
    max_players: int
    """The most seats a game of it takes."""
    has_decisions: bool
    """Whether its seats decide anything; a game without decisions is never rated, and its
    whole table is public while it runs."""
    ruleset: dict[str, Any]
    """The default ruleset, every option a field (what a game created without one plays)."""
    presets: dict[str, dict[str, Any]]
    """The named rulesets a game or a tournament may ask for by name, each in full."""
    bots: list[str]
    """The built-in bots that play it, by name, in the catalogue's order."""
    rules_page: str
    """The game's rules page in the repository (`docs/rules/<name>.md`); "" when it has none."""

    @classmethod
    def of(cls, spec: AnyGame) -> CatalogGame:
        """Returns the catalogue entry of `spec`."""
        return cls(
            name=spec.name,
            title=spec.title,
            min_players=spec.min_players,
            max_players=spec.max_players,
            has_decisions=spec.has_decisions,
            ruleset=msgspec.to_builtins(spec.ruleset_type()),
            presets={name: msgspec.to_builtins(rules) for name, rules in spec.presets.items()},
            bots=list(spec.bots),
            rules_page=spec.rules_page,
        )


class GameCatalog(msgspec.Struct, frozen=True):
    """Every game the service hosts, by name."""

    games: list[CatalogGame]
    """The hosted games, sorted by name."""
