"""The views' contract for accounts, in memory and on PostgreSQL (the projection): games between
bots of one account (other than the host's) are listed as `same_account` and never rated,
whether a tournament's or ad hoc; their games against others are rated as ever."""

from __future__ import annotations

from shared.app.accounts import create_account
from shared.app.bot_turns import play_bot_turns
from shared.app.games import create_game
from shared.app.registry import register, registered_bots
from shared.app.tournaments import run_in_process
from shared.messages.common import Seat
from shared.model.registry import BotSpec
from shared.model.tournaments.model import Entrant, TournamentDefinition
from shared.store.port import EventStore
from tests.support.stores import Views

LEAGUE = TournamentDefinition(
    game="autobus",
    entrants=[Entrant(bot="ada-h"), Entrant(bot="ada-r"), Entrant(bot="heuristic")],
    table_size=2,
    seed="5",
)
"""Two built-in bots of the account `ada` and the host's heuristic: three games, one of them
between ada's bots."""


def _ada(store: EventStore) -> None:
    """Makes the account `ada` with two built-in autobus bots."""
    create_account(store, "ada", mode="open")
    for name, strategy in (("ada-h", "heuristic"), ("ada-r", "random")):
        spec = BotSpec(name=name, game="autobus", strategy=strategy)
        register(store, spec, account="ada")


def test_one_account_s_bots_play_each_other_unrated_and_others_rated(views: Views) -> None:
    store, read = views
    _ada(store)
    state = run_in_process(store, LEAGUE, "t-ada")
    codes = {
        line.game_id: line.unrated.code if line.unrated else None
        for line in read().recent_games(limit=100)
    }
    assert sorted(str(codes[record.game_id]) for record in state.records) == [
        "None",
        "None",
        "same_account",
    ]
    board = {entry.key: entry.games for entry in read().leaderboard("autobus")}
    assert board == {"ada-h@1": 1, "ada-r@1": 1, "heuristic@1": 2}


def test_an_ad_hoc_game_of_one_account_s_bots_is_never_rated(views: Views) -> None:
    store, read = views
    _ada(store)
    bots = {b.name: b for b in registered_bots(store)}
    game = create_game(
        store,
        "autobus",
        seats=[
            Seat(kind="bot", bot=bots[n].strategy, name=n, version="1", account="ada")
            for n in ("ada-h", "ada-r")
        ],
    )
    play_bot_turns(store, game.game_id)
    line = next(g for g in read().recent_games(limit=10) if g.game_id == game.game_id)
    assert (line.rated, line.unrated.code if line.unrated else None) == (False, "same_account")
    assert read().leaderboard("autobus") == []
