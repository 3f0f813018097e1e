"""Verdicts of hypotheses no benchmark report decides: not testable as translated, or not in the plan.

Kept apart from ``verdicts`` (which judges the measured cells) because these are decided by the
hypothesis alone, before any report is read, and say which kind of run or review would decide them.
"""

from __future__ import annotations

from bot.model import Hypothesis, Verdict, VerdictStatus
from bot.model.evidence import CONDITION_NOT_RECORDED

NOT_RUNNABLE = "not runnable on this cluster"
NOT_VARIED = "no planned run varies it"
NOT_BENCHMARKED = "not decided by benchmarks"
#: The planned cells send only traffic the plugin does not act on (``bot.bench.priority_plan.sheds_nothing``).
NOT_EXERCISED = "not measurable on these cells"
#: What a scheduler's set-aside hypotheses say of its cells (``bot.bench.order_cells``): their cause, as the
#: headline names it, where an admitter's is that the plugin does not act on the cells' traffic.
ORDER_CAUSE = (
    "the evolved order ranks every request of the planned cells alike against the modelled waiting requests, "
    "always last (the plugin is a second queue-scorer) or always first (it scores flat)"
)
ADMITTER_CAUSE = "the plugin does not act on the traffic every planned cell sends"
#: The flags ``not_benchmarked_verdict`` records, each the reason no report decides its hypothesis.
UNJUDGED_REASONS = (CONDITION_NOT_RECORDED, NOT_RUNNABLE, NOT_VARIED, NOT_BENCHMARKED, NOT_EXERCISED)


def not_testable_verdict(h: Hypothesis) -> Verdict:
    """A hypothesis the translated plugin cannot exercise: not judged, whatever the reports show.

    Its mechanism reads a signal the plugin holds constant (or the translation removed), or rests on
    logic that never runs in llm-d (a branch for an SLO class llm-d never sends), so a measured change
    could not be the mechanism's doing and no change could count against it. It takes no share of
    alpha (it is left out of the multiplicity family), and more repetitions would not decide it: only
    a translation that supplies the signal (or reaches the logic) would.
    """
    assert h.not_testable
    summary = (
        f"{h.id} is not testable as translated: {h.not_testable.rstrip('.')}. No benchmark of this plugin can "
        "test it, so it is not judged and takes no share of the error rate; more repetitions would not change that."
    )
    return Verdict(
        hypothesis_id=h.id, status=VerdictStatus.NOT_TESTABLE, summary=summary, flags=["not testable as translated"]
    )


def set_aside_unexercised(hypotheses, why: str | None, fix: str) -> list[Hypothesis]:
    """The hypotheses with every benchmarked one set aside as not measurable on these cells, when ``why`` says
    the planned cells send only traffic the plugin does not act on (gate 2's ``G2.priority-exercised`` said so).

    Such a plugin measures like the baseline on every cell, so whatever a cell shows is noise or a confound (the
    runs' own, or a sample's planted effect), not the plugin: confirming a claim on it would report a transfer
    that was never measured. Set aside like a claim whose fault never happened (no prediction, ``not_in_plan``),
    it takes no share of alpha and its verdict names the cause and what to change (``fix``)."""
    if not why:
        return list(hypotheses)
    return set_aside(hypotheses, {h.id: why for h in hypotheses if h.benchmarked}, fix, "G2.priority-exercised")


def set_aside(hypotheses, why: dict[str, str], fix: str, check: str) -> list[Hypothesis]:
    """The hypotheses with those ``why`` names set aside as not measurable on these cells, each with its cause,
    the gate-2 ``check`` that said so and ``fix``: the admitter's rule above, and a scheduler's, whose cells leave
    only the hypotheses whose mechanism is its order unexercised (``bot.bench.order_cells``)."""
    return [
        h.model_copy(
            update={
                "prediction": None,
                "not_in_plan": f"{NOT_EXERCISED}: {why[h.id]} (gate 2's {check}); to measure it, {fix}",
            }
        )
        if h.benchmarked and h.id in why
        else h
        for h in hypotheses
    ]


def not_benchmarked_verdict(h: Hypothesis) -> Verdict:
    """A hypothesis no report can decide, with the reason: a run the cluster cannot do is said as such."""
    if h.not_in_plan and h.not_in_plan.startswith(NOT_EXERCISED):
        summary = f"{h.id} is {h.not_in_plan}."
        return Verdict(hypothesis_id=h.id, status=VerdictStatus.INCONCLUSIVE, summary=summary, flags=[NOT_EXERCISED])
    if h.not_in_plan and h.not_in_plan.startswith(CONDITION_NOT_RECORDED):
        summary = (
            f"{h.id} is not decided: {h.not_in_plan}. Run its cells with `promote bench run`, which applies the "
            "condition and records it, or decide it by review at gate 3."
        )
        return Verdict(
            hypothesis_id=h.id, status=VerdictStatus.INCONCLUSIVE, summary=summary, flags=[CONDITION_NOT_RECORDED]
        )
    if h.not_in_plan:
        cluster = "cluster cannot" in h.not_in_plan
        summary = (
            f"{h.id} is not decided by this promotion's benchmark: {h.not_in_plan}. "
            + ("Decide it on a cluster that can run it" if cluster else "Decide it with a run that varies it")
            + ", or by review at gate 3."
        )
        flag = NOT_RUNNABLE if cluster else NOT_VARIED
    else:
        summary = (
            f"{h.id} makes no benchmark prediction, so the benchmark reports cannot decide it; "
            "it is decided by the stage 4 tests or by review."
        )
        flag = NOT_BENCHMARKED
    return Verdict(hypothesis_id=h.id, status=VerdictStatus.INCONCLUSIVE, summary=summary, flags=[flag])


def unjudged_reason(v: Verdict) -> str | None:
    """Why no benchmark report decides this inconclusive verdict, in the words it records (its flag), else None.

    The PR body, gate 3's review, report.md and verdicts.md all say it with this, so a maintainer reading any one
    of them learns the same cause: "not runnable on this cluster" calls for another cluster (or an exclude at
    gate 2), "no planned run varies it" for another run; one phrase for both sent people to the wrong fix."""
    if v.status is not VerdictStatus.INCONCLUSIVE:
        return None
    return next((f for f in v.flags if f in UNJUDGED_REASONS), None)


def unexercised_cause(summaries) -> str:
    """Why hypotheses were set aside as not measurable on these cells, with the gate-2 check that said so, from
    their verdicts' ``summaries``: a scheduler's order inert on the cells, or an admitter that never acts there."""
    import re

    texts = list(summaries)
    check = next((m.group(1) for t in texts if (m := re.search(r"gate 2's (G2\.[\w.-]+)", t))), "G2.priority-exercised")
    cause = ORDER_CAUSE if any(ORDER_CAUSE in t for t in texts) else ADMITTER_CAUSE
    return f"{cause}, as gate 2's {check} said"
