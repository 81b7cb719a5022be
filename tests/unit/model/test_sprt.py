"""The SPRT of candidate evaluation: Fishtest's numbers, its parameters' checks, and its error
rates over many simulated evaluations of a known Elo difference."""

from __future__ import annotations

import math
import random

import pytest

from shared.errors import InvalidRequest
from shared.model import evaluation, sprt

# The reference numbers below were computed with Fishtest's own code: official-stockfish/
# fishtest, server/fishtest/stats/ at commit b8eecff2 (LLRcalc.py, stat_util.py), run under
# scipy 1.17.1: `LLRcalc.LLR_logistic(elo0, elo1, results)` and `stat_util.get_elo(results)`
# (its elo, elo95 and los). The first row is the example of stat_util.py's own `__main__`.
FISHTEST_LLR = [
    ([10789, 19328, 33806, 19402, 10543], -3, 1, 2.1310678117940807),
    ([1187, 7410, 13475, 7378, 1164], 0, 5, -18.877471085770768),
    ([10, 20, 40, 25, 15], 0, 10, 0.518128245468272),
    ([0, 3, 10, 6, 1], 0, 10, 0.43874078543369854),
    ([5, 0, 0, 0, 0], 0, 10, -0.14604150914516958),
    ([0, 0, 7, 0, 0], 0, 10, -0.1985632182291336),
    ([2, 8, 30, 12, 3], -5, 5, 0.46856045195235824),
    # Thirteen bins (a unit of m = 6 comparisons: a three-seat table's rotation); Fishtest's
    # functions read results of any length 2m + 1.
    ([1, 0, 2, 3, 5, 9, 14, 12, 8, 4, 2, 1, 0], 0, 10, 0.2275311546283034),
    # Three bins: Fishtest's trinomial (losses, draws, wins of single games).
    ([30, 45, 25], 0, 20, -0.8217355070133464),
]
FISHTEST_ELO = [
    ([10789, 19328, 33806, 19402, 10543], -0.7735773359165423, 1.2775798957280218, 0.11765885803),
    ([10, 20, 40, 25, 15], 23.72560048639278, 37.326054916227704, 0.8951811737491897),
    ([0, 3, 10, 6, 1], 43.63793544239456, 59.90511171009517, 0.9275456078653712),
    ([5, 0, 0, 0, 0], -1199.826195290393, 249.82236613646864, 0.0),
    ([2, 8, 30, 12, 3], 18.9698599712552, 39.112600706920325, 0.8306007193849523),
    ([1, 0, 2, 3, 5, 9, 14, 12, 8, 4, 2, 1, 0], 10.445806304265073, 30.048164710088372, 0.75284415),
    ([30, 45, 25], -17.386277512436106, 50.876086708839196, 0.24960369985750697),
]


@pytest.mark.parametrize(("counts", "elo0", "elo1", "expected"), FISHTEST_LLR)
def test_the_llr_is_fishtests_llr_logistic(
    counts: list[int], elo0: float, elo1: float, expected: float
) -> None:
    assert sprt.llr(counts, elo0, elo1) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("counts", "elo", "elo95", "los"), FISHTEST_ELO)
def test_the_elo_estimate_is_fishtests_get_elo_with_its_interval_unhalved(
    counts: list[int], elo: float, elo95: float, los: float
) -> None:
    estimate = sprt.estimate(counts)

    assert estimate.elo == pytest.approx(elo, rel=1e-9, abs=1e-9)
    assert (estimate.upper - estimate.lower) / 2 == pytest.approx(elo95, rel=1e-9)
    assert estimate.lower <= estimate.elo <= estimate.upper
    assert estimate.los == pytest.approx(los, rel=1e-8, abs=1e-9)


def test_the_bounds_are_fishtests_from_alpha_and_beta() -> None:
    # stat_util.SPRT(alpha, beta, ...)["lower_bound"], ["upper_bound"] at the same commit.
    assert sprt.bounds(0.05, 0.05) == pytest.approx((-2.9444389791664403, 2.9444389791664403))
    assert sprt.bounds(0.01, 0.2) == pytest.approx((-1.5993875765805987, 4.382026634673881))


def test_score_and_elo_are_fishtests_logistic_maps() -> None:
    # LLRcalc.L_(10) and stat_util.elo(0.75).
    assert sprt.score(10) == pytest.approx(0.5143871841659987, rel=1e-12)
    assert sprt.elo(0.75) == pytest.approx(190.848501887865, rel=1e-12)
    assert sprt.elo(1.0) == sprt.elo(0.999)
    assert sprt.elo(sprt.score(-250)) == pytest.approx(-250)


def test_no_results_are_no_evidence_and_no_verdict() -> None:
    status = sprt.status([0] * 5, sprt.Parameters())

    assert (status.llr, status.units, status.verdict) == (0.0, 0, None)


def test_a_verdict_needs_the_llr_beyond_a_bound() -> None:
    assert sprt.verdict(-2.95, -2.94, 2.94) == "H0"
    assert sprt.verdict(2.95, -2.94, 2.94) == "H1"
    assert sprt.verdict(2.94, -2.94, 2.94) is None
    assert sprt.verdict(0.0, -2.94, 2.94) is None


def test_results_of_an_even_number_of_bins_are_refused() -> None:
    with pytest.raises(ValueError, match="2m \\+ 1 bins"):
        sprt.llr([1, 2, 3, 4], 0, 10)


@pytest.mark.parametrize(
    ("parameters", "field"),
    [
        (sprt.Parameters(alpha=0), "alpha"),
        (sprt.Parameters(alpha=0.5), "alpha"),
        (sprt.Parameters(alpha=math.nan), "alpha"),
        (sprt.Parameters(beta=-0.1), "beta"),
        (sprt.Parameters(beta=0.7), "beta"),
        (sprt.Parameters(elo0=10, elo1=10), "elo1"),
        (sprt.Parameters(elo0=10, elo1=5), "elo1"),
        (sprt.Parameters(elo0=math.nan), "elo0"),
        (sprt.Parameters(elo1=math.inf), "elo1"),
        (sprt.Parameters(elo0=-5000), "elo0"),
    ],
)
def test_parameters_that_cannot_be_tested_are_refused_naming_the_field(
    parameters: sprt.Parameters, field: str
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        sprt.check(parameters)

    assert refused.value.field == field


def test_a_unit_rotates_the_candidate_through_every_seat() -> None:
    assert evaluation.seatings(2) == [("candidate", "baseline"), ("baseline", "candidate")]
    seats = [evaluation.candidate_seat(roles) for roles in evaluation.seatings(4)]
    assert seats == [0, 3, 2, 1]
    assert (evaluation.comparisons(2), evaluation.bins(2)) == (2, 5)
    assert (evaluation.comparisons(3), evaluation.bins(3)) == (6, 13)


def test_a_game_scores_two_half_points_per_seat_beaten_and_one_per_tie() -> None:
    assert evaluation.half_points([1, 2], 0) == 2
    assert evaluation.half_points([1, 2], 1) == 0
    assert evaluation.half_points([2, 1, 2, 4], 0) == 3
    assert evaluation.half_points([1, 1], 1) == 1


@pytest.mark.parametrize("places", [[1, 2], [2, 1], [1, 2, 3], [1, 1, 3], [3, 1, 2, 2], [1] * 5])
def test_one_strategy_in_every_seat_scores_exactly_half_the_unit(places: list[int]) -> None:
    # The same game played at every seat (one strategy, the same deal and choices): the
    # candidate's rotation through the seats scores m, whatever the seats are worth.
    size = len(places)
    total = sum(evaluation.half_points(places, seat) for seat in range(size))

    assert total == evaluation.comparisons(size)


def test_deal_seeds_differ_by_unit_and_by_evaluation_seed() -> None:
    seeds = {evaluation.deal_seed(seed, unit) for seed in ("0", "1") for unit in range(50)}

    assert len(seeds) == 100
    assert evaluation.deal_seed("0", 3) == evaluation.deal_seed("0", 3)


def unit_distribution(elo: float, m: int, correlated: float = 0.3) -> list[float]:
    """Returns a distribution of unit scores (2m + 1 bins) whose expected comparison score is
    `score(elo)`: with chance `correlated` all m comparisons share one game's outcome, else
    they are independent; a comparison is drawn with 40% draws."""
    s = sprt.score(elo)
    game = [1 - s - 0.2, 0.4, s - 0.2]
    independent = [1.0]
    for _ in range(m):
        sums = [0.0] * (len(independent) + 2)
        for i, p in enumerate(independent):
            for j, q in enumerate(game):
                sums[i + j] += p * q
        independent = sums
    shared = [0.0] * (2 * m + 1)
    for j, q in enumerate(game):
        shared[j * m] += q
    return [(1 - correlated) * a + correlated * b for a, b in zip(independent, shared, strict=True)]


def error_rates(
    true_elo: float, parameters: sprt.Parameters, m: int, runs: int, seed: int, cap: int
) -> dict[str | None, float]:
    """Returns the share of `runs` simulated evaluations of a candidate `true_elo` better that
    end in H0, H1 or none within `cap` units."""
    rng = random.Random(seed)
    weights = unit_distribution(true_elo, m)
    outcomes: dict[str | None, float] = {"H0": 0, "H1": 0, None: 0}
    lower, upper = sprt.bounds(parameters.alpha, parameters.beta)
    for _ in range(runs):
        counts = [0] * (2 * m + 1)
        status = None
        for bin_ in rng.choices(range(2 * m + 1), weights, k=cap):
            counts[bin_] += 1
            llr = sprt.llr(counts, parameters.elo0, parameters.elo1)
            status = sprt.verdict(llr, lower, upper)
            if status is not None:
                break
        outcomes[status] += 1 / runs
    return outcomes


def test_the_sprt_keeps_its_error_rates_over_many_simulated_evaluations() -> None:
    # 250 evaluations at each hypothesis (a candidate exactly elo0, then exactly elo1 better)
    # of pentanomial units with correlated games; alpha = beta = 0.05. An error's share is
    # binomial, three standard deviations 0.041; the GSPRT is an approximation, nearer the
    # nominal rates the smaller the difference (the slow sweep below): 0.01 more for that.
    parameters = sprt.Parameters(elo0=0, elo1=40)

    at_elo0 = error_rates(0, parameters, m=2, runs=250, seed=31, cap=3000)
    at_elo1 = error_rates(40, parameters, m=2, runs=250, seed=32, cap=3000)

    assert at_elo0["H1"] <= 0.1, at_elo0
    assert at_elo1["H0"] <= 0.1, at_elo1
    assert at_elo0["H0"] >= 0.85, at_elo0
    assert at_elo1["H1"] >= 0.85, at_elo1


@pytest.mark.slow
@pytest.mark.parametrize(("m", "elo1"), [(2, 20), (6, 30)])
def test_the_sprt_keeps_its_error_rates_at_small_differences_and_larger_tables(
    m: int, elo1: float
) -> None:
    parameters = sprt.Parameters(elo0=0, elo1=elo1)

    # 400 runs a side: three standard deviations of an error's share are 0.033.
    at_elo0 = error_rates(0, parameters, m=m, runs=400, seed=33, cap=20_000)
    at_elo1 = error_rates(elo1, parameters, m=m, runs=400, seed=34, cap=20_000)

    assert at_elo0["H1"] <= 0.08, at_elo0
    assert at_elo1["H0"] <= 0.08, at_elo1
