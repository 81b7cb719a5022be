"""The catalogue: the games the platform hosts, each paired with its built-in bots.

Nothing registers itself on import: the engines know no bots and the bots know their game
only to simulate it; this module is the one place that pairs them. Services, workers and the
CLI reach a game through `get_game(name)`; a test that needs another game builds a
`Catalog` of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace

from shared.bots import autobus as autobus_bots
from shared.bots import shithead as shithead_bots
from shared.bots.generic import FirstLegalBot, RandomBot
from shared.errors import GameNotFound
from shared.games import autobus, beggar, shithead
from shared.games.base import A, AnyGame, Bot, GameSpec, R, S, V


def with_bots(spec: GameSpec[S, R, V, A], bots: Mapping[str, Bot[V]]) -> GameSpec[S, R, V, A]:
    """Returns `spec` offering `bots` as its built-in bots, in that order."""
    return replace(spec, bots=dict(bots))


class Catalog:
    """Games by name."""

    def __init__(self, specs: Iterable[AnyGame]) -> None:
        self._specs = {spec.name: spec for spec in specs}

    def get(self, name: str) -> AnyGame:
        """Returns the game `name`, raising GameNotFound."""
        try:
            return self._specs[name]
        except KeyError:
            raise GameNotFound(name) from None

    def names(self) -> list[str]:
        """Returns the names of every game, sorted."""
        return sorted(self._specs)

    def specs(self) -> list[AnyGame]:
        """Returns every game, in name order."""
        return [self._specs[name] for name in self.names()]


BUILTIN = Catalog(
    [
        with_bots(autobus.SPEC, {"random": RandomBot(), "heuristic": autobus_bots.HeuristicBot()}),
        with_bots(beggar.SPEC, {"turner": FirstLegalBot(), "random": RandomBot()}),
        with_bots(
            shithead.SPEC,
            {
                "random": RandomBot(),
                "heuristic": shithead_bots.HeuristicBot(),
                "mc": shithead_bots.MonteCarloBot(),
            },
        ),
    ]
)
"""The games the platform hosts."""

_hosted = BUILTIN


def get_game(name: str) -> AnyGame:
    """Returns the hosted game `name`, raising GameNotFound."""
    return _hosted.get(name)


def game_names() -> list[str]:
    """Returns the names of every hosted game, sorted."""
    return _hosted.names()


@contextmanager
def hosting(*specs: AnyGame) -> Iterator[Catalog]:
    """Hosts `specs` beside the built-in games until the block ends (tests' own games)."""
    global _hosted  # noqa: PLW0603 - the process's catalogue, swapped only for a block
    before = _hosted
    _hosted = Catalog([*BUILTIN.specs(), *specs])
    try:
        yield _hosted
    finally:
        _hosted = before
