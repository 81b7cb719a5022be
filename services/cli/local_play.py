"""Local programs at the client seats of games played in this process (`cardarena tournament`).

Each program is registered as an external bot of the run's store, so its seats are client
seats bound to it, and its moves go through the same use case as the API's `postAction`
(`shared.app.games.act`): checked by the rules, appended at their version. A program's failed
turn (`ProgramFailed`, or an answer the use case refuses) forfeits the game for its seat by
resigning it, with the reason kept in `LocalSeats.forfeits`; the game and the run go on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from services.cli.programs import Program, ProgramFailed, refusal, split_note, turn_line
from shared.app.bot_turns import play_bot_turns
from shared.app.games import act
from shared.app.loading import LoadedGame, load
from shared.app.registry import register
from shared.errors import IllegalAction, InvalidRequest
from shared.model.registry import BotSpec
from shared.store.port import EventStore

RESIGN = {"type": "Resign"}
"""The platform's action a forfeiting seat posts."""


@dataclass(frozen=True)
class SeatForfeit:
    """A program's seat that forfeited a game: the game, the bot, the seat and why."""

    game_id: str
    bot: str
    seat: int
    reason: str


@dataclass
class LocalSeats:
    """The programs of a run by the name of the external bot each plays as; what forfeited."""

    programs: Mapping[str, Program]
    forfeits: list[SeatForfeit] = field(default_factory=list)

    @classmethod
    def registered(
        cls, store: EventStore, game: str, programs: Mapping[str, Program]
    ) -> LocalSeats:
        """Registers each of `programs` (by bot name) as an external bot of `game` in `store`;
        returns the seats they play."""
        for name in programs:
            register(store, BotSpec(name=name, game=game, kind="external"))
        return cls(programs)

    def play(self, store: EventStore, game_id: str) -> None:
        """Plays a game to its end: the built-in bots' turns and the programs' turns."""
        while True:
            play_bot_turns(store, game_id)
            loaded = load(store, game_id)
            if loaded.spec.is_over(loaded.state):
                return
            seats = loaded.created.seats
            waiting = [
                seat
                for seat in loaded.spec.to_move(loaded.state)
                if seats[seat].kind == "external" and seat not in loaded.forfeits
            ]
            if not waiting:
                raise RuntimeError(f"game {game_id} waits for no seat this process plays")
            self._move(store, loaded, waiting[0])

    def _move(self, store: EventStore, loaded: LoadedGame, seat: int) -> None:
        """Asks the seat's program for its move and posts it; forfeits the seat if it fails."""
        bot = loaded.created.seats[seat].name or ""
        program = self.programs[bot]
        try:
            turn = turn_line(loaded.game_id, loaded.spec, loaded.state, seat, loaded.version)
            answer, note = split_note(program.ask(turn))
            act(
                store,
                loaded.game_id,
                seat=seat,
                action=answer,
                expected_version=loaded.version,
                loaded=loaded,
                note=note,
            )
        except ProgramFailed as failure:
            reason = str(failure)
        except (InvalidRequest, IllegalAction) as error:
            reason = str(refusal(error))
        else:
            if answer.get("type") == RESIGN["type"]:
                self.forfeits.append(SeatForfeit(loaded.game_id, program.bot, seat, "resigned"))
            return
        self.forfeits.append(SeatForfeit(loaded.game_id, program.bot, seat, reason))
        act(store, loaded.game_id, seat=seat, action=RESIGN, expected_version=loaded.version)
