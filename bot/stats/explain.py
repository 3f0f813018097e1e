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
            elif (bound := cell_against(c)) is not None:
                c.reason = indicated_reason(c, bound)
            elif s * c.rel > 0:
                c.reason = f"direction as predicted but not significant {short}"
            else:
                c.reason = "direction opposite to the prediction but not significant after multiplicity control"
    elif c.direction is Direction.EQUIVALENT:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"both one-sided tests reject {level}; within ±{m:.0%}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"beyond ±{m:.0%}, significant after multiplicity control"
        elif (bound := cell_against(c)) is not None:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, indicated_reason(c, bound)
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"equivalence within ±{m:.0%} not shown {short}"
    else:
        if code == CONFIRMED:
            c.status, c.reason = VerdictStatus.CONFIRMED, f"no worse than the {m:.0%} margin, significant {level}"
        elif code == REFUTED:
            c.status, c.reason = VerdictStatus.REFUTED, f"worse than the {m:.0%} margin"
        elif (bound := cell_against(c)) is not None:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, indicated_reason(c, bound)
        else:
            c.status, c.reason = VerdictStatus.INCONCLUSIVE, f"a regression beyond {m:.0%} is not ruled out {short}"


def against(direction: Direction, margin: float, better: str, ci: tuple[float, float], rel: float, t_eff: float):
    """The bound nearest the claim of an interval lying wholly on the wrong side, or None when it does not.

    Wrong side: beyond the margin on the metric's bad side (no-worse), beyond ±margin (equivalence), or the other
    way than predicted beyond the noise floor (directional, as a refutation would need). Such a cell is not
    refuted when its refutation is not significant after multiplicity control, but the data point against the
    claim, and no text may read as if they did not (or as if more runs would show it): the bound returned is
    the least contradiction the interval allows ("a regression of at least 7.1%").
    """
    lo, hi = ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    if direction is Direction.NO_WORSE:
        return lo if better == "lower" and lo > margin else hi if better != "lower" and hi < -margin else None
    if direction is Direction.EQUIVALENT:
        return lo if lo > margin else hi if hi < -margin else None
    s = -1.0 if direction is Direction.DECREASE else 1.0
    beyond_floor = math.isfinite(t_eff) and -s * rel > t_eff
    return (lo if s < 0 else hi) if beyond_floor and -s * (lo if s < 0 else hi) > 0 else None


def point_beyond(direction: Direction, margin: float, better: str, rel: float) -> bool:
    """Whether an equivalence or no-worse cell's measured change already lies beyond its margin (a regression
    past it, or past ±margin), though its interval may still reach inside. More runs would then more likely
    refute the claim than show it, so no text may promise that they would show it."""
    if not math.isfinite(rel):
        return False
    if direction is Direction.EQUIVALENT:
        return abs(rel) > margin
    if direction is Direction.NO_WORSE:
        return rel > margin if better == "lower" else rel < -margin
    return False


def cell_point_beyond(c: Any) -> bool:
    """``point_beyond`` for a measured cell."""
    return point_beyond(c.direction, c.margin, "lower" if _lower_is_better(c.metric) else "higher", c.rel)


def cell_against(c: Any) -> float | None:
    """``against`` for a measured, undecided cell (a refuted one says so already; a confirmed one cannot be)."""
    if not c.tested or c.status is VerdictStatus.REFUTED or c.status is VerdictStatus.CONFIRMED:
        return None
    return against(c.direction, c.margin, "lower" if _lower_is_better(c.metric) else "higher", c.ci, c.rel, c.t_eff)


def against_words(direction: Direction, margin: float, bound: float) -> str:
    """What an interval wholly on the wrong side indicates, sized by its near bound: "a regression of at least
    7.1%", "a change of at least +6.0%, beyond the ±5% margin", "an increase of at least 3.0%, against the
    prediction"."""
    if direction is Direction.NO_WORSE:
        return f"a regression of at least {abs(bound):.1%}"
    if direction is Direction.EQUIVALENT:
        return f"a change of at least {bound:+.1%}, beyond the ±{margin:.0%} margin"
    return f"{'an increase' if bound > 0 else 'a decrease'} of at least {abs(bound):.1%}, against the prediction"


def indicated_reason(c: Any, bound: float) -> str:
    """The reason of a cell whose interval lies wholly on the wrong side but whose refutation did not reach its
    level: what is indicated, and the refutation p-value with the level it was compared with."""
    side = "beyond the margin" if c.direction not in _DIRECTIONAL else "on the other side than predicted"
    return (
        f"{against_words(c.direction, c.margin, bound)} is indicated (the whole {1 - 2 * c.alpha:.0%} interval "
        f"lies {side}), not significant after multiplicity control (refutation {versus(c.pr_eff, c.level_refute)}, "
        "its level after multiplicity control)"
    )


#: How the flag starts on an undecided hypothesis with a cell wholly on the wrong side (``indicated_flags``).
INDICATED_FLAG = "indicated, not significant after multiplicity control"


def indicated_flags(cs: list[Any], status: VerdictStatus) -> list[str]:
    """A flag per undecided cell whose interval lies wholly on the wrong side ("indicated, not significant after
    multiplicity control: a regression of at least 7.1% at sanity-random @ 10 req/s"), as an early stop is one: the
    summary table's flag count and the hypothesis's flags then say what the headline says of it, not only its
    cell's reason. None on a refuted verdict (its status says more)."""
    if status is VerdictStatus.REFUTED:
        return []
    return [
        f"{INDICATED_FLAG}: {against_words(c.direction, c.margin, bound)} at {c.where}"
        for c in cs
        if (bound := cell_against(c)) is not None
    ]


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
                f"hypotheses; this hypothesis was tested at level {p_text(cs[0].level)}"
                + _level_note(cs[0], status)
                + ")"
                + _floor_note(cs)
                + "."
            )
    indicated = [c for c in cs if cell_against(c) is not None]
    if indicated and status is not VerdictStatus.REFUTED:
        parts.append(
            f"Adjusted p of the refutation = {p_text(cs[0].p_adjusted_refute)} (Holm over the refutations of the "
            f"promotion's {family} benchmarked hypotheses), above alpha {p_text(alpha)}."
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
    if status is VerdictStatus.INCONCLUSIVE and indicated:
        decisiontext = (
            f"At {', '.join(c.where for c in indicated)} the whole interval lies against the prediction, so the "
            "evidence points against it; it is inconclusive, not refuted, only because that contradiction is not "
            "significant after multiplicity control."
        )
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
    # A cell whose interval lies wholly beyond the margin says what it indicates in its own reason: more runs
    # would not show the claim there.
    held = [
        c
        for c in cs
        if c.tested
        and c.status is VerdictStatus.INCONCLUSIVE
        and not c.reason.startswith(SHED_DEMOTED)
        and cell_against(c) is None
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
        # A measured change already beyond the margin: more runs would more likely refute the claim than show it.
        past = [c for c in beyond if cell_point_beyond(c)]
        reach = [c for c in beyond if c not in past]
        out = []
        if past:
            out.append(
                f"At {', '.join(c.where for c in past)} the measured change already lies beyond the {margin} and "
                f"only the {ci} still reaches inside it: these runs point against the claim without deciding it; "
                "more runs would decide it, more likely as a refutation than a confirmation."
            )
        if reach:
            out.append(
                f"At {', '.join(c.where for c in reach)} the {ci} reaches beyond the {margin}: these runs are too "
                "few or too noisy to show the claim even without multiplicity control; more runs or a quieter "
                "cluster would."
            )
        return out
    if held[0].level_if is not None:
        ids, level = held[0].level_if
        p = max(c.pc_eff for c in held)
        verdict = "be within it" if p <= level else "still not be within it, so more runs per arm would be needed too"
        return [
            (
                f"Its {ci} lies within the {margin}, so what holds it back is the level above, which depends on "
                f"{_and(ids)} (no measured cell): at {p_text(level)} its p-value {p_text(p)} would {verdict}."
            )
        ]
    return [
        (
            f"Its {ci} lies within the {margin}, so what holds it back is the level above: alpha {p_text(alpha)} "
            "is shared over the promotion's benchmarked hypotheses, and more runs per arm would lower its p-value."
        )
    ]


def _and(ids: Any) -> str:
    ids = list(ids)
    return ids[0] if len(ids) == 1 else f"{', '.join(ids[:-1])} and {ids[-1]}"


def _level_note(c: Any, status: VerdictStatus) -> str:
    """'; it would be 0.00152 if A1 and B1 were confirmed': a level that depends on hypotheses with no measured
    cell. Weighted Holm passes a confirmed hypothesis's share of alpha on; one that could not be measured keeps
    its share, so the same evidence here is tested at a stricter level than it would be were they measured and
    confirmed, and a reader comparing two runs must see that the difference is theirs, not this one's."""
    if status is VerdictStatus.CONFIRMED or c.level_if is None:
        return ""
    ids, level = c.level_if
    have = "has" if len(ids) == 1 else "have"
    return f"; it would be {p_text(level)} if {_and(ids)}, which {have} no measured cell, were confirmed"


def _lower_is_better(metric: str) -> bool:
    from bot.model.metrics import METRICS

    return METRICS[metric].better == "lower"
