"""The words of a verdict: why each cell is confirmed, refuted or inconclusive, and the hypothesis's summary.

Kept apart from ``bot.stats.verdicts`` (which decides) so the numbers and the prose each have one
place; everything here reads a cell's fields and writes text, nothing decides.
"""

from __future__ import annotations

import math
from typing import Any

from bot.model import Direction, Hypothesis, VerdictStatus
from bot.stats.decide import CONFIRMED, REFUTED
from bot.stats.design import DecisionRule

_DIRECTIONAL = (Direction.DECREASE, Direction.INCREASE)


def decide(c: Any, code: int) -> None:
    """The cell's status from the batch decision, with the reason people read."""
    m = c.margin
    level = f"at level {c.level:.2g} after multiplicity control"
    if c.direction in _DIRECTIONAL:
        s = -1.0 if c.direction is Direction.DECREASE else 1.0
        word = "lower" if s < 0 else "higher"
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"{word} beyond the noise floor, significant {level}"
        elif code == REFUTED:
            opp = "higher" if s < 0 else "lower"
            c.status, c.reason = VerdictStatus.REFUTED, f"{opp}, opposite to the prediction, beyond the noise floor"
        else:
            c.status = VerdictStatus.INCONCLUSIVE
            if abs(c.rel) <= c.t_eff:
                c.reason = f"change {c.rel:+.1%} is within the noise floor T_eff {c.t_eff:.1%}"
            elif s * c.rel > 0:
                c.reason = f"direction as predicted but not significant {level}"
            else:
                c.reason = "direction opposite to the prediction but not significant after multiplicity control"
    elif c.direction is Direction.EQUIVALENT:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"both one-sided tests reject {level}; within ±{m:.0%}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"beyond ±{m:.0%}, significant after multiplicity control"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"equivalence within ±{m:.0%} not shown {level}"
    else:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"no worse than the {m:.0%} margin, significant {level}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"worse than the {m:.0%} margin"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"a regression beyond {m:.0%} is not ruled out {level}"


_DIRECTION_WORDS = {
    Direction.DECREASE: "decreases",
    Direction.INCREASE: "increases",
    Direction.EQUIVALENT: "stays within ±{m:.0%} (equivalence)",
    Direction.NO_WORSE: "gets no worse than {m:.0%} (no regression)",
}


def summary(
    h: Hypothesis,
    cs: list[Any],
    status: VerdictStatus,
    magnitude: float | None,
    decision: DecisionRule,
    family: int,
    mech: bool,
) -> str:
    assert h.prediction is not None
    alpha = decision.alpha
    metric = cs[0].metric if cs else h.prediction.metric
    what = _DIRECTION_WORDS[h.prediction.direction].format(m=h.prediction.margin)
    parts = [f"{h.id} predicted that {metric} {what} with the evolved plugin."]
    for c in cs:
        if not c.baseline.size or not math.isfinite(c.rel):
            parts.append(f"At {c.where}: inconclusive, {c.reason}.")
            continue
        nums = f"{metric} changed by {c.rel:+.1%}"
        if c.tested:
            nums += (
                f" ({1 - 2 * alpha:.0%} CI {c.ci[0]:+.1%} to {c.ci[1]:+.1%}; {c.test} p = {c.p_confirm:.3g}; "
                f"noise floor T_eff {c.t_eff:.1%} from baseline CV {c.cv:.1%}; n = {c.n_b} vs {c.n_e}"
                + (f", {len(c.excluded)} outlier run(s) excluded" if c.excluded else "")
                + ")"
            )
        else:
            nums += f" (n = {c.n_b} vs {c.n_e})"
        assert c.status is not None
        parts.append(f"At {c.where}: {nums}; {c.status.value}: {c.reason}.")
    if any(c.tested for c in cs):
        parts.append(
            f"Adjusted p = {cs[0].p_adjusted:.3g} (weighted Holm over the promotion's {family} benchmarked "
            f"hypotheses; this hypothesis was tested at level {cs[0].level:.2g})."
        )
    decisiontext = {
        VerdictStatus.CONFIRMED: "Every measured cell confirms, so the hypothesis is confirmed.",
        VerdictStatus.REFUTED: (
            "At least one cell contradicts the prediction beyond the noise floor and none confirms it, so it is refuted."
            if h.prediction.direction in _DIRECTIONAL
            else "At least one cell lies beyond the margin, so it is refuted."
        ),
        VerdictStatus.INCONCLUSIVE: (
            "Not every cell confirms and the evidence does not contradict the prediction, so it is inconclusive "
            "(a hypothesis is confirmed only when every cell confirms)."
        ),
    }[status]
    parts.append(decisiontext)
    wide = [c for c in cs if c.tested and c.t_eff > h.prediction.margin]
    if status is VerdictStatus.INCONCLUSIVE and h.prediction.direction not in _DIRECTIONAL and wide:
        parts.append(
            f"The noise floor ({max(c.t_eff for c in wide):.1%}) is wider than the ±{h.prediction.margin:.0%} margin, "
            "so these runs can neither show the claim nor rule it out; more runs or a quieter cluster would."
        )
    if magnitude is not None and h.prediction.direction in _DIRECTIONAL:
        parts.append(f"BLIS predicted {magnitude:+.1%}.")
    if mech:
        parts.append("See the mechanism-check flags.")
    if any("shedding" in f for c in cs for f in c.flags):
        parts.append(
            "More requests failed or went incomplete with the evolved plugin; a latency gain may come from shedding."
        )
    return " ".join(parts)
