"""What-if forks: a new game that starts from another game's position after one of its events.

A fork starts between two moves (`shared.model.log_replay.step_ends`). Its log is a new
`GameCreated` (the original's game and ruleset, the new seats,
`forked_from` and `fork_version` set) followed by byte-for-byte copies of the original's
events 2 to N (a note's text withheld); from there the platform plays it like any new game.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

import msgspec

from shared.app.games import _fingerprint, _seats
from shared.app.loading import LoadedGame, Outcome
from shared.errors import InvalidRequest
from shared.messages.codec import encode
from shared.messages.common import Clock, Event, GameCreated, NoteTaken, Seat
from shared.messages.envelope import NewEvent, RecordedEvent
from shared.model import clocks
from shared.model.idempotency import game_id_for
from shared.model.log_replay import step_ends
from shared.model.notes import withheld
from shared.store.port import EventStore


class ForkOfRunningGame(Exception):
    """Only a game that is over may be forked: a running one's hidden cards would leak."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is still running: only a finished game may be forked")
        self.game_id = game_id
        self.message = str(self)


def check_fork_version(original: LoadedGame, events: Sequence[Event], version: int) -> None:
    """Raises InvalidRequest (field `version`) unless the game after its first `version`
    events (`events`: its whole log, decoded) has been dealt, is not over, and is between two
    steps of the game (a fork inside a decision's events could wait for nobody, or skip the
    rest of a move: a player's draw after a play)."""
    spec = original.spec
    if not 2 <= version <= original.version:
        raise InvalidRequest(
            "version",
            f"a fork starts after the deal: version 2 to {original.version}, not {version}",
        )
    if spec.is_over(spec.fold(events[:version])):
        raise InvalidRequest("version", f"the game is over at version {version}: nothing to play")
    ends = step_ends(events)
    if version not in ends:
        before = max((end for end in ends if end < version), default=2)
        after = min((end for end in ends if end > version), default=None)
        between = f"{before} or {after}" if after is not None else str(before)
        raise InvalidRequest(
            "version",
            f"version {version} falls inside a move (its events {before + 1} to "
            f"{after if after is not None else '...'}): a fork starts between moves, at {between}",
        )


def _copied(item: RecordedEvent, event: Event) -> NewEvent:
    """Returns the fork's copy of an original's event: byte for byte, but a note's text,
    withheld (the fork's seats are not the original's bots)."""
    if isinstance(event, NoteTaken) and event.text:
        return encode(withheld(event))
    return NewEvent(item.type, item.data)


def fork_game(
    store: EventStore,
    original: LoadedGame,
    log: Sequence[RecordedEvent],
    version: int,
    *,
    seats: Sequence[Seat] | None = None,
    seed: int | str | None = None,
    idempotency_key: str | None = None,
    created_at: str = "",
) -> Outcome:
    """Creates a game from `original` (folded from its whole `log`) as it was after event
    `version`, with `seats` (none: the original's); `seed` seeds its bots (none: random).

    Raises ForkOfRunningGame, InvalidRequest (`version`, `seats`), IdempotencyKeyReused.
    """
    spec = original.spec
    if not spec.is_over(original.state):
        raise ForkOfRunningGame(original.game_id)
    events = spec.codec.decode_all(log)
    check_fork_version(original, events, version)
    given = original.created.seats if seats is None else seats
    if len(given) != len(original.created.seats):
        raise InvalidRequest(
            "seats", f"the game was dealt to {len(original.created.seats)} seats, not {len(given)}"
        )
    table = _seats(spec, given, None)
    fingerprint = (
        _fingerprint("fork", original.game_id, version, given, seed) if idempotency_key else ""
    )
    clock = original.created.clock if isinstance(original.created.clock, Clock) else None
    clock = clocks.clock_for(clock, table)
    bot_seed = secrets.randbits(63) if seed is None else seed
    created = GameCreated(
        game=spec.name,
        ruleset=original.created.ruleset,
        seats=table,
        created_at=created_at,
        bot_seed=hashlib.sha256(f"bots:{bot_seed}".encode()).hexdigest()[:16],
        clock=msgspec.UNSET if clock is None else clock,
        forked_from=original.game_id,
        fork_version=version,
    )
    copies = [
        _copied(item, event) for item, event in zip(log[1:version], events[1:version], strict=True)
    ]
    game_id = game_id_for(idempotency_key)
    result = store.append(
        game_id, spec.name, 0, [encode(created), *copies], idempotency_key, fingerprint
    )
    return Outcome(game_id, result.first_version, result.last_version, result.replayed)
