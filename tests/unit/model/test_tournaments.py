"""Tournaments: pairings of each format, the process, standings, ratings, the CLI."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import msgspec
import pytest

from services.cli.main import main
from shared.app.bot_turns import play_bot_turns
from shared.app.runtime import InProcessDispatcher
from shared.app.tournaments import (
    after_game,
    create_tournament,
    load_tournament,
    run_in_process,
    start_game,
)
from shared.model.idempotency import game_id_for
from shared.model.tournaments import formats
from shared.model.tournaments.model import (
    MAX_GAMES,
    Entrant,
    InvalidTournament,
    TournamentDefinition,
    planned_games,
    validate,
)
from shared.model.tournaments.standings import Rating, standings, update_ratings, wilson
from shared.ports import deal_secret
from shared.ports.deal_secret import GivenDealSecret
from shared.store.memory import InMemoryEventStore

DEPLOYMENT = GivenDealSecret("one deployment's deal secret, 32+ chars")


def deployment() -> InMemoryEventStore:
    """Returns a store of one deployment: each deals with the same secret, `DEPLOYMENT`."""
    store = InMemoryEventStore()
    deal_secret.attach(store, DEPLOYMENT)
    return store


def field(*bots: str) -> list[Entrant]:
    """Returns entrants with distinct names."""
    return [Entrant(bot=bot, name=f"{bot}{i}") for i, bot in enumerate(bots)]


def test_round_robin_seats_every_combination_and_rotates_the_seats() -> None:
    games = formats.round_robin(4, 2, 2, "s")
    tables = Counter(frozenset(g.table) for g in games)
    assert set(tables) == {frozenset(p) for p in combinations(range(4), 2)}
    assert set(tables.values()) == {2}
    assert (0, 1) in [g.table for g in games]
    assert (1, 0) in [g.table for g in games]
    assert len({g.seed for g in games}) == len(games)


def test_duplicate_plays_every_deal_at_tables_of_disjoint_entrants_with_the_same_cards() -> None:
    games = formats.duplicate(5, 2, 2, "s")
    by_deal: dict[str, list[formats.PlannedGame]] = {}
    for game in games:
        by_deal.setdefault(game.deal, []).append(game)
    assert len(by_deal) == 2 * 5
    seats: Counter[tuple[int, int]] = Counter()
    for deal_games in by_deal.values():
        assert len({g.seed for g in deal_games}) == 1
        assert len(deal_games) == 5 // 2
        seated = [entrant for g in deal_games for entrant in g.table]
        assert len(seated) == len(set(seated))  # nobody plays a deal twice
        seats.update((entrant, g.table.index(entrant)) for g in deal_games for entrant in g.table)
    assert set(seats.values()) == {2 * 2}  # every entrant plays every seat as often
    assert len(seats) == 5 * 2


def test_duplicate_needs_two_tables_of_disjoint_entrants() -> None:
    assert formats.duplicate(3, 2, 1, "s") == []
    base = TournamentDefinition(
        game="autobus", entrants=field("random", "random", "random"), table_size=2
    )
    with pytest.raises(InvalidTournament) as caught:
        validate(msgspec.structs.replace(base, format="duplicate"))
    assert caught.value.field == "entrants"
    assert "at least 4 entrants" in caught.value.message
    validate(msgspec.structs.replace(base, format="duplicate", entrants=field(*["random"] * 4)))


def test_swiss_avoids_repeat_tables_where_it_can_and_gives_a_bye_when_the_field_is_odd() -> None:
    history = [(0, 1), (2, 3)]
    met = formats.met_pairs(history)
    scores = {0: 1.0, 2: 1.0, 1: 0.0, 3: 0.0}
    games, byes = formats.swiss_round(5, 2, 2, scores, history, {}, "s")
    assert len(byes) == 1
    assert byes[0] == 4  # the lowest ranked: no points, and below 1 and 3 in the drawing
    for game in games:
        assert frozenset(game.table) not in met


def test_knockout_halves_the_field_and_gives_byes_when_it_does_not_divide() -> None:
    games, byes = formats.knockout_round([0, 1, 2, 3, 4], 2, 1, "s")
    assert [g.table for g in games] == [(0, 1), (2, 3)]
    assert byes == [4]


@pytest.mark.parametrize("fmt", ["round_robin", "swiss", "duplicate", "knockout"])
def test_a_tournament_runs_to_its_end_and_replays_identically_from_its_seed(fmt: str) -> None:
    definition = TournamentDefinition(
        game="autobus",
        entrants=field("heuristic", "random", "random", "heuristic", "random"),
        table_size=2,
        format=fmt,  # type: ignore[arg-type]
        games_per_table=2,
        rounds=3,
        seed="9",
    )
    first = run_in_process(deployment(), definition, "t1")
    again = run_in_process(deployment(), definition, "t2")
    assert first.status == "finished"
    assert [(r.places, r.status) for r in first.records] == [
        (r.places, r.status) for r in again.records
    ]
    assert standings(first) == standings(again)
    if fmt == "knockout":
        assert first.winner is not None
    if fmt == "swiss":
        assert first.completed == 3


def test_the_tournament_is_event_sourced_in_its_own_stream() -> None:
    store = InMemoryEventStore()
    definition = TournamentDefinition(
        game="beggar", entrants=field("turner", "turner", "turner"), table_size=3, seed="1"
    )
    state = run_in_process(store, definition, "t")
    reloaded, version = load_tournament(store, "t")
    assert reloaded == state
    types = [e.type for e in store.read("tournament:t")]
    assert types[:2] == ["TournamentCreated", "RoundScheduled"]
    assert types[-2:] == ["RoundCompleted", "TournamentFinished"]
    assert version == len(types)


def test_beggar_tournaments_are_counted_but_never_rated() -> None:
    definition = TournamentDefinition(
        game="beggar", entrants=field("turner", "turner"), table_size=2, games_per_table=3
    )
    lines = standings(run_in_process(InMemoryEventStore(), definition))
    assert all(line.rating is None for line in lines)
    assert sum(line.games for line in lines) == 6


def test_standings_score_table_size_minus_place_and_sort_by_points() -> None:
    definition = TournamentDefinition(
        game="autobus", entrants=field("heuristic", "random"), table_size=2, games_per_table=4
    )
    lines = standings(run_in_process(InMemoryEventStore(), definition))
    assert lines[0].points >= lines[1].points
    assert lines[0].points == lines[0].wins
    assert lines[0].rating is not None
    assert lines[1].rating is not None
    assert lines[0].rating > lines[1].rating


def test_a_rating_update_raises_the_winner_lowers_the_loser_and_narrows_both() -> None:
    start = {"a": Rating(25.0, 25 / 3), "b": Rating(25.0, 25 / 3)}
    after = update_ratings(start, [("a", 1), ("b", 2)])
    assert after["a"].mu > 25 > after["b"].mu
    assert after["a"].sigma < 25 / 3
    assert after["a"].ordinal > after["b"].ordinal
    tied = update_ratings(start, [("a", 1), ("b", 1)])
    assert tied["a"].mu == pytest.approx(tied["b"].mu)


def test_the_wilson_interval_matches_its_formula() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3)
    assert high == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("changes", "field_name"),
    [
        ({"game": "chess"}, "game"),
        ({"table_size": 5}, "table_size"),
        ({"entrants": [Entrant(bot="random")]}, "entrants"),
        ({"entrants": [Entrant(bot="random"), Entrant(bot="genius")]}, "entrants[1].bot"),
        ({"games_per_table": 0}, "games_per_table"),
        ({"ruleset": "fancy"}, "ruleset.ruleset"),
    ],
)
def test_a_bad_definition_names_the_field(changes: dict[str, object], field_name: str) -> None:
    base = {"game": "autobus", "entrants": field("random", "random"), "table_size": 2}
    with pytest.raises(InvalidTournament) as caught:
        validate(TournamentDefinition(**{**base, **changes}))  # type: ignore[arg-type]
    assert caught.value.field == field_name


@pytest.mark.parametrize(
    ("changes", "field_name", "planned"),
    [
        ({"games_per_table": 20_001}, "games_per_table", 20_001 * 1),
        ({"entrants": [Entrant(bot="random")] * 201}, "entrants", 20_100),
        (
            {
                "format": "duplicate",
                "games_per_table": 2_501,
                "entrants": [Entrant(bot="random")] * 4,
            },
            "games_per_table",
            2_501 * 4 * 2,
        ),
        ({"format": "duplicate", "entrants": [Entrant(bot="random")] * 201}, "entrants", 201 * 100),
        ({"format": "swiss", "rounds": 20_001}, "rounds", 20_001),
        ({"format": "knockout", "entrants": [Entrant(bot="random")] * 20_001}, "entrants", 20_001),
    ],
)
def test_a_tournament_of_more_than_the_most_games_is_refused_naming_the_field(
    changes: dict[str, object], field_name: str, planned: int
) -> None:
    base = {"game": "autobus", "entrants": field("random", "random"), "table_size": 2}
    definition = TournamentDefinition(**{**base, **changes})  # type: ignore[arg-type]
    assert planned_games(definition) == planned > MAX_GAMES
    with pytest.raises(InvalidTournament) as caught:
        validate(definition)
    assert caught.value.field == field_name
    assert str(MAX_GAMES) in caught.value.message


def test_a_tournament_of_exactly_the_most_games_is_valid() -> None:
    definition = TournamentDefinition(
        game="autobus", entrants=field("random", "random"), table_size=2, games_per_table=MAX_GAMES
    )
    assert planned_games(definition) == MAX_GAMES
    validate(definition)


def test_planned_games_counts_what_the_formats_plan() -> None:
    four = [Entrant(bot="random")] * 4
    robin = TournamentDefinition(game="autobus", entrants=four, table_size=2, games_per_table=3)
    duplicate = msgspec.structs.replace(robin, format="duplicate")
    assert planned_games(robin) == len(formats.round_robin(4, 2, 3, "s")) == 18
    assert planned_games(duplicate) == len(formats.duplicate(4, 2, 3, "s")) == 3 * 4 * 2


def test_the_cli_prints_the_standings_as_one_json_object(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["tournament", "--game", "autobus", "--bots", "heuristic,random,random"]
    code = main([*argv, "--table-size", "2", "--games", "2", "--seed", "7", "--json"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["game"], report["format"], report["games"]) == ("autobus", "round_robin", 6)
    assert report["standings"][0]["name"] == "heuristic"
    assert {"points", "wins", "mean_place", "rating", "uncertainty"} <= set(report["standings"][0])
    assert report["name"] == "Hospodský autobus round robin"
    assert report["order"] == ["points", "sonneborn_berger", "direct_encounter", "lot"]
    assert [line["rank"] for line in report["standings"]] == [1, 2, 3]
    tiebreaks = report["standings"][0]["tiebreaks"]
    assert set(tiebreaks) == {
        "buchholz",
        "median_buchholz",
        "sonneborn_berger",
        "direct_encounter",
        "lot",
    }
    assert tiebreaks["sonneborn_berger"] is not None
    assert tiebreaks["buchholz"] is None  # not a round robin's criterion
    (warning,) = report["warnings"]
    assert warning["code"] == "version-entered-twice"


def test_the_cli_table_shows_the_name_the_tie_breaks_in_their_order_and_the_warnings(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    argv = ["tournament", "--game", "autobus", "--bots", "heuristic,random,random,heuristic"]
    argv += ["--format", "swiss", "--rounds", "2", "--table-size", "2", "--name", "Cup"]
    assert main([*argv, "--description", "a test"]) == 0
    out = capsys.readouterr().out
    assert "Cup (swiss of autobus): 4 games" in out
    header = next(line for line in out.splitlines() if "BH med" in line)
    columns = [cell.strip() for cell in header.split("┃") if cell.strip()]
    assert columns[3:9] == ["points", "BH", "BH med", "SB", "DE", "lot"]
    assert "order: points, buchholz, median_buchholz, sonneborn_berger" in " ".join(out.split())
    assert "warning (version-entered-twice): heuristic@1" in out


def test_the_cli_refuses_a_bad_tournament_with_exit_code_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["tournament", "--game", "autobus", "--bots", "random", "--table-size", "2"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith("cardarena: error: entrants")


def test_the_in_process_dispatcher_runs_a_whole_tournament_iteratively() -> None:
    store = deployment()
    definition = TournamentDefinition(
        game="autobus",
        entrants=field("heuristic", "random", "random", "random"),
        table_size=2,
        games_per_table=5,
        seed="3",
    )
    InProcessDispatcher(store).start_tournament(definition, "t")
    state, _ = load_tournament(store, "t")
    assert state.status == "finished"
    assert len(state.records) == 6 * 5
    assert standings(state) == standings(run_in_process(deployment(), definition, "u"))


def test_a_finished_game_starts_the_next_round_only_when_it_completes_its_own() -> None:
    store = InMemoryEventStore()
    definition = TournamentDefinition(
        game="beggar",
        entrants=field("turner", "turner", "random", "random"),
        table_size=2,
        format="knockout",
    )
    tournament_id = create_tournament(store, definition)
    state, _ = load_tournament(store, tournament_id)
    first, last = state.rounds[0].games
    dispatched: list[str] = []
    for game in (first, last):
        game_id = start_game(store, tournament_id, state, game)
        play_bot_turns(store, game_id)
        after_game(store, game_id, dispatched.append)
        if game is first:
            assert dispatched == [], "the other game of the round is running already"
    final, _ = load_tournament(store, tournament_id)
    assert [rnd.round for rnd in final.rounds] == [1, 2]
    assert dispatched == [game_id_for(final.rounds[1].games[0].key)]
    after_game(store, game_id, dispatched.append)
    assert len(dispatched) == 2, "a rerun after a crash starts the new round again, harmlessly"
