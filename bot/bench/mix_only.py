"""A plan of the priority mix and no cells: an admitter whose cells cannot exercise it.

An admitter that admits priority 0 even on an overloaded pool sheds nothing on the planned cells, which all send
priority 0 (``bot.bench.priority_plan.sheds_nothing``), so stage 5 sets every benchmarked hypothesis aside as not
measurable on them (``bot.bench.set_aside``). Its priority mix still decides the shedding order, the claim people
promote an admitter for. Stage 4 then plans the mix alone: the cells would spend their GPU time on runs that
decide nothing. ``mix_only_plan`` is that plan, with the cells' fields empty and the mix's cost the whole cost.
"""

from __future__ import annotations

from bot.bench.priority_plan import priority_mix_for
from bot.stats.power import noise_floor

#: What the plan README, gate 2 and `promote bench run` say of such a plan.
MIX_ONLY = "0 cells, priority mix only"
MIX_ONLY_WHY = (
    "every benchmarked hypothesis is set aside as not measurable on the cells, so no cell is planned and only the "
    "priority mix runs (it decides the shedding order)"
)
#: The same when nothing is set aside: a person excluded at gate 2 every hypothesis the cells would run.
MIX_ONLY_LEFT = (
    "no hypothesis left has a benchmark prediction (the ones the cells would run were excluded), so no cell is "
    "planned and only the priority mix runs (it decides the shedding order)"
)


def mix_only_why(not_measurable) -> str:
    """Why a plan is the mix alone: its benchmarked hypotheses set aside, or none left to set aside."""
    return MIX_ONLY_WHY if not_measurable else MIX_ONLY_LEFT


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


#: Why stage 5 reads no cell report of a mix-only plan (gate 3 raises them as unused, not invalid).
NO_CELLS = "not read: the plan has no cells"


def is_mix_only(plan) -> bool:
    """A plan with no cells and a priority mix (``mix_only_plan``)."""
    return not plan.cells and plan.priority_mix is not None


def decided_on_mix(request, hypotheses, not_benchmarked: list[str]) -> list[str]:
    """The ids of ``not_benchmarked`` the plan's priority mix decides: the hypothesis stage 5 judges on it
    (``bot.stats.shedding.shedding_hypothesis``, an admitter's shedding order): a run of the plan decides it, so
    no text may call it not benchmarked (``BenchmarkPlan.decided_on_mix``)."""
    from bot.stats.shedding import shedding_hypothesis

    h = shedding_hypothesis(hypotheses, request.kind)
    return [h.id] if h is not None and h.id in not_benchmarked else []


def mix_only_plan(request, hypotheses, not_measurable: dict[str, str], not_benchmarked: list[str], params, **sizing):
    """The plan of an admitter whose every benchmarked hypothesis is set aside (``not_measurable``): the priority
    mix and no cells, hypotheses, claims or alpha (``sizing``: the plan's alpha and power target). Nothing set aside
    is such a plan too: a person excluded at gate 2 every hypothesis the cells could not measure, and the mix still
    decides the shedding order (a PlanError there stranded stage 4, and `promote resume` repeated it). With no mix
    that decides one of the ``hypotheses`` (``set_aside.mix_only``) there is nothing to plan."""
    from bot.bench.plan import DEFAULT_CV, DEFAULT_EVOLVED_NOISE_RATIO, DEFAULT_OUTLIER_RATE, PlanError, id_key
    from bot.bench.plan_model import BenchmarkPlan, PlanCost
    from bot.bench.set_aside import mix_only
    from bot.stats.design import DecisionRule

    mix = priority_mix_for(request, params)
    if mix is None or not mix_only(request, hypotheses):
        raise PlanError("no hypothesis has a benchmark prediction; nothing to plan (check stage 3's output)")
    none = PlanCost(standups=0, runs=0, gpu_minutes=0.0)
    return BenchmarkPlan(
        request_id=request.id,
        slug=request.slug,
        harness=mix.harness,
        cells=[],
        hypotheses=[],
        not_benchmarked=not_benchmarked,
        not_measurable={k: not_measurable[k] for k in sorted(not_measurable, key=id_key)},
        repetitions=0,
        cell_repetitions=[],
        decision=DecisionRule(alpha=sizing["alpha"]),
        max_ratio=None,
        cv=DEFAULT_CV,
        cv_source="none: no cell is planned",
        evolved_noise_ratio=DEFAULT_EVOLVED_NOISE_RATIO,
        outlier_rate=DEFAULT_OUTLIER_RATE,
        t_eff=noise_floor(DEFAULT_CV),
        alpha=sizing["alpha"],
        power=sizing["power"],
        parameters=params,
        cost=none,
        naive_cost=none,
        priority_mix=mix,
        decided_on_mix=decided_on_mix(request, hypotheses, not_benchmarked),
        notes=[cap(mix_only_why(not_measurable))],
    )


def no_cell_reports(results_dir):
    """What stage 5 and `promote evaluate` read of the cells of a plan with none: no report. Cell reports under
    ``results_dir`` (a run of an older plan, or sample data for every workload) are listed as not used, with why,
    never judged: the plan set every hypothesis they could decide aside."""
    from pathlib import Path

    import pandas as pd

    from bot.bench.layout import results_files
    from bot.bench.reports import REQUEST_COLUMNS, TABLE_COLUMNS, ReportSet, _is_report_name

    root = Path(results_dir)
    files = results_files(root, _is_report_name)[0] if root.is_dir() else []
    why = f"{NO_CELLS} ({MIX_ONLY})"
    return ReportSet(
        table=pd.DataFrame([], columns=TABLE_COLUMNS),
        requests=pd.DataFrame([], columns=REQUEST_COLUMNS),
        rejected=sorted((p.relative_to(root).as_posix(), why) for p in files),
    )


def only_mix_results(results_dir) -> bool:
    """``results_dir`` holds priority-mix results and no cell report: what a mix-only plan's run leaves, which
    `promote run --results` accepts before stage 4 has said whether the plan has cells (stage 5 decides)."""
    from pathlib import Path

    from bot.bench.layout import results_files
    from bot.bench.priority_mix import mix_results_in
    from bot.bench.reports import _is_report_name

    root = Path(results_dir)
    return root.is_dir() and not results_files(root, _is_report_name)[0] and bool(mix_results_in(root))
