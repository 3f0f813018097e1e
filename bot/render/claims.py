"""The claims table: claim | BLIS predicted | llm-d measured with its CI | verdict, one row per claim.

One rendering for every place people read the outcome (the PR body, the report's first screen), so
the same claim never reads differently in two places. Pure: hypotheses and verdicts in, rows of
display text out; ``_claims_table.md.j2`` lays them out (the claim text is the request author's and
is escaped there, the numbers are the bot's own).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.escape import md
from bot.model import Direction, Effect, Hypothesis, Track, Verdict, VerdictStatus
from bot.stats.unjudged import NOT_EXERCISED, rule_caveat

#: How a verdict reads in a table cell; a status added later reads as its own name.
_MARK = {
    VerdictStatus.CONFIRMED: "✅ confirmed",
    VerdictStatus.REFUTED: "❌ **refuted**",
    VerdictStatus.INCONCLUSIVE: "❔ inconclusive",
    VerdictStatus.NOT_TESTABLE: "⊘ not testable as translated",
}


@dataclass(frozen=True)
class ClaimRow:
    id: str
    claim: str  # the hypothesis title: the request author's words, escaped by the template
    note: str  # why it could not be tested (Hypothesis.not_testable), "" otherwise; escaped by the template
    predicted: str  # the bot's own text
    measured: str  # the bot's own text (workload names escaped)
    verdict: str  # the bot's own text (workload names escaped)


def ci_level(alpha: float = 0.05) -> str:
    """The two-sided level of the intervals the verdicts carry (one-sided tests at ``alpha``)."""
    return f"{(1 - 2 * alpha) * 100:.0f}%"


def pct(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x * 100:+.1f}%".replace("-", "−")


def where(e: Effect, several_workloads: bool = False) -> str:
    """'at 30 req/s', or 'load-spikes at 30 req/s' when a hypothesis spans workloads (escaped: a request's name)."""
    return f"{md(e.workload)} at {e.rate:g} req/s" if several_workloads else f"at {e.rate:g} req/s"


def several_workloads(v: Verdict) -> bool:
    return len({e.workload for e in v.effects}) > 1


def cell_text(e: Effect, several: bool = False) -> str:
    """One measured cell: change [CI] at the rate (the workload too when the hypothesis spans several); a cell
    decided at an early look carries the caveat verdicts.md gives it, with the change over every run beside it
    (an estimate where a test stops early leans away from zero, and can even have the other sign)."""
    return f"{pct(e.rel_change)} [{pct(e.ci_low)}, {pct(e.ci_high)}] {where(e, several)}" + early_stop_text(
        [e.all_runs_change]
    )


def early_stop_text(all_runs: Sequence[float | None]) -> str:
    """' (early stop; all runs −0.4%)' when any value is an early-stop cell's change over every run (its
    ``Effect.all_runs_change``), the note verdicts.md's summary table gives (``bot.stats.evidence.EARLY_STOP``);
    a range over several; '' when no cell stopped early."""
    every = sorted(x for x in all_runs if x is not None)
    if not every:
        return ""
    from bot.stats.evidence import EARLY_STOP  # only here: evidence needs pandas, the PR draft's stages do not

    span = pct(every[0]) if every[0] == every[-1] else f"{pct(every[0])} to {pct(every[-1])}"
    return f" ({EARLY_STOP}; all runs {span})"


def measured_text(v: Verdict | None, *, most: int = 3) -> str:
    """Every cell when there are few; the range over cells when there are many (the report lists them)."""
    if v is None or v.status is VerdictStatus.NOT_TESTABLE:
        return "not measured"
    if v.admission:
        return "per-class admit rate on the priority mix (see its table)"
    if not v.effects:
        return "not measured"
    if len(v.effects) <= most:
        several = several_workloads(v)
        return "; ".join(cell_text(e, several) for e in v.effects)
    changes = sorted(e.rel_change for e in v.effects)
    every = [e.rel_change if e.all_runs_change is None else e.all_runs_change for e in v.effects]
    early = early_stop_text(every) if any(e.all_runs_change is not None for e in v.effects) else ""
    return f"{pct(changes[0])} to {pct(changes[-1])} over {len(v.effects)} cells{early}"


def predicted_text(h: Hypothesis) -> str:
    p = h.prediction
    if p is None:
        return "—"
    if p.blis_magnitude is not None:
        return pct(p.blis_magnitude)
    if p.direction.value in ("equivalent", "no-worse"):
        return f"within {p.margin:.0%}"
    return f"{p.direction.value} (no magnitude)"


def verdict_text(v: Verdict | None, h: Hypothesis | None = None) -> str:
    """The verdict mark; with the hypothesis, a tested verdict that is not confirmed also says which cells held it
    back and why in a few words ("inconclusive (at 20 req/s: within the noise floor)")."""
    if v is None:
        return "not judged"
    if NOT_EXERCISED in v.flags:  # not judged at all: "inconclusive" would read as measured and undecided
        return f"⊘ {NOT_EXERCISED}"
    mark = _MARK.get(v.status, f"❔ {v.status.value}")
    from bot.model.better import better_than_margin

    if h is not None and better_than_margin(h, v):  # refuted by being better: no regression (bot.model.better)
        mark = "➕ **differs**"
    # A rule the cells never exercised (``bot.stats.unjudged.rule_caveat``): "confirmed" is never shown bare.
    said = [held_back(h, v) if h is not None else "", other_testbed_text(v), rule_caveat(v)]
    return f"{mark} ({'; '.join(x for x in said if x)})" if any(said) else mark


def other_testbed_text(v: Verdict) -> str:
    """'with 1 report from another testbed' when reports of a testbed other than the main one enter the verdict's
    cells (its flags, ``bot.bench.testbed.other_testbed_flags``), as a cell decided early says so; '' otherwise."""
    from bot.bench.testbed import OTHER_TESTBED

    n = sum(int(m.group(1)) for f in v.flags if (m := re.match(rf"{OTHER_TESTBED}: (\d+) ", f)))
    return f"with {n} report{'' if n == 1 else 's'} from {OTHER_TESTBED}" if n else ""


def cause(h: Hypothesis, e: Effect) -> str:
    """Why one cell did not confirm, in a few words (its full reason is in the report's detail)."""
    p = h.prediction
    directional = p is not None and p.direction in (Direction.DECREASE, Direction.INCREASE)
    if e.status is VerdictStatus.REFUTED:
        from bot.model.better import better_cell

        if p is not None and p.direction is Direction.EQUIVALENT and better_cell(e):  # no regression
            return f"better than the ±{p.margin:.0%} margin"
        return "against the prediction" if directional else "beyond the margin"
    if not math.isfinite(e.rel_change):
        return "not measured"
    if (bound := indicated(h, e)) is not None:
        from bot.stats.explain import against_words

        assert p is not None
        return f"{against_words(p.direction, p.margin, bound)} indicated, not significant after multiplicity control"
    if shed_demoted(e):
        return f"demoted: {lost_text(e)} (shedding guard)"
    if p is not None and not directional:
        # The noise floor plays no part in an equivalence or no-regression test: its interval against the
        # margin, or else the level multiplicity control gives it, is what held it back.
        if _beyond_margin(p, e):
            margin = f"±{p.margin:.0%}" if p.direction is Direction.EQUIVALENT else f"{p.margin:.0%}"
            if _point_beyond(p, e):
                return f"measured change beyond the {margin} margin, not significant"
            return f"interval reaches beyond the {margin} margin"
        return "not significant after multiplicity control"
    if "within the noise floor" in e.reason:
        return "within the noise floor"
    return "not significant"


def indicated(h: Hypothesis, e: Effect) -> float | None:
    """The near bound of an undecided cell's interval when it lies wholly on the wrong side (beyond the margin, or
    against a directional prediction beyond the noise floor): ``bot.stats.explain.against``, which wrote the cell's
    reason. Such a cell is no refutation (that was not significant after multiplicity control), yet no count may
    take it for "no regression"; None for every other cell."""
    from bot.model.metrics import METRICS, MetricError, short_metric
    from bot.stats.explain import against

    p = h.prediction
    if p is None or e.status is not VerdictStatus.INCONCLUSIVE or e.p_value is None or shed_demoted(e):
        return None
    try:
        better = METRICS[short_metric(e.metric)].better
    except (MetricError, KeyError):
        return None
    return against(p.direction, p.margin, better, (e.ci_low, e.ci_high), e.rel_change, e.t_eff)


def indicated_cells(h: Hypothesis, v: Verdict | None) -> list[tuple[Effect, float]]:
    """The cells of an undecided verdict whose interval lies wholly on the wrong side, each with its near bound."""
    if v is None or v.status is not VerdictStatus.INCONCLUSIVE:
        return []
    return [(e, b) for e in v.effects if (b := indicated(h, e)) is not None]


def indicated_text(h: Hypothesis, v: Verdict | None) -> str:
    """'a regression of at least 7.1% indicated at 10 req/s, not significant after multiplicity control' (the
    largest such bound over the verdict's cells), or '' when no cell's interval lies wholly on the wrong side."""
    cells = indicated_cells(h, v)
    if not cells or h.prediction is None or v is None:
        return ""
    from bot.stats.explain import against_words

    e, bound = max(cells, key=lambda eb: abs(eb[1]))
    return (
        f"{against_words(h.prediction.direction, h.prediction.margin, bound)} indicated "
        f"{where(e, several_workloads(v))}, not significant after multiplicity control"
    )


def shed_demoted(e: Effect) -> bool:
    """Whether the shedding guard, not the test, held this cell back (its p may be tiny: the lost requests
    could be what made the latency look better)."""
    from bot.stats.guards import SHED_DEMOTED

    return e.status is VerdictStatus.INCONCLUSIVE and e.reason.startswith(SHED_DEMOTED)


def lost_text(e: Effect) -> str:
    """'12.0% of requests lost vs 0.0% for baseline': the evolved arm's share first, the one that decides."""
    if e.lost_evolved is None or e.lost_baseline is None:
        return "more requests lost than baseline"
    return f"{e.lost_evolved:.1%} of requests lost vs {e.lost_baseline:.1%} for baseline"


def _beyond_margin(p, e: Effect) -> bool:
    """Whether a cell's interval reaches past the margin on the side the claim guards (both for equivalence)."""
    from bot.model.metrics import METRICS, MetricError, short_metric

    if p.direction is Direction.EQUIVALENT:
        return e.ci_low <= -p.margin or e.ci_high >= p.margin
    try:
        lower = METRICS[short_metric(e.metric)].better == "lower"
    except (MetricError, KeyError):
        return e.ci_low <= -p.margin or e.ci_high >= p.margin
    return e.ci_high >= p.margin if lower else e.ci_low <= -p.margin


def _point_beyond(p, e: Effect) -> bool:
    """Whether the cell's measured change itself lies past the margin (``bot.stats.explain.point_beyond``)."""
    from bot.model.metrics import METRICS, MetricError, short_metric
    from bot.stats.explain import point_beyond

    try:
        better = METRICS[short_metric(e.metric)].better
    except (MetricError, KeyError):
        better = "lower"
    return point_beyond(p.direction, p.margin, better, e.rel_change)


def held_back(h: Hypothesis, v: Verdict) -> str:
    """The cells of a refuted or inconclusive verdict that did not confirm, with their cause; '' otherwise.

    Cells with the same cause are said once ("at 30 req/s, at 45 req/s: demoted: ..."), so a table row stays short.
    """
    if v.status not in (VerdictStatus.REFUTED, VerdictStatus.INCONCLUSIVE):
        return ""
    cells = [e for e in v.effects if e.status is not VerdictStatus.CONFIRMED]
    several = several_workloads(v)
    by_cause: dict[str, list[str]] = {}
    for e in cells:
        by_cause.setdefault(cause(h, e), []).append(where(e, several))
    return "; ".join(f"{', '.join(places)}: {why}" for why, places in by_cause.items())


def transfer_words(total: int, confirmed: int, unjudged: dict[str, int], caveat: str = "") -> str:
    """Track A's count in a few words, for the PR's Claims heading and gate 3's brief: "1 of 2 transferred"; "none
    measurable on these cells" when every claim was set aside because the cells send only traffic the plugin does
    not act on; "none judged: 1 not decided by benchmarks" when no claim was judged for any reason (``unjudged``:
    claims per ``bot.stats.unjudged.unjudged_reason``). "0 of 1 transferred" would read as measured and not
    transferred, for a claim no benchmark judged. ``caveat``: the claims' ``rule_caveats`` ("per-tenant rule not
    exercised on these cells (gate 2's G2.tenants-exercised)"), said beside a count of confirmed claims."""
    set_aside = unjudged.get(NOT_EXERCISED, 0)
    if total and set_aside == total:
        return NOT_EXERCISED.replace("not ", "none ", 1)  # "none measurable on these cells"
    if total and sum(unjudged.values()) == total:
        return "none judged: " + ", ".join(f"{n} {reason}" for reason, n in unjudged.items() if n)
    text = f"{confirmed} of {total} transferred"
    if set_aside:
        text += f", {set_aside} {NOT_EXERCISED}"
    return text + (f", caveat: {caveat}" if caveat and confirmed else "")


def claim_rows(
    hypotheses: Sequence[Hypothesis], verdicts: dict[str, Verdict], track: Track = Track.A
) -> list[ClaimRow]:
    """One row per hypothesis of ``track`` (Track A: the BLIS claims), in the order given."""
    return [
        ClaimRow(
            id=h.id,
            claim=h.title,
            note=h.not_testable or "",
            predicted=predicted_text(h),
            measured=measured_text(verdicts.get(h.id)),
            verdict=verdict_text(verdicts.get(h.id), h),
        )
        for h in hypotheses
        if h.track is track
    ]
