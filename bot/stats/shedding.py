"""Stage 5's verdict on an admitter's shedding: the priority mix judged per class, as a verdict and a table.

The plan adds llm-d-benchmark's priority mix for an admitter (``bot.bench.priority_plan``); its runs give,
per arm and traffic class, what was sent, admitted and shed (``bot.bench.priority_mix``). The Map C gap
``priority-semantics`` is the admitter's hypothesis about exactly that: under overload with protected
(priority >= 0) and sheddable (priority < 0) requests, it sheds only sheddable ones. Its Track B template
predicts protected TTFT on a mixed-class workload, which no planned cell sends (``not_in_plan``), so
``bot.stats.verdicts`` leaves it undecided; on the mix it gets the shedding-order verdict of
``bot.stats.admission`` instead, with the per-class table in ``Verdict.admission``.

Error control: the shedding order is decided by its own Holm family at the plan's alpha, not inside the
promotion's weighted-Holm family (``bot.stats.multiplicity``). That family takes one confirmation p per
hypothesis, sized by the plan's power simulation of Welch tests on run-level metrics; the shedding order is a
composite (every sheddable class admitted less than the critical one, and no protected class losing
admissions) of exact tests on request counts, which neither the family's weights nor its simulation model.
So the promotion's family-wise error is at most alpha for the benchmarked hypotheses plus alpha for the
shedding test; ``MULTIPLICITY_NOTE`` says so wherever the verdict is shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.escape import md
from bot.model import AdmissionRow, Hypothesis, PolicyKind, Verdict, VerdictStatus
from bot.stats.admission import ClassAdmission, class_admission, shedding_order
from bot.stats.decide import CONFIRMED, REFUTED

#: The Map C gap whose hypothesis the priority mix decides for an admitter (dictionary/map-c-gaps.yaml); stage 3
#: words that hypothesis as decided on the mix (bot.hypotheses.track_b.SHEDDING_GAP).
SHEDDING_GAP = "priority-semantics"
JUDGED_FLAG = "judged on the priority mix (per-class admit rate)"
NOT_USED_FLAG = "priority mix planned but not judged"
MULTIPLICITY_NOTE = (
    "The shedding order is its own family (Holm over its Fisher tests at the plan's alpha), not part of the "
    "promotion's weighted-Holm family: that family's weights and power simulation are for Welch tests on "
    "run-level metrics, one p per hypothesis, and the shedding order is a composite of exact tests on request "
    "counts. The promotion's family-wise error is therefore at most alpha for the benchmarked hypotheses plus "
    "alpha for the shedding order"
)
_STATUS = {CONFIRMED: VerdictStatus.CONFIRMED, REFUTED: VerdictStatus.REFUTED}


def on_mix(v: Verdict) -> bool:
    """Whether the plan's priority mix decides this verdict (judged on it, or planned on it and not judged yet):
    such a hypothesis has no benchmark prediction of its own, yet a run of the plan does decide it."""
    return bool(v.admission) or JUDGED_FLAG in v.flags or NOT_USED_FLAG in v.flags


def shedding_hypothesis(hypotheses: Iterable[Hypothesis], kind: PolicyKind) -> Hypothesis | None:
    """The hypothesis the priority mix decides: an admitter's ``priority-semantics`` gap (None for other kinds)."""
    if kind is not PolicyKind.ADMISSION:
        return None
    return next((h for h in hypotheses if h.source == SHEDDING_GAP and not h.not_testable), None)


def rows(classes: Sequence[ClassAdmission], alpha: float) -> list[AdmissionRow]:
    """The per-class table as the verdict records it (verdicts.json)."""
    return [
        AdmissionRow(
            traffic_class=c.traffic_class,
            priority=c.priority,
            baseline_requests=c.baseline[1],
            baseline_admitted=c.baseline[0],
            baseline_shed=c.baseline_shed,
            evolved_requests=c.evolved[1],
            evolved_admitted=c.evolved[0],
            evolved_shed=c.evolved_shed,
            baseline_shed_500=c.baseline_shed_500,
            evolved_shed_500=c.evolved_shed_500,
            baseline_runs=[round(x, 6) for x in c.baseline_runs],
            evolved_runs=[round(x, 6) for x in c.evolved_runs],
            p_value=min(1.0, c.p),
            p_adjusted=min(1.0, c.adjusted),
            change=c.change(alpha),
        )
        for c in classes
    ]


def classes_of(recorded: Sequence[AdmissionRow]) -> list[ClassAdmission]:
    """The recorded table back as ``bot.stats.admission`` classes: gate 3 re-derives the status from it."""
    return [
        ClassAdmission(
            r.traffic_class,
            r.priority,
            (r.baseline_admitted, r.baseline_requests),
            (r.evolved_admitted, r.evolved_requests),
            tuple(r.baseline_runs),
            tuple(r.evolved_runs),
            r.p_value,
            r.p_adjusted,
            r.baseline_shed,
            r.evolved_shed,
            r.baseline_shed_500,
            r.evolved_shed_500,
        )
        for r in recorded
    ]


def recorded_status(recorded: Sequence[AdmissionRow], alpha: float) -> VerdictStatus:
    """The status the recorded counts give (what stage 5 decided, if nobody edited the verdict)."""
    return _STATUS.get(shedding_order(classes_of(recorded), alpha).status, VerdictStatus.INCONCLUSIVE)


def _rate(pair: tuple[int, int]) -> str:
    return f"{pair[0] / pair[1]:.1%}" if pair[1] else "n/a"


def admission_verdict(h: Hypothesis, table, runs: dict[str, int], alpha: float) -> Verdict:
    """The shedding-order verdict of ``h`` from a priority mix's count table (``bot.bench.priority_mix``)."""
    classes = class_admission(table)
    order = shedding_order(classes, alpha)
    status = _STATUS.get(order.status, VerdictStatus.INCONCLUSIVE)
    rates = "; ".join(f"{c.traffic_class} {_rate(c.baseline)} → {_rate(c.evolved)}" for c in classes)
    n = ", ".join(f"{runs.get(arm, 0)} {arm}" for arm in ("baseline", "evolved"))
    summary = (
        f"{h.id} is {status.value} on the priority mix ({n} runs): {order.why.rstrip('.')}. Admit rate per class, "
        f"baseline → evolved: {rates}. Judged by per-class admit rate only: protected-request TTFT on a mix is "
        "not measured. The shedding order is its own Holm family, outside the promotion's weighted-Holm family "
        "(verdicts.md's priority-mix section says why)."
    )
    return Verdict(
        hypothesis_id=h.id, status=status, summary=summary, flags=[JUDGED_FLAG], admission=rows(classes, alpha)
    )


def not_used_verdict(h: Hypothesis, reason: str) -> Verdict:
    """The plan has a priority mix but none of its results could be used: said, never the old "not in plan"."""
    summary = (
        f"{h.id} is not decided: the plan's priority mix would decide it (per-class admit rate), but {reason}. "
        "Run the plan's priority mix (`promote bench run` runs it before the cells, and with `--resume` the runs "
        "still missing; by hand, priority-mix/experiment.yaml says how) and judge again."
    )
    return Verdict(hypothesis_id=h.id, status=VerdictStatus.INCONCLUSIVE, summary=summary, flags=[NOT_USED_FLAG])


def admission_markdown(recorded: Sequence[AdmissionRow], alpha: float, hid: str | None) -> str:
    """The per-class table and the shedding-order verdict, for verdicts.md (empty without a table).

    ``hid``: the hypothesis the mix decided (an admitter's); None for a scheduler or router whose plan has
    the mix because it reads the class: the table is then shown for information, and decides nothing.
    """
    if not recorded:
        return ""
    order = shedding_order(classes_of(recorded), alpha)
    status = _STATUS.get(order.status, VerdictStatus.INCONCLUSIVE)
    if hid is None:
        head = "## Priority mix: admit rate per class (informational)"
        verdict = (
            "No hypothesis of this promotion is decided by it (only an admitter is judged by whom it sheds); "
            f"the shedding order would read {status.value}: {md(order.why)}."
        )
    else:
        head = f"## Priority mix: does the admitter shed sheddable traffic first? ({md(hid)})"
        verdict = f"**{md(hid)} {status.value}**: {md(order.why)}."
    out = [
        head,
        "",
        verdict,
        "",
        (
            "| Class (priority) | Baseline: sent / admitted / shed | Admit rate (per run) | "
            "Evolved: sent / admitted / shed | Admit rate (per run) | p (Holm) | Change |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for r in recorded:
        prio = "?" if r.priority is None else str(r.priority)
        out.append(
            f"| {md(r.traffic_class)} ({prio}) | {r.baseline_requests} / {r.baseline_admitted} / {r.baseline_shed} | "
            f"{_rate((r.baseline_admitted, r.baseline_requests))} ({_runs(r.baseline_runs)}) | "
            f"{r.evolved_requests} / {r.evolved_admitted} / {r.evolved_shed} | "
            f"{_rate((r.evolved_admitted, r.evolved_requests))} ({_runs(r.evolved_runs)}) | "
            f"{r.p_value:.3g} ({r.p_adjusted:.3g}) | {md(r.change)} |"
        )
    out += [
        "",
        (
            "Admitted = served (2xx); shed = refused by the EPP: HTTP 429 from llm-d-router v0.10.0's built-in "
            "admission (ResourceExhausted), or HTTP 500 from an Admitter plugin, whose error v0.10.0's director "
            "rewrites to errcommon.Internal. The harness records no response body, so a 500 that streamed nothing "
            "is counted as shed though it may be an unrelated server error, in both arms and every class (the "
            "verdict says how many there were). Per class, Fisher's "
            f"exact test of the admit rate, evolved against baseline, two-sided, Holm over the classes at alpha {alpha:g}; "
            "the shedding order, on the shed requests only: each sheddable class against the critical one "
            "within the evolved arm, each protected class against its baseline (one-sided Fisher, one Holm family); "
            "a request that failed otherwise (sent - admitted - shed: a timeout, another 5xx) is the stack failing, not "
            "shedding, and never confirms the order. Requests are pooled over an arm's runs (all of the plan's one "
            "load), and Fisher's test treats them as independent: requests of one run share its load, so the "
            "p-values are optimistic when runs differ. The order is therefore confirmed only when every evolved run "
            "agrees (each sheddable class admitted less than the critical class within the run), and the runs' own "
            "rates are beside the pooled ones. Protected-request latency on the mix is not judged."
        ),
        "",
        f"> {MULTIPLICITY_NOTE}.",
    ]
    return "\n".join(out)


def _runs(rates: Sequence[float]) -> str:
    return ", ".join(f"{x:.0%}" for x in rates) or "none"
