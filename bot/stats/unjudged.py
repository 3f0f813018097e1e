"""Verdicts of hypotheses no benchmark report decides: not testable as translated, or not in the plan.

Kept apart from ``verdicts`` (which judges the measured cells) because these are decided by the
hypothesis alone, before any report is read, and say which kind of run or review would decide them.
"""

from __future__ import annotations

from typing import NamedTuple

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


#: What a verdict judged on cells that never exercise one of the plugin's rules says of it (``RuleCaveat``).
RULE_NOT_EXERCISED = "not exercised on these cells"


class RuleCaveat(NamedTuple):
    """A rule of the plugin the planned cells never exercise, said by gate 2's ``check``, where stage 5 cannot prove
    the plugin inert on them: the hypotheses are judged as measured, and each verdict says so (``caveat_unexercised``).

    The set-aside above needs a proven cause (the admitter admits the cells' priority on every pool state, or the
    order ranks every request alike): only then is the plugin known to measure like the baseline. Where the cause is
    only that a rule's input never varies (one tenant on every cell), the plugin may still act, or not: a per-tenant
    share rule never fires on a lone tenant, a per-tenant limit fires on it more than on the tenants BLIS evolved it
    on. Setting the claims aside would then discard a real measurement; reporting them bare would generalise it to
    traffic it was not taken on. The caveat is the defensible middle: the estimate stands, its population is named."""

    rule: str  # "per-tenant rule"
    check: str  # gate 2's check: "G2.tenants-exercised"
    cause: str  # why the cells do not exercise it
    fix: str  # what would (after "to measure it, ")

    @property
    def mark(self) -> str:
        """The few words every surface shows beside the verdict (``rule_caveat``)."""
        return f"{self.rule} {RULE_NOT_EXERCISED} (gate 2's {self.check})"

    @property
    def flag(self) -> str:
        return f"{self.mark}: {self.cause}; to measure it, {self.fix}"


def caveat_unexercised(verdicts, hypotheses, caveat: RuleCaveat | None) -> list[Verdict]:
    """The verdicts with ``caveat`` on each judged on the planned cells: a benchmarked hypothesis's, unless no
    report decides it (``unjudged_reason``), it is not testable, or the priority mix judged it (its own traffic).

    Every such verdict, not only the claims that name the rule: the rule is part of the decision on every request,
    so each estimate the cells give (a claim's gain, a guard's "no regression") is conditional on the one value the
    cells hold the rule's input at. Choosing by a claim's wording would pick by text, not by what the plugin does."""
    if caveat is None:
        return list(verdicts)
    benchmarked = {h.id for h in hypotheses if h.benchmarked}

    def judged(v: Verdict) -> bool:
        return (
            v.hypothesis_id in benchmarked
            and v.status is not VerdictStatus.NOT_TESTABLE
            and not v.admission
            and unjudged_reason(v) is None
        )

    return [
        v.model_copy(update={"flags": [*v.flags, caveat.flag], "summary": f"{v.summary} Caveat: {caveat.flag}."})
        if judged(v)
        else v
        for v in verdicts
    ]


def caveat_mark(flag: str) -> str:
    """The caveat's few words when ``flag`` is a ``RuleCaveat``'s ("per-tenant rule not exercised on these cells
    (gate 2's G2.tenants-exercised)"), else ""."""
    return flag.partition("): ")[0] + ")" if f" {RULE_NOT_EXERCISED} (gate 2's " in flag else ""


def rule_caveat(v: Verdict | None) -> str:
    """The verdict's caveat in a few words (``caveat_mark``), "" when it carries none."""
    return next((m for f in (v.flags if v is not None else []) if (m := caveat_mark(f))), "")


def rule_caveats(verdicts) -> str:
    """The caveats the ``verdicts`` carry, each once, joined: what a count of them ("1 of 1 transferred") adds."""
    return "; ".join(dict.fromkeys(c for v in verdicts if (c := rule_caveat(v))))
