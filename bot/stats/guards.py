"""Checks beside the tests: shedding that can fake a latency gain, the mechanism check, BLIS's magnitude.

- Shedding. Per cell, the failed + incomplete share of requests per treatment.
  If the evolved share exceeds the baseline's by more than 1 percentage point,
  or by a margin a one-sided two-proportion z-test finds significant at alpha
  (tail metrics move when even 0.3% of the slowest requests vanish), the cell is
  flagged "shedding may mask latency", and a latency (lower-is-better) claim is
  not confirmed there. A missing request count is flagged, never assumed zero.
- Mechanism check (``evolved_for``): on each Track A metric, the workload the
  program was evolved for should improve the most. If every workload improves
  and all by amounts within T_eff / 2 of each other, flag "gain may not come
  from the evolved mechanism" (an overhead reduction would do that); if the
  evolved-for workload is not the most improved, or improves by less than
  T_eff, flag it. Flags, not status changes (BLIS RCV-3). The changes are the
  robust per-cell estimates of ``bot.stats.rule`` (outlier runs excluded).
- BLIS magnitude: observed / predicted relative change below 0.3 is flagged as
  attenuation, above 2 as amplification, a sign flip as opposite to BLIS.
  Informational: the claim transferred is the direction, not the magnitude.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from bot.stats import rule
from bot.stats.cells import BASELINE, EVOLVED, ReportIndex, rate_key

#: The evolved share of failed + incomplete requests may exceed the baseline's by this much.
SHED_TOLERANCE = 0.01
#: BLIS magnitude guards: observed / predicted.
ATTENUATION = 0.3
AMPLIFICATION = 2.0


#: How a cell's reason starts when this guard demoted it: the tables say the guard, not "not significant".
SHED_DEMOTED = "demoted by the shedding guard"
#: How the guard's flag starts when the evolved arm lost more requests (other flags mention shedding too).
SHED_FLAG = "shedding may mask latency"


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


def shedding(index: ReportIndex, workload: str, rate: float, where: str, alpha: float) -> tuple[str | None, bool]:
    """(flag or None, whether more requests were lost with the evolved plugin) for one cell."""
    if lost_shares(index, workload, rate) is None:
        return f"request counts missing at {where}: shedding guard not applied", False
    counts = index.requests[(workload, rate_key(rate))]
    (tb, lb, _), (te, le, _) = counts[BASELINE], counts[EVOLVED]
    rb, re_ = lb / tb, le / te
    gap = re_ - rb
    significant = False
    pooled = (lb + le) / (tb + te)
    if gap > 0 and 0 < pooled < 1:
        z = gap / math.sqrt(pooled * (1 - pooled) * (1 / tb + 1 / te))
        significant = bool(stats.norm.sf(z) < alpha)
    if gap > SHED_TOLERANCE or significant:
        return (
            f"{SHED_FLAG}: evolved lost {re_:.2%} of requests (failed or incomplete) "
            f"vs {rb:.2%} for baseline at {where}"
        ), True
    return None, False


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


def magnitude_flags(rel: float, predicted: float | None, where: str) -> list[str]:
    """Attenuation / amplification / sign flip of an observed change against BLIS's prediction."""
    if predicted is None or predicted == 0 or not math.isfinite(rel):
        return []
    ratio = rel / predicted
    if ratio < 0:
        return [f"opposite to BLIS: observed {rel:+.1%} vs BLIS {predicted:+.1%} at {where}"]
    if ratio < ATTENUATION:
        return [f"attenuated: observed {rel:+.1%} is {ratio:.2f}x BLIS's {predicted:+.1%} at {where}"]
    if ratio > AMPLIFICATION:
        return [f"amplified: observed {rel:+.1%} is {ratio:.2f}x BLIS's {predicted:+.1%} at {where}"]
    return []
