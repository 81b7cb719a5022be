"""The ladder's use cases (`shared.app.ladder`): open, join, leave, pair; two pairers at once
never seat a bot twice, and a pairer that dies between its record and its games is finished by
the next pairing."""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from services.projection.changes import decode, game_changes
from services.settings import BeatSettings
from services.workers.beat import reconcile_schedule
from services.workers.dispatch import PAIR_LADDERS
from shared.app import ladder as ladders
from shared.app.accounts import create_account, suspend_account
from shared.app.games import abort_game
from shared.app.ladder import LadderRefused, Pairing, UnknownLadder, pair_ladder
from shared.app.registry import find_bot, register
from shared.app.runtime import LadderPairer
from shared.app.starting import GameCap
from shared.errors import InvalidRequest
from shared.messages.codec import encode_all
from shared.messages.envelope import NewEvent
from shared.model.ladder import Rules
from shared.model.ladder_events import KIND, BotQueued, stream_id
from shared.model.registry import BotSpec, RegisteredBot
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.game_slots import InMemoryGameSlots
from shared.ports.views.memory import InMemoryTournamentViews
from shared.store.memory import InMemoryEventStore
from shared.store.port import AppendResult

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


class Recorder(BotTurnDispatcher):
    """Records the games it is asked to play instead of playing them."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []

    def dispatch(self, game_id: str) -> None:
        self.dispatched.append(game_id)

    def start_tournament(self, definition: Any, tournament_id: str) -> None:
        raise AssertionError("no tournament here")


def pairing(cap: int = 0) -> Pairing:
    return Pairing(GameCap(InMemoryGameSlots(), cap), Recorder(), lambda game: {}, Rules())


def bots(store: InMemoryEventStore, count: int, account: str | None = None) -> list[RegisteredBot]:
    made = []
    for i in range(count):
        owner = account or f"acct{i}"
        if find_bot(store, f"{owner}-b{i}", "1") is None:
            if account is None or i == 0:
                create_account(store, owner, mode="open")
            register(
                store,
                BotSpec(name=f"{owner}-b{i}", game="shithead", kind="external"),
                account=owner,
            )
        bot = find_bot(store, f"{owner}-b{i}", "1")
        assert bot is not None
        made.append(bot)
    return made


def seated(store: InMemoryEventStore, ladder_id: str) -> list[list[str]]:
    return [game.bots for game in ladders.read_ladder(store, ladder_id).live]


def test_a_ladder_pairs_its_queue_into_rated_games_with_bound_seats() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 4):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    game_ids = pair_ladder(store, ladder.ladder_id, NOW, pairing())
    assert len(game_ids) == 2
    for game_id in game_ids:
        assert store.version(game_id) > 0
    assert sorted(b for t in seated(store, ladder.ladder_id) for b in t) == sorted(
        q.bot for q in ladders.read_ladder(store, ladder.ladder_id).queue
    )
    assert pair_ladder(store, ladder.ladder_id, NOW, pairing()) == []


def test_the_ladder_never_pairs_two_bots_of_one_account() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2, account="ada"):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    later = NOW + timedelta(hours=5)
    assert pair_ladder(store, ladder.ladder_id, later, pairing()) == []


def test_a_suspended_bot_a_closed_ladder_and_an_unknown_one_are_refused() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    (bot,) = bots(store, 1)
    suspend_account(store, bot.account, "spam")
    suspended = find_bot(store, bot.name, bot.version)
    assert suspended is not None
    with pytest.raises(LadderRefused) as refused:
        ladders.join(store, ladder.ladder_id, suspended, NOW)
    assert (refused.value.rule, refused.value.status) == ("account_suspended", 403)
    ladders.close_ladder(store, ladder.ladder_id, NOW)
    with pytest.raises(LadderRefused) as closed:
        ladders.join(store, ladder.ladder_id, bot, NOW)
    assert closed.value.rule == "ladder_closed"
    with pytest.raises(UnknownLadder):
        ladders.join(store, "0" * 32, bot, NOW)
    assert ladders.read_ladder(store, ladder.ladder_id).queue == []


def test_opening_a_ladder_checks_the_game_and_the_table_size() -> None:
    store = InMemoryEventStore()
    with pytest.raises(InvalidRequest) as unknown:
        ladders.open_ladder(store, "chess", None, 2, NOW)
    assert unknown.value.field == "game"
    with pytest.raises(InvalidRequest) as unrated:
        ladders.open_ladder(store, "beggar", None, 2, NOW)
    assert unrated.value.field == "game"
    with pytest.raises(InvalidRequest) as size:
        ladders.open_ladder(store, "shithead", None, 40, NOW)
    assert size.value.field == "table_size"
    assert ladders.list_ladders(store) == []


def test_a_bot_that_left_is_paired_no_more() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    first, second = bots(store, 2)
    ladders.join(store, ladder.ladder_id, first, NOW)
    ladders.join(store, ladder.ladder_id, second, NOW)
    ladders.leave(store, ladder.ladder_id, second.key, NOW)
    assert pair_ladder(store, ladder.ladder_id, NOW, pairing()) == []


class Interleaving(InMemoryEventStore):
    """Runs `before` once, just before the first append to the ladder's stream: another pairer
    that gets there first."""

    def __init__(self) -> None:
        super().__init__()
        self.before: Any = None

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        hook, self.before = self.before, None
        if hook is not None and stream.startswith("ladder:"):
            hook()
        return super().append(stream, kind, expected_version, events, idempotency_key, fingerprint)


def test_a_pairer_that_loses_the_race_reads_again_and_seats_nobody_twice() -> None:
    store = Interleaving()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    rival: list[str] = []
    store.before = lambda: rival.extend(pair_ladder(store, ladder.ladder_id, NOW, pairing()))
    mine = pair_ladder(store, ladder.ladder_id, NOW, pairing())
    assert len(rival) == 1
    assert mine == []
    assert len(ladders.read_ladder(store, ladder.ladder_id).history) == 1


def test_many_pairers_at_once_never_seat_a_bot_twice() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 12):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    with ThreadPoolExecutor(8) as pool:
        made = list(
            pool.map(lambda _: pair_ladder(store, ladder.ladder_id, NOW, pairing()), range(8))
        )
    all_ids = [g for ids in made for g in ids]
    assert len(all_ids) == 6
    live = seated(store, ladder.ladder_id)
    flat = [b for table in live for b in table]
    assert len(flat) == len(set(flat)) == 12


class DiesBeforeTheGame(InMemoryEventStore):
    """Fails the first creation of a game: a pairer that died after recording its pairing."""

    died = False

    def append(
        self,
        stream: str,
        kind: str,
        expected_version: int,
        events: Sequence[NewEvent],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> AppendResult:
        if kind == "shithead" and not self.died:
            self.died = True
            raise SystemExit("the worker died")
        return super().append(stream, kind, expected_version, events, idempotency_key, fingerprint)


def test_a_pairing_whose_pairer_died_is_finished_by_the_next_without_seating_anyone_twice() -> None:
    store = DiesBeforeTheGame()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    with pytest.raises(SystemExit):
        pair_ladder(store, ladder.ladder_id, NOW, pairing())
    (game,) = ladders.read_ladder(store, ladder.ladder_id).live
    assert store.version(game.game_id) == 0
    assert pair_ladder(store, ladder.ladder_id, NOW + timedelta(minutes=1), pairing()) == []
    assert store.version(game.game_id) > 0
    assert [g.game_id for g in ladders.read_ladder(store, ladder.ladder_id).live] == [game.game_id]


def test_bots_are_paired_again_once_their_game_ended_and_a_game_that_cannot_start_frees_them() -> (
    None
):
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    capped = Pairing(
        GameCap(InMemoryGameSlots(), 1),
        Recorder(),
        lambda g: {},
        Rules(cooldown_s=0, cooldown_games=0),
    )
    busy = InMemoryGameSlots()
    for queued in ladders.read_ladder(store, ladder.ladder_id).queue:
        assert busy.reserve(queued.bot, "elsewhere", 1, 60_000)
    full = Pairing(
        GameCap(busy, 1), Recorder(), lambda g: {}, Rules(cooldown_s=0, cooldown_games=0)
    )
    assert len(pair_ladder(store, ladder.ladder_id, NOW, full)) == 1
    assert ladders.read_ladder(store, ladder.ladder_id).live == []
    assert len(pair_ladder(store, ladder.ladder_id, NOW, capped)) == 1
    assert len(ladders.read_ladder(store, ladder.ladder_id).live) == 1
    assert stream_id(ladder.ladder_id).startswith("ladder:")


def test_a_bot_at_the_game_services_cap_waits_and_is_paired_once_a_game_of_it_ended() -> None:
    store = InMemoryEventStore()
    first = ladders.open_ladder(store, "shithead", None, 2, NOW)
    second = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, first.ladder_id, bot, NOW)
        ladders.join(store, second.ladder_id, bot, NOW)
    capped = Pairing(GameCap(InMemoryGameSlots(), 1), Recorder(), lambda g: {}, Rules())
    [running] = pair_ladder(store, first.ladder_id, NOW, capped)
    assert pair_ladder(store, second.ladder_id, NOW, capped) == [], "both bots sit at their cap"
    assert ladders.read_ladder(store, second.ladder_id).history == [], "no game refused at start"
    abort_game(store, running, "host")
    [paired] = pair_ladder(store, second.ladder_id, NOW, capped)
    assert store.version(paired) > 0
    assert [g.game_id for g in ladders.read_ladder(store, second.ladder_id).live] == [paired]


def test_the_projection_reads_a_ladders_events_and_makes_no_game_of_them() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    pair_ladder(store, ladder.ladder_id, NOW, pairing())
    records = [*store.read("ladders"), *store.read(stream_id(ladder.ladder_id))]
    assert [type(decode(r)).__name__ for r in records][-1] == "LadderPaired"
    assert game_changes(records) == []


def test_the_embedded_pairers_thread_seats_waiting_bots_until_closed() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    pairer = LadderPairer(store, pairing(), 0.02)
    pairer.start()
    try:
        deadline = time.monotonic() + 5
        while not ladders.read_ladder(store, ladder.ladder_id).live:
            assert time.monotonic() < deadline, "the thread paired nobody within 5 s"
            time.sleep(0.02)
    finally:
        pairer.close()
    assert len(ladders.read_ladder(store, ladder.ladder_id).history) == 1


def test_beat_sends_the_ladders_pairing_every_pair_seconds_and_not_at_zero() -> None:
    entries = reconcile_schedule(BeatSettings(ladder_pair_seconds=1.5))
    assert entries["cardarena-pair-ladders"]["task"] == PAIR_LADDERS
    assert entries["cardarena-pair-ladders"]["schedule"] == 1.5
    assert "cardarena-pair-ladders" not in reconcile_schedule(BeatSettings(ladder_pair_seconds=0))


def test_a_queued_bot_whose_account_is_suspended_is_paired_no_more() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    first, second = bots(store, 2)
    ladders.join(store, ladder.ladder_id, first, NOW)
    ladders.join(store, ladder.ladder_id, second, NOW)
    suspend_account(store, first.account, "feeding")
    assert pair_ladder(store, ladder.ladder_id, NOW, pairing()) == []


def test_the_workers_pairing_holds_the_game_services_cap_of_running_games(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from services.settings import WorkerSettings  # noqa: PLC0415 - the workers' own test
    from services.workers.celery_app import create_celery  # noqa: PLC0415
    from services.workers.tasks import Worker  # noqa: PLC0415

    store = InMemoryEventStore()
    slots = InMemoryGameSlots()
    settings = WorkerSettings(max_games_per_bot=1)
    worker = Worker(
        create_celery(settings),
        settings,
        store=lambda: store,
        outbox=lambda: pytest.fail("no outbox"),
        views=lambda: InMemoryTournamentViews(store),
        slots=lambda: slots,
    )
    dispatched: list[str] = []
    monkeypatch.setattr(worker, "dispatch", dispatched.append)  # no broker: record the sends
    first = ladders.open_ladder(store, "shithead", None, 2, NOW)
    second = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, first.ladder_id, bot, NOW)
        ladders.join(store, second.ladder_id, bot, NOW)
    assert worker.pair_ladders() == 1, "the second ladder waits: both bots sit at the cap of 1"
    [game] = ladders.read_ladder(store, first.ladder_id).live
    assert sorted(slots.games(game.bots[0]) + slots.games(game.bots[1])) == [game.game_id] * 2
    assert ladders.read_ladder(store, second.ladder_id).history == []


class CountingStore(InMemoryEventStore):
    """An in-memory store that counts the events its reads returned, per stream."""

    def __init__(self) -> None:
        super().__init__()
        self.returned: dict[str, int] = {}

    def read(self, stream: str, after: int = 0, limit: int | None = None) -> list[Any]:
        found = super().read(stream, after, limit)
        self.returned[stream] = self.returned.get(stream, 0) + len(found)
        return found


def test_a_pairing_reads_only_the_events_its_ladder_gained_since_this_process_read_it() -> None:
    store = CountingStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 6):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    assert len(pair_ladder(store, ladder.ladder_id, NOW, pairing())) == 3
    stream = stream_id(ladder.ladder_id)
    before = store.returned[stream]
    assert pair_ladder(store, ladder.ladder_id, NOW, pairing()) == []
    assert store.returned[stream] - before == 2  # the last one it folded, and LadderPaired
    before = store.returned[stream]
    assert pair_ladder(store, ladder.ladder_id, NOW, pairing()) == []
    assert store.returned[stream] - before == 1  # the last one it folded, to see it is still there
    (late,) = bots(store, 1, account="late")
    queued = encode_all([BotQueued(bot=late.key, account=late.account, at=NOW.isoformat())])
    store.append(stream, KIND, store.version(stream), queued)  # as another process would
    assert late.key in {q.bot for q in ladders.read_ladder(store, ladder.ladder_id).queue}


def test_the_daily_cap_counts_the_games_a_bot_began_that_utc_day() -> None:
    store = InMemoryEventStore()
    ladder = ladders.open_ladder(store, "shithead", None, 2, NOW)
    for bot in bots(store, 2):
        ladders.join(store, ladder.ladder_id, bot, NOW)
    busy = InMemoryGameSlots()
    for queued in ladders.read_ladder(store, ladder.ladder_id).queue:
        assert busy.reserve(queued.bot, "elsewhere", 1, 60_000)
    rules = Rules(cooldown_s=0, cooldown_games=0, max_daily=1)
    unstarted = Pairing(GameCap(busy, 1), Recorder(), lambda g: {}, rules)  # each game ends at once
    assert len(pair_ladder(store, ladder.ladder_id, NOW, unstarted)) == 1
    assert pair_ladder(store, ladder.ladder_id, NOW + timedelta(hours=11), unstarted) == []
    assert len(pair_ladder(store, ladder.ladder_id, NOW + timedelta(hours=12), unstarted)) == 1
