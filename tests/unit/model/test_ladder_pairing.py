"""Ladder pairing (shared.model.ladder): close ratings with a widening window, never one
account's bots together, a rematch cooldown, caps per bot, opponent diversity, deterministic."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.model.accounts import HOST
from shared.model.ladder import Candidate, Met, Rules, pair, share_cap

NOW = 1_000_000.0


def bot(key: str, ordinal: float = 0.0, **kw: object) -> Candidate:
    fields: dict[str, object] = {"account": key, "since": NOW, **kw}
    return Candidate(key=key, ordinal=ordinal, **fields)  # type: ignore[arg-type]


def test_bots_close_in_rating_sit_together() -> None:
    waiting = [bot("a", 0), bot("b", 50), bot("c", 1), bot("d", 51)]
    tables = pair(waiting, Rules(), NOW, "s")
    assert {frozenset(t) for t in tables} == {frozenset({"a", "c"}), frozenset({"b", "d"})}


def test_the_rating_window_widens_with_waiting() -> None:
    rules = Rules(window=3, widen_per_minute=3)
    assert pair([bot("a", 0), bot("b", 20)], rules, NOW, "s") == []
    long_waiter = bot("a", 0, since=NOW - 6 * 60)
    assert len(pair([long_waiter, bot("b", 20)], rules, NOW, "s")) == 1


def test_two_bots_of_one_account_never_sit_together() -> None:
    waiting = [bot("a1", account="alice"), bot("a2", account="alice")]
    assert pair(waiting, Rules(), NOW, "s") == []


def test_the_hosts_own_bots_may_meet() -> None:
    waiting = [bot("h1", account=HOST), bot("h2", account=HOST)]
    assert len(pair(waiting, Rules(), NOW, "s")) == 1


def test_a_rematch_waits_for_its_cooldown() -> None:
    rules = Rules(cooldown_s=300, cooldown_games=0)
    met = (Met(("b",), NOW - 100),)
    assert pair([bot("a", recent=met), bot("b")], rules, NOW, "s") == []
    old = (Met(("b",), NOW - 400),)
    assert len(pair([bot("a", recent=old), bot("b")], rules, NOW, "s")) == 1


def test_the_last_games_opponent_is_not_met_again_at_once() -> None:
    rules = Rules(cooldown_s=0, cooldown_games=1)
    met = (Met(("a",), NOW - 10_000),)
    assert pair([bot("a"), bot("b", recent=met)], rules, NOW, "s") == []


def test_a_bot_at_its_caps_waits() -> None:
    rules = Rules(max_concurrent=1, max_daily=5)
    assert pair([bot("a", in_progress=1), bot("b")], rules, NOW, "s") == []
    assert pair([bot("a", today=5), bot("b")], rules, NOW, "s") == []


def test_the_same_inputs_give_the_same_tables_and_the_seed_draws_seats() -> None:
    waiting = [bot(f"b{i}", i % 3) for i in range(9)]
    assert pair(waiting, Rules(), NOW, "l:1") == pair(list(reversed(waiting)), Rules(), NOW, "l:1")
    seatings = {pair(waiting[:2], Rules(), NOW, f"l:{v}")[0] for v in range(20)}
    assert len(seatings) == 2


candidates = st.lists(
    st.builds(
        Candidate,
        key=st.sampled_from([f"b{i}" for i in range(14)]),
        account=st.sampled_from(["host", "alice", "bob", "carol", "dave", "erin"]),
        ordinal=st.floats(-10, 40, allow_nan=False),
        since=st.floats(NOW - 3600, NOW, allow_nan=False),
        in_progress=st.integers(0, 2),
        today=st.integers(0, 6),
        recent=st.lists(
            st.builds(
                Met,
                st.tuples(st.sampled_from([f"b{i}" for i in range(14)])),
                st.floats(NOW - 3600, NOW, allow_nan=False),
            ),
            max_size=6,
        ).map(tuple),
    ),
    max_size=20,
)


@settings(max_examples=200, deadline=None)
@given(candidates, st.integers(2, 4), st.integers(1, 2), st.integers(1, 6))
def test_no_pairing_seats_a_bot_twice_passes_a_cap_or_one_account_twice(
    waiting: list[Candidate], size: int, concurrent: int, daily: int
) -> None:
    rules = Rules(table_size=size, max_concurrent=concurrent, max_daily=daily)
    tables = pair(waiting, rules, NOW, "seed")
    seated = [key for table in tables for key in table]
    assert len(seated) == len(set(seated))
    first: dict[str, Candidate] = {}
    for c in waiting:
        first.setdefault(c.key, c)
    for table in tables:
        assert len(table) == size
        for key in table:
            assert first[key].in_progress + 1 <= concurrent
            assert first[key].today + 1 <= daily
        for x, y in combinations(table, 2):
            owner_x, owner_y = first[x].account, first[y].account
            assert owner_x != owner_y or owner_x == HOST


def simulate(bots: int, rounds: int, seed: int, rules: Rules) -> dict[str, list[Met]]:
    """Plays `rounds` pairings of `bots` always-waiting bots (games end before the next
    pairing); returns each bot's games, most recent first."""
    rng = random.Random(seed)
    ratings = {f"b{i}": rng.uniform(0, 30) for i in range(bots)}
    since = dict.fromkeys(ratings, NOW)
    history: dict[str, list[Met]] = {k: [] for k in ratings}
    now = NOW
    for round_ in range(rounds):
        now += 60
        waiting = [
            Candidate(k, f"acct{i % 5}", ratings[k], since[k], recent=tuple(history[k]))
            for i, k in enumerate(ratings)
        ]
        for table in pair(waiting, rules, now, f"sim:{round_}"):
            for key in table:
                history[key].insert(0, Met(tuple(o for o in table if o != key), now))
                since[key] = now
            winner = rng.choice(table)
            ratings[winner] += 0.5
    return history


def test_diversity_holds_over_a_long_run_of_twelve_bots() -> None:
    rules = Rules(history_games=20, cooldown_s=0, cooldown_games=0, window=2, widen_per_minute=1)
    history = simulate(12, 300, 7, rules)
    for key, games in history.items():
        assert len(games) > 50, key
        for start in range(len(games)):
            window = games[start : start + rules.history_games]
            counts = Counter(o for met in window for o in met.opponents)
            assert max(counts.values()) <= share_cap(len(window), rules), (key, start, counts)


def test_a_long_run_never_pairs_one_accounts_bots() -> None:
    history = simulate(15, 100, 3, Rules())
    for key, games in history.items():
        owner = f"acct{int(key[1:]) % 5}"
        for met in games:
            for opponent in met.opponents:
                assert f"acct{int(opponent[1:]) % 5}" != owner


def test_a_provisional_bot_meets_only_built_in_bots_which_never_meet_each_other() -> None:
    waiting = [
        bot("new", 0, provisional=True),
        bot("old", 0),
        bot("gate1", 0, account=HOST, builtin=True),
        bot("gate2", 0, account=HOST, builtin=True),
    ]
    tables = {frozenset(t) for t in pair(waiting, Rules(), NOW, "s")}
    assert len(tables) == 2
    for table in tables:
        assert len({k for k in table if k.startswith("gate")}) == 1
    alone = [bot("new", 0, provisional=True), bot("old", 0)]
    assert pair(alone, Rules(), NOW + 86_400, "s") == []


def test_the_hosts_built_in_bots_meet_each_other_while_no_newcomer_waits() -> None:
    waiting = [bot(f"gate{i}", 0, account=HOST, builtin=True) for i in range(2)]
    assert len(pair(waiting, Rules(), NOW, "s")) == 1
