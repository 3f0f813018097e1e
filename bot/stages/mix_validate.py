"""Stage 5's part for the priority mix: load its results under the plan's evidence rules and judge the shedding.

The plan adds llm-d-benchmark's priority mix for an admitter, whose shedding is decided by the request's class
(``bot.bench.priority_plan``) and writes it into the evaluation spec. Stage 5 then reads its runs from the
same results directory as the v0.2 reports, with the same rules (this promotion, its arms, its EPP image,
its plugin code; sample data only with ``--allow-sample-data``, and then every word says so), and an
admitter's ``priority-semantics`` hypothesis gets the shedding-order verdict (``bot.stats.shedding``).
What was not used, and an arm with no usable run, is recorded (``validation/priority-mix.json``) for gate 3:
a planned mix that judged nothing is a finding, never a silence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from bot.model import Hypothesis, Verdict
from bot.stages.context import StageContext


@dataclass
class MixOutcome:
    """What stage 5 made of a planned priority mix."""

    hypothesis: str | None  # the hypothesis it decides (an admitter's), None for a scheduler or router
    used: dict[str, int] = field(default_factory=dict)  # arm -> runs used
    loaded: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    reason: str | None = None  # why it judged nothing
    verdict: Verdict | None = None
    table: list = field(default_factory=list)  # AdmissionRow, also when no hypothesis is decided

    def to_json(self) -> str:
        doc = {
            "planned": True,
            "hypothesis": self.hypothesis,
            "used": {arm: self.used.get(arm, 0) for arm in ("baseline", "evolved")},
            "results": self.loaded,
            "not_used": [{"report": p, "reason": r} for p, r in self.rejected],
            "not_judged": self.reason,
        }
        return json.dumps(doc, indent=2) + "\n"


def planned_mix(ctx: StageContext):
    """The priority mix the evaluation spec stage 4 committed plans (a ``PriorityMixPlan``), or None."""
    from bot.bench.evaluation_spec import load_evaluation_spec

    text = ctx.read(ctx.paths.evaluation_spec)
    return load_evaluation_spec(text).priority_mix if text else None


def judge_mix(
    ctx: StageContext, results_dir: Path, hypotheses: list[Hypothesis], code: dict[str, str] | None, alpha: float
) -> MixOutcome | None:
    """The priority mix's outcome (None when the plan has none): its verdict on the shedding hypothesis, if any."""
    from bot.stages.plan_reports import code_mismatch, evidence_policy

    plan = planned_mix(ctx)
    if plan is None:
        return None
    return judge_planned_mix(
        plan,
        results_dir,
        hypotheses,
        kind=ctx.request.kind,
        policy=lambda: evidence_policy(ctx, results_dir, code),
        mismatch=code_mismatch(results_dir, code),
        alpha=alpha,
    )


def judge_planned_mix(
    plan, results_dir: Path, hypotheses: list[Hypothesis], *, kind, policy, mismatch: str | None, alpha: float
) -> MixOutcome:
    """``judge_mix`` without a stage context (`promote evaluate` shares it): ``plan`` is the spec's priority mix,
    ``policy`` makes the evidence rules (a new one: it counts sample data), ``mismatch`` says why the results
    measured other plugin code (None: they did not)."""
    from bot.bench.errors import ReportError
    from bot.bench.evidence import mark_sample
    from bot.bench.priority_mix import load_priority_mix_evidence
    from bot.stats.shedding import admission_verdict, not_used_verdict, rows, shedding_hypothesis

    h = shedding_hypothesis(hypotheses, kind)
    out = MixOutcome(hypothesis=h.id if h else None)
    try:
        pm = load_priority_mix_evidence(results_dir, policy(), plan)
    except ReportError as exc:
        out.reason = f"no priority-mix result could be used ({exc})"
    else:
        out.rejected = [*pm.rejected, *((p, mismatch) for p in pm.loaded)] if mismatch else list(pm.rejected)
        out.loaded = [] if mismatch else list(pm.loaded)
        for run in [] if mismatch else pm.runs:
            out.used[run.key.treatment] = out.used.get(run.key.treatment, 0) + 1
        missing = [arm for arm in ("baseline", "evolved") if not out.used.get(arm)]
        if mismatch:
            out.reason = f"no priority-mix result could be used: {mismatch}"
        elif missing:
            out.reason = f"no {' or '.join(missing)} priority-mix result could be used" + _why(out.rejected, missing)
        else:
            out.reason = _too_few(out.used, plan.repetitions, out.rejected)
        if out.reason is None:
            from bot.stats.admission import MixedLoads, class_admission

            try:
                if h is not None:
                    out.verdict = mark_sample([admission_verdict(h, pm.table, dict(out.used), alpha)], pm)[0]
                    out.table = out.verdict.admission
                else:
                    out.table = rows(class_admission(pm.table), alpha)
            except MixedLoads as exc:
                out.reason = str(exc)
    if h is not None and out.verdict is None:
        out.verdict = not_used_verdict(h, out.reason or "its results were not usable")
    return out


def unplanned_mix(ctx: StageContext, results_dir: Path) -> list[tuple[str, str]]:
    """Priority-mix results under ``results_dir`` when the plan has no mix, each with why it is not used: the GPU
    time they took bought nothing here, and the operator should hear so rather than find them passed over."""
    from bot.bench.priority_mix import mix_results_in
    from bot.model import PolicyKind

    if ctx.request.kind is PolicyKind.ADMISSION:
        why = "the plan on the branch has no priority mix (its evaluation spec lists none), so this run decides nothing"
    else:
        why = (
            f"the plan has no priority mix: only an admitter's shedding order is judged on one, and this is a "
            f"{ctx.request.kind.value} policy, so this run decides nothing"
        )
    return [(rel, f"priority-mix run not used: {why}") for rel in mix_results_in(results_dir)]


def _too_few(used: dict[str, int], planned: int, rejected: list[tuple[str, str]]) -> str | None:
    """Why fewer runs than the plan's repetitions decide nothing ("1 of 3 planned runs"), None when enough were used.

    The plan runs each arm ``planned`` times so that a person (and the per-run check) can see the shedding is
    steady from run to run; Fisher's test pools the requests as independent, so one run's requests would give a
    tiny p-value that says nothing about the next run.
    """
    short = [arm for arm in ("baseline", "evolved") if used.get(arm, 0) < planned]
    if not short:
        return None
    said = " and ".join(f"{used.get(arm, 0)} of {planned} planned {arm} runs" for arm in short)
    return (
        f"only {said} could be used: fewer runs than the plan's priority_mix.repetitions cannot show that the "
        "shedding is steady from run to run" + (_why(rejected, short) if _left_out(rejected, short) else "")
    )


def _left_out(rejected: list[tuple[str, str]], arms: list[str]) -> bool:
    from bot.bench.layout import arm_of

    return any(arm_of(p) in arms for p, _ in rejected)


def _why(rejected: list[tuple[str, str]], arms: list[str]) -> str:
    from bot.bench.layout import arm_of

    reasons = [r for p, r in rejected if arm_of(p) in arms]
    if not reasons:
        return " (none found)"
    kinds = {r.split(": ")[0] for r in reasons}
    return f" ({len(reasons)} left out: {kinds.pop() if len(kinds) == 1 else f'for {len(kinds)} different reasons'})"


def with_mix(verdicts: list[Verdict], outcome: MixOutcome | None) -> list[Verdict]:
    """The verdicts with the shedding hypothesis's replaced by the priority mix's."""
    if outcome is None or outcome.verdict is None:
        return verdicts
    return [outcome.verdict if v.hypothesis_id == outcome.hypothesis else v for v in verdicts]
