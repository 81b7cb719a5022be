"""The request and answer bodies of the evaluations API."""

from __future__ import annotations

from typing import Literal

import msgspec

from shared.app.evaluations import unit_games
from shared.model.evaluations import EvaluationState, EvaluationStatus, Outcome


class BotVersion(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A registered bot version: its name and version label."""

    bot: str
    """The bot's registered name."""
    version: str = "1"
    """Its version label."""


class NewEvaluation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An evaluation to run: is `candidate` better than `baseline` at `game`?"""

    game: str
    """The game, e.g. `shithead`."""
    candidate: BotVersion
    """The bot version under test (A)."""
    baseline: BotVersion
    """The bot version it is measured against (B): another version than the candidate."""
    table_size: int = 2
    """Seats per game: A sits alone among B seats, in every seat of a unit in turn."""
    ruleset: str | None = None
    """A preset's name (none: the game's classic)."""
    elo0: float = 0.0
    """H0: A is at most this many Elo better (from -1000 to 1000)."""
    elo1: float = 10.0
    """H1: A is at least this many Elo better (above elo0, at most 1000)."""
    alpha: float = 0.05
    """The largest chance of H1 when elo0 holds (strictly between 0 and 0.5)."""
    beta: float = 0.05
    """The largest chance of H0 when elo1 holds (strictly between 0 and 0.5)."""
    max_games: int = 1000
    """The most games to play (from one unit, `table_size` games, to 100000): inconclusive
    when they run out with no bound crossed."""
    seed: str | None = None
    """Seeds the deals (none: drawn at random); hidden until the evaluation ends."""


class Contestant(msgspec.Struct, frozen=True):
    """A bot version an evaluation seats, and its kind."""

    bot: str
    """The bot's name."""
    version: str
    """Its version label."""
    kind: Literal["builtin", "external", "webhook"]
    """`builtin` (the workers play it), `external` (it plays over the API) or `webhook`."""


class Definition(msgspec.Struct, frozen=True):
    """What an evaluation plays."""

    game: str
    """The game."""
    ruleset: str | None
    """The preset (null: the classic)."""
    table_size: int
    """Seats per game."""
    candidate: Contestant
    """The bot version under test (A)."""
    baseline: Contestant
    """The bot version it is measured against (B)."""
    elo0: float
    """H0's Elo difference."""
    elo1: float
    """H1's Elo difference."""
    alpha: float
    """The test's largest chance of a false H1."""
    beta: float
    """The test's largest chance of a false H0."""
    max_games: int
    """The most games it plays."""
    seed: str
    """The deals' seed: empty while it runs."""
    account: str
    """The account that asked for it (`host`: the admin)."""
    created_at: str
    """When it was created (ISO 8601, UTC)."""


class Evaluation(msgspec.Struct, frozen=True):
    """A hosted evaluation: where its sequential test stands."""

    evaluation_id: str
    """Its id."""
    definition: Definition
    """What it plays."""
    status: EvaluationStatus
    """`running` (its games go on), `finished` (with a verdict) or `cancelled` (a
    contestant's account was suspended: no verdict)."""
    verdict: Outcome | None
    """`H1` (A is better by elo1 or more), `H0` (A is not better than elo0), `inconclusive`
    (max_games ran out first); null while it runs, and once cancelled."""
    llr: float
    """The log-likelihood ratio of H1 against H0 now."""
    bounds: tuple[float, float]
    """The LLR's lower and upper bounds: below the lower, H0; above the upper, H1."""
    games: int
    """The games counted (of units recorded, void ones aside)."""
    pairs: int
    """The units counted: pairs of games on one deal (at a larger table, deals played in
    every seat)."""
    elo: float
    """A's estimated Elo over B."""
    elo_interval: tuple[float, float]
    """The 95% interval of that estimate."""
    los: float
    """The likelihood of superiority: the chance that A is better at all."""
    results: list[int]
    """How many units scored each number of half points for A (0 to 2m)."""
    llr_history: list[float]
    """The LLR after each unit counted, in order: the chart of the test."""
    game_ids: list[str]
    """The ids of its games started, unit by unit, in order."""

    @classmethod
    def of(cls, evaluation_id: str, state: EvaluationState) -> Evaluation:
        """Returns the answer of an evaluation's state."""
        d, test = state.definition, state.test
        running = state.status == "running"
        return cls(
            evaluation_id=evaluation_id,
            definition=Definition(
                game=d.game,
                ruleset=d.ruleset,
                table_size=d.table_size,
                candidate=Contestant(d.candidate.bot, d.candidate.version, d.candidate.kind),
                baseline=Contestant(d.baseline.bot, d.baseline.version, d.baseline.kind),
                elo0=d.elo0,
                elo1=d.elo1,
                alpha=d.alpha,
                beta=d.beta,
                max_games=d.max_games,
                seed="" if running else d.seed,
                account=d.account,
                created_at=d.created_at,
            ),
            status=state.status,
            verdict=None if state.finished is None else state.finished.verdict,
            llr=_rounded(test.llr, 4),
            bounds=(_rounded(test.lower, 4), _rounded(test.upper, 4)),
            games=state.games,
            pairs=test.units,
            elo=_rounded(test.estimate.elo, 2),
            elo_interval=(_rounded(test.estimate.lower, 2), _rounded(test.estimate.upper, 2)),
            los=_rounded(test.estimate.los, 4),
            results=list(state.counts),
            llr_history=[_rounded(value, 4) for value in state.llrs],
            game_ids=[
                game_id
                for unit in range(state.started)
                for game_id in unit_games(evaluation_id, state, unit)
            ],
        )


class EvaluationPage(msgspec.Struct, frozen=True):
    """Evaluations, newest first."""

    evaluations: list[Evaluation]
    """The evaluations."""


def _rounded(value: float, digits: int) -> float:
    """Returns `value` rounded to `digits` decimals, a negative zero made zero."""
    return round(value, digits) + 0.0
