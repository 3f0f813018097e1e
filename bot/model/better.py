"""A refuted equivalence guard the plugin failed by being better: it differs from the default, and is no regression.

A Track C equivalence guard ("matches the default within 5%") is refuted when a cell lies beyond the margin on
either side. On the worse side that is a regression; on the better side (TTFT 19% lower, say) the plugin is faster
than the claim allowed, and counting it as a regression, or advising to re-evolve against it, would have a
reviewer reject a plugin for being better. Every count of regressions (the gate-3 headline, the PR's Track C
line, the report's outcome) and the BLIS feedback ask here. In the model, so render, review and hypotheses share
one answer without importing each other.
"""

from __future__ import annotations

import math

from bot.model.base import Direction, Track, VerdictStatus
from bot.model.evidence import Effect, Hypothesis, Verdict
from bot.model.metrics import METRICS, MetricError, short_metric

#: How such a guard's outcome reads wherever a regression would be said.
DIFFERS_BETTER = "differs (better than the margin)"


def better_cell(e: Effect) -> bool | None:
    """Whether a cell's change lies on the metric's better side (True), its worse side (False), or is unknown."""
    try:
        lower = METRICS[short_metric(e.metric)].better == "lower"
    except (MetricError, KeyError):
        return None
    if not math.isfinite(e.rel_change) or e.rel_change == 0:
        return None
    return (e.rel_change < 0) == lower


def better_than_margin(h: Hypothesis, v: Verdict | None) -> bool:
    """Whether ``v`` refutes the Track C equivalence ``h`` predicts only on the better side: every refuted cell
    (every measured cell, for a verdict whose cells carry no status) changed the metric for the better."""
    p = h.prediction
    if v is None or v.status is not VerdictStatus.REFUTED or p is None or p.direction is not Direction.EQUIVALENT:
        return False
    if h.track is not Track.C:  # a Track B refutation says the gap matters, whichever way: that stays its finding
        return False
    cells = [e for e in v.effects if e.status is VerdictStatus.REFUTED] or [
        e for e in v.effects if e.status is None and math.isfinite(e.rel_change)
    ]
    return bool(cells) and all(better_cell(e) is True for e in cells)


def regressed(h: Hypothesis, v: Verdict | None) -> bool:
    """A refuted guard that is a regression: refuted, and not only by being better than the margin."""
    return v is not None and v.status is VerdictStatus.REFUTED and not better_than_margin(h, v)


def differ_count(ids: list[str]) -> str:
    """'2 differ (better than the margin: C1, C4)': such guards beside a count of regressions."""
    return f"{len(ids)} {'differs' if len(ids) == 1 else 'differ'} (better than the margin: {', '.join(ids)})"
