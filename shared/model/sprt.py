"""The sequential probability ratio test of a candidate evaluation, computed as Fishtest does.

An evaluation plays units of games (a pair of games on one deal with the seats swapped, or
for a larger table the rotation of one deal: `shared.model.evaluation`) and scores each unit
in half points. Its results are the frequencies of those scores: `counts[i]` units scored
`i` half points, out of `2 * m` (m pairwise comparisons per unit, `len(counts) == 2 * m + 1`).
With m = 2 (a pair of two-seat games) the five bins are Fishtest's pentanomial LL, LD+DL,
LW+DD+WL, DW+WD, WW. The model asks nothing else of a unit: games within a unit may be as
correlated as they like (a shared deal makes them so), units are independent.

The test is the generalized SPRT (GSPRT) of H0: elo = elo0 against H1: elo = elo1 in
logistic Elo (the expected score of a comparison is `score(elo)`), with the log-likelihood
ratio of the two maximum likelihood multinomials that have the expected unit scores
`score(elo0)` and `score(elo1)`. It stops at the first unit after which the LLR is below
`ln(beta / (1 - alpha))` (H0: the candidate is not better) or above `ln((1 - beta) / alpha)`
(H1: it is better).

Followed, function by function (official-stockfish/fishtest, `server/fishtest/stats/`, read
at commit b8eecff2; theory in H. van den Bergh, https://www.cantate.be/Fishtest/
support_MLE_multinomial.pdf, Proposition 1.1):

- `score`: `LLRcalc.L_`; `elo`: `stat_util.elo` (scores clamped to [0.001, 0.999]).
- `regularized`: `LLRcalc.regularize` (an empty bin counts 0.001).
- `_secular`: `LLRcalc.secular` (Fishtest brackets the root as here and runs scipy's
  `brentq`; this runs Newton's method kept inside the bracket, to the same root).
- `_mle_expected`: `LLRcalc.MLE_expected`; `llr`: `LLRcalc.LLR_logistic` (statistic
  "expectation").
- `bounds`: `stat_util.SPRT`'s `lower_bound` and `upper_bound`; `verdict`: the stop
  condition of `stat_util.update_SPRT` without its dynamic overshoot correction (an
  evaluation updates after every unit, so its overshoot is one unit's jump at most).
- `estimate`: `stat_util.get_elo`, which reads `results` of any length 2m+1 ("aggregated
  frequencies for m games"), with the 95% interval of the mean score mapped to Elo as is,
  not halved into Fishtest's symmetric `elo95` (which is `(upper - lower) / 2`).

Pure: the standard library and msgspec only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Literal

import msgspec

from shared.errors import InvalidRequest

Verdict = Literal["H0", "H1"]
"""`H1`: the candidate is better (elo1 or more); `H0`: it is not (elo0 or less)."""

EPSILON = 1e-3
"""What an empty bin counts for (`LLRcalc.regularize`), and how close to 0 or 1 a score is
clamped before it becomes Elo (`stat_util.elo`)."""
MAX_ELO = 1000.0
"""The largest |elo0| and |elo1| an evaluation takes (Fishtest's own search range)."""
_BRACKET = 1e-9
"""How far inside its pole-free interval the secular equation's root is sought (as Fishtest)."""
_Z95 = NormalDist().inv_cdf(0.975)
"""The 97.5% quantile of the standard normal law (1.959963984540054)."""


class Parameters(msgspec.Struct, frozen=True):
    """What a test decides between: H0 elo <= `elo0`, H1 elo >= `elo1` (logistic Elo of the
    candidate over the baseline), with `alpha` the largest chance of H1 at elo0 and `beta`
    the largest chance of H0 at elo1."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05


class Estimate(msgspec.Struct, frozen=True):
    """The Elo difference the results show: its estimate, the 95% interval and the
    likelihood of superiority (the chance, in the normal approximation, that it is above 0)."""

    elo: float
    lower: float
    upper: float
    los: float


class Status(msgspec.Struct, frozen=True):
    """Where a test stands after `units` units: the LLR, its bounds, the verdict once the
    LLR crossed one (else None) and the Elo estimate."""

    llr: float
    lower: float
    upper: float
    units: int
    verdict: Verdict | None
    estimate: Estimate


def check(parameters: Parameters) -> Parameters:
    """Returns `parameters`; raises InvalidRequest naming the field that cannot be tested:
    alpha and beta must lie strictly between 0 and 0.5, elo0 and elo1 be finite, at most
    `MAX_ELO` in size, and elo1 above elo0."""
    for name in ("alpha", "beta"):
        value = getattr(parameters, name)
        if not 0 < value < 0.5:  # also refuses NaN
            raise InvalidRequest(name, f"must lie strictly between 0 and 0.5, not {value:g}")
    for name in ("elo0", "elo1"):
        value = getattr(parameters, name)
        if not -MAX_ELO <= value <= MAX_ELO:
            raise InvalidRequest(name, f"must lie from {-MAX_ELO:g} to {MAX_ELO:g}, not {value:g}")
    if not parameters.elo1 > parameters.elo0:
        message = f"must be more than elo0 ({parameters.elo0:g}), not {parameters.elo1:g}"
        raise InvalidRequest("elo1", message)
    return parameters


def score(elo: float) -> float:
    """Returns the expected score of a comparison won by `elo` logistic Elo (`LLRcalc.L_`)."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo(score: float) -> float:
    """Returns the logistic Elo of an expected score, clamped to [0.001, 0.999]
    (`stat_util.elo`: about +-1200)."""
    x = min(max(score, EPSILON), 1 - EPSILON)
    return -400 * math.log10(1 / x - 1)


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Returns the LLR's lower and upper bounds: ln(beta / (1 - alpha)), ln((1 - beta) / alpha)."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def comparisons(counts: Sequence[float]) -> int:
    """Returns m, the comparisons per unit of results with 2m + 1 bins; raises ValueError for
    another length."""
    if len(counts) < 3 or len(counts) % 2 == 0:
        raise ValueError(f"results have 2m + 1 bins (m >= 1), not {len(counts)}")
    return (len(counts) - 1) // 2


def regularized(counts: Sequence[float]) -> list[float]:
    """Returns `counts` with each empty bin counting `EPSILON` (`LLRcalc.regularize`)."""
    return [count if count != 0 else EPSILON for count in counts]


def _pdf(counts: Sequence[float]) -> tuple[float, list[tuple[float, float]]]:
    """Returns the number of units and their score distribution, bins mapped onto [0, 1]
    (`LLRcalc.results_to_pdf`)."""
    results = regularized(counts)
    total = sum(results)
    last = len(results) - 1
    return total, [(i / last, count / total) for i, count in enumerate(results)]


def _secular(pdf: Sequence[tuple[float, float]]) -> float:
    """Returns the root x of sum_i p_i a_i / (1 + x a_i) = 0 between the poles -1/max(a) and
    -1/min(a) (`LLRcalc.secular`); the sum falls strictly there, so the root is one."""
    low = min(a for a, _ in pdf)
    high = max(a for a, _ in pdf)
    if low * high >= 0:
        raise ValueError("the secular equation needs values on both sides of zero")
    left, right = -1 / high + _BRACKET, -1 / low - _BRACKET
    x = 0.0
    for _ in range(200):
        value = slope = 0.0
        for a, p in pdf:
            term = a / (1 + x * a)
            value += p * term
            slope -= p * term * term
        if value > 0:
            left = x
        elif value < 0:
            right = x
        else:
            return x
        step = x - value / slope
        x_next = step if left < step < right else (left + right) / 2
        if abs(x_next - x) <= 1e-15 * max(1.0, abs(x)):
            return x_next
        x = x_next
    return x


def _mle_expected(pdf: Sequence[tuple[float, float]], s: float) -> list[float]:
    """Returns the probabilities, bin by bin, of the distribution on `pdf`'s values nearest
    it in likelihood whose expectation is `s` (`LLRcalc.MLE_expected`)."""
    x = _secular([(a - s, p) for a, p in pdf])
    return [p / (1 + x * (a - s)) for a, p in pdf]


def llr(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """Returns the generalized log-likelihood ratio of H1 (elo1) against H0 (elo0) for the
    results `counts` (`LLRcalc.LLR_logistic`); 0 for no results."""
    comparisons(counts)
    if not any(counts):
        return 0.0
    units, pdf = _pdf(counts)
    h0 = _mle_expected(pdf, score(elo0))
    h1 = _mle_expected(pdf, score(elo1))
    per_unit = sum(
        p * (math.log(p1) - math.log(p0)) for (_, p), p0, p1 in zip(pdf, h0, h1, strict=True)
    )
    return units * per_unit


def estimate(counts: Sequence[float]) -> Estimate:
    """Returns the Elo difference of the results `counts`, its 95% interval and its
    likelihood of superiority (`stat_util.get_elo`)."""
    m = comparisons(counts)
    results = regularized(counts)
    games = sum(results) * m
    mean = sum(count * i / 2 for i, count in enumerate(results)) / games
    per_unit = m * mean
    variance = sum(count * (i / 2 - per_unit) ** 2 for i, count in enumerate(results)) / games
    error = math.sqrt(variance / games)
    return Estimate(
        elo=elo(mean),
        lower=elo(mean - _Z95 * error),
        upper=elo(mean + _Z95 * error),
        los=NormalDist().cdf((mean - 0.5) / error),
    )


def verdict(value: float, lower: float, upper: float) -> Verdict | None:
    """Returns H0 once the LLR `value` is below `lower`, H1 once above `upper`, else None."""
    if value < lower:
        return "H0"
    if value > upper:
        return "H1"
    return None


def status(counts: Sequence[float], parameters: Parameters) -> Status:
    """Returns where a test of `parameters` stands on the results `counts`."""
    value = llr(counts, parameters.elo0, parameters.elo1)
    lower, upper = bounds(parameters.alpha, parameters.beta)
    units = round(sum(counts))
    return Status(value, lower, upper, units, verdict(value, lower, upper), estimate(counts))
