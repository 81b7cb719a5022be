"""The recorded workload of `bench.scale`: games of built-in bots played once in memory, then
replayed (the same appends, in the same calls) into the store being measured.

Recording first keeps the rules engines' and bots' CPU out of every figure: a replay costs
the client what the platform's own bot-turn worker costs it besides deciding (encode, one
FCALL a move, `append_batches` a round trip per run of bot moves), and Redis exactly what
the platform costs it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import redis

from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.messages.common import Seat
from shared.messages.envelope import NewEvent
from shared.store.memory import InMemoryEventStore
from shared.store.port import AppendResult, EventStore, StoreError

MIX: tuple[tuple[str, tuple[str, str]], ...] = (
    ("autobus", ("heuristic", "random")),
    ("beggar", ("random", "random")),
    ("shithead", ("heuristic", "random")),
)
"""The game mix: equal numbers of two-seat games of each game, with these built-in bots."""

Batch = tuple[int, tuple[NewEvent, ...], str | None]


@dataclass(frozen=True)
class Call:
    """One call of the store a game made: its batches, sent as `append_batches` (one round
    trip) when `batched`, else as one `append`."""

    stream: str
    kind: str
    batches: tuple[Batch, ...]
    batched: bool

    @property
    def events(self) -> int:
        """Returns how many events the call appends."""
        return sum(len(events) for _, events, _ in self.batches)

    def renamed(self, suffix: str) -> Call:
        """Returns the call on the stream `<stream><suffix>` (a second play of the game)."""
        return Call(self.stream + suffix, self.kind, self.batches, self.batched)


@dataclass(frozen=True)
class GameFigures:
    """What the games of one kind cost: games, events, appends (FCALLs), store calls."""

    game: str
    bots: tuple[str, str]
    games: int
    events: int
    appends: int
    calls: int


@dataclass(frozen=True)
class Workload:
    """The recorded calls of every game (each game's in order) and what each kind cost."""

    games: tuple[tuple[Call, ...], ...]
    figures: tuple[GameFigures, ...]

    @property
    def calls(self) -> list[Call]:
        """Returns every call, game after game."""
        return [call for game in self.games for call in game]

    @property
    def events(self) -> int:
        """Returns how many events the workload appends."""
        return sum(f.events for f in self.figures)

    @property
    def appends(self) -> int:
        """Returns how many appends (one FCALL each) the workload makes."""
        return sum(f.appends for f in self.figures)

    def shares(self, parts: int) -> list[list[Call]]:
        """Returns the calls split into `parts` shares of whole games (round robin)."""
        shares: list[list[Call]] = [[] for _ in range(parts)]
        for n, game in enumerate(self.games):
            shares[n % parts].extend(game)
        return shares

    def passes(self, count: int) -> Iterator[Call]:
        """Yields the calls `count` times, each pass on streams of its own."""
        for n in range(count):
            for call in self.calls:
                yield call if n == 0 else call.renamed(f"-{n}")


class RecordingStore(InMemoryEventStore):
    """An in-memory store that records every append call made to it (`calls`)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self._batching = False

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        result = super().append(
            stream, kind, expected_version, events, idempotency_key, fingerprint
        )
        if not self._batching:
            batch = (expected_version, tuple(events), idempotency_key)
            self.calls.append(Call(stream, kind, (batch,), batched=False))
        return result

    def append_batches(
        self, stream: str, kind: str, batches: Sequence[tuple[int, Sequence[NewEvent], str | None]]
    ) -> list[AppendResult | StoreError]:
        self._batching = True
        try:
            results = super().append_batches(stream, kind, batches)
        finally:
            self._batching = False
        kept = tuple(
            (expected, tuple(events), key)
            for (expected, events, key), result in zip(batches, results, strict=True)
            if isinstance(result, AppendResult)
        )
        if kept:
            self.calls.append(Call(stream, kind, kept, batched=True))
        return results


def record(games_per_kind: int, seed: int = 0) -> Workload:
    """Plays `games_per_kind` seeded games of each game of `MIX` in memory; returns their
    calls, the kinds interleaved (game n of each kind, then game n + 1...)."""
    per_kind: list[list[tuple[Call, ...]]] = []
    figures = []
    for game, bots in MIX:
        played: list[tuple[Call, ...]] = []
        for n in range(games_per_kind):
            store = RecordingStore()
            seats = [
                Seat(kind="bot", bot=bot, name=f"{bot}-{i}", version="1")
                for i, bot in enumerate(bots)
            ]
            game_id = create_game(store, game, seats=seats, seed=seed + n).game_id
            play_bot_turns(store, game_id)
            played.append(tuple(store.calls))
        calls = [call for game_calls in played for call in game_calls]
        figures.append(
            GameFigures(
                game,
                bots,
                games_per_kind,
                sum(call.events for call in calls),
                sum(len(call.batches) for call in calls),
                len(calls),
            )
        )
        per_kind.append(played)
    games = tuple(game for row in zip(*per_kind, strict=True) for game in row)
    return Workload(games, tuple(figures))


def replay(store: EventStore, calls: Sequence[Call]) -> int:
    """Makes `calls` on `store`; returns the events appended. Raises on any refused append
    (a replay into a fresh namespace refuses none)."""
    events = 0
    for call in calls:
        if call.batched:
            for result in store.append_batches(call.stream, call.kind, call.batches):
                if isinstance(result, StoreError):
                    raise result
        else:
            ((expected, batch, key),) = call.batches
            store.append(call.stream, call.kind, expected, batch, key)
        events += call.events
    return events


def replay_bare(client: redis.Redis, prefix: str, calls: Sequence[Call]) -> int:
    """Makes the bare equivalent of `calls`: each event one XADD of its type and data to the
    stream `<prefix><stream>`, a call's events in one pipeline; returns the events added."""
    events = 0
    for call in calls:
        pipe = client.pipeline(transaction=False)
        key = f"{prefix}{{{call.stream}}}"
        for _, batch, _ in call.batches:
            for event in batch:
                pipe.xadd(key, {"type": event.type, "data": event.data})
                events += 1
        pipe.execute()
    return events
