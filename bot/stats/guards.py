"""Checks beside the tests: shedding that can fake a latency gain, the mechanism check, BLIS's magnitude.

- Shedding. Per cell, the failed + incomplete share of requests per treatment,
  judged in two steps. (1) Is the extra loss real? Runs are the unit, not
  requests (requests within a run share its load, so a request-level test calls
  16 extra failures in 38,000 requests significant): the evolved arm lost more
  when its mean per-run share exceeds the baseline's by more than 1 percentage
  point, or by a gap a one-sided Welch t-test on the per-run shares finds
  significant at alpha. (2) Could that loss explain the latency change? Counted
  as worst-case latencies (the lost requests would have been slower than every
  served one), an extra lost share d moves a p-th percentile to the served
  requests' p/(1-d)-th, which matters only when d is a sizeable part of the
  tail beyond it (0.04% of requests is under 1% of a p95's 5% tail, and cannot
  fake a 14% gain); ``worst_case_factor`` bounds that move with a heavy
  (Pareto, index 1) tail, and a mean with lost requests at ``MEAN_WORST`` x the
  served mean. When the claim's 90% interval, with the evolved arm made worse
  by that factor, no longer supports it (a decrease no longer below 0; a
  no-worse or equivalence no longer below its margin), the cell is flagged
  "shedding may mask latency" and a latency (lower-is-better) claim is not
  confirmed there (an admitter shedding 5-20% of requests to look fast). On a
  metric that is no latency (throughput) a real extra loss hides nothing: it is
  flagged as the regression the metric does not count (``LOST_UNCOUNTED``). Step
  (2) is asked of any positive gap, not only one step (1) finds real: with 3
  runs a bursty shed rate is rarely significant, yet under 1 pp can fill a
  p95's tail; such a gap is held only when it could explain the change. A real
  loss too small to explain the change is flagged as such, without changing the
  verdict. A missing request count is flagged, never assumed zero.
- Mechanism check (``evolved_for``): on each Track A metric, the workload the
  program was evolved for should improve the most. If every workload improves
  and all by amounts within T_eff / 2 of each other, flag "gain may not come
  from the evolved mechanism" (an overhead reduction would do that); if the
  evolved-for workload is not the most improved, or improves by less than
  T_eff, flag it. Flags, not status changes (BLIS RCV-3). The changes are the
  robust per-cell estimates of ``bot.stats.rule`` (outlier runs excluded).
- BLIS magnitude (``magnitude_gap``): a cell is flagged attenuated when its whole
  interval, widened by its noise floor T_eff on each side, lies below 0.3x
  BLIS's relative change, amplified when all of it lies above 2x, opposite to
  BLIS when all of it has the other sign. A point estimate alone proves nothing
  on a few runs, nor a change within the noise floor. This is the one rule: the
  verdict's flags, the report's and the PR's feedback for BLIS
  (``bot.hypotheses.blis_feedback``) all read it. Informational: the claim
  transferred is the direction, not the magnitude.
"""

from __future__ import annotations

import math

import numpy as np

from bot.model import Direction, Effect
from bot.model.metrics import METRICS
from bot.stats import dist, rule
from bot.stats.cells import BASELINE, EVOLVED, ReportIndex, rate_key

#: The evolved mean per-run share of failed + incomplete requests may exceed the baseline's by this much.
SHED_TOLERANCE = 0.01
#: Worst case for a mean: a lost request would have taken this many times the served requests' mean latency.
MEAN_WORST = 10.0
#: BLIS magnitude guards: observed / predicted.
ATTENUATION = 0.3
AMPLIFICATION = 2.0


#: How a cell's reason starts when this guard demoted it: the tables say the guard, not "not significant".
SHED_DEMOTED = "demoted by the shedding guard"
#: How the guard's flag starts when the evolved arm lost more requests (other flags mention shedding too).
SHED_FLAG = "shedding may mask latency"
#: The flag's start on a metric that is no latency (throughput): lost requests hide nothing there, they are the
#: regression itself, which the metric (served requests only) does not count.
LOST_UNCOUNTED = "more requests lost, a regression not counted by"


def lost_shares(index: ReportIndex, workload: str, rate: float) -> tuple[float, float] | None:
    """(baseline, evolved) share of requests failed or incomplete in one cell; None when the reports do not count them.

    For an admission policy this is its shed rate: the requests it rejected are lost to the client.
    """
    counts = index.requests.get((workload, rate_key(rate)), {})
    if BASELINE not in counts or EVOLVED not in counts:
        return None
    (tb, lb, _), (te, le, _) = counts[BASELINE], counts[EVOLVED]
    if tb <= 0 or te <= 0:
        return None
    return lb / tb, le / te


def run_shares(index: ReportIndex, workload: str, rate: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(baseline, evolved) per-run shares of requests lost in one cell; None when the reports do not count them."""
    counts = index.requests.get((workload, rate_key(rate)), {})
    if BASELINE not in counts or EVOLVED not in counts:
        return None
    arms = []
    for arm in (BASELINE, EVOLVED):
        runs = [(t, lost) for t, lost in counts[arm][2] if t > 0]
        if not runs:
            return None
        arms.append(np.array([lost / t for t, lost in runs], dtype=float))
    return arms[0], arms[1]


def lost_more(baseline: np.ndarray, evolved: np.ndarray, alpha: float) -> bool:
    """Whether the evolved arm lost more requests than the baseline, runs as the unit: a mean per-run gap above
    ``SHED_TOLERANCE``, or a positive gap a one-sided Welch t-test on the per-run shares finds significant. With
    fewer than 2 runs in an arm, or no run-to-run spread in either, any positive gap counts (nothing to test with)."""
    gap = float(np.mean(evolved) - np.mean(baseline))
    if gap <= 0:
        return False
    if gap > SHED_TOLERANCE:
        return True
    if min(baseline.size, evolved.size) < 2:
        return True
    se2 = [float(np.var(x, ddof=1)) / x.size for x in (baseline, evolved)]
    if sum(se2) <= 0:
        return True
    # Welch's t by hand: scipy warns of precision loss on an arm of identical shares, which is common here
    df = sum(se2) ** 2 / sum(v * v / (x.size - 1) for v, x in zip(se2, (baseline, evolved), strict=True))
    return bool(dist.t_sf(gap / math.sqrt(sum(se2)), df) < alpha)


def worst_case_factor(statistic: str, extra: float) -> float:
    """How much worse the evolved arm's ``statistic`` could be had its ``extra`` share of lost requests been served
    at worst-case latencies (inf: nothing bounds it).

    A percentile p of the served requests then stands for the p/(1-d)-th of all of them; with a Pareto tail of
    index 1 (heavier than latency tails usually are) the value beyond tail share t scales as 1/t, so the factor is
    t(1-d)/(t-d) for t = 1 - p, unbounded once the extra loss fills the tail. A mean: the lost requests at
    ``MEAN_WORST`` x the served mean."""
    if extra <= 0:
        return 1.0
    if statistic == "mean":
        return 1.0 + extra * (MEAN_WORST - 1.0)
    tail = 1.0 - float(statistic.lstrip("p")) / 100.0
    return tail * (1.0 - extra) / (tail - extra) if extra < tail else math.inf


def _explains(factor: float, claim) -> bool:
    """Whether the claim's 90% interval, the evolved arm made ``factor`` x worse, no longer supports it."""
    prediction = getattr(getattr(claim, "hypothesis", None), "prediction", None)
    hi = claim.ci[1] if math.isfinite(claim.ci[1]) else claim.rel
    if prediction is None or not math.isfinite(hi):
        return True
    limit = 0.0 if prediction.direction is Direction.DECREASE else prediction.margin
    if prediction.direction is Direction.INCREASE:
        return False  # more latency hidden only strengthens a claim that latency rose
    return (1.0 + hi) * factor - 1.0 >= limit


def _moved(factor: float) -> str:
    return f"{factor - 1:+.1%}" if math.isfinite(factor) else "any amount"


def shedding(
    index: ReportIndex, workload: str, rate: float, where: str, alpha: float, claim=None
) -> tuple[str | None, bool]:
    """(flag or None, whether the evolved plugin's extra lost requests could explain the claim's latency change)
    for one cell. ``claim``: the cell (its ``metric``, ``rel``, ``ci`` and ``hypothesis``); without it, any real
    extra loss counts as able to explain it."""
    shares = run_shares(index, workload, rate)
    if lost_shares(index, workload, rate) is None or shares is None:
        return f"request counts missing at {where}: shedding guard not applied", False
    b, e = shares
    extra = float(np.mean(e) - np.mean(b))
    if extra <= 0:
        return None, False
    real = lost_more(b, e, alpha)
    rb, re_ = lost_shares(index, workload, rate)  # type: ignore[misc]
    lost = f"evolved lost {re_:.2%} of requests (failed or incomplete) vs {rb:.2%} for baseline at {where}"
    metric = getattr(claim, "metric", "")
    if claim is None or metric not in METRICS:
        return (f"{SHED_FLAG}: {lost}", True) if real else (None, False)
    if METRICS[metric].better != "lower":
        return (f"{LOST_UNCOUNTED} {metric}: {lost}", True) if real else (None, False)
    # step (2) for any extra loss: with 3 runs a bursty shed rate (0.1%, 0.2%, 2.4%) is no significant gap, yet
    # 0.9 pp fills a fifth of a p95's tail; only a loss that cannot explain the change may go unremarked
    factor = worst_case_factor(METRICS[metric].statistic, extra)
    if _explains(factor, claim):
        if real:
            return f"{SHED_FLAG}: {lost}", True
        return (
            f"{SHED_FLAG}: {lost}; the per-run gap is not significant, but counted as worst-case latencies the "
            f"loss could move {metric} by {_moved(factor)}, which would explain the change"
        ), True
    if not real:
        return None, False
    return (
        f"more requests lost, too few to explain the {metric} change: {lost}; counted as worst-case latencies they "
        f"could move {metric} by at most {factor - 1:+.1%}, and the change still holds"
    ), False


def mechanism_flags(metric: str, better: str, index: ReportIndex, evolved_for: str, arms=None) -> list[str]:
    """The mechanism check's flags for one Track A metric, from ``arms(workload, rate, metric)`` (by default every
    run; the verdicts pass the runs their cells used)."""
    arms = arms or index.arms
    improvement: dict[str, float] = {}
    floors: dict[str, float] = {}
    for wl in sorted(index.rates):
        imps, tes = [], []
        for rate in index.rates[wl]:
            b, e = arms(wl, rate, metric)
            if b.size < 1 or e.size < 1:
                continue
            st = rule.cell_stats(b, e)
            if not bool(st.positive[0]) or not math.isfinite(float(st.d[0])):
                continue
            rel = float(st.rel[0])
            imps.append(-rel if better == "lower" else rel)
            tes.append(float(st.t_eff[0]) if st.n_b[0] >= 2 else rule.NOISE_FLOOR_MIN)
        if imps:
            improvement[wl] = float(np.mean(imps))
            floors[wl] = float(np.mean(tes))
    if evolved_for not in improvement:
        return [f"mechanism check: the evolved-for workload {evolved_for} has no {metric} reports"]
    if len(improvement) < 2:
        return [f"mechanism check not possible on {metric}: only {evolved_for} was measured"]
    flags = []
    t_eff = floors[evolved_for]
    own = improvement[evolved_for]
    top = max(sorted(improvement), key=lambda w: improvement[w])
    spread = max(improvement.values()) - min(improvement.values())
    if all(v > 0 for v in improvement.values()) and spread <= t_eff / 2:
        lo, hi = min(improvement.values()), max(improvement.values())
        flags.append(
            f"gain may not come from the evolved mechanism: every workload improves {metric} by about the same "
            f"(improvements of {lo:.1%} to {hi:.1%}, within T_eff/2 = {t_eff / 2:.1%} of each other)"
        )
    sign = -1.0 if better == "lower" else 1.0  # improvement -> the relative change people read

    def change(wl: str) -> str:
        return f"{sign * improvement[wl]:+.1%}"

    if top != evolved_for and improvement[top] > own:
        flags.append(
            f"mechanism check: the evolved-for workload {evolved_for} is not the most improved on {metric} "
            f"({better} is better: {top} {change(top)}, {evolved_for} {change(evolved_for)})"
        )
    if own < t_eff:
        flags.append(
            f"mechanism check: on the evolved-for workload {evolved_for}, {metric} changed by {change(evolved_for)} "
            f"({better} is better), no improvement beyond its noise floor T_eff {t_eff:.1%}"
        )
    return flags


def magnitude_gap(predicted: float | None, e: Effect) -> tuple[str, float, float] | None:
    """("attenuated" | "amplified" | "opposite", lowest, highest ratio to BLIS's change) when the cell's whole
    interval, widened by its noise floor on each side, lies outside [ATTENUATION, AMPLIFICATION] x ``predicted``;
    None inside it or with nothing to compare.

    Widened, because the floor is the change the cluster shows between identical runs: a cell whose change the
    verdict calls noise cannot show the simulator off by a factor, and 5.2% against BLIS's 20% (0.26x) on an
    interval that reaches 12% (0.6x) is no attenuation."""
    t_eff = e.t_eff
    if not predicted or not all(math.isfinite(x) for x in (e.ci_low, e.ci_high, t_eff)):
        return None
    r_lo, r_hi = sorted(((e.ci_low - t_eff) / predicted, (e.ci_high + t_eff) / predicted))
    if r_hi < 0:
        return "opposite", r_lo, r_hi
    if r_hi < ATTENUATION:
        return "attenuated", r_lo, r_hi
    if r_lo > AMPLIFICATION:
        return "amplified", r_lo, r_hi
    return None


def magnitude_flags(predicted: float | None, e: Effect) -> list[str]:
    """The verdict's flag for ``magnitude_gap``, with the numbers it rests on."""
    gap = magnitude_gap(predicted, e)
    if gap is None:
        return []
    assert predicted is not None
    kind, r_lo, r_hi = gap
    seen = f"observed {e.rel_change:+.1%} [{e.ci_low:+.1%}, {e.ci_high:+.1%}] at {e.workload} @ {e.rate:g} req/s"
    widened = f"even widened by its noise floor T_eff {e.t_eff:.1%}"
    if kind == "opposite":
        return [f"opposite to BLIS: {seen} has the other sign than BLIS's {predicted:+.1%}, {widened}"]
    if kind == "attenuated":
        return [f"attenuated: {seen} is at most {r_hi:.2f}x BLIS's {predicted:+.1%}, {widened}"]
    return [f"amplified: {seen} is at least {r_lo:.2f}x BLIS's {predicted:+.1%}, {widened}"]
