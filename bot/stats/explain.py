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
from bot.stats.guards import SHED_DEMOTED, SHED_FLAG

_DIRECTIONAL = (Direction.DECREASE, Direction.INCREASE)


def p_text(x: float) -> str:
    """Every p-value and level people read, in one format: three significant digits.

    One rule for the prose, the tables and the report, so the same number never reads two ways, and a p-value
    and the level it is compared with are printed alike (a level rounded to fewer digits than the p-value
    made "p = 0.00157, not shown at level 0.0016" read as a contradiction).
    """
    return f"{x:.3g}"


def mean_text(x: float) -> str:
    """Every mean people read, in one format: four significant digits, thousands separated, no exponent.

    One rule for verdicts.md, the findings and the report, so the same cell never shows 31810 on one page and
    31,811 on another.
    """
    if not math.isfinite(x):
        return "n/a"
    r = float(f"{x:.4g}")
    return f"{r:,.0f}" if abs(r) >= 1000 else f"{r:.4g}"


def p_adjusted_text(p: float | None, held_by: str) -> str:
    """A cell's adjusted p as people read it, with what overrode its test beside it ("0.00348, within the noise
    floor"), so an adjusted p within alpha on an undecided cell never reads as a decision."""
    from bot.model.evidence import HELD_NOISE_FLOOR, HELD_SHEDDING

    text = "—" if p is None else p_text(p)
    held = {HELD_NOISE_FLOOR: "within the noise floor", HELD_SHEDDING: "held by the shedding guard"}.get(held_by)
    return f"{text}, {held}" if held else text


def versus(p: float, level: float) -> str:
    """'p = 0.0054 > 0.00161': the comparison the decision made, with the sign computed from the values."""
    return f"p = {p_text(p)} {'<=' if p <= level else '>'} {p_text(level)}"


def decide(c: Any, code: int) -> None:
    """The cell's status from the batch decision, with the reason people read.

    A reason that rests on a p-value states the comparison made: the p the decision used (``pc_eff``, the
    repeated p of a group-sequential cell) against the level its hypothesis was tested at.
    """
    m = c.margin
    level = f"at level {p_text(c.level)} after multiplicity control"
    short = f"({versus(c.pc_eff, c.level)}, the level after multiplicity control)"
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
            if within_floor(c):
                c.reason = f"change {c.rel:+.1%} is within the noise floor T_eff {c.t_eff:.1%}"
            elif s * c.rel > 0:
                c.reason = f"direction as predicted but not significant {short}"
            else:
                c.reason = "direction opposite to the prediction but not significant after multiplicity control"
    elif c.direction is Direction.EQUIVALENT:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"both one-sided tests reject {level}; within ±{m:.0%}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"beyond ±{m:.0%}, significant after multiplicity control"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"equivalence within ±{m:.0%} not shown {short}"
    else:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"no worse than the {m:.0%} margin, significant {level}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"worse than the {m:.0%} margin"
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"a regression beyond {m:.0%} is not ruled out {short}"


def within_floor(c: Any) -> bool:
    """An undecided directional cell whose change is within the noise floor: no p-value could have confirmed it."""
    return c.tested and c.status is VerdictStatus.INCONCLUSIVE and c.direction in _DIRECTIONAL and abs(c.rel) <= c.t_eff


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
                f" ({1 - 2 * alpha:.0%} CI {c.ci[0]:+.1%} to {c.ci[1]:+.1%}; {c.test}; p = {p_text(_shown_p(c))}; "
                f"noise floor T_eff {c.t_eff:.1%} from baseline CV {c.cv:.1%}; n = {c.n_b} vs {c.n_e}"
                + (f", {len(c.excluded)} outlier run(s) excluded" if c.excluded else "")
                + ")"
            )
        else:
            nums += f" (n = {c.n_b} vs {c.n_e})"
        assert c.status is not None
        parts.append(f"At {c.where}: {nums}; {c.status.value}: {c.reason}.")
    if any(c.tested for c in cs):
        if status is VerdictStatus.REFUTED:
            parts.append(
                f"Adjusted p of the refutation = {p_text(cs[0].p_adjusted_refute)} (Holm over the refutations of "
                f"the promotion's {family} benchmarked hypotheses)."
            )
        else:
            parts.append(
                f"Adjusted p = {p_text(cs[0].p_adjusted)} (weighted Holm over the promotion's {family} benchmarked "
                f"hypotheses; this hypothesis was tested at level {p_text(cs[0].level)})" + _floor_note(cs) + "."
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
    if status is VerdictStatus.INCONCLUSIVE and h.prediction.direction not in _DIRECTIONAL:
        parts.extend(_why_not_shown(h, cs, alpha))
    if magnitude is not None and h.prediction.direction in _DIRECTIONAL:
        parts.append(f"BLIS predicted {magnitude:+.1%}.")
    if mech:
        parts.append("See the mechanism-check flags.")
    if any(f.startswith(SHED_FLAG) for c in cs for f in c.flags):
        parts.append(
            "More requests failed or went incomplete with the evolved plugin; a latency gain may come from shedding."
        )
    return " ".join(parts)


def _floor_note(cs: list[Any]) -> str:
    """Where the noise floor held a cell, the adjusted p (of the tests' own p-values) decides nothing: say so."""
    from bot.model.evidence import HELD_NOISE_FLOOR

    held = [c.where for c in cs if c.held_by == HELD_NOISE_FLOOR]
    if not held:
        return ""
    return (
        f", but it decides nothing: at {', '.join(held)} the change is within the noise floor, which no p-value "
        "overrides"
    )


def _shown_p(c: Any) -> float:
    """The p a cell's numbers show: its refutation test's for a refuted cell, else its confirmation test's."""
    return c.p_refute if c.status is VerdictStatus.REFUTED else c.p_confirm


def _why_not_shown(h: Hypothesis, cs: list[Any], alpha: float) -> list[str]:
    """Why an equivalence or no-regression claim was not shown, from what decided it (never the noise floor).

    The noise floor T_eff plays no part in these tests (a noisy cluster must not make equivalence easier to
    claim), so a sentence built on it could contradict a neighbour with the same floor that was confirmed.
    What decides is the p-value against the level: either the interval itself reaches beyond the margin
    (the runs are too noisy or too few to show it even at alpha), or the interval lies within the margin
    and the stricter level multiplicity control gives the hypothesis holds it back.
    """
    assert h.prediction is not None
    # A cell the shedding guard demoted says so in its own reason: its p-value and interval did not hold it back.
    held = [
        c for c in cs if c.tested and c.status is VerdictStatus.INCONCLUSIVE and not c.reason.startswith(SHED_DEMOTED)
    ]
    if not held:
        return []
    m = h.prediction.margin
    ci = f"{1 - 2 * alpha:.0%} interval"
    if h.prediction.direction is Direction.EQUIVALENT:
        margin = f"±{m:.0%} margin"
        beyond = [c for c in held if c.ci[0] <= -m or c.ci[1] >= m]
    else:
        lower = _lower_is_better(held[0].metric)  # a regression is then an increase
        margin = f"{m:.0%} margin"
        beyond = [c for c in held if (c.ci[1] >= m if lower else c.ci[0] <= -m)]
    if beyond:
        where = ", ".join(c.where for c in beyond)
        return [
            (
                f"At {where} the {ci} reaches beyond the {margin}: these runs are too few or too noisy to show "
                "the claim even without multiplicity control; more runs or a quieter cluster would."
            )
        ]
    return [
        (
            f"Its {ci} lies within the {margin}, so what holds it back is the level above: alpha {p_text(alpha)} "
            "is shared over the promotion's benchmarked hypotheses, and more runs per arm would lower its p-value."
        )
    ]


def _lower_is_better(metric: str) -> bool:
    from bot.model.metrics import METRICS

    return METRICS[metric].better == "lower"
