"""How many benchmark repetitions a directional claim needs, before any GPU is booked.

GPU time is the scarcest thing our users have, so the plan asks for the
smallest per-arm repetition count that still gives each directional claim the
requested power (80% by default) at the effect it is planned for (the plan uses
2 x the noise floor T_eff).

Model. A run's aggregate metric (mean TTFT, p95 E2E, throughput ...) is a
positive number whose run-to-run spread is multiplicative, so we model the
repetitions of each arm as log-normal with coefficient of variation ``cv``
(log-scale sd ``sigma = sqrt(log(1 + cv^2))``) and the treatment effect as a
relative shift ``effect`` (-0.10 = the evolved treatment is 10% lower), i.e. a
log-scale shift ``delta = log(1 + effect)``. This is the model the verdict code
tests under: a one-sided Welch t-test on log values (see ``bot.stats.verdicts``
for why Welch-on-logs rather than Mann-Whitney U).

Method. Given the two sample variances, the mean log difference is independent
of them (normal theory), so the power is an exact two-dimensional integral:

    power = E_{s_b^2, s_e^2}[ Phi((|delta| - bar(s_b, s_e)) / (sigma sqrt(2/n))) ]

with ``s^2 = sigma^2 chi2_{n-1} / (n-1)`` for each arm and ``bar`` the smallest
observed log shift the decision accepts: ``t_{1-alpha, df} * se_hat`` where
``df`` is Welch-Satterthwaite's df from the two sample variances (so the power
is Welch's, not the optimistic pooled-t power with ``2n-2`` df). With
``rule="verdict"`` (the default) the integral also applies the verdict's other
conditions, because they cost power at small n: the observed effect must exceed
the noise floor ``T_eff = max(5%, 2 x CV_hat)`` estimated from the baseline
repetitions, and a baseline ``CV_hat`` above 15% halts the cell as too noisy.
``rule="test"`` gives the power of the Welch test alone.

The integral is evaluated on a midpoint grid in probability space over each
chi-square (200 x 200 points): the integrand has kinks (the ``max`` with the
noise floor) and a jump (the noise halt), which defeat Gauss quadrature but not
a probability-space grid; the grid error is well below 0.5 percentage points.
Two approximations remain: the raw-scale sample CV is taken as
``sqrt(exp(s_b^2) - 1)``, and the observed relative change (ratio of
arithmetic means) as ``exp(mean log difference) - 1``; both are tight at the CVs
where planning matters (< 15%). The 90% bootstrap interval the verdict also
requires is narrower than Welch's interval at these n, so it practically never
binds once the test rejects. ``tests/stats/test_power.py`` checks the result by
simulating the full ``evaluate`` rule on raw data.

Equivalence and no-regression claims (Track C) are decided by TOST / a
one-sided non-inferiority test against a fixed margin, not by the noise floor;
``power_margin`` / ``repetitions_for_margin`` give their power by the same
two-dimensional integral (true shift 0 by default). They need many more
repetitions than a directional claim at 2 x T_eff: showing "within 5%" at a CV
of 4% is a much finer statement than showing "at least 10% lower".

Holm. The verdict controls the family-wise error across a track with Holm.
The plan can size for the worst case by passing ``alpha / m`` for a track of
``m`` cells; the default sizes each claim at ``alpha``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import stats

from bot.stats import StatsError

#: The verdict's noise floor: T_eff = max(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT x baseline CV).
NOISE_FLOOR_MIN = 0.05
NOISE_FLOOR_CV_MULT = 2.0
#: A baseline CV above this halts the cell as "cluster too noisy" (sim2real v3's rule).
MAX_CV = 0.15
#: Fewer repetitions per arm than this cannot estimate a variance.
MIN_REPS = 2

_GRID = 200

Rule = Literal["verdict", "test"]


def log_sd(cv: float) -> float:
    """Log-scale sd of a log-normal with coefficient of variation ``cv``."""
    return math.sqrt(math.log1p(cv * cv))


def noise_floor(cv: float) -> float:
    """T_eff for a baseline CV: the smallest relative effect the verdict treats as real."""
    return max(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT * cv)


def power_at(cv: float, effect: float, n: int, alpha: float = 0.05, *, rule: Rule = "verdict") -> float:
    """Probability that ``n`` repetitions per arm confirm a true relative shift ``effect``.

    ``cv`` is the per-run coefficient of variation of the metric (baseline and
    evolved assumed alike), ``effect`` the signed relative change the claim
    predicts (-0.1 = 10% lower; the sign matters only through the log: a 10%
    decrease is a larger log shift than a 10% increase). See the module
    docstring for the method.
    """
    _check(cv, effect, alpha)
    if not isinstance(n, (int, np.integer)) or n < MIN_REPS:
        raise StatsError(f"power_at: n={n!r} repetitions per arm; need an integer >= {MIN_REPS}")
    return _power(float(cv), float(effect), int(n), float(alpha), rule)


def repetitions_for(
    cv: float,
    effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    max_reps: int = 20,
    rule: Rule = "verdict",
) -> int:
    """Smallest per-arm repetition count with at least ``power`` to confirm ``effect`` at ``cv``.

    Returns ``max_reps`` when even that many do not reach the power (e.g. a
    cluster whose CV is near the 15% halt, or an effect inside the noise
    floor); callers that must say so check ``power_at(cv, effect, max_reps)``.
    """
    _check(cv, effect, alpha)
    if not 0 < power < 1:
        raise StatsError(f"repetitions_for: power={power!r}; pass a probability strictly between 0 and 1, e.g. 0.8")
    if max_reps < MIN_REPS:
        raise StatsError(f"repetitions_for: max_reps={max_reps!r}; pass at least {MIN_REPS}")
    for n in range(MIN_REPS, max_reps + 1):
        if _power(float(cv), float(effect), n, float(alpha), rule) >= power:
            return n
    return max_reps


def power_margin(
    cv: float,
    margin: float,
    n: int,
    alpha: float = 0.05,
    *,
    kind: Literal["equivalent", "no-worse"] = "equivalent",
    true_effect: float = 0.0,
) -> float:
    """Power of TOST (``kind="equivalent"``: within ±margin) or of the one-sided no-regression
    test (``"no-worse"``: not worse than ``margin`` on the bad side, expressed here as an
    increase; pass the true relative change on that scale) with ``n`` repetitions per arm.

    Same log-normal model and grid as ``power_at``; the verdict's CV > 15% halt applies.
    """
    _check(cv, true_effect, alpha)
    if not 0 < margin < 1:
        raise StatsError(f"margin={margin!r}; pass a relative margin between 0 and 1, e.g. 0.05")
    if not isinstance(n, (int, np.integer)) or n < MIN_REPS:
        raise StatsError(f"power_margin: n={n!r} repetitions per arm; need an integer >= {MIN_REPS}")
    if kind not in ("equivalent", "no-worse"):
        raise StatsError(f"power_margin: kind={kind!r}; pass 'equivalent' or 'no-worse'")
    return _power_margin(float(cv), float(margin), int(n), float(alpha), kind, float(true_effect))


def repetitions_for_margin(
    cv: float,
    margin: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    max_reps: int = 20,
    kind: Literal["equivalent", "no-worse"] = "equivalent",
    true_effect: float = 0.0,
) -> int:
    """Smallest per-arm n giving ``power`` to confirm an equivalence / no-regression claim; ``max_reps`` if none."""
    if not 0 < power < 1:
        raise StatsError(f"repetitions_for_margin: power={power!r}; pass a probability strictly between 0 and 1")
    if max_reps < MIN_REPS:
        raise StatsError(f"repetitions_for_margin: max_reps={max_reps!r}; pass at least {MIN_REPS}")
    for n in range(MIN_REPS, max_reps + 1):
        if power_margin(cv, margin, n, alpha, kind=kind, true_effect=true_effect) >= power:
            return n
    return max_reps


@lru_cache(maxsize=4096)
def _power_margin(cv: float, margin: float, n: int, alpha: float, kind: str, true_effect: float) -> float:
    delta = math.log1p(true_effect)
    hi, lo = math.log1p(margin), math.log1p(-margin)
    if cv == 0:
        inside = lo < delta < hi if kind == "equivalent" else delta < hi
        return 1.0 if inside else 0.0
    sigma = log_sd(cv)
    k = n - 1
    q = (np.arange(_GRID) + 0.5) / _GRID
    u = stats.chi2.ppf(q, k) / k
    s2_b = sigma * sigma * u[:, None]
    s2_e = sigma * sigma * u[None, :]
    se_hat = np.sqrt((s2_b + s2_e) / n)
    df = k * (s2_b + s2_e) ** 2 / (s2_b**2 + s2_e**2)
    bar = stats.t.ppf(1 - alpha, df) * se_hat
    se_true = sigma * math.sqrt(2.0 / n)
    upper = stats.norm.cdf((hi - bar - delta) / se_true)  # P(d_hat < hi - bar)
    if kind == "equivalent":
        lower = stats.norm.cdf((lo + bar - delta) / se_true)  # P(d_hat <= lo + bar)
        p = np.maximum(upper - lower, 0.0)
    else:
        p = upper
    p = np.where(np.sqrt(np.expm1(s2_b)) > MAX_CV, 0.0, p)
    return float(p.mean())


def _check(cv: float, effect: float, alpha: float) -> None:
    if not (isinstance(cv, (int, float)) and math.isfinite(cv) and cv >= 0):
        raise StatsError(f"coefficient of variation cv={cv!r}; pass a finite number >= 0 (e.g. 0.05 for 5%)")
    if not (isinstance(effect, (int, float)) and math.isfinite(effect) and effect > -1):
        raise StatsError(f"effect={effect!r}; pass a relative change > -1 (e.g. -0.10 for 10% lower)")
    if not 0 < alpha < 0.5:
        raise StatsError(f"alpha={alpha!r}; pass a one-sided significance level between 0 and 0.5, e.g. 0.05")


@lru_cache(maxsize=4096)
def _power(cv: float, effect: float, n: int, alpha: float, rule: Rule) -> float:
    delta = abs(math.log1p(effect))
    sign = 1.0 if effect >= 0 else -1.0
    if delta == 0:
        return 0.0
    if cv == 0:  # no noise: the observed effect is the true one
        if rule == "test":
            return 1.0
        return 1.0 if abs(effect) > NOISE_FLOOR_MIN else 0.0
    sigma = log_sd(cv)
    k = n - 1
    # Midpoint grid in probability space over chi2_k for each arm's sample variance.
    q = (np.arange(_GRID) + 0.5) / _GRID
    u = stats.chi2.ppf(q, k) / k
    s2_b = sigma * sigma * u[:, None]  # baseline sample variance (rows)
    s2_e = sigma * sigma * u[None, :]  # evolved sample variance (columns)
    se_hat = np.sqrt((s2_b + s2_e) / n)
    df = k * (s2_b + s2_e) ** 2 / (s2_b**2 + s2_e**2)
    bar = stats.t.ppf(1 - alpha, df) * se_hat
    if rule == "verdict":
        cv_hat = np.sqrt(np.expm1(s2_b))
        t_eff = np.maximum(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT * cv_hat)
        # |exp(d) - 1| > T_eff in the predicted direction, as a log-scale bar;
        # a decrease floor >= 100% can never be met.
        with np.errstate(divide="ignore", invalid="ignore"):
            floor_log = np.where(sign > 0, np.log1p(t_eff), -np.log1p(-np.minimum(t_eff, 1.0)))
        bar = np.maximum(bar, floor_log)
    p = stats.norm.sf((bar - delta) / (sigma * math.sqrt(2.0 / n)))
    if rule == "verdict":
        p = np.where(cv_hat > MAX_CV, 0.0, p)
    return float(p.mean())
