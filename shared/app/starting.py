"""Start a game: admit its bound bots below their cap, create it, confirm or cancel the
admission, and start the platform's play. Written once for the three ways a game starts:
a host creates it, a host forks a finished one, or the last bot accepts a challenge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar

from shared.app import challenges
from shared.app.admission import Admission, admit
from shared.app.bot_turns import platform_due
from shared.app.forks import fork_game
from shared.app.games import create_game
from shared.app.loading import LoadedGame, Outcome, load
from shared.app.registry import registered_bots
from shared.catalog import get_game
from shared.errors import GameNotFound, InvalidRequest
from shared.messages.common import Clock, Seat
from shared.messages.envelope import RecordedEvent
from shared.model.challenges import Challenge
from shared.model.idempotency import game_id_for
from shared.model.registry import RegisteredBot, bound_seat
from shared.ports import deal_secret
from shared.ports.dispatch import BotTurnDispatcher
from shared.ports.game_slots import GameSlots
from shared.store.port import EventStore

T = TypeVar("T")


class SeatRequest(Protocol):
    """A seat as a client asks for it: a built-in `bot`, or an `external` or `webhook` client
    (naming a registered bot by `bot` and `version` to bind the seat to it)."""

    @property
    def kind(self) -> Literal["bot", "external", "webhook"]: ...

    @property
    def bot(self) -> str | None: ...

    @property
    def name(self) -> str | None: ...

    @property
    def version(self) -> str | None: ...


def names_a_bot(seat: SeatRequest) -> bool:
    """Returns whether `seat` names a registered external or webhook bot (binds to it)."""
    return seat.kind == "webhook" or (seat.kind == "external" and seat.bot is not None)


def _bound(seat: SeatRequest, game: str, bots: Sequence[RegisteredBot], field: str) -> Seat:
    """Returns `seat` as the domain records it, bound to one of `bots` if it names one.

    Raises InvalidRequest naming the field (under `field`) that cannot be seated.
    """
    if not names_a_bot(seat):
        if seat.version is not None:
            raise InvalidRequest(
                f"{field}.version", "only a seat of a registered external or webhook bot"
            )
        return Seat(kind=seat.kind, bot=seat.bot, name=seat.name)
    if seat.bot is None:
        raise InvalidRequest(f"{field}.bot", "a webhook seat names its registered bot")
    if seat.name is not None:
        raise InvalidRequest(f"{field}.name", "a bot's seat goes by the bot's name")
    return bound_seat(game, seat.kind, seat.bot, seat.version or "1", bots, field)


def bind_seats(
    store: EventStore, game: str, seats: Sequence[SeatRequest] | None
) -> list[Seat] | None:
    """Returns the requested seats of a `game` as domain seats, bound to the registered bots
    they name; None when none were given. Raises InvalidRequest naming the field (`game`
    when a seat names a bot of an unknown game, else the seat's, `seats[i]...`)."""
    if seats is None:
        return None
    bots: Sequence[RegisteredBot] = ()
    if any(names_a_bot(seat) for seat in seats):
        try:
            get_game(game)
        except GameNotFound:
            raise InvalidRequest("game", f"unknown game {game!r}") from None
        bots = registered_bots(store)
    return [_bound(seat, game, bots, f"seats[{index}]") for index, seat in enumerate(seats)]


@dataclass(frozen=True)
class GameCap:
    """The cap on each registered bot's running games: the slots counting them, and the cap
    (0: none)."""

    slots: GameSlots
    cap: int


@dataclass(frozen=True)
class NewGame:
    """A game to create and deal (see `create_game`), its seats bound already; `seed` is the
    host's (keyed with the deployment's deal secret, see `shared.model.deal_keys`)."""

    game: str
    ruleset: str | Mapping[str, Any] | None = None
    seats: Sequence[Seat] | None = None
    players: int | None = None
    seed: int | str | None = None
    clock: Clock | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class NewFork:
    """A fork of the finished game `original` (folded from its whole `log`) after event
    `version` (see `fork_game`); `seats` none: the original's."""

    original: LoadedGame
    log: Sequence[RecordedEvent]
    version: int
    seats: Sequence[Seat] | None = None
    seed: int | str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Started:
    """A started game: what its creation appended, and the game once its play started."""

    outcome: Outcome
    game: LoadedGame


def play_bots(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    game_id: str,
    loaded: LoadedGame | None = None,
) -> None:
    """Starts the platform's play when it has a part in the game's next move: a bot to play,
    a webhook to call, a clock to watch; or a tournament's or an evaluation's game is over
    (to record it).

    `loaded` is the game as it stands, when the caller has it (else it is loaded)."""
    loaded = loaded if loaded is not None else load(store, game_id)
    created = loaded.created
    recorded = bool(created.tournament) or any(isinstance(s.evaluation, str) for s in created.seats)
    if platform_due(loaded) or (recorded and loaded.spec.is_over(loaded.state)):
        dispatcher.dispatch(game_id)


def _start(
    store: EventStore,
    dispatcher: BotTurnDispatcher,
    admission: Admission,
    create: Callable[[], T],
    game_id: Callable[[T], str],
    noted: Callable[[T], None] | None = None,
) -> T:
    """Returns what `create` made, the game `game_id` of it then holding `admission`'s slots
    (given back if `create` fails), and its play started; `noted` sees it just before."""
    try:
        made = create()
    except BaseException:
        admission.cancel()
        raise
    admission.confirm(game_id(made))
    if noted is not None:
        noted(made)
    play_bots(store, dispatcher, game_id(made))
    return made


def _create(store: EventStore, request: NewGame | NewFork) -> Outcome:
    """Appends the game `request` asks for; raises as `create_game` or `fork_game` does."""
    created_at = datetime.now(UTC).isoformat()
    match request:
        case NewGame():
            return create_game(
                store,
                request.game,
                ruleset=request.ruleset,
                seats=request.seats,
                players=request.players,
                seed=deal_secret.deal_key(store, "game", request.seed),
                idempotency_key=request.idempotency_key,
                created_at=created_at,
                clock=request.clock,
            )
        case NewFork():
            return fork_game(
                store,
                request.original,
                request.log,
                request.version,
                seats=request.seats,
                seed=request.seed,
                idempotency_key=request.idempotency_key,
                created_at=created_at,
            )


def _table(request: NewGame | NewFork) -> Sequence[Seat]:
    """Returns the seats the game of `request` will have, as far as they bind bots."""
    if isinstance(request, NewFork) and request.seats is None:
        return request.original.created.seats
    return request.seats or ()


def start_game(
    store: EventStore,
    cap: GameCap,
    dispatcher: BotTurnDispatcher,
    request: NewGame | NewFork,
    noted: Callable[[Outcome], None] | None = None,
) -> Started:
    """Creates the game (or fork) `request` asks for and starts the platform's play if it is
    due; `noted` sees the outcome before the play starts. Each bound bot must be below its
    cap of running games (not checked for a retry with the key of a created game).

    Raises GameCapReached (naming the seat) and whatever the creation raises (InvalidRequest
    naming the field, ForkOfRunningGame, IdempotencyKeyReused); nothing is reserved then.
    """
    key = request.idempotency_key
    retry = key is not None and store.version(game_id_for(key)) > 0
    table = _table(request)
    bound = [(f"seats[{i}]", s.bound_bot) for i, s in enumerate(table) if s.bound_bot]
    admission = admit(cap.slots, store, [] if retry else bound, cap.cap)
    outcome = _start(store, dispatcher, admission, lambda: _create(store, request), _game_id, noted)
    return Started(outcome, load(store, outcome.game_id))


def _game_id(outcome: Outcome) -> str:
    return outcome.game_id


def admit_challenge(cap: GameCap, store: EventStore, challenge: Challenge) -> Admission:
    """Reserves the slots of the bots `challenge` binds seats to (its external and webhook
    bots, as a host's game does; the platform's strategies hold none); raises
    GameCapReached (`bots[i]`)."""
    _, issued = challenges.read(store, challenge.challenge_id, datetime.now(UTC))
    bound = [
        (f"bots[{i}]", seat.bound_bot)
        for i, seat in enumerate(issued.seats)
        if seat.bound_bot is not None
    ]
    return admit(cap.slots, store, bound, cap.cap)


def refuse_suspended(store: EventStore, challenge: Challenge) -> None:
    """Raises InvalidRequest (field `challenge`) when a bot of `challenge` belongs to a
    suspended account: nothing seats it (checked before an answer is recorded, and again
    before the game starts)."""
    suspended = [b.key for b in registered_bots(store) if b.suspended and b.key in challenge.bots]
    if suspended:
        raise InvalidRequest(
            "challenge", f"{', '.join(suspended)} belongs to a suspended account: it plays nowhere"
        )


def start_challenge(
    store: EventStore,
    cap: GameCap,
    dispatcher: BotTurnDispatcher,
    challenge: Challenge,
    admission: Admission | None = None,
) -> Challenge:
    """Starts the game of `challenge` once every bot has accepted (its bots must be below
    their cap of running games, unless `admission` holds their slots already); returns the
    challenge as it is then. An `admission` of a challenge not ready is given back."""
    if not challenge.ready:
        if admission is not None:
            admission.cancel()
        return challenge
    try:
        refuse_suspended(store, challenge)
    except InvalidRequest:
        if admission is not None:
            admission.cancel()
        raise
    admission = admission or admit_challenge(cap, store, challenge)
    challenge_id = challenge.challenge_id
    return _start(
        store,
        dispatcher,
        admission,
        lambda: challenges.start(store, challenge_id, datetime.now(UTC)),
        _challenge_game,
    )


def _challenge_game(challenge: Challenge) -> str:
    return challenge.game_id
