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
#: The flags ``not_benchmarked_verdict`` records, each the reason no report decides its hypothesis.
UNJUDGED_REASONS = (CONDITION_NOT_RECORDED, NOT_RUNNABLE, NOT_VARIED, NOT_BENCHMARKED)


def not_testable_verdict(h: Hypothesis) -> Verdict:
    """A hypothesis the translated plugin cannot exercise: not judged, whatever the reports show.

    Its mechanism reads a signal the plugin holds constant (or the translation removed), so a
    measured change could not be the mechanism's doing and no change could count against it. It
    takes no share of alpha (it is left out of the multiplicity family), and more repetitions would
    not decide it: only a translation that supplies the signal would.
    """
    assert h.not_testable
    summary = (
        f"{h.id} is not testable as translated: {h.not_testable.rstrip('.')}. No benchmark of this plugin can "
        "test it, so it is not judged and takes no share of the error rate; more repetitions would not change that."
    )
    return Verdict(
        hypothesis_id=h.id, status=VerdictStatus.NOT_TESTABLE, summary=summary, flags=["not testable as translated"]
    )


def not_benchmarked_verdict(h: Hypothesis) -> Verdict:
    """A hypothesis no report can decide, with the reason: a run the cluster cannot do is said as such."""
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
