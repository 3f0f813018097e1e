"""How likely the whole verdict rule is to confirm a claim, before any GPU is booked.

GPU time is the scarcest thing our users have, so the plan asks for the
smallest per-arm repetition count that still gives each claim the requested
power. "Power" here is always the probability that the *whole* verdict rule of
``bot.stats.rule`` says CONFIRMED for the cell at the stated effect: the Welch
test at the stated level, and for directional claims the noise floor
(``T_eff = max(5%, 2 x CV_hat)`` from the baseline runs), the 15% CV halt, and
the runs the outlier rule excludes.

Model (``NoiseModel``). A run's aggregate metric is log-normal around its arm's
level: baseline log-scale sd ``sigma = sqrt(log(1 + cv^2))``, the evolved arm's
``evolved_ratio x sigma`` (the plan assumes the evolved arm may be up to twice
as noisy: a new routing policy can change the run-to-run spread as well as the
mean), and each run is independently an outlier (a throttled or drained run)
with probability ``outlier_rate``. The robust rule excludes such a run (it
catches a x5 run whenever it is not part of a majority), so with ``k_b, k_e``
outliers the cell is judged on ``n - k_b`` and ``n - k_e`` runs; a majority of
outliers in an arm is counted as a failure (conservative). The power is the
binomial mixture over ``k_b, k_e`` of the clean power.

Clean power. Given the two sample variances, the mean log difference is
independent of them (normal theory), so the power is an exact two-dimensional
integral over ``s_b^2 = sigma_b^2 chi2_{n_b-1}/(n_b-1)`` and the same for the
evolved arm:

    power = E[ P(d_hat passes the rule's bar(s_b, s_e)) ],  d_hat ~ N(delta, sigma_b^2/n_b + sigma_e^2/n_e)

where the bar is ``t_{1-alpha, df} x se_hat`` with Welch-Satterthwaite's df from
the sample variances, raised to the noise floor for directional claims, and the
cell counts as a failure when ``CV_hat > 15%``. The integral is a midpoint grid
in probability space over each chi-square (80 x 80 points): the integrand
has kinks (the noise floor) and a jump (the halt), which defeat Gauss
quadrature but not a probability-space grid; the grid error is below 0.1
percentage point. Because the verdict reports the ratio of geometric means
and the log-normal CV of the baseline runs, the model has no approximation left
beyond the grid; ``tests/stats`` checks it against simulated report values.

The effect is the relative change of the typical run (the ratio of geometric
means, equal to the ratio of means when both arms are equally noisy). A
no-worse claim's effect is the true change on the metric's own scale (0 = no
change; a latency claim's margin is on the increase side).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy import special  # not scipy.stats: its import is slow (bot.stats.dist says why)

from bot.stats import StatsError, dist
from bot.stats.rule import (
    DECREASE,
    EQUIVALENT,
    INCREASE,
    KINDS,
    MAX_CV,
    MIN_REPS,
    NO_WORSE,
    NOISE_FLOOR_CV_MULT,
    NOISE_FLOOR_MIN,
    noise_floor,
)

__all__ = [
    "MAX_CV",
    "MIN_REPS",
    "NOISE_FLOOR_CV_MULT",
    "NOISE_FLOOR_MIN",
    "NoiseModel",
    "claim_power",
    "claim_repetitions",
    "log_sd",
    "noise_floor",
    "power_at",
    "power_margin",
    "repetitions_for",
    "repetitions_for_margin",
]

#: Grid points per chi-square; 80 x 80 is within 0.1 percentage point of 400 x 400 on every case we checked.
_GRID = 80

Rule = Literal["verdict", "test"]


def log_sd(cv: float) -> float:
    """Log-scale sd of a log-normal with coefficient of variation ``cv``."""
    return math.sqrt(math.log1p(cv * cv))


@dataclass(frozen=True)
class NoiseModel:
    """Run-to-run noise the plan assumes: baseline CV, evolved/baseline spread ratio, outlier run rate."""

    cv: float
    evolved_ratio: float = 1.0
    outlier_rate: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.cv, (int, float)) and math.isfinite(self.cv) and self.cv >= 0):
            raise StatsError(f"coefficient of variation cv={self.cv!r}; pass a finite number >= 0 (e.g. 0.05 for 5%)")
        if not (isinstance(self.evolved_ratio, (int, float)) and 0 < self.evolved_ratio <= 10):
            raise StatsError(f"evolved_ratio={self.evolved_ratio!r}; pass the evolved/baseline spread ratio, e.g. 2")
        if not (isinstance(self.outlier_rate, (int, float)) and 0 <= self.outlier_rate < 0.5):
            raise StatsError(f"outlier_rate={self.outlier_rate!r}; pass a share of runs in [0, 0.5), e.g. 0.1")


def claim_power(
    kind: str,
    effect: float,
    n: int,
    alpha: float,
    noise: NoiseModel,
    *,
    margin: float = 0.05,
    better: str = "lower",
    n_evolved: int | None = None,
    rule: Rule = "verdict",
) -> float:
    """Probability that one cell with ``n`` (and ``n_evolved``) planned runs per arm confirms a claim of ``kind``.

    ``effect`` is the true relative change (-0.1 = 10% lower); ``alpha`` the level the
    verdict tests this claim at (after multiplicity control); ``rule="test"`` drops the
    noise floor and the CV halt (the test alone).
    """
    _check(kind, effect, alpha, margin, better)
    ne = n if n_evolved is None else n_evolved
    for k in (n, ne):
        if not isinstance(k, (int, np.integer)) or k < MIN_REPS:
            raise StatsError(f"n={k!r} repetitions per arm; need an integer >= {MIN_REPS}")
    return _mixture(kind, float(effect), int(n), int(ne), float(alpha), noise, float(margin), better, rule)


def claim_repetitions(
    kind: str,
    effect: float,
    alpha: float,
    noise: NoiseModel,
    *,
    target: float = 0.8,
    margin: float = 0.05,
    better: str = "lower",
    max_reps: int = 20,
    min_reps: int = MIN_REPS,
) -> int | None:
    """Smallest equal per-arm count in ``[min_reps, max_reps]`` reaching ``target`` power; None when none does.

    Power grows with the number of runs (at CVs below the 15% halt), so this bisects.
    """
    if not 0 < target < 1:
        raise StatsError(f"target power {target!r}; pass a probability strictly between 0 and 1, e.g. 0.8")
    if max_reps < MIN_REPS:
        raise StatsError(f"max_reps={max_reps!r}; pass at least {MIN_REPS}")
    lo, hi = max(min_reps, MIN_REPS), max_reps

    def enough(n: int) -> bool:
        return claim_power(kind, effect, n, alpha, noise, margin=margin, better=better) >= target

    if lo > hi or not enough(hi):
        return None
    while lo < hi:  # power grows with n: bisect for the smallest n that reaches the target
        mid = (lo + hi) // 2
        if enough(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


# --------------------------------------------------------------------------
# The earlier single-noise interface (equal spreads, no outliers), kept for callers and tests
# --------------------------------------------------------------------------


def power_at(cv: float, effect: float, n: int, alpha: float = 0.05, *, rule: Rule = "verdict") -> float:
    """Power of a directional claim (the sign of ``effect`` gives the direction) at ``cv``, equal spreads."""
    if not (isinstance(effect, (int, float)) and math.isfinite(effect) and effect > -1):
        raise StatsError(f"effect={effect!r}; pass a relative change > -1 (e.g. -0.10 for 10% lower)")
    kind = DECREASE if effect < 0 else INCREASE
    if effect == 0:
        return 0.0
    return claim_power(kind, effect, n, alpha, NoiseModel(cv), rule=rule)


def repetitions_for(
    cv: float,
    effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    max_reps: int = 20,
    rule: Rule = "verdict",
) -> int:
    """Smallest per-arm count with ``power`` for a directional claim; ``max_reps`` when none reaches it."""
    if not 0 < power < 1:
        raise StatsError(f"repetitions_for: power={power!r}; pass a probability strictly between 0 and 1, e.g. 0.8")
    if max_reps < MIN_REPS:
        raise StatsError(f"repetitions_for: max_reps={max_reps!r}; pass at least {MIN_REPS}")
    for n in range(MIN_REPS, max_reps + 1):
        if power_at(cv, effect, n, alpha, rule=rule) >= power:
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
    """Power of TOST / of the no-worse test for a lower-is-better metric at ``cv``, equal spreads."""
    if kind not in (EQUIVALENT, NO_WORSE):
        raise StatsError(f"power_margin: kind={kind!r}; pass 'equivalent' or 'no-worse'")
    return claim_power(kind, true_effect, n, alpha, NoiseModel(cv), margin=margin)


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
    """Smallest per-arm n giving ``power`` to an equivalence / no-worse claim; ``max_reps`` if none."""
    if not 0 < power < 1:
        raise StatsError(f"repetitions_for_margin: power={power!r}; pass a probability strictly between 0 and 1")
    n = claim_repetitions(kind, true_effect, alpha, NoiseModel(cv), target=power, margin=margin, max_reps=max_reps)
    return max_reps if n is None else n


# --------------------------------------------------------------------------
# The integral
# --------------------------------------------------------------------------


def _check(kind: str, effect: float, alpha: float, margin: float, better: str) -> None:
    if kind not in KINDS:
        raise StatsError(f"claim kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not (isinstance(effect, (int, float)) and math.isfinite(effect) and effect > -1):
        raise StatsError(f"effect={effect!r}; pass a relative change > -1 (e.g. -0.10 for 10% lower)")
    if not 0 < alpha < 0.5:
        raise StatsError(f"alpha={alpha!r}; pass a one-sided significance level between 0 and 0.5, e.g. 0.05")
    if not 0 < margin < 1:
        raise StatsError(f"margin={margin!r}; pass a relative margin between 0 and 1, e.g. 0.05")
    if better not in ("lower", "higher"):
        raise StatsError(f"better={better!r}; pass 'lower' or 'higher'")


@lru_cache(maxsize=16384)
def _mixture(
    kind: str, effect: float, n: int, ne: int, alpha: float, noise: NoiseModel, margin: float, better: str, rule: Rule
) -> float:
    q = noise.outlier_rate
    if q == 0:
        return _clean(kind, effect, n, ne, alpha, noise.cv, noise.evolved_ratio, margin, better, rule)
    pb_all, pe_all = _binomial(n, q), _binomial(ne, q)
    total = 0.0
    for kb in range(n + 1):
        for ke in range(ne + 1):
            w = pb_all[kb] * pe_all[ke]
            if w < 1e-7 or not (_excludable(kb, n) and _excludable(ke, ne)):
                continue
            total += w * _clean(
                kind, effect, n - kb, ne - ke, alpha, noise.cv, noise.evolved_ratio, margin, better, rule
            )
    return total


def _binomial(n: int, q: float) -> list[float]:
    """P(k of n runs are outliers) for k = 0..n, outliers independent at rate q. Written out rather than taken from
    scipy.stats, whose import (most of a second) every planning process paid for these few numbers; the two agree
    to 1e-12 relative for the arm sizes a plan has."""
    return [math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]


def _excludable(k: int, n: int) -> bool:
    """The robust rule removes k bad runs of n: none, or a minority of an arm of 3 or more."""
    return k == 0 or (n >= 3 and k <= (n - 1) // 2)


@lru_cache(maxsize=16384)
def _clean(
    kind: str,
    effect: float,
    nb: int,
    ne: int,
    alpha: float,
    cv: float,
    ratio: float,
    margin: float,
    better: str,
    rule: Rule,
) -> float:
    delta = math.log1p(effect)
    if cv == 0:
        return _noiseless(kind, effect, delta, margin, better, rule)
    sb = log_sd(cv)
    se_ = ratio * sb
    ub, ue = _chi2_grid(nb - 1), _chi2_grid(ne - 1)
    s2b = sb * sb * ub[:, None]  # baseline sample variance (rows)
    s2e = se_ * se_ * ue[None, :]  # evolved sample variance (columns)
    vb, ve = s2b / nb, s2e / ne
    se_hat = np.sqrt(vb + ve)
    df = (vb + ve) ** 2 / (vb**2 / (nb - 1) + ve**2 / (ne - 1))
    bar = _t_quantile(1 - alpha, df, min(nb, ne) - 1, nb + ne - 2) * se_hat
    se_true = math.sqrt(sb * sb / nb + se_ * se_ / ne)
    cv_hat = np.sqrt(np.expm1(s2b))
    if kind in (DECREASE, INCREASE):
        s = -1.0 if kind == DECREASE else 1.0
        if rule == "verdict":
            t_eff = np.maximum(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT * cv_hat)
            with np.errstate(divide="ignore", invalid="ignore"):
                floor_log = np.log1p(t_eff) if s > 0 else -np.log1p(-np.minimum(t_eff, 1.0))
            bar = np.maximum(bar, floor_log)
        p = special.ndtr((s * delta - bar) / se_true)
    elif kind == EQUIVALENT:
        lo, hi = math.log1p(-margin), math.log1p(margin)
        p = np.maximum(special.ndtr((hi - bar - delta) / se_true) - special.ndtr((lo + bar - delta) / se_true), 0)
    else:  # NO_WORSE: confirm when bad * d_hat < bad * bound - bar
        bad = 1.0 if better == "lower" else -1.0
        bound = math.log1p(bad * margin)
        p = special.ndtr((bad * bound - bar - bad * delta) / se_true)
    if rule == "verdict":
        p = np.where(cv_hat > MAX_CV, 0.0, p)
    return float(np.mean(p))


@lru_cache(maxsize=64)
def _chi2_grid(k: int) -> np.ndarray:
    """Midpoints in probability space of chi2_k / k (a sample variance over its expectation)."""
    q = (np.arange(_GRID) + 0.5) / _GRID
    return dist.chi2_ppf(q, k) / k


def _t_quantile(p: float, df: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Student t quantiles for Welch df values in [lo, hi], interpolated in 1/df from 64 exact ones.

    The quantile is smooth and monotone in 1/df, so 64 nodes give it to ~1e-5; calling the exact
    inverse on every one of the 40,000 grid points would cost 50 times more.
    """
    nodes = _t_nodes(p, float(lo), float(hi))
    x = 1.0 / np.clip(df, lo, hi)
    return np.interp(x, nodes[0], nodes[1])


@lru_cache(maxsize=4096)
def _t_nodes(p: float, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    inv = np.linspace(1.0 / hi, 1.0 / lo, 64) if hi > lo else np.array([1.0 / hi, 1.0 / hi + 1e-12])
    return inv, special.stdtrit(1.0 / inv, p)


def _noiseless(kind: str, effect: float, delta: float, margin: float, better: str, rule: Rule) -> float:
    if kind in (DECREASE, INCREASE):
        s = -1.0 if kind == DECREASE else 1.0
        moved = s * effect > 0
        return 1.0 if moved and (rule == "test" or s * effect > NOISE_FLOOR_MIN) else 0.0
    if kind == EQUIVALENT:
        return 1.0 if math.log1p(-margin) < delta < math.log1p(margin) else 0.0
    bad = 1.0 if better == "lower" else -1.0
    return 1.0 if bad * delta < bad * math.log1p(bad * margin) else 0.0
