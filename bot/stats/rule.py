"""The per-cell decision rule, vectorised: the same code judges one experiment and 10,000 simulated ones.

A *cell* is one (workload, rate, metric) measured in both arms: ``n`` run-level
values per arm (mean TTFT of a run, p95 E2E of a run ...). Everything here takes
arrays of shape ``(S, n)``, one row per experiment, ``NaN`` where a row has fewer
repetitions, so ``bot.stats.verdicts.evaluate`` (S = 1, real reports), the power
simulations in ``tests/stats`` and the sequential runner all decide with one rule.
Nothing here does I/O or knows about hypotheses; ``verdicts`` and ``sequential``
map hypotheses onto it.

Scale. Values are analysed on the log scale: run-to-run spread of latency and
throughput is multiplicative (a slower node scales every request), so logs make
it additive and symmetric, and a relative claim ("10% lower") is a location
shift there. The relative change reported is the ratio of geometric means,
``exp(mean log evolved - mean log baseline) - 1``, the quantity the test is about;
the baseline CV is the log-normal CV implied by the log-scale sd,
``sqrt(exp(s^2) - 1)`` (equal to the raw-scale CV to within a few hundredths of
itself at the CVs that matter, < 15%).

Outlier runs. One run out of many can be wrong by a factor (a throttled GPU, a
node drained mid-run, a cold cache): a x5 run would otherwise dominate the mean,
the variance, the CV guard and so the verdict. A run is flagged when its log
value is farther from its arm's median than both

- ``OUTLIER_Z`` robust standard deviations, the scale being 1.4826 x the median
  absolute deviation (MAD) of an arm's residuals from its median, the larger of
  the two arms' MADs (one threshold for both arms); and
- ``log(OUTLIER_RATIO)``: at least 1.5x (or 1/1.5x) its arm's median, a
  deviation no run-to-run noise under the 15% CV guard plausibly produces, so a
  quiet cluster's small MAD never flags ordinary runs;

or farther than ``log(OUTLIER_CERTAIN_RATIO)`` (3x or 1/3x the arm median, 7 sd
at the 15% CV guard) whatever the MAD says: with 3 runs per arm the MAD is
itself so noisy that it would otherwise hide a x5 run one time in seven.

Why the larger MAD and 5 rather than Iglewicz and Hoaglin's 3.5. The plan allows
an evolved arm twice as noisy as the baseline. A MAD pooled over both arms let
the quieter baseline pull the scale down, so ordinary runs of the noisier arm
~2 sd from its median were dropped; trimming an arm's tails shrinks its variance
and Welch's t turns liberal: a no-worse claim at its margin was confirmed 7.1%
of the time at alpha 5% (CV 10%, evolved x2, 10 runs per arm; 0.049 with no
outlier rule). Each arm's own MAD at 3.5 still gave 5.9%: at 10 runs the MAD is
noisy enough that 8% of clean noisy arms lose a run. The larger MAD at 5 gives
5.1% (4.75% at CV 12%, 4.97% at 7 runs; 200,000 draws each) and leaves the
quiet arms the rule is for unchanged, where the x1.5 floor (4 sd at CV 10%)
decides. What it gives up: a x2 run is no longer told apart in an arm of 3
(that arm's MAD includes the run itself) and is caught less often in a noisy
arm (CV 10%: 68% of the time at 10 runs, 26% at 5); a x3 run still is in any
arm of 4 or more, and a x5 run always.

A run that sits with the other arm while its own arm's median does not is never
flagged: with 3 runs and 2 of them bad, the good run would look like the outlier
(the cell then halts as too noisy instead). A flagged run is excluded from every
estimate of the cell (means, variances, CV, noise floor, test) and listed in the
evidence; an arm needs 3 runs before any of
its runs can be flagged and never loses more than ``(n - 1) // 2`` (a median
cannot tell a majority of bad runs from a shifted cluster). The rule is
symmetric in the two arms and in direction, and no arm's runs are judged
against a scale smaller than its own spread, so it cannot favour a claim.

Tests (per cell, one-sided, Welch's unequal-variance t on logs with
Satterthwaite's df, computed on the retained runs):

- DECREASE / INCREASE: ``p_confirm`` for "the shift is in the predicted
  direction", ``p_refute`` for the opposite;
- EQUIVALENT (TOST, margin m): ``p_confirm = max`` of the two one-sided tests
  against ``log(1 - m)`` and ``log(1 + m)``; ``p_refute`` tests "beyond the margin"
  on the side the estimate lies;
- NO_WORSE (margin m on the metric's bad side): ``p_confirm`` tests "less than m
  worse", ``p_refute`` "more than m worse".

``effective_p`` folds in the conditions that are not tests: a cell that cannot be
tested (missing or non-positive values, fewer than 2 retained runs per arm, a
baseline CV above ``MAX_CV``) gets p = 1, and a directional confirmation
(refutation) also needs the observed change beyond the noise floor
``T_eff = max(5%, 2 x CV)`` in the predicted (opposite) direction. Extra conditions
only remove rejections, so every error-rate guarantee of the tests carries over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special  # not scipy.stats: its import is slow (bot.stats.dist says why)

from bot.stats import dist

#: The verdict's noise floor: T_eff = max(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT x baseline CV).
NOISE_FLOOR_MIN = 0.05
NOISE_FLOOR_CV_MULT = 2.0
#: A baseline CV above this halts the cell as "cluster too noisy" (sim2real v3's rule).
MAX_CV = 0.15
#: Fewer retained repetitions per arm than this cannot estimate a variance.
MIN_REPS = 2
#: Outlier rule: robust z threshold (above Iglewicz & Hoaglin's 3.5, see the module docstring) and the smallest
#: factor from the arm median.
OUTLIER_Z = 5.0
OUTLIER_RATIO = 1.5
#: ... and a run this far from its arm median is flagged whatever the MAD says (7 sd at the 15% CV guard).
OUTLIER_CERTAIN_RATIO = 3.0
#: An arm needs this many runs before one can be flagged (with 2 runs neither is more central).
OUTLIER_MIN_RUNS = 3
_MAD_TO_SD = 1.4826

DECREASE, INCREASE, EQUIVALENT, NO_WORSE = "decrease", "increase", "equivalent", "no-worse"
KINDS = (DECREASE, INCREASE, EQUIVALENT, NO_WORSE)


def noise_floor(cv: float | np.ndarray) -> float | np.ndarray:
    """T_eff for a baseline CV: the smallest relative effect the verdict treats as real."""
    if isinstance(cv, np.ndarray):
        return np.maximum(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT * cv)
    return max(NOISE_FLOOR_MIN, NOISE_FLOOR_CV_MULT * cv)


def as_rows(values: np.ndarray | list) -> np.ndarray:
    """A float array of shape (S, n): one row per experiment (1-d input is one experiment)."""
    a = np.asarray(values, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"expected values of shape (experiments, repetitions), got {a.shape}")
    return a


# --------------------------------------------------------------------------
# Outliers
# --------------------------------------------------------------------------


def outlier_flags(log_b: np.ndarray, log_e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (same shapes as the inputs) of the runs the robust rule flags; NaN is never flagged."""
    med_b, med_e = _row_median(log_b), _row_median(log_e)
    res_b, res_e = log_b - med_b, log_e - med_e
    flag_b, flag_e = np.zeros(log_b.shape, bool), np.zeros(log_e.shape, bool)
    # The threshold is never below log(OUTLIER_RATIO), so a row with no run that far from its arm's median has
    # no flag: the scale is estimated for the other rows only (row by row, the same numbers; most simulated
    # rows are quiet, and the MADs are most of the rule's cost).
    floor = math.log(OUTLIER_RATIO)
    rows = np.flatnonzero(np.any(np.abs(res_b) > floor, axis=1) | np.any(np.abs(res_e) > floor, axis=1))
    if rows.size == 0:
        return flag_b, flag_e
    res_b, res_e, med_b, med_e = res_b[rows], res_e[rows], med_b[rows], med_e[rows]
    mad = np.maximum(_mad(res_b), _mad(res_e))  # never a scale below either arm's own spread
    threshold = np.clip(OUTLIER_Z * _MAD_TO_SD * mad, floor, math.log(OUTLIER_CERTAIN_RATIO))
    flag_b[rows] = _limit(np.abs(res_b), threshold) & ~_ambiguous(log_b[rows], med_b, med_e)
    flag_e[rows] = _limit(np.abs(res_e), threshold) & ~_ambiguous(log_e[rows], med_e, med_b)
    return flag_b, flag_e


def _mad(res: np.ndarray) -> np.ndarray:
    """Median absolute residual of each row, shape (S, 1); 0 for a row without any."""
    dev = np.abs(res)
    mad = _row_median(np.where(dev > 0, dev, np.nan))  # an odd arm's median is its own zero residual
    return np.where(np.isfinite(mad), mad, 0.0)


def _ambiguous(own: np.ndarray, med_own: np.ndarray, med_other: np.ndarray) -> np.ndarray:
    """Runs that sit with the other arm while their own arm's median does not.

    With 3 runs and 2 of them bad, the arm's median is a bad run and the one good run looks like
    the outlier; excluding it would turn two bad runs into a fivefold 'effect'. Such a run is left
    in: the arm's spread then halts the cell as too noisy instead of confirming anything.
    """
    with np.errstate(invalid="ignore"):
        apart = np.abs(med_own - med_other) >= math.log(OUTLIER_RATIO)
        return apart & (np.abs(own - med_other) < math.log(OUTLIER_RATIO))


def _row_median(x: np.ndarray) -> np.ndarray:
    """Median of each row's finite values, shape (S, 1); NaN for a row without any (faster than nanmedian)."""
    if x.shape[1] == 0:
        return np.full((x.shape[0], 1), np.nan)
    finite = np.isfinite(x)
    if finite.all():  # the usual case: every row has every run, so one pair of columns holds the medians
        srt, k = np.sort(x, axis=1), x.shape[1]
        return (srt[:, (k - 1) // 2, None] + srt[:, k // 2, None]) / 2.0
    srt = np.sort(np.where(finite, x, np.inf), axis=1)
    n = finite.sum(axis=1)
    lo = np.take_along_axis(srt, np.maximum((n - 1) // 2, 0)[:, None], axis=1)
    hi = np.take_along_axis(srt, np.maximum(n // 2, 0)[:, None], axis=1)
    with np.errstate(invalid="ignore"):
        return np.where((n > 0)[:, None], (lo + hi) / 2.0, np.nan)


def _limit(dev: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Flag deviations beyond the threshold, at most (n - 1) // 2 per row, the largest first."""
    finite = np.isfinite(dev)
    n = finite.sum(axis=1, keepdims=True)
    over = finite & (dev > threshold)
    allowed = np.where(n >= OUTLIER_MIN_RUNS, (n - 1) // 2, 0)
    # A row with no more runs over the threshold than it may lose keeps them all flagged: they are its largest
    # deviations. Only the other rows need the ranking (the same rows give the same ranks).
    crowded = np.flatnonzero(over.sum(axis=1) > allowed[:, 0])
    if crowded.size < dev.shape[0]:
        if crowded.size:
            over[crowded] = _limit(dev[crowded], threshold[crowded])
        return over
    # rank deviations within the row, largest first (NaN last)
    order = np.argsort(-np.where(finite, dev, -np.inf), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(dev.shape[1])[None, :].repeat(dev.shape[0], axis=0), axis=1)
    return over & (rank < allowed)


# --------------------------------------------------------------------------
# Cell statistics
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CellStats:
    """Everything the rule needs about a batch of cells; every field has one entry per row (experiment)."""

    n_b: np.ndarray  # retained runs per arm
    n_e: np.ndarray
    raw_b: np.ndarray  # runs present per arm (retained + flagged)
    raw_e: np.ndarray
    flag_b: np.ndarray  # (S, n) masks of flagged runs
    flag_e: np.ndarray
    positive: np.ndarray  # every present value finite and > 0
    mean_b: np.ndarray  # arithmetic means of the retained runs (what people read)
    mean_e: np.ndarray
    d: np.ndarray  # mean log evolved - mean log baseline
    se: np.ndarray
    df: np.ndarray
    cv: np.ndarray  # baseline CV from the retained runs' log sd
    t_eff: np.ndarray

    @property
    def rel(self) -> np.ndarray:
        """Relative change, the ratio of geometric means minus 1."""
        return np.expm1(self.d)

    @property
    def enough(self) -> np.ndarray:
        return (self.n_b >= MIN_REPS) & (self.n_e >= MIN_REPS)

    @property
    def testable(self) -> np.ndarray:
        """Positive values, at least MIN_REPS retained runs per arm, and a baseline CV within MAX_CV."""
        return self.positive & self.enough & (self.cv <= MAX_CV)


def cell_stats(baseline: np.ndarray, evolved: np.ndarray, *, robust: bool = True) -> CellStats:
    """Statistics of a batch of cells: ``baseline``/``evolved`` of shape (S, n), NaN = no run.

    ``robust=False`` switches the outlier rule off (the tests use it to show what it buys).
    """
    b, e = as_rows(baseline), as_rows(evolved)
    present_b, present_e = np.isfinite(b), np.isfinite(e)
    positive = np.all(~present_b | (b > 0), axis=1) & np.all(~present_e | (e > 0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lb = np.where(present_b & (b > 0), np.log(np.where(b > 0, b, 1.0)), np.nan)
        le = np.where(present_e & (e > 0), np.log(np.where(e > 0, e, 1.0)), np.nan)
    if robust:
        flag_b, flag_e = outlier_flags(lb, le)
    else:
        flag_b, flag_e = np.zeros(b.shape, bool), np.zeros(e.shape, bool)
    keep_b, keep_e = np.isfinite(lb) & ~flag_b, np.isfinite(le) & ~flag_e
    n_b, n_e = keep_b.sum(axis=1), keep_e.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mb, me = _mean(lb, keep_b, n_b), _mean(le, keep_e, n_e)
        vb, ve = _var(lb, keep_b, n_b, mb), _var(le, keep_e, n_e, me)
        qb, qe = vb / n_b, ve / n_e
        se = np.sqrt(qb + qe)
        df = (qb + qe) ** 2 / (qb**2 / (n_b - 1) + qe**2 / (n_e - 1))
        df = np.where(se > 0, df, n_b + n_e - 2.0)
        cv = np.sqrt(np.expm1(vb))
        mean_b = np.where(n_b > 0, np.where(keep_b, b, 0.0).sum(axis=1) / n_b, np.nan)
        mean_e = np.where(n_e > 0, np.where(keep_e, e, 0.0).sum(axis=1) / n_e, np.nan)
    return CellStats(
        n_b=n_b,
        n_e=n_e,
        raw_b=present_b.sum(axis=1),
        raw_e=present_e.sum(axis=1),
        flag_b=flag_b,
        flag_e=flag_e,
        positive=positive,
        mean_b=mean_b,
        mean_e=mean_e,
        d=me - mb,
        se=se,
        df=df,
        cv=cv,
        t_eff=noise_floor(np.where(np.isfinite(cv), cv, 0.0)),
    )


def _mean(x: np.ndarray, keep: np.ndarray, n: np.ndarray) -> np.ndarray:
    return np.where(n > 0, np.where(keep, x, 0.0).sum(axis=1) / np.maximum(n, 1), np.nan)


def _var(x: np.ndarray, keep: np.ndarray, n: np.ndarray, mean: np.ndarray) -> np.ndarray:
    dev = np.where(keep, x - mean[:, None], 0.0)
    return np.where(n > 1, (dev * dev).sum(axis=1) / np.maximum(n - 1, 1), np.nan)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def sf(x: np.ndarray, se: np.ndarray, df: np.ndarray) -> np.ndarray:
    """P(T >= x / se), the one-sided p for 'the shift exceeds 0 by x'; se = 0 means no noise at all."""
    x, se, df = np.broadcast_arrays(np.asarray(x, float), np.asarray(se, float), np.asarray(df, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = special.stdtr(np.where(df > 0, df, 1.0), -x / np.where(se > 0, se, 1.0))  # = t.sf, without the overhead
    exact = np.where(x > 0, 0.0, np.where(x == 0, 0.5, 1.0))
    p = np.where(se > 0, p, exact)
    return np.where(np.isfinite(x) & np.isfinite(se), p, 1.0)


def bad_sign(better: str) -> float:
    """+1 when higher values are worse (latency), -1 when lower values are worse (throughput)."""
    return 1.0 if better == "lower" else -1.0


def p_values(st: CellStats, kind: str, margin: float, better: str) -> tuple[np.ndarray, np.ndarray]:
    """Raw one-sided p-values (p_confirm, p_refute) of the cell's test for a claim of this kind.

    A mirror-image test's p-value is 1 minus the other's (also for se = 0), so each costs one
    t-distribution evaluation.
    """
    d, se, df = st.d, st.se, st.df
    if kind in (DECREASE, INCREASE):
        s = -1.0 if kind == DECREASE else 1.0
        p = sf(s * d, se, df)
        return p, np.where(np.isfinite(d) & np.isfinite(se), 1.0 - p, 1.0)
    if kind == EQUIVALENT:
        lo, hi = math.log1p(-margin), math.log1p(margin)
        p_lo, p_hi = sf(d - lo, se, df), sf(hi - d, se, df)  # H0: shift <= lo; H0: shift >= hi
        ok = np.isfinite(d) & np.isfinite(se)
        p_refute = np.where(ok, np.where(d >= 0, 1.0 - p_hi, 1.0 - p_lo), 1.0)
        return np.maximum(p_lo, p_hi), p_refute
    if kind == NO_WORSE:
        bad = bad_sign(better)
        bound = math.log1p(bad * margin)
        p = sf(bad * (bound - d), se, df)
        return p, np.where(np.isfinite(d) & np.isfinite(se), 1.0 - p, 1.0)
    raise ValueError(f"unknown claim kind {kind!r}; expected one of {KINDS}")


def conditions(st: CellStats, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Whether a confirmation / a refutation is allowed besides the test (testable, beyond the noise floor)."""
    ok = st.testable
    if kind in (DECREASE, INCREASE):
        s = -1.0 if kind == DECREASE else 1.0
        rel = st.rel
        return ok & (s * rel > st.t_eff), ok & (-s * rel > st.t_eff)
    return ok, ok


def effective_p(st: CellStats, kind: str, margin: float, better: str) -> tuple[np.ndarray, np.ndarray]:
    """p-values with the non-test conditions folded in: 1 where a confirmation (refutation) is not allowed."""
    pc, pr = p_values(st, kind, margin, better)
    ok_c, ok_r = conditions(st, kind)
    return np.where(ok_c, pc, 1.0), np.where(ok_r, pr, 1.0)


def interval(st: CellStats, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided 1 - 2 alpha Welch interval of the relative change (the interval the one-sided tests invert)."""
    with np.errstate(invalid="ignore"):
        half = dist.t_ppf(1 - alpha, np.where(st.df > 0, st.df, 1.0)) * st.se
    return np.expm1(st.d - half), np.expm1(st.d + half)
