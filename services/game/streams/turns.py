"""What the streams and long polls read: the turns and challenges waiting for a bot, the game a
stream opens, and a seat's turn waited for (each blocks: run it in a worker thread)."""

from __future__ import annotations

from datetime import UTC, datetime

from services.game.http.pipeline.auth import Caller, check_seat
from services.game.http.pipeline.credentials import Hold
from services.game.http.schemas import SeatView
from services.game.http.seals import check_unsealed
from services.game.streams.schemas import BotGame, Turn
from shared.app import challenges
from shared.app.loading import LoadedGame, load, load_logged
from shared.app.waiting import until_due
from shared.errors import InvalidRequest, UnknownGame
from shared.model.challenges import Challenge
from shared.ports.archive import EventArchive
from shared.ports.bot_index import BotIndex
from shared.store.port import EventStore


def turns_in(loaded: LoadedGame, bot: str) -> list[Turn]:
    """Returns the turns of `loaded` waiting for `bot`'s external seats (forfeited ones are
    played by the platform)."""
    spec, state, seats = loaded.spec, loaded.state, loaded.created.seats
    if spec.is_over(state):
        return []
    found: list[Turn] = []
    for seat in spec.to_move(state):
        if seats[seat].kind != "external" or seats[seat].bound_bot != bot:
            continue
        if seat in loaded.forfeits:
            continue
        view = SeatView.of(loaded, seat)
        if view.legal_actions:
            found.append(turn_of(spec.name, view))
    return found


def turn_of(game: str, view: SeatView) -> Turn:
    """Returns the turn of the seat whose view (with its legal actions) is `view`."""
    return Turn(
        game_id=view.game_id,
        game=game,
        seat=view.seat,
        version=view.version,
        legal_actions=view.legal_actions,
        deadline=view.deadline,
        view=view.view,
        status="playing",  # a view with legal actions is of a running game
        to_move=view.to_move,
    )


def waiting_turns(store: EventStore, index: BotIndex, bot: str, game_ids: list[str]) -> list[Turn]:
    """Returns the turns waiting for `bot` in `game_ids` (each read from the store now)."""
    found: list[Turn] = []
    for game_id in game_ids:
        try:
            found += turns_in(load(store, game_id), bot)
        except UnknownGame:
            continue
    return found


def running_games(store: EventStore, index: BotIndex, bot: str) -> list[BotGame]:
    """Refreshes the index; returns the running games seating `bot` with its seats there,
    oldest first (each read through this process's game cache)."""
    index.refresh()
    found: list[tuple[str, BotGame]] = []
    for game_id in index.running(bot):
        seats = index.seats_of(bot, game_id)
        try:
            loaded = load(store, game_id)
        except UnknownGame:
            continue
        spec, state = loaded.spec, loaded.state
        if spec.is_over(state) or not seats:
            continue
        created_at = loaded.created.created_at
        game = BotGame(
            game_id, spec.name, seats, loaded.version, "playing", spec.to_move(state), created_at
        )
        found.append((created_at, game))
    return [game for _, game in sorted(found, key=lambda pair: (pair[0], pair[1].game_id))]


def bots_games(index: BotIndex, bot: str, game_ids: list[str]) -> list[str]:
    """Returns those of `game_ids` that seat `bot` (the index may read the store)."""
    return [game_id for game_id in game_ids if index.seats_of(bot, game_id)]


def all_waiting(store: EventStore, index: BotIndex, bot: str) -> list[Turn]:
    """Refreshes the index; returns the turns waiting for `bot` in all its running games."""
    index.refresh()
    return waiting_turns(store, index, bot, index.running(bot))


def open_challenges(store: EventStore, index: BotIndex, bot: str) -> list[Challenge]:
    """Refreshes the index; returns the open challenges waiting for `bot`'s answer (each
    read from the store now)."""
    index.refresh()
    now = datetime.now(UTC)
    found: list[Challenge] = []
    for challenge_id in index.challenges_of(bot, now):
        challenge, _ = challenges.read(store, challenge_id, now)
        if challenge.status == "open" and bot in challenge.pending:
            found.append(challenge)
    return found


def opened(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int | None,
    caller: Caller,
    after: int | None,
) -> LoadedGame:
    """Returns the game to stream (from the archive once its stream left the store) after
    checking the seat, the caller and `Last-Event-ID`."""
    loaded = load_logged(store, archive, game_id)
    if seat is not None:
        count = len(loaded.created.seats)
        if not 0 <= seat < count:
            raise InvalidRequest("seat", f"seat must be 0 to {count - 1}, not {seat}")
        check_seat(caller, loaded.created.seats, seat)
    if after is not None and after > loaded.version:
        raise InvalidRequest(
            "Last-Event-ID", f"the game is at version {loaded.version}, not {after}"
        )
    return loaded


def opened_sealed(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int | None,
    caller: Caller,
    after: int | None,
) -> tuple[LoadedGame, bool]:
    """Returns `opened`'s game and whether it is sealed; raises DealSealed when it is and
    the caller holds none of its seats."""
    loaded = opened(store, archive, game_id, seat, caller, after)
    return loaded, check_unsealed(store, archive, loaded, caller)


def seat_turn(
    store: EventStore,
    archive: EventArchive,
    game_id: str,
    seat: int,
    caller: Caller,
    wait_s: float,
    chunk_s: float,
    hold: Hold | None = None,
) -> SeatView:
    """Returns `seat`'s view as soon as the game waits for the seat or is over, or after
    `wait_s` seconds (its view as it stands then), waiting no more once `hold` ended.
    Blocks: run it in a worker thread (one for the whole wait; each wait on the store lasts
    at most `chunk_s`)."""
    loaded = opened(store, archive, game_id, seat, caller, None)
    ended = (lambda: hold.ended) if hold is not None else None
    return SeatView.of(until_due(store, loaded, seat, wait_s, chunk_s, ended), seat)
