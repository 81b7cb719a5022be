"""Creating a game and a client's action: each loads a game's stream, decides and appends.

The game service, the workers and the CLI call these (with `shared.app.loading` and
`shared.app.bot_turns`); none of them touches a rules engine or the store's encoding directly.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from shared.app.loading import LoadedGame, Outcome, cache_of, decided, load, parse_action
from shared.catalog import get_game
from shared.errors import GameNotFound, GameOver, IllegalAction, InvalidRequest, InvalidRuleset
from shared.games.base import AnyGame
from shared.messages.codec import encode_all
from shared.messages.common import Clock, Event, GameCreated, Resign, Seat
from shared.model import clocks, deal_keys, deals, endings, idempotency, notes
from shared.model.idempotency import ClientKey, game_id_for
from shared.store.port import AppendResult, ConcurrencyConflict, EventStore


def _fingerprint(*parts: Any) -> str:
    """Returns a digest of a request's content, to tell a retry from a reused key."""
    return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()


def _folded_on(
    store: EventStore, loaded: LoadedGame, events: Sequence[Event], result: AppendResult
) -> LoadedGame | None:
    """Returns `loaded` with the `events` it just appended folded in (and caches it), when
    that is what a fold of its stream gives: an untimed game (a clock folds by the store's
    timestamps) whose append was not a replay. Else None."""
    if loaded.clock is not None or result.replayed or result.first_version != loaded.version + 1:
        return None
    spec, state = loaded.spec, loaded.state
    state = spec.fold(events, state)
    resigned = loaded.resigned + endings.resigned_in(events)
    after = LoadedGame(
        loaded.game_id, spec, loaded.created, state, result.last_version, resigned=resigned
    )
    cache_of(store).put(after)
    return after


def _seats(spec: AnyGame, seats: Sequence[Seat] | None, players: int | None) -> list[Seat]:
    """Returns the seats of a new game, defaulting every seat to the game's first bot.

    An external seat is host-played, or bound to a registered bot (`name`, `version`); a
    webhook seat is always bound. Binding is checked against the registry by the caller.
    """
    default_bot = next(iter(spec.bots))
    count = len(seats) if seats is not None else players
    if count is not None and not spec.min_players <= count <= spec.max_players:
        raise InvalidRequest(
            "players" if seats is None else "seats",
            f"{spec.title} takes {spec.min_players} to {spec.max_players} players, not {count}",
        )
    if seats is None:
        if players is None:
            raise InvalidRequest("seats", "give the seats, or the number of players")
        return [Seat(kind="bot", bot=default_bot) for _ in range(players)]
    if players is not None and players != len(seats):
        raise InvalidRequest("players", f"{players} players but {len(seats)} seats")
    checked: list[Seat] = []
    for index, seat in enumerate(seats):
        if seat.kind in {"external", "webhook"}:
            if not spec.has_decisions:
                raise InvalidRequest(
                    f"seats[{index}].kind",
                    f"{spec.title} has no decisions; every seat is played by the platform",
                )
            if seat.kind == "webhook" and seat.bound_bot is None:
                raise InvalidRequest(
                    f"seats[{index}].bot", "a webhook seat names its registered bot and version"
                )
            checked.append(seat)
            continue
        bot = seat.bot or default_bot
        if bot not in spec.bots:
            names = ", ".join(spec.bots)
            raise InvalidRequest(f"seats[{index}].bot", f"unknown bot {bot!r}; one of {names}")
        checked.append(msgspec.structs.replace(seat, bot=bot))
    return checked


def create_game(
    store: EventStore,
    game: str,
    *,
    ruleset: str | Mapping[str, Any] | None = None,
    seats: Sequence[Seat] | None = None,
    players: int | None = None,
    seed: int | str | None = None,
    idempotency_key: str | None = None,
    created_at: str = "",
    tournament: tuple[str, str] | None = None,
    clock: Clock | None = None,
    salt: str | None = None,
) -> Outcome:
    """Creates and deals a game; raises InvalidRequest naming the field at fault.

    `tournament` is (tournament id, the game's key in its schedule) for a tournament game;
    `clock` times its client seats, overriding the ruleset's clock (a game with a webhook
    seat always has one, see `shared.model.clocks.clock_for`). The engine deals from `seed` itself
    (None: a fresh deal key of 256 random bits); the platform passes a host's seed as its
    deal key (`shared.model.deal_keys`). The game commits to its seed with `salt` (None: 32 random
    bytes; tests fix it), see `shared.model.deals`.
    """
    try:
        spec = get_game(game)
    except GameNotFound:
        raise InvalidRequest("game", f"unknown game {game!r}") from None
    try:
        rules = spec.ruleset(ruleset)
        table = _seats(spec, seats, players)
        spec.validate(rules, len(table))
    except InvalidRuleset as error:
        field = error.field if error.field in {"ruleset", "players"} else f"ruleset.{error.field}"
        raise InvalidRequest(field, error.message) from None
    timing = () if clock is None else (clock,)
    fingerprint = (
        _fingerprint(game, ruleset, seats, players, seed, *timing) if idempotency_key else ""
    )
    clock = clocks.clock_for(clocks.ruleset_clock(rules) if clock is None else clock, table)
    seed = deal_keys.fresh() if seed is None else seed
    salt = secrets.token_hex(32) if salt is None else salt
    created = GameCreated(
        game=spec.name,
        ruleset=msgspec.to_builtins(rules),
        seats=table,
        created_at=created_at,
        bot_seed=hashlib.sha256(f"bots:{seed}".encode()).hexdigest()[:16],
        tournament=tournament[0] if tournament else "",
        tournament_key=tournament[1] if tournament else "",
        clock=msgspec.UNSET if clock is None else clock,
        commitment=deals.commitment(seed, salt),
        deal_seed=deals.seed_text(seed),
        salt=salt,
    )
    started = spec.deal(rules, len(table), seed)
    game_id = game_id_for(idempotency_key)
    result = store.append(
        game_id, spec.name, 0, encode_all([created, started]), idempotency_key, fingerprint
    )
    return Outcome(game_id, result.first_version, result.last_version, result.replayed)


def act(
    store: EventStore,
    game_id: str,
    *,
    seat: int,
    action: Any,
    expected_version: int,
    idempotency_key: ClientKey | None = None,
    loaded: LoadedGame | None = None,
    note: str | None = None,
) -> Outcome:
    """Applies a client's action for `seat` at `expected_version` (to `loaded`, the game as
    just loaded, when the caller has it), with the seat's private `note` (none: no note; see
    `shared.model.notes`: its `NoteTaken` precedes the move's events in the same append).

    `action` may be the platform's `Resign` (see `shared.model.endings`) from an external or
    webhook seat. Raises UnknownGame, InvalidRequest, IllegalAction (GameOver once the game
    was aborted), ConcurrencyConflict (stale version) or IdempotencyKeyReused; on any error
    nothing is appended (a note that cannot be one: InvalidRequest `note`, before anything
    else is checked). A retry with the same key returns the first outcome: the append
    itself answers a retry that still passes the checks, and a retry that fails them (its
    version is stale by then) is looked up.
    """
    note = notes.checked(note)
    loaded = loaded if loaded is not None else load(store, game_id)
    spec = loaded.spec
    noted = (note,) if note else ()
    fingerprint = _fingerprint(seat, action, expected_version, *noted) if idempotency_key else ""
    try:
        events = notes.noted(seat, note, _decided(loaded, seat, action, expected_version))
    except (InvalidRequest, IllegalAction, ConcurrencyConflict):
        if idempotency_key is not None:
            known = store.recall(game_id, idempotency_key, fingerprint)
            if known is not None:
                return Outcome(game_id, known.first_version, known.last_version, True)
        raise
    result = store.append(
        game_id, spec.name, expected_version, encode_all(events), idempotency_key, fingerprint
    )
    after = _folded_on(store, loaded, events, result)
    return Outcome(game_id, result.first_version, result.last_version, result.replayed, after)


def _decided(loaded: LoadedGame, seat: int, action: Any, expected_version: int) -> list[Event]:
    """Returns the events `seat`'s `action` appends to `loaded` at `expected_version`;
    raises InvalidRequest, IllegalAction or ConcurrencyConflict."""
    spec = loaded.spec
    if not spec.has_decisions:
        raise IllegalAction(
            "no_decisions", f"{spec.title} has no decisions; its seats are played by the platform"
        )
    parsed = parse_action(spec, action)
    if loaded.aborted:
        raise GameOver("aborted", f"game {loaded.game_id} was aborted; it takes no action")
    if expected_version != loaded.version:
        raise ConcurrencyConflict(loaded.game_id, expected_version, loaded.version)
    seats = loaded.created.seats
    if not 0 <= seat < len(seats):
        raise InvalidRequest("seat", f"seat must be 0 to {len(seats) - 1}, not {seat}")
    if isinstance(parsed, Resign):
        return decided(loaded, seat, parsed)
    if seats[seat].kind != "external":
        raise IllegalAction("bot_seat", f"seat {seat} is played by the built-in bot")
    if seat in loaded.resigned:
        raise IllegalAction("resigned", f"seat {seat} resigned; the platform plays its turns")
    if seat in loaded.forfeits:
        raise IllegalAction("forfeited", f"seat {seat} forfeited; the platform plays its turns")
    return decided(loaded, seat, parsed)


def abort_game(
    store: EventStore, game_id: str, reason: str, *, tournament: bool = False, attempts: int = 5
) -> Outcome:
    """Aborts a running game for `reason` (see `shared.model.endings.abort`): its
    `GameAborted` ends it with no result. A tournament's game is aborted only with
    `tournament` (its tournament is cancelled: else IllegalAction `tournament_game`).

    Raises UnknownGame, GameOver (rule `game_over`, or `aborted`) once it is over; a move
    appended meanwhile makes it look again (up to `attempts` times, then ConcurrencyConflict).
    """
    for _ in range(attempts):
        loaded = load(store, game_id)
        if loaded.aborted:
            raise GameOver("aborted", f"game {game_id} was aborted already")
        if loaded.spec.is_over(loaded.state):
            raise GameOver("game_over", f"game {game_id} is over")
        if loaded.created.tournament and not tournament:
            raise IllegalAction(
                "tournament_game",
                f"game {game_id} belongs to tournament {loaded.created.tournament}:"
                " cancel the tournament to abort its games",
            )
        events = deals.reveal(loaded.created, endings.abort(loaded.spec, loaded.state, reason))
        key = idempotency.abort(loaded.version)
        try:
            result = store.append(
                game_id, loaded.spec.name, loaded.version, encode_all(events), key
            )
        except ConcurrencyConflict:
            continue
        return Outcome(game_id, result.first_version, result.last_version, result.replayed)
    raise ConcurrencyConflict(game_id, loaded.version, store.version(game_id))
