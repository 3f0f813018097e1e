"""Runs whose Track B fault never happened are no evidence about that fault.

The runner records, for every run under a fault treatment, whether the fault happened
(``manifest.json`` ``cells[].fault``; ``ok`` is false when the harness pod never ran, no
model-server pod was Running, the load ended first, or ``kubectl delete pod`` failed, e.g.
forbidden by the cluster's RBAC). Such a run measured the plain workload: counting it for a
claim about pod failure would certify a sim-to-real gap closed on runs that never had the fault.

So stage 5 leaves those reports out, with the reason (gate 3 raises every report left out), and
a claim that has no run with its fault in some arm is not runnable on this cluster, exactly like
one whose fault the request forbids (``bot.bench.conditions``): inconclusive, flagged
"not runnable on this cluster", out of the multiplicity family. Runs whose fault did happen
still count; a claim judged on fewer runs than it had says how many were left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.bench.errors import ReportError
from bot.bench.layout import TREATMENTS, RunKey, parse_layout, split_condition
from bot.bench.run import manifest as mf
from bot.model import Hypothesis
from bot.model.evidence import CONDITION_NOT_RECORDED

#: How a report left out for this reason starts (gate 3 gives it its own fix).
NEVER_HAPPENED = "the fault of its run never happened"
#: The Track B conditions the runner carries out during each run (``bot.bench.run.faults``), whose outcome only
#: ``manifest.json`` records (``cells[].fault``): a report's ``condition:`` keyword says the fault was planned,
#: not that it happened.
RUN_FAULTS = frozenset({"pod-failure"})
#: How a report under such a condition, bound without the manifest, starts (``unrecorded_fault``): a kind of
#: "condition not recorded", so ``unrecorded`` sets its claims aside as it does those of unrecorded conditions.
FAULT_UNRECORDED = f"{CONDITION_NOT_RECORDED} (no record of whether the fault of its run happened)"


def unrecorded_fault(condition: str) -> str:
    """Why a report under the run fault ``condition`` is no evidence about it when its results have no manifest:
    the manifest is the only record of whether the fault happened, as when it says it did not (``missed``)."""
    return (
        f"{FAULT_UNRECORDED}: it is filed under condition {condition!r} and these results have no {mf.MANIFEST}, "
        f"the only record of whether the {condition} fault happened in each run (cells[].fault; the report's "
        f"condition:{condition} keyword says only that it was planned), so it is no evidence about it; "
        + _restore()
        + ", or benchmark the cell again"
    )


def _restore() -> str:
    return (
        f"put back the {mf.MANIFEST} from the benchmark's upload (the benchmark-results artifact of the run that "
        "wrote the reports)"
    )


def _reason(fault: mf.FaultRecord) -> str:
    return f"{NEVER_HAPPENED} ({fault.kind}: {fault.detail or 'no detail recorded'}), so it is no evidence about it"


def missed(manifest: mf.Manifest | None) -> dict[str, str]:
    """Results-relative report path -> why it is no evidence (its run's fault never happened)."""
    if manifest is None:
        return {}
    return {c.report: _reason(c.fault) for c in manifest.cells if c.fault is not None and not c.fault.ok}


def _fault_runs(h: Hypothesis, manifest: mf.Manifest) -> list[mf.CellRecord]:
    rates = {float(r) for r in h.rates}
    return [
        c
        for c in manifest.cells
        if c.fault is not None and c.workload in h.workloads and (not rates or float(c.rate) in rates)
    ]


def judged_as(
    hypotheses: Sequence[Hypothesis], manifest: mf.Manifest | None
) -> tuple[list[Hypothesis], dict[str, str]]:
    """The hypotheses as stage 5 judges them, and a flag per hypothesis judged without some of its runs.

    A benchmarked claim with no run of its fault in some arm, but with runs where it failed, gets no prediction
    and ``not_in_plan`` saying why (``bot.stats.verdicts`` words its verdict from that).
    """
    if manifest is None:
        return list(hypotheses), {}
    out, flags = [], {}
    for h in hypotheses:
        runs = _fault_runs(h, manifest) if h.benchmarked else []
        lost = [c for c in runs if c.fault is not None and not c.fault.ok]
        if not lost:
            out.append(h)
            continue
        first = lost[0].fault
        assert first is not None
        happened = {arm: sum(1 for c in runs if c.treatment == arm and c.fault and c.fault.ok) for arm in TREATMENTS}
        why = (
            f"it needs a run this cluster cannot do: the {first.kind} fault never happened in {len(lost)} of its "
            f"{len(runs)} run(s) ({first.detail or 'no detail recorded'}; manifest.json cells[].fault), so no "
            "report measured it in both arms"
        )
        flag = f"{len(lost)} of {len(runs)} {first.kind} run(s) left out: the fault never happened in them"
        out.append(_judged_or_set_aside(h, _missing(happened), why, flag, flags))
    return out, flags


def _missing(kept: dict[str, int]) -> list[str]:
    """The arms left with no run of a claim."""
    return [arm for arm, n in kept.items() if n == 0]


def _judged_or_set_aside(h: Hypothesis, missing: list[str], why: str, flag: str, flags: dict) -> Hypothesis:
    """A claim some of whose runs were left out: judged on the rest (``flag`` recorded) while every arm keeps
    one; set aside, with no prediction and ``why`` as the reason, when an arm (``missing``) keeps none."""
    if missing:
        return h.model_copy(update={"prediction": None, "not_in_plan": why})
    flags[h.id] = flag
    return h


def _key(rel: str) -> RunKey | None:
    try:
        return parse_layout(Path(rel))
    except ReportError:
        return None


def _in(h: Hypothesis, key: RunKey | None) -> bool:
    rates = {float(r) for r in h.rates}
    return key is not None and key.workload in h.workloads and (not rates or key.rate in rates)


def unrecorded(hypotheses: Sequence[Hypothesis], reports) -> tuple[list[Hypothesis], dict[str, str]]:
    """The hypotheses as stage 5 judges them when reports of their Track B cells record no condition
    (``bot.bench.conditions.condition_reason`` left them out), and a flag per hypothesis judged without some.

    A claim with no report that records its condition in some arm was never shown to run under it: it gets
    no prediction and ``not_in_plan`` starting "condition not recorded" (its verdict says so, not confirmed).
    """
    lost_by = [(_key(rel), reason) for rel, reason in reports.rejected if reason.startswith(CONDITION_NOT_RECORDED)]
    if not lost_by:
        return list(hypotheses), {}
    used = [_key(rel) for rel in reports.loaded]
    out, flags = [], {}
    for h in hypotheses:
        lost = [(k, why) for k, why in lost_by if h.benchmarked and _in(h, k)]
        if not lost:
            out.append(h)
            continue
        kept = {arm: sum(1 for k in used if k is not None and k.treatment == arm and _in(h, k)) for arm in TREATMENTS}
        condition = split_condition(lost[0][0].workload)[1] if lost[0][0] else None
        missing = _missing(kept)
        why = (
            f"{CONDITION_NOT_RECORDED}: no {' or '.join(missing)} report of its cells records the {condition} "
            f"condition (run.keywords condition:{condition}); the {len(lost)} run(s) filed under it were left out, "
            "so nothing shows the condition was applied"
        )
        if all(reason.startswith(FAULT_UNRECORDED) for _, reason in lost):  # the manifest is gone (evidence)
            why = (
                f"{CONDITION_NOT_RECORDED}: the {len(lost)} run(s) filed under {condition} were left out, as the "
                f"results have no {mf.MANIFEST}, the only record of whether the {condition} fault happened in "
                f"them, so nothing shows any of its {' or '.join(missing)} runs had it; {_restore()}"
            )
        flag = f"{len(lost)} run(s) left out: {CONDITION_NOT_RECORDED} ({condition})"
        out.append(_judged_or_set_aside(h, missing, why, flag, flags))
    return out, flags


def summary_lines(manifest: mf.Manifest | None) -> list[str]:
    """What the runner says at the end about faults that did not happen (nothing when every one did)."""
    if manifest is None:
        return []
    out = []
    kinds = sorted({c.fault.kind for c in manifest.cells if c.fault is not None})
    for kind in kinds:
        runs = [c for c in manifest.cells if c.fault is not None and c.fault.kind == kind]
        lost = [c for c in runs if c.fault is not None and not c.fault.ok]
        if not lost:
            continue
        details = sorted({c.fault.detail or "no detail recorded" for c in lost if c.fault is not None})
        out.append(
            f"{kind}: the fault never happened in {len(lost)} of {len(runs)} run(s) ({'; '.join(details)[:300]}). "
            "Stage 5 does not count those runs for a claim about it; a claim with no run of it in an arm is left "
            "inconclusive, flagged 'not runnable on this cluster'"
        )
    return out
