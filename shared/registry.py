"""The bot registry: named, versioned bots that tournaments enter and ratings follow.

A registered bot is a built-in strategy of one game under a name and a version label
(`mc-deep@2`); ratings and leaderboards are kept per `name@version`, so a new version
starts a new rating. Registrations are events of one stream (`registry:bots`), appended
with optimistic concurrency, so a name and version are registered once across every
process. A built-in strategy's own name (`heuristic`, `mc`) may enter a tournament
without registration, under any version label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from shared.games.base import GameNotFound, get_game
from shared.handlers import InvalidRequest
from shared.messages.codec import EventCodec, encode
from shared.messages.common import Event
from shared.store.port import ConcurrencyConflict, EventStore

KIND = "registry"
STREAM = "registry:bots"
NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,62}$")
"""Bot names and version labels: lower case letters, digits, `_`, `.` and `-`, up to 63."""


class BotRegistered(Event, frozen=True):
    """A bot was registered: its name and version, the game and built-in strategy it plays."""

    name: str
    version: str
    game: str
    strategy: str
    description: str = ""
    registered_at: str = ""


RegistryEvent = BotRegistered
CODEC: EventCodec[BotRegistered] = EventCodec(RegistryEvent)


class BotSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A registration request: a name, a version label, a game and one of its strategies."""

    name: str
    game: str
    strategy: str
    version: str = "1"
    description: str = ""


class RegisteredBot(msgspec.Struct, frozen=True):
    """A bot in the registry; `key` (`name@version`) is what ratings are kept under."""

    name: str
    version: str
    game: str
    strategy: str
    description: str
    registered_at: str

    @property
    def key(self) -> str:
        """Returns `name@version`."""
        return f"{self.name}@{self.version}"


class BotExists(InvalidRequest):
    """That name and version are registered already (for another game or strategy)."""


def _check(spec: BotSpec) -> None:
    """Raises InvalidRequest naming the field of `spec` that cannot be registered."""
    for field, value in (("name", spec.name), ("version", spec.version)):
        if not NAME.match(value):
            raise InvalidRequest(
                field, f"{value!r} is not 1-63 lower-case letters, digits, '_', '.' or '-'"
            )
    try:
        game = get_game(spec.game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {spec.game!r}") from None
    if spec.strategy not in game.bots:
        names = ", ".join(game.bots)
        raise InvalidRequest("strategy", f"{game.title} has no strategy {spec.strategy!r}: {names}")
    if len(spec.description) > 500:
        raise InvalidRequest("description", "at most 500 characters")


def registered_bots(store: EventStore) -> list[RegisteredBot]:
    """Returns every registered bot, in registration order."""
    return [_bot(event) for event in CODEC.decode_all(store.read(STREAM))]


def _bot(event: BotRegistered) -> RegisteredBot:
    return RegisteredBot(
        event.name,
        event.version,
        event.game,
        event.strategy,
        event.description,
        event.registered_at,
    )


def find_bot(store: EventStore, name: str, version: str) -> RegisteredBot | None:
    """Returns the bot registered as `name@version`, None when there is none."""
    return next((b for b in registered_bots(store) if (b.name, b.version) == (name, version)), None)


def register_bot(
    store: EventStore, spec: BotSpec, registered_at: str = ""
) -> tuple[RegisteredBot, bool]:
    """Registers `spec`; returns the bot and whether it is new.

    Registering the same bot again (same game, strategy and description) returns it
    unchanged; the same name and version with anything else is refused (BotExists).
    """
    _check(spec)
    while True:
        recorded = store.read(STREAM)
        for event in CODEC.decode_all(recorded):
            if (event.name, event.version) != (spec.name, spec.version):
                continue
            same = (event.game, event.strategy, event.description) == (
                spec.game,
                spec.strategy,
                spec.description,
            )
            if same:
                return _bot(event), False
            raise BotExists(
                "version", f"{spec.name}@{spec.version} is registered already; use a new version"
            )
        event = BotRegistered(
            spec.name, spec.version, spec.game, spec.strategy, spec.description, registered_at
        )
        version = recorded[-1].version if recorded else 0
        try:
            store.append(STREAM, KIND, version, [encode(event)])
        except ConcurrencyConflict:
            continue
        return _bot(event), True


def strategy_for(
    game: str, name: str, version: str, bots: Sequence[RegisteredBot], field: str
) -> str:
    """Returns the strategy that plays `name@version` in `game`; raises InvalidRequest at `field`.

    A registered bot plays its strategy (in its own game only); an unregistered name that
    is one of the game's built-in strategies plays itself.
    """
    spec = get_game(game)
    for bot in bots:
        if (bot.name, bot.version) == (name, version):
            if bot.game != game:
                raise InvalidRequest(
                    field, f"{bot.key} plays {get_game(bot.game).title}, not {spec.title}"
                )
            return bot.strategy
    if name in spec.bots:
        return name
    known = sorted({b.key for b in bots if b.game == game})
    hint = f"; registered: {', '.join(known)}" if known else ""
    raise InvalidRequest(
        field,
        f"unknown bot {name}@{version}: not registered, not a strategy of {spec.title} "
        f"({', '.join(spec.bots)}){hint}",
    )
