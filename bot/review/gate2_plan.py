"""Gate 2 on what approving buys: a plan that can decide nothing, or that tests no claim of the program.

Trials p2 and p4 priced 2480 and 1920 GPU-minutes of plans where none of the benchmarked hypotheses reached the
80% power the plan is sized for (at most 8%), and where the one BLIS claim got no runs (not testable as
translated; not measurable on the cells). The headline said so in a clause and the plan README in a note
(``bot.bench.sizing``), but the checklist raised nothing, so the review converged and a person approved the GPU
time seeing no finding. Two IMPORTANT findings say it, from what stage 4's plan records (``BenchmarkPlan``:
``hypothesis_power``, ``most_gpu_minutes``, ``t_eff``, ``cv``), never recomputed:

- ``G2.plan-decides-nothing``: no benchmarked hypothesis reaches the power target; with the GPU-minutes, the best
  power and the knobs that change power as stage 4 sizes it (the margins of equivalence and no-worse predictions,
  gate 2's ``margin:``, at the narrowest value stage 4's own sizing decides a hypothesis at, with the power it gives,
  or none when no plausible margin does, ``bot.bench.sizing.narrowest_guard_margin``; fewer cells per hypothesis,
  the workloads' ``rates`` in promotion.yaml; fewer hypotheses sharing alpha, ``exclude:``). Runs per arm are not
  a setting: stage 4 already sizes up to ``MAX_REPETITIONS``.
- ``G2.no-claim-benchmarked``: the request has claims and the plan benchmarks none of them (Tracks B and C only), with
  why each is out. A claim the priority mix decides (an admitter's shedding order) counts as benchmarked. When each
  claim is out only because a person excluded it and wrote why, it is a SUGGESTION quoting them: asking them to
  "approve saying why" would ask what they already answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.bench.plan import MAX_REPETITIONS, PlanError, make_plan
from bot.bench.plan_model import BenchmarkPlan
from bot.bench.units import gpu_minutes
from bot.directives import request_changes_command
from bot.model import Finding, Hypothesis, PromotionRequest, Severity, Track
from bot.stats.power import MAX_CV, NoiseModel

#: The margins ``_power_fix`` offers are multiples of this: a figure a person can read and type.
MARGIN_STEP = 0.01
#: The plan's kinds of a guard: judged against a margin (a directional claim is planned at 2 x T_eff instead).
_GUARD_KINDS = ("equivalent", "no-worse")


def plan_findings(ctx, hyps, excluded: Sequence[tuple[Hypothesis, str]] = ()) -> list[Finding]:
    """The findings on the plan stage 4 will make from the branch's hypotheses (the one gate 2's headline prices:
    same inputs, so the plan cache's, ``bot.bench.plan_memo``); none when no plan can be made (the headline says
    why). ``excluded``: (hypothesis, the reason its person wrote) for each a person excluded at gate 2."""
    from bot.hypotheses import hypothesis_order
    from bot.review.brief import planned_hypotheses

    hypotheses = sorted((h for _, h in hyps), key=hypothesis_order)
    try:
        plan = make_plan(ctx.request, planned_hypotheses(ctx, hypotheses))
    except PlanError:
        return []
    return power_findings(
        plan,
        ctx.request,
        [*hypotheses, *(h for h, _ in excluded)],
        where=ctx.paths.hypotheses_dir,
        home=ctx.home,
        work=getattr(ctx, "work", None),
        excluded={h.id: why for h, why in excluded},
    )


def power_findings(
    plan: BenchmarkPlan,
    request: PromotionRequest,
    hypotheses: Sequence[Hypothesis],
    *,
    where: str,
    home: str,
    work: str | None,
    excluded: Mapping[str, str] | None = None,
) -> list[Finding]:
    """``G2.plan-decides-nothing`` and ``G2.no-claim-benchmarked`` for ``plan`` (see the module docstring);
    ``excluded``: id -> the reason a person wrote when they excluded it at gate 2 ("" when none)."""
    if not plan.hypothesis_power:  # no cell planned: the priority mix alone decides (bot.bench.mix_only)
        return []
    out = []
    if not any(hp.decidable for hp in plan.hypothesis_power):
        out.append(_decides_nothing(plan, where, home, work))
    claims = _claims_not_benchmarked(plan, request, hypotheses, excluded or {})
    if claims is not None:
        out.append(_no_claim(plan, claims, where))
    return out


def _spend(plan: BenchmarkPlan) -> str:
    """'up to 1920 GPU-minutes at most (80 runs)': the figure gate 2's headline approves."""
    runs = plan.cost.runs + (plan.priority_mix.runs if plan.priority_mix else 0)
    return f"{gpu_minutes(plan.most_gpu_minutes)} GPU-minutes at most ({runs} runs)"


def _decides_nothing(plan: BenchmarkPlan, where: str, home: str, work: str | None) -> Finding:
    rows = plan.hypothesis_power
    best = max(rows, key=lambda hp: hp.power)
    mix = f" (the priority mix still decides {', '.join(plan.decided_on_mix)})" if plan.decided_on_mix else ""
    message = (
        f"approving spends {_spend(plan)} on a plan where none of the {len(rows)} benchmarked hypotheses reaches "
        f"{plan.power:.0%} power within {MAX_REPETITIONS} runs per arm: the best is {best.hypothesis}'s "
        f"{best.power:.0%}{mix}; every verdict of the cells will likely be inconclusive. The plan is sized for CV "
        f"{plan.cv:.0%}, {plan.cv_source}; a noise floor T_eff {plan.t_eff:.0%}; an evolved arm up to "
        f"{plan.evolved_noise_ratio:g} times as noisy"
    )
    return Finding(
        severity=Severity.IMPORTANT,
        check="G2.plan-decides-nothing",
        file=where,
        message=message,
        fix=_power_fix(plan, home, work),
    )


def _power_fix(plan: BenchmarkPlan, home: str, work: str | None) -> str:
    """The knobs that change power as stage 4 sizes it, those that apply to this plan first."""
    if plan.cv > MAX_CV:
        return (
            f"reduce the run-to-run noise (dedicated nodes, longer runs) before spending GPU time: at CV {plan.cv:.0%}, "
            f"above the {MAX_CV:.0%} halt, every cell stops as too noisy whatever its margin or runs; or reject"
        )
    parts = []
    under = {hp.hypothesis for hp in plan.hypothesis_power}
    guards = [h for h in plan.hypotheses if h.id in under and h.direction.value in _GUARD_KINDS]
    if guards:
        parts.append(_margin_fix(plan, guards, home, work))
    spread = [h for h in plan.hypotheses if h.id in under and len(h.cells) > 1]
    if spread:
        workloads = sorted({c.workload for h in spread for c in h.cells})
        parts.append(
            f"fewer `rates` for {', '.join(f'`{w}`' for w in workloads)} in promotion.yaml (the issue's request on "
            f"GitHub): a hypothesis is confirmed only when every cell it is planned on confirms "
            f"({', '.join(f'{h.id} on {len(h.cells)}' for h in spread)}), so each of its cells needs more power"
        )
    parts.append(
        f"drop what you need least with `exclude: ID, ID (why)`: the {len(under)} share alpha {plan.alpha:g}, and "
        "with fewer each is tested at a higher level (and fewer runs are bought)"
    )
    return (
        "; ".join(parts)
        + f". Runs per arm are not a setting: the plan already sizes up to {MAX_REPETITIONS} runs per arm. Or approve "
        "saying why the runs are worth it (a rehearsal; tests you accept as likely undecided), or reject"
    )


def _margin_fix(plan: BenchmarkPlan, guards: Sequence, home: str, work: str | None) -> str:
    """The narrowest ``margin:`` that makes stage 4's own sizing decide a hypothesis (``narrowest_guard_margin``),
    and the power it gives; or that no margin up to ``MARGIN_PLAUSIBLE`` does, so none is offered."""
    from bot.bench.sizing import narrowest_guard_margin
    from bot.hypotheses.feedback import MARGIN_PLAUSIBLE

    noise = NoiseModel(plan.cv, plan.evolved_noise_ratio, plan.outlier_rate)
    margin, hid, power = narrowest_guard_margin(
        plan.hypotheses,
        noise,
        alpha=plan.alpha,
        target=plan.power,
        max_reps=MAX_REPETITIONS,
        ceiling=MARGIN_PLAUSIBLE,
        step=MARGIN_STEP,
    )
    now = ", ".join(f"{m:.0%}" for m in sorted({h.margin for h in guards}))
    beside = f"(now {now}, beside a noise floor of {plan.t_eff:.0%})"
    if margin is None:
        return (
            f"no margin up to {MARGIN_PLAUSIBLE:.0%} (beyond it a guard lets a real regression pass) makes an "
            f"equivalence or no-worse prediction {beside} reach {plan.power:.0%} power within {MAX_REPETITIONS} runs "
            f"per arm (at {MARGIN_PLAUSIBLE:.0%} and {MAX_REPETITIONS} runs per arm the best is {hid}'s {power:.0%}), "
            "so widening the margins will not help here"
        )
    line = f"margin: {margin:g}"
    below = round(margin - MARGIN_STEP, 10)
    narrower = f"; at {below:g} none reaches {plan.power:.0%}" if below > 0 else ""
    command = f"`/request-changes {line}`" if home == "github" else request_changes_command(2, line, work)
    return (
        f"widen the margins of the equivalence and no-worse predictions {beside}: {command} for all of them is the "
        f"narrowest (in steps of {MARGIN_STEP:g}) at which one reaches {plan.power:.0%} power within "
        f"{MAX_REPETITIONS} runs per arm: {hid} then reaches {power:.0%} power (the chance the verdict confirms it "
        f"when nothing else is confirmed{narrower}), or "
        f"`margin {hid}: {margin:g}` for {hid} alone; stage 3 reruns and gate 2 shows the new powers. A margin is "
        "the regression such a test lets pass as none: take it only if you would accept a regression that large"
    )


def _claims_not_benchmarked(
    plan: BenchmarkPlan, request: PromotionRequest, hypotheses: Sequence[Hypothesis], excluded: Mapping[str, str]
) -> list[tuple[str, str | None]] | None:
    """('A1 (claim `c0`): not testable as translated', None) for each claim's Track A hypothesis when the plan
    benchmarks none of them, with the person's reason in place of None when they excluded it and wrote why (a claim
    also not testable was decided on by them all the same: asking again asks what they answered); None when the
    plan benchmarks one (on a cell or the priority mix), or the request claims nothing."""
    if not request.claims or plan.decided_on_mix or any(h.track == Track.A.value for h in plan.hypotheses):
        return None
    claim_ids = {c.id for c in request.claims}
    out = []
    for h in hypotheses:
        if h.track is not Track.A or h.source not in claim_ids:
            continue
        if h.id in plan.not_measurable:
            other = "not measurable on these cells (the traffic findings say why)"
        elif h.not_testable:
            other = "not testable as translated (G2.claim-not-testable says why)"
        elif h.prediction is None:
            other = "no benchmark prediction"
        else:
            other = None if h.id in excluded else "not planned"
        if h.id not in excluded:
            out.append((f"{h.id} (claim `{h.source}`): {other}", None))
            continue
        reason = excluded[h.id].strip()
        said = f'excluded at gate 2 ("{reason}")' if reason else "excluded at gate 2 (no reason given)"
        alone = reason or None  # the person decided it with their reason, whatever else keeps it out too
        out.append((f"{h.id} (claim `{h.source}`): {said}" + (f", and {other}" if other else ""), alone))
    return out


def _no_claim(plan: BenchmarkPlan, claims: list[tuple[str, str | None]], where: str) -> Finding:
    """IMPORTANT when a claim is out for a cause no one decided (not testable, not measurable, no prediction) or
    nothing says why; a SUGGESTION quoting the person back when they excluded each and wrote why (asking them to
    "approve saying why" again would ask what they already answered)."""
    what = "; ".join(line for line, _ in claims) if claims else "no Track A hypothesis is on the branch"
    tracks = sorted({h.track for h in plan.hypotheses})
    spends = f"approving spends {_spend(plan)} on Track {' and '.join(tracks)} hypotheses only"
    harmless = "the runs can show the plugin does no harm in llm-d, never that it does what BLIS found"
    if claims and all(reason for _, reason in claims):
        return Finding(
            severity=Severity.SUGGESTION,
            check="G2.no-claim-benchmarked",
            file=where,
            message=f"{spends}: no claim of the program is benchmarked, as a person decided at gate 2 ({what}); "
            f"{harmless}",
            fix="nothing to do if that still holds; to benchmark a claim after all, request changes without its "
            "`exclude:`",
        )
    return Finding(
        severity=Severity.IMPORTANT,
        check="G2.no-claim-benchmarked",
        file=where,
        message=f"{spends}: none of the program's claims is benchmarked ({what}); {harmless}",
        fix="make a claim testable (the findings on it give the fix: its signals, the traffic the cells send), or "
        "approve saying why a benchmark of no claim is worth its GPU-minutes, or reject",
    )
