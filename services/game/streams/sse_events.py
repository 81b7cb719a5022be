"""The server-sent events of each stream: per event name, the types of its `data` and what it
means. The streams send only these names (a test checks every `sse_event` call), and the
OpenAPI document describes each from here: a new event is one entry."""

from __future__ import annotations

from services.game.http.openapi.operations import SseEvent
from services.game.http.schemas import EventItem, Game, SeatView
from services.game.streams.schemas import (
    CancelledChallenge,
    DeclinedChallenge,
    ExpiredChallenge,
    FinishedTournament,
    GameOver,
    StartedGame,
    StartedRound,
    StartedTournament,
    TournamentGameFinished,
    TournamentGameStarted,
    TournamentRoundStarted,
    TournamentStandingsChanged,
    TournamentStreamCancelled,
    TournamentStreamFinished,
    Turn,
)
from shared.model.challenges import Challenge

GAME_STREAM: dict[str, SseEvent] = {
    "snapshot": SseEvent(
        (Game, SeatView),
        "The game as the stream starts: with `?seat=N` the seat's view (the body of"
        " `getSeatView`), else the public game (the body of `getGame`).",
    ),
    "event": SseEvent(
        (EventItem,),
        "One stored event after the snapshot (an item of `listGameEvents`), redacted as the"
        " seat or a spectator may see it while the game runs; `id` is its version.",
    ),
    "your_turn": SseEvent(
        (SeatView,),
        "The game waits for the seat: its view with the legal actions (streams with a seat).",
    ),
}
"""The events of `/v1/games/{game_id}/stream`."""

BOT_STREAM: dict[str, SseEvent] = {
    "your_turn": SseEvent(
        (Turn,),
        "A game waits for one of the bot's seats: the seat's view and legal actions at the"
        " version to post at.",
    ),
    "game_started": SseEvent((StartedGame,), "A game with seats of the bot was created."),
    "game_finished": SseEvent(
        (GameOver,), "A game with seats of the bot is over (or aborted: no places)."
    ),
    "challenge": SseEvent((Challenge,), "Another bot challenged this one: accept or decline."),
    "challenge_declined": SseEvent(
        (DeclinedChallenge,), "A bot declined this bot's challenge, which is closed."
    ),
    "challenge_cancelled": SseEvent(
        (CancelledChallenge,), "This bot's challenge was withdrawn (by it or the host)."
    ),
    "challenge_expired": SseEvent(
        (ExpiredChallenge,), "This bot's challenge expired before every bot accepted."
    ),
    "tournament_started": SseEvent(
        (StartedTournament,), "A tournament this bot is entered in started."
    ),
    "round_started": SseEvent(
        (StartedRound,), "A round of this bot's tournament was drawn: its games in it."
    ),
    "tournament_finished": SseEvent(
        (FinishedTournament,), "This bot's tournament is over (finished or cancelled)."
    ),
}
"""The events of `/v1/bots/me/events`."""

TOURNAMENT_STREAM: dict[str, SseEvent] = {
    "standings": SseEvent(
        (TournamentStandingsChanged,),
        "The standings changed (a game recorded, the tournament's end): the new standings, as"
        " `getStandings` lines. A catch-up (a first connect, a reconnect) sends only the last.",
    ),
    "round_started": SseEvent(
        (TournamentRoundStarted,), "A round was scheduled: its games (ids final) and byes."
    ),
    "game_started": SseEvent(
        (TournamentGameStarted,),
        "A game of the round was fixed (one per game, after its `round_started`); the game is"
        " created right after, and `streamGame` follows it.",
    ),
    "game_finished": SseEvent(
        (TournamentGameFinished,),
        "The tournament recorded a game: its places, status, and whether it is rated (else"
        " why not). A duplicate table's follows its deal's last table.",
    ),
    "tournament_finished": SseEvent(
        (TournamentStreamFinished,), "The tournament is over: its winner. The stream ends."
    ),
    "tournament_cancelled": SseEvent(
        (TournamentStreamCancelled,),
        "The host cancelled the tournament: the games it never recorded count for nothing."
        " The stream ends.",
    ),
}
"""The events of `/v1/tournaments/{tournament_id}/stream`."""
