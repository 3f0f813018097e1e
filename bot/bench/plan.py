"""Stage 4's benchmark plan: the fewest GPU runs that still decide every hypothesis.

GPU hours are what our users have least of. The seed's plan runs one benchmark profile per hypothesis, each
with its own baseline, its own evolved runs and its own stand-ups; most of that is the same measurement taken
again. This plan measures each (workload, rate) cell once per treatment and repetition, and every hypothesis
that needs the cell reads the same runs:

- **one shared baseline per cell**: the baseline EPP config and the evolved plugin config are the experiment's
  two setup treatments (two stand-ups in all), and the cells × repetitions are run treatments against each stack;
- **repetitions from a power calculation per cell** (``bot.bench.sizing``) on
  the baseline's coefficient of variation (from earlier runs when given, else
  ``DEFAULT_CV``), for an evolved arm up to twice as noisy and 10% outlier runs,
  at the level the verdict will test each hypothesis at after promotion-wide
  multiplicity control; hypotheses that cannot reach the target within
  ``MAX_REPETITIONS`` are reported as under-powered before any GPU is spent;
- **every power printed is the chance the whole verdict rule confirms** the
  hypothesis at the effect printed beside it: exactly when no other hypothesis
  is confirmed (``power_floor``), and by simulation with every claim at its
  planned effect (``power``, ``bot.stats.scenario``);
- **the cost stated next to the naive plan's**, so the saving is visible at gate 2.

``bot.bench.experiment`` writes it as the llm-d-benchmark experiment and the inference-perf workload
profiles; ``bot.bench.evaluation_spec`` writes the spec stage 5 reads back. The records the plan is made of
(``BenchmarkPlan``, ``Cell``, the cost parameters and their defaults) are ``bot.bench.plan_model``'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from bot.bench import guard_power
from bot.bench.evidence import SAMPLE_FLAG
from bot.bench.layout import RUN_TREATMENT_PATTERN, TREATMENTS, split_condition  # noqa: F401 (re-exported)
from bot.bench.mix_only import decided_on_mix, mix_only_plan
from bot.bench.plan_model import (
    DEFAULT_MAX_RATIO,
    DEFAULT_RUN_OVERHEAD_MINUTES,
    DEFAULT_STANDUP_MINUTES,
    DEFAULT_SWAP_MINUTES,
    NAIVE_REPETITIONS,
    BenchmarkPlan,
    Cell,
    CellRepetitions,
    ClaimSizing,
    CostParameters,
    HypothesisPower,
    PlanCost,
    PlannedHypothesis,
)
from bot.bench.priority_plan import priority_mix_for
from bot.bench.sizing import Sizing, scenario_truth, size
from bot.model import Hypothesis, PromotionRequest, RequestError, describe_validation_error
from bot.model.metrics import METRICS, short_metric
from bot.stats.decide import Claim
from bot.stats.design import DecisionRule
from bot.stats.power import MAX_CV, NoiseModel, noise_floor
from bot.stats.scenario import confirm_rates
from bot.stats.unjudged import NOT_EXERCISED

#: CV assumed when no earlier runs are given. Why 5%: run-to-run CV of aggregate latency on a
#: dedicated GPU stack under constant-rate load is typically a few percent, and 5% is the upper
#: end of that (sim2real v3 halted only above 15%). It is also the conservative choice: for any
#: CV >= 2.5% the noise floor is T_eff = 2 x CV, so effect/CV is fixed at 2 and the repetition
#: count no longer depends on the CV; a lower default could only plan fewer repetitions.
DEFAULT_CV = 0.05
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
MAX_REPETITIONS = 20
#: The plan assumes the evolved arm may be up to this many times as noisy as the baseline (log-scale sd):
#: a new routing policy can change the run-to-run spread as well as the mean.
DEFAULT_EVOLVED_NOISE_RATIO = 2.0
#: ... and that this share of runs are bad (a throttled GPU, a drained node) and dropped by the outlier rule.
DEFAULT_OUTLIER_RATE = 0.10

EVALUATION_SPEC_VERSION = 1
BASELINE_CONFIG_FILE = "promotion-baseline.yaml"
EVOLVED_CONFIG_FILE = "promotion-evolved.yaml"
DEFAULT_SPEC = "guides/optimized-baseline"


class PlanError(RequestError):
    """A plan that cannot be made from the request and hypotheses given."""


# --------------------------------------------------------------------------
# Cells
# --------------------------------------------------------------------------


def hypothesis_cells(h: Hypothesis, request: PromotionRequest) -> list[Cell]:
    """The cells a hypothesis is decided on: its workloads × (its rates, or every rate of the workload)."""
    names = {w.name for w in request.workloads}
    cells = set()
    for name in h.workloads:
        base = split_condition(name)[0]  # a Track B run condition rides on a request workload (bot.bench.layout)
        if base not in names:
            raise PlanError(
                f"hypothesis {h.id}: workload {name!r} is not one of the request's workloads {sorted(names)}"
            )
        rates = h.rates or request.workload(base).rates
        cells.update(Cell(workload=name, rate=float(r)) for r in rates)
    return sorted(cells, key=Cell.key)


def _planned(h: Hypothesis, request: PromotionRequest) -> PlannedHypothesis:
    assert h.prediction is not None
    try:
        m = METRICS[short_metric(h.prediction.metric)]
    except RequestError as exc:
        raise PlanError(f"hypothesis {h.id}: {exc}") from None
    return PlannedHypothesis(
        id=h.id,
        track=h.track.value,
        type=h.type.value,
        metric=m.name,
        statistic=m.statistic,
        better=m.better,
        direction=h.prediction.direction,
        margin=h.prediction.margin,
        blis_magnitude=h.prediction.blis_magnitude,
        cells=hypothesis_cells(h, request),
    )


# --------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------


def run_minutes(request: PromotionRequest, cell: Cell, p: CostParameters) -> float:
    from bot.bench.experiment import stage_seconds  # the stage the plan renders, overrides too (it imports us)

    return stage_seconds(request, split_condition(cell.workload)[0]) / 60.0 + p.run_overhead_minutes


def plan_cost(
    request: PromotionRequest,
    cells: Sequence[Cell],
    repetitions: int | Mapping[Cell, int],
    stacks: int,
    p: CostParameters,
) -> PlanCost:
    """GPU-minutes = stand-ups × stand-up minutes × GPUs + Σ_cells reps × treatments × (duration + overhead) × GPUs;
    ``repetitions`` is one count for every cell or a per-cell mapping."""
    reps = dict.fromkeys(cells, repetitions) if isinstance(repetitions, int) else {c: repetitions[c] for c in cells}
    runs = sum(reps[c] for c in cells) * len(TREATMENTS)
    load = sum(run_minutes(request, c, p) * reps[c] for c in cells) * len(TREATMENTS)
    standups = stacks * len(TREATMENTS)
    gpu = standups * p.standup_minutes * p.gpus_per_stack + load * p.gpus_per_stack
    return PlanCost(standups=standups, runs=runs, gpu_minutes=round(gpu, 3))


def naive_cost(request: PromotionRequest, planned: Sequence[PlannedHypothesis], p: CostParameters) -> PlanCost:
    """The seed's plan: a profile per hypothesis, each with its own baseline + evolved stand-ups and runs.

    ``planned`` lists a hypothesis once for every hypothesis of the seed's it stands for (see make_plan).
    """
    standups = runs = 0
    gpu = 0.0
    for h in planned:
        c = plan_cost(request, h.cells, p.naive_repetitions, 1, p)
        standups += c.standups
        runs += c.runs
        gpu += c.gpu_minutes
    return PlanCost(standups=standups, runs=runs, gpu_minutes=round(gpu, 3))


# --------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------


def make_plan(request: PromotionRequest, hypotheses: Sequence[Hypothesis], **options) -> BenchmarkPlan:
    """``plan_for``'s plan (options documented there), made once per set of inputs (``bot.bench.plan_memo``)."""
    from bot.bench.plan_memo import memoised_plan

    return memoised_plan(request, hypotheses, options)


def plan_for(
    request: PromotionRequest,
    hypotheses: Sequence[Hypothesis],
    *,
    prior_cv: float | None = None,
    prior_results: str | Path | None = None,
    allow_sample_data: bool = False,
    repetitions: int | None = None,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    gpus_per_stack: int | None = None,
    standup_minutes: float = DEFAULT_STANDUP_MINUTES,
    run_overhead_minutes: float = DEFAULT_RUN_OVERHEAD_MINUTES,
    naive_repetitions: int = NAIVE_REPETITIONS,
    max_ratio: float | None = DEFAULT_MAX_RATIO,
    evolved_noise_ratio: float = DEFAULT_EVOLVED_NOISE_RATIO,
    outlier_rate: float = DEFAULT_OUTLIER_RATE,
    sequential: bool = True,
    swap_minutes: float = DEFAULT_SWAP_MINUTES,
) -> BenchmarkPlan:
    """One experiment for every hypothesis with a prediction, repetitions sized per cell (``bot.bench.sizing``).

    ``repetitions`` gives every cell that many instead (the powers are still computed for it);
    ``max_ratio`` is the GPU budget as a share of the naive plan's GPU-minutes (``None``: no budget);
    ``evolved_noise_ratio`` and ``outlier_rate`` are the noise the sizing allows for; ``sequential``
    adds the group-sequential design (``bot.bench.sequential_plan``) the runner follows and stage 5
    replays (its rule goes into ``decision``); ``allow_sample_data`` lets sample reports in ``prior_results``
    size it (a rehearsal: the noise source and the notes say so). An admitter's plan adds the priority mix
    (``bot.bench.priority_plan``).
    """
    if prior_cv is not None and prior_results is not None:
        raise PlanError("pass either prior_cv or prior_results, not both")
    try:
        params = CostParameters(
            gpus_per_stack=gpus_per_stack if gpus_per_stack is not None else request.stack.gpus,
            standup_minutes=standup_minutes,
            run_overhead_minutes=run_overhead_minutes,
            naive_repetitions=naive_repetitions,
            swap_minutes=swap_minutes,
        )
    except ValidationError as exc:
        raise PlanError(f"cost parameters: {describe_validation_error(exc)}") from None

    ids = [h.id for h in hypotheses]
    if len(set(ids)) != len(ids):
        raise PlanError(f"hypotheses: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
    # A hypothesis the translated plugin cannot test (Hypothesis.not_testable) needs no runs and no power.
    with_pred = sorted((h for h in hypotheses if h.benchmarked), key=lambda h: id_key(h.id))
    # Set aside by the caller with stage 5's rule (run_validate.planned_hypotheses): no alpha, cells or cost.
    not_measurable = {h.id: h.not_in_plan for h in hypotheses if (h.not_in_plan or "").startswith(NOT_EXERCISED)}
    not_benchmarked = sorted((h.id for h in hypotheses if not h.benchmarked and h.id not in not_measurable), key=id_key)
    if not with_pred:  # every one set aside: an admitter's plan is then its priority mix alone (bot.bench.mix_only)
        return mix_only_plan(request, hypotheses, not_measurable, not_benchmarked, params, alpha=alpha, power=power)
    planned = [_planned(h, request) for h in with_pred]

    cells = sorted({c for h in planned for c in h.cells}, key=Cell.key)
    harnesses = sorted({request.workload(split_condition(c.workload)[0]).harness for c in cells})
    notes: list[str] = []

    if prior_cv is not None:
        if not (isinstance(prior_cv, (int, float)) and math.isfinite(prior_cv) and 0 < prior_cv < 1):
            raise PlanError(f"prior_cv={prior_cv!r}; pass a coefficient of variation between 0 and 1, e.g. 0.05")
        cv, cv_source = float(prior_cv), "given (prior_cv)"
    elif prior_results is not None:
        from bot.bench.prior_cv import prior_cv_from_results

        cv, sample = prior_cv_from_results(
            prior_results, {h.metric for h in planned}, allow_sample_data=allow_sample_data
        )
        cv_source = f"max baseline CV over cells and predicted metrics in {Path(prior_results).name}"
        if sample:
            cv_source += f"; {SAMPLE_FLAG}"
            notes.append(
                f"Sized from SAMPLE DATA: the baseline CV comes from synthetic reports in {Path(prior_results).name} "
                "(--allow-sample-data), not from this cluster; measure the noise (or pass --prior-cv) before "
                "spending GPU time on this plan"
            )
    else:
        cv, cv_source = DEFAULT_CV, f"default {DEFAULT_CV:g} (no earlier runs given)"
    t_eff = noise_floor(cv)
    if cv > MAX_CV:
        notes.append(
            f"CV {cv:.1%} is above the {MAX_CV:.0%} halt threshold: every verdict on this cluster would be "
            "inconclusive; reduce the noise (dedicated nodes, longer runs) before spending GPU hours"
        )

    if max_ratio is not None and not (isinstance(max_ratio, (int, float)) and max_ratio > 0):
        raise PlanError(
            f"max_ratio={max_ratio!r}; pass a share of the naive plan's GPU-minutes > 0 (e.g. 0.5), or None"
        )
    if repetitions is not None and repetitions < 2:
        raise PlanError(f"repetitions={repetitions}; at least 2 per arm are needed to estimate a variance")
    try:
        noise = NoiseModel(cv, evolved_noise_ratio, outlier_rate)
    except RequestError as exc:
        raise PlanError(f"noise model: {exc}") from None
    stacks = len(harnesses)  # a harness is fixed per experiment, so each needs its own pair of stacks
    # The seed's plan is priced over the hypotheses the seed's generator writes: a duplicate or implied
    # hypothesis folded into another (``covers``) and a claim the translation cannot test were each a
    # profile of their own there. Merging them is part of what this plan saves.
    seed_hypotheses = [
        p for h in hypotheses if h.prediction is not None for p in [_planned(h, request)] * (1 + len(h.covers))
    ]
    naive = naive_cost(request, seed_hypotheses, params)
    sizing = size(planned, noise, alpha=alpha, target=power, max_reps=MAX_REPETITIONS, fixed_reps=repetitions)
    notes.extend(sizing.notes)
    if repetitions is not None:
        notes.append(f"repetitions fixed at {repetitions} by the caller (power calculation bypassed)")
    by_cell = sizing.reps
    decision = DecisionRule(alpha=alpha, weights=sizing.weights)
    claims = [
        ClaimSizing(
            hypothesis=cn.hypothesis,
            track=cn.track,
            cell=cn.cell,
            kind=cn.kind,
            effect=round(cn.effect, 6),
            need=cn.need,
            power=round(cn.power, 4),
        )
        for cn in sizing.needs
    ]
    sized_by = {
        c: sorted({cl.hypothesis for cl in claims if cl.cell == c and cl.need == by_cell[c]}, key=id_key) for c in cells
    }
    hypothesis_power = _hypothesis_power(planned, sizing, noise, decision, by_cell)
    notes += [] if sequential else guard_power.fixed_notes(planned, hypothesis_power, t_eff)  # sequential: its own

    cost = plan_cost(request, cells, by_cell, stacks, params)
    if max_ratio is not None and naive.gpu_minutes and cost.gpu_minutes > max_ratio * naive.gpu_minutes:
        notes.append(
            f"GPU-minutes {cost.gpu_minutes:g} exceed the budget of {max_ratio:g} × the naive plan's {naive.gpu_minutes:g}; "
            "decidable hypotheses are never given up for the budget"
        )
    plan = BenchmarkPlan(
        request_id=request.id,
        slug=request.slug,
        harness=",".join(harnesses),
        cells=cells,
        hypotheses=planned,
        not_benchmarked=not_benchmarked,
        not_measurable={k: not_measurable[k] for k in sorted(not_measurable, key=id_key)},
        repetitions=max(by_cell.values()),
        cell_repetitions=[CellRepetitions(cell=c, repetitions=by_cell[c], sized_by=sized_by[c]) for c in cells],
        claims=claims,
        hypothesis_power=hypothesis_power,
        decision=decision,
        max_ratio=max_ratio,
        cv=cv,
        cv_source=cv_source,
        evolved_noise_ratio=evolved_noise_ratio,
        outlier_rate=outlier_rate,
        t_eff=t_eff,
        alpha=alpha,
        power=power,
        parameters=params,
        cost=cost,
        naive_cost=naive,
        priority_mix=priority_mix_for(request, params),
        decided_on_mix=decided_on_mix(request, hypotheses, not_benchmarked),  # [] with no mix: not an admitter
        notes=notes,
    )
    if not sequential:
        return plan
    from bot.bench.sequential_plan import sequential_plan

    seq = sequential_plan(plan, request, power, MAX_REPETITIONS)
    short = sorted((h for h in seq.decidable if seq.power[h] < power), key=id_key)
    if short:
        notes.append(
            f"the sequential design leaves {', '.join(short)} below {power:.0%} even with {MAX_REPETITIONS} runs; "
            "run the fixed plan for them"
        )
    notes.extend(guard_power.low_notes(planned, seq.refute, t_eff, "the sequential design"))
    return plan.model_copy(
        update={"sequential": seq, "decision": decision.model_copy(update={"sequential": seq.rule()}), "notes": notes}
    )


def scenario_claims(planned: Sequence[PlannedHypothesis]) -> tuple[list[Claim], dict[str, str]]:
    """The plan's hypotheses as ``bot.stats.decide`` claims over Cell keys, and each claim's metric."""
    claims = [Claim(h.id, h.direction.value, h.margin, h.better, tuple(h.cells)) for h in planned]
    return claims, {h.id: h.metric for h in planned}


def _hypothesis_power(
    planned: Sequence[PlannedHypothesis],
    sizing: Sizing,
    noise: NoiseModel,
    decision: DecisionRule,
    reps: Mapping[Cell, int],
) -> list[HypothesisPower]:
    claims, metric_of = scenario_claims(planned)
    truth = scenario_truth(planned, noise_floor(noise.cv))
    planned_rates = confirm_rates(claims, metric_of, truth, noise, reps, decision)
    steady = NoiseModel(noise.cv)
    equal_rates = confirm_rates(claims, metric_of, truth, steady, reps, decision)
    refute = guard_power.fixed_refutation(planned, claims, metric_of, truth, noise, reps, decision)
    return [
        HypothesisPower(
            hypothesis=h.id,
            track=h.track,
            kind=h.direction.value,
            decidable=h.id in sizing.decidable,
            level=round(decision.alpha * sizing.share(h.id, [p.id for p in planned]), 6),
            power_floor=sizing.power_floor[h.id],
            power=round(planned_rates[h.id], 3),
            power_equal_noise=round(equal_rates[h.id], 3),
            refute=refute.get(h.id),
            power_at_blis=sizing.power_at_blis.get(h.id),
        )
        for h in planned
    ]


def id_key(hid: str) -> tuple[str, int]:
    return (hid[:1], int(hid[1:]) if hid[1:].isdigit() else 0)
