"""Ladder pairing: which waiting bots sit at which table now, as a pure function.

A ladder is a permanent queue for one game (and ruleset): bots join it and leave it with
their tokens, and the platform pairs those waiting continuously. `pair` decides one pairing:

- a bot is eligible while it is below its caps: fewer games in progress than
  `max_concurrent` and fewer games today than `max_daily` (each bot sits at one table at
  most per pairing, so neither cap is ever passed);
- the eligible bots are taken longest waiting first (ties: a drawing of lots seeded by the
  ladder's id and the pairing's version, never the order of entry); each in turn anchors a
  table, filled with the eligible bots closest to it in rating (ordinal) that are:
  within the rating window (`window + widen_per_minute` for each minute the longer waiting
  of the two has waited, so a bot that waits long enough meets anyone),
  of no account that already sits at the table (`same_account`: one owner never feeds itself),
  no rematch within the cooldown (a table-mate met less than `cooldown_s` ago, or in either
  bot's last `cooldown_games` games),
  and, when `diversity_from` or more bots are eligible, diverse: the table may not make one
  opponent take more than `diversity_share` of either bot's last `history_games` games
  (at least one game each: a bot's first games are against different opponents);
- a bot in its provisional series (a new version's first `provisional_games` ladder games,
  decided by the caller) sits only with the host's built-in bots, which anchor its rating (and
  which, while such a bot waits, never sit with each other: they are there for it);
- a table that cannot be filled so leaves its anchor waiting (the window widens as it waits);
- the seats of a table are drawn by lots from the same seed.

Same inputs, same tables. No clock: `now` and every time are seconds since the epoch.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from shared.model.accounts import same_account

Table = tuple[str, ...]
"""The keys (`name@version`) of a table's bots, in seat order."""


@dataclass(frozen=True)
class Met:
    """One of a bot's past ladder games, as the pairing sees it: the opponents and when it began."""

    opponents: tuple[str, ...]
    at: float


@dataclass(frozen=True)
class Candidate:
    """A waiting bot: its key, account, rating ordinal, since when it waits, its ladder games in
    progress and today, and its recent ladder games (most recent first)."""

    key: str
    account: str
    ordinal: float
    since: float
    in_progress: int = 0
    today: int = 0
    recent: tuple[Met, ...] = ()
    provisional: bool = False
    """A new bot version still in its provisional series: it meets the built-in bots only."""
    builtin: bool = False
    """One of the host's built-in bots (played by the platform): a provisional series' opponent."""


@dataclass(frozen=True)
class Rules:
    """How a ladder pairs (see the module docstring)."""

    table_size: int = 2
    max_concurrent: int = 1
    max_daily: int = 200
    window: float = 3.0
    widen_per_minute: float = 3.0
    cooldown_s: float = 300.0
    cooldown_games: int = 0
    diversity_from: int = 10
    diversity_share: float = 0.25
    history_games: int = 20
    provisional_games: int = 0


def lot(seed: str, key: str) -> bytes:
    """Returns `key`'s place in the pairing's drawing of lots (lower first)."""
    return hashlib.sha256(f"{seed}:ladder:{key}".encode()).digest()


def eligible(candidate: Candidate, rules: Rules) -> bool:
    """Returns whether `candidate` is below both of its caps."""
    return candidate.in_progress < rules.max_concurrent and candidate.today < rules.max_daily


def in_window(a: Candidate, b: Candidate, rules: Rules, now: float) -> bool:
    """Returns whether `a` and `b` are close enough in rating, as long as the longer waiting
    of them has waited."""
    waited_min = max(0.0, now - min(a.since, b.since)) / 60.0
    return abs(a.ordinal - b.ordinal) <= rules.window + rules.widen_per_minute * waited_min


def cooling(a: Candidate, b: Candidate, rules: Rules, now: float) -> bool:
    """Returns whether `a` met `b` (or `b` met `a`) within the rematch cooldown."""
    for one, other in ((a, b), (b, a)):
        for index, met in enumerate(one.recent):
            if other.key in met.opponents and (
                index < rules.cooldown_games or now - met.at < rules.cooldown_s
            ):
                return True
    return False


def share_cap(games: int, rules: Rules) -> int:
    """Returns how many of `games` games one opponent may take (at least one)."""
    return max(1, math.floor(rules.diversity_share * games))


def too_often(one: Candidate, opponent: str, rules: Rules) -> bool:
    """Returns whether one more game against `opponent` would make it take more than its share
    of `one`'s last `history_games` games (the new one included)."""
    window = one.recent[: max(0, rules.history_games - 1)]
    count = sum(1 for met in window if opponent in met.opponents) + 1
    return count > share_cap(len(window) + 1, rules)


def compatible(
    a: Candidate, b: Candidate, rules: Rules, now: float, *, diverse: bool, newcomers: bool = False
) -> bool:
    """Returns whether `a` and `b` may sit at one table (except for the rating window)."""
    if same_account(a.account, b.account) or a.key == b.key:
        return False
    if cooling(a, b, rules, now):
        return False
    if (a.provisional and not b.builtin) or (b.provisional and not a.builtin):
        return False
    if newcomers and a.builtin and b.builtin:
        return False
    return not (diverse and (too_often(a, b.key, rules) or too_often(b, a.key, rules)))


def pair(waiting: Sequence[Candidate], rules: Rules, now: float, seed: str) -> list[Table]:
    """Returns the tables to start now (bots in seat order), as the module says; a bot named
    twice in `waiting` counts once (its first entry)."""
    unique: dict[str, Candidate] = {}
    for candidate in waiting:
        unique.setdefault(candidate.key, candidate)
    pool = [c for c in unique.values() if eligible(c, rules)]
    if rules.table_size < 2 or len(pool) < rules.table_size:
        return []
    diverse = len(pool) >= rules.diversity_from
    newcomers = any(c.provisional for c in pool)
    order = sorted(pool, key=lambda c: (c.since, lot(seed, c.key)))
    seated: set[str] = set()
    tables: list[Table] = []
    for anchor in order:
        if anchor.key in seated:
            continue
        members = [anchor]
        others = sorted(
            (c for c in order if c.key not in seated and c.key != anchor.key),
            key=lambda c: (abs(c.ordinal - anchor.ordinal), c.since, lot(seed, c.key)),
        )
        for candidate in others:
            if len(members) == rules.table_size:
                break
            if not in_window(anchor, candidate, rules, now):
                continue
            if all(
                compatible(m, candidate, rules, now, diverse=diverse, newcomers=newcomers)
                for m in members
            ):
                members.append(candidate)
        if len(members) < rules.table_size:
            continue
        seated.update(m.key for m in members)
        table_seed = f"{seed}:{len(tables)}"
        tables.append(tuple(sorted((m.key for m in members), key=lambda k: lot(table_seed, k))))
    return tables
