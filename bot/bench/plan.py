"""Stage 4's benchmark plan: the fewest GPU runs that still decide every hypothesis.

GPU hours are what our users have least of. The seed's plan runs one benchmark
profile per hypothesis, each with its own baseline, its own evolved runs and
its own stand-ups; most of that is the same measurement taken again. This plan
measures each (workload, rate) cell once per treatment and repetition, and every
hypothesis that needs the cell reads the same runs:

- **one shared baseline per cell**: the baseline EPP config and the evolved
  plugin config are the experiment's two setup treatments (two stand-ups in
  all), and the cells × repetitions are run treatments against each stack;
- **repetitions from a power calculation per cell** on the baseline's
  coefficient of variation (from earlier runs when given, else ``DEFAULT_CV``):
  each cell gets as many repetitions as the most demanding hypothesis that reads
  it needs, so a cell that only serves directional claims is not run as often as
  one that must show equivalence (see ``size_cells``);
- **the cost stated next to the naive plan's**, so the saving is visible at gate 2.

``bot.bench.experiment`` writes it as the llm-d-benchmark experiment and the
inference-perf workload profiles; ``bot.bench.evaluation_spec`` writes the spec
stage 5 reads back.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.bench.layout import RUN_TREATMENT_PATTERN, TREATMENTS  # noqa: F401 (re-exported)
from bot.bench.metrics import METRICS, short_metric
from bot.bench.reports import load_results
from bot.model import Direction, Hypothesis, PromotionRequest, RequestError, describe_validation_error
from bot.stats.power import (
    MAX_CV,
    noise_floor,
    power_at,
    power_margin,
    repetitions_for,
    repetitions_for_margin,
)

#: CV assumed when no earlier runs are given. Why 5%: run-to-run CV of aggregate latency on a
#: dedicated GPU stack under constant-rate load is typically a few percent, and 5% is the upper
#: end of that (sim2real v3 halted only above 15%). It is also the conservative choice: for any
#: CV >= 2.5% the noise floor is T_eff = 2 x CV, so effect/CV is fixed at 2 and the repetition
#: count no longer depends on the CV; a lower default could only plan fewer repetitions.
DEFAULT_CV = 0.05
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
#: GPUs held by one stack: 4 vLLM pods x 1 GPU (the bundled example's calibration: 4 pods on one H100 each).
DEFAULT_GPUS_PER_STACK = 4
#: Minutes a stack holds its GPUs for stand-up plus teardown (image pulls, model load, gateway, EPP ready).
DEFAULT_STANDUP_MINUTES = 30.0
#: Minutes per run on top of the load duration (harness pod start, cache reset, warm-up, result collection).
DEFAULT_RUN_OVERHEAD_MINUTES = 3.0
#: The seed's repetitions: BLIS claims are validated on 3 seeds, and the naive plan mirrors them.
NAIVE_REPETITIONS = 3
MAX_REPETITIONS = 20
#: The GPU budget the plan keeps to: at most this share of the naive plan's GPU-minutes (the
#: issue's acceptance line). Only claims that cannot reach their power target anyway are given up
#: to stay inside it (see ``size_cells``); ``None`` turns the budget off.
DEFAULT_MAX_RATIO = 0.5

EVALUATION_SPEC_VERSION = 1
BASELINE_CONFIG_FILE = "promotion-baseline.yaml"
EVOLVED_CONFIG_FILE = "promotion-evolved.yaml"
DEFAULT_SPEC = "guides/optimized-baseline"


class PlanError(RequestError):
    """A plan that cannot be made from the request and hypotheses given."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cell(_Model):
    """One operating point: a workload at a request rate (req/s)."""

    workload: str
    rate: float

    def key(self) -> tuple[str, float]:
        return (self.workload, self.rate)

    def label(self) -> str:
        return f"{self.workload}@{self.rate:g}"


class CostParameters(_Model):
    gpus_per_stack: int = Field(default=DEFAULT_GPUS_PER_STACK, gt=0)
    standup_minutes: float = Field(default=DEFAULT_STANDUP_MINUTES, ge=0, description="stand-up + teardown")
    run_overhead_minutes: float = Field(default=DEFAULT_RUN_OVERHEAD_MINUTES, ge=0)
    naive_repetitions: int = Field(default=NAIVE_REPETITIONS, gt=0)


class PlanCost(_Model):
    standups: int
    runs: int
    gpu_minutes: float


class EvalHypothesis(_Model):
    """What stage 5 needs to decide one hypothesis from the shared runs (the evaluation spec's entry)."""

    track: str
    type: str
    metric: str
    statistic: str
    better: Literal["lower", "higher"]
    direction: Direction
    margin: float
    blis_magnitude: float | None = None
    cells: list[Cell]


class PlannedHypothesis(EvalHypothesis):
    """An evaluation-spec entry with the hypothesis id the plan keys it by."""

    id: str


class ClaimSizing(_Model):
    """What one hypothesis needs on one cell, and whether that need sized the cell."""

    hypothesis: str
    track: str
    cell: Cell
    kind: Literal["directional", "equivalent", "no-worse"]
    alpha: float = Field(description="level the need is computed at (alpha / m for margin claims: Holm's first step)")
    true_effect: float = Field(description="assumed true relative change (bad-side scale for no-worse)")
    need: int = Field(description="per-arm repetitions for the power target, capped at MAX_REPETITIONS")
    reachable: bool = Field(description="the power target is reached within MAX_REPETITIONS")
    sized: bool = Field(description="False when the GPU budget gave this (unreachable) claim up")
    power: float = Field(description="power at the cell's planned repetitions")


class CellRepetitions(_Model):
    """The repetitions one cell gets per treatment and the hypotheses that asked for that many."""

    cell: Cell
    repetitions: int = Field(ge=2)
    sized_by: list[str]


class BenchmarkPlan(_Model):
    request_id: str
    slug: str
    harness: str
    treatments: list[str] = Field(default_factory=lambda: list(TREATMENTS))
    cells: list[Cell]
    hypotheses: list[PlannedHypothesis]
    not_benchmarked: list[str] = Field(description="hypotheses without a benchmark prediction")
    repetitions: int = Field(description="the most repetitions any cell gets (per treatment); see cell_repetitions")
    cell_repetitions: list[CellRepetitions] = Field(description="per-cell repetitions, in the order of `cells`")
    claims: list[ClaimSizing] = Field(default_factory=list, description="per (hypothesis, cell) need; empty when fixed")
    max_ratio: float | None = DEFAULT_MAX_RATIO
    cv: float
    cv_source: str
    t_eff: float
    alpha: float
    power: float
    parameters: CostParameters
    cost: PlanCost
    naive_cost: PlanCost
    notes: list[str] = Field(default_factory=list)

    @property
    def ratio(self) -> float:
        """GPU-minutes of this plan over the naive plan's."""
        return self.cost.gpu_minutes / self.naive_cost.gpu_minutes if self.naive_cost.gpu_minutes else 0.0

    @property
    def repetitions_by_cell(self) -> dict[Cell, int]:
        """Cell -> repetitions per treatment."""
        return {c.cell: c.repetitions for c in self.cell_repetitions}


# --------------------------------------------------------------------------
# Cells
# --------------------------------------------------------------------------


def hypothesis_cells(h: Hypothesis, request: PromotionRequest) -> list[Cell]:
    """The cells a hypothesis is decided on: its workloads × (its rates, or every rate of the workload)."""
    names = {w.name for w in request.workloads}
    cells = set()
    for name in h.workloads:
        if name not in names:
            raise PlanError(
                f"hypothesis {h.id}: workload {name!r} is not one of the request's workloads {sorted(names)}"
            )
        rates = h.rates or request.workload(name).rates
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
# Noise and repetitions
# --------------------------------------------------------------------------


def prior_cv_from_results(results_dir: str | Path, metrics: Iterable[str] | None = None) -> float:
    """The largest baseline CV over cells and metrics in earlier results (sim2real v3 took the max too)."""
    rs = load_results(results_dir)
    t = rs.table[rs.table["treatment"] == "baseline"]
    wanted = sorted(set(metrics)) if metrics else None
    if wanted:
        t = t[t["metric"].isin(wanted)]
    cvs = []
    for _, g in t.groupby(["workload", "rate", "metric"], sort=True):
        if len(g) < 2:
            continue
        mean = float(g["value"].mean())
        if mean <= 0:
            continue
        cvs.append(float(g["value"].std(ddof=1)) / mean)
    if not cvs:
        raise PlanError(
            f"{results_dir}: no baseline cell with 2 or more repetitions to estimate the CV from; "
            "pass prior_cv or results with repeated baseline runs"
        )
    return max(cvs)


def _signs(directions: Iterable[Direction]) -> list[int]:
    signs = set()
    for d in directions:
        if d is Direction.DECREASE:
            signs.add(-1)
        elif d is Direction.INCREASE:
            signs.add(1)
    return sorted(signs) or [-1, 1]


def plan_repetitions(cv: float, directions: Iterable[Direction], *, alpha: float, power: float) -> int:
    """Per-arm repetitions so every directional claim has ``power``:

    - for the one-sided Welch test when the true change equals the noise floor T_eff, and
    - for the full verdict rule (which also needs the *observed* change beyond T_eff, a coin flip
      when the true change is exactly T_eff) when the true change is 2 × T_eff.

    Both directions present among the claims are sized (a 10% increase is a smaller log shift
    than a 10% decrease, so it can need one more repetition).
    """
    t_eff = noise_floor(cv)
    n = 0
    for sign in _signs(directions):
        n = max(
            n,
            repetitions_for(cv, sign * t_eff, alpha=alpha, power=power, max_reps=MAX_REPETITIONS, rule="test"),
            repetitions_for(cv, sign * 2 * t_eff, alpha=alpha, power=power, max_reps=MAX_REPETITIONS, rule="verdict"),
        )
    return n


_DIRECTIONAL = (Direction.DECREASE, Direction.INCREASE)


def _improves(h: PlannedHypothesis) -> bool:
    """A directional claim that the metric gets better (lower latency, higher throughput)."""
    return (h.direction is Direction.DECREASE and h.better == "lower") or (
        h.direction is Direction.INCREASE and h.better == "higher"
    )


def _margin_terms(h: PlannedHypothesis, improves: bool, t_eff: float) -> tuple[float, float]:
    """(margin, true effect) on ``power_margin``'s scale: a no-worse claim's bad side is an increase.

    For a higher-is-better metric the verdict's bound is ``log(1 - margin)``; on the increase scale
    that is the margin ``m / (1 - m)``, and an improvement by T_eff is a change of ``1/(1 + T_eff) - 1``.
    """
    if h.direction is Direction.EQUIVALENT:
        return h.margin, 0.0
    if h.better == "lower":
        return h.margin, (-t_eff if improves else 0.0)
    return h.margin / (1 - h.margin), (1 / (1 + t_eff) - 1 if improves else 0.0)


def _directional_power(cv: float, direction: Direction, n: int, alpha: float) -> float:
    """The smaller of the two powers ``plan_repetitions`` sizes for (test at T_eff, verdict at 2 × T_eff)."""
    sign = -1 if direction is Direction.DECREASE else 1
    t_eff = noise_floor(cv)
    return min(
        power_at(cv, sign * t_eff, n, alpha, rule="test"),
        power_at(cv, sign * 2 * t_eff, n, alpha, rule="verdict"),
    )


def size_cells(
    planned: Sequence[PlannedHypothesis],
    cv: float,
    *,
    alpha: float,
    power: float,
    budget: Callable[[dict[Cell, int]], bool] | None = None,
) -> tuple[dict[Cell, int], list[ClaimSizing], list[str]]:
    """Per-cell repetitions from the claims each cell serves: (cell -> n, per-claim sizing, notes).

    The rule, per (hypothesis, cell):

    - **directional** (DECREASE / INCREASE): ``plan_repetitions`` for that direction — ``power`` for
      the Welch test at T_eff and for the full verdict rule at 2 × T_eff, at ``alpha``;
    - **equivalent** (TOST within ±margin): ``repetitions_for_margin`` with a true change of 0;
    - **no-worse** (non-inferiority at the margin): ``repetitions_for_margin`` with a true change of 0,
      unless some directional hypothesis (any track) predicts an *improvement* of the same metric on
      the same cell; then the true change is taken as that improvement at T_eff (the smallest effect
      the plan sizes directional claims for), which makes no-worse easy;
    - margin claims are sized at ``alpha / m``, ``m`` = the number of (hypothesis, cell) pairs in
      the claim's track: the verdict applies Holm across every tested cell of a track, and
      ``alpha / m`` is Holm's first (strictest) step, so the power is a lower bound whatever the other
      claims of the track do. Directional claims keep ``alpha`` (the earlier rule; they have slack:
      they are sized at T_eff but planned at 2 × T_eff);
    - every need is capped at ``MAX_REPETITIONS``; a claim that does not reach ``power`` there is
      *unreachable* and gets a note with the power it does have.

    A cell gets the largest need among its claims, and never fewer than the directional rule for
    its directional claims (for both directions when it has none, so every cell's baseline CV and
    T_eff are estimated as well as a directional claim's). ``budget(reps) -> bool`` says whether a sizing is affordable; when the full sizing is
    not, unreachable claims stop sizing their cells, Track B's (and A's) first, then Track C's
    (Track C guards the scenarios that already work, which the promotion must not break): GPU time
    goes first to claims it can decide. Claims that reach their target are never given up; if they
    alone break the budget, a note says so.
    """
    t_eff = noise_floor(cv)
    cells = sorted({c for h in planned for c in h.cells}, key=Cell.key)
    m_track = Counter(h.track for h in planned for _ in h.cells)
    improving = {(c, h.metric) for h in planned if h.direction in _DIRECTIONAL and _improves(h) for c in h.cells}
    directions: dict[Cell, list[Direction]] = {c: [] for c in cells}
    for h in planned:
        if h.direction in _DIRECTIONAL:
            for c in h.cells:
                directions[c].append(h.direction)
    floor = {c: plan_repetitions(cv, directions[c], alpha=alpha, power=power) for c in cells}

    raw: list[dict[str, Any]] = []
    for h in planned:
        for c in h.cells:
            if h.direction in _DIRECTIONAL:
                need = plan_repetitions(cv, [h.direction], alpha=alpha, power=power)
                a, effect = alpha, (-t_eff if h.direction is Direction.DECREASE else t_eff)
                reached = _directional_power(cv, h.direction, need, alpha) >= power
                kind = "directional"
            else:
                kind = "equivalent" if h.direction is Direction.EQUIVALENT else "no-worse"
                a = alpha / m_track[h.track]
                margin, effect = _margin_terms(h, (c, h.metric) in improving, t_eff)
                need = repetitions_for_margin(
                    cv, margin, alpha=a, power=power, max_reps=MAX_REPETITIONS, kind=kind, true_effect=effect
                )
                reached = power_margin(cv, margin, need, a, kind=kind, true_effect=effect) >= power
            raw.append(
                {"h": h, "cell": c, "kind": kind, "alpha": a, "effect": effect, "need": need, "reached": reached}
            )

    def reps_for(given_up: set[int]) -> dict[Cell, int]:
        reps = dict(floor)
        for i, r in enumerate(raw):
            if i not in given_up:
                reps[r["cell"]] = max(reps[r["cell"]], r["need"])
        return reps

    notes: list[str] = []
    given_up: set[int] = set()
    reps = reps_for(given_up)
    if budget is not None and not budget(reps):
        ideal = reps
        for stage in ("other", "C"):
            for i, r in enumerate(raw):
                if r["kind"] != "directional" and not r["reached"] and (r["h"].track == "C") == (stage == "C"):
                    given_up.add(i)
            reps = reps_for(given_up)
            if budget(reps):
                break
        dropped = sorted({raw[i]["h"].id for i in given_up}, key=id_key)
        cut = ", ".join(f"{c.label()} {ideal[c]}→{reps[c]}" for c in cells if reps[c] != ideal[c])
        notes.append(
            "sizing every claim for its power target would exceed the GPU budget; claims that cannot reach "
            f"{power:.0%} power within {MAX_REPETITIONS} repetitions stopped sizing their cells "
            f"({', '.join(dropped) or 'none'}): {cut or 'no cell changed'}"
        )

    claims: list[ClaimSizing] = []
    for i, r in enumerate(raw):
        h, c, n = r["h"], r["cell"], reps[r["cell"]]
        if r["kind"] == "directional":
            pw = _directional_power(cv, h.direction, n, r["alpha"])
        else:
            margin, _ = _margin_terms(h, (c, h.metric) in improving, t_eff)
            pw = power_margin(cv, margin, n, r["alpha"], kind=r["kind"], true_effect=r["effect"])
        claims.append(
            ClaimSizing(
                hypothesis=h.id,
                track=h.track,
                cell=c,
                kind=r["kind"],
                alpha=r["alpha"],
                true_effect=r["effect"],
                need=r["need"],
                reachable=r["reached"],
                sized=i not in given_up,
                power=round(pw, 4),
            )
        )
    short: dict[str, list[ClaimSizing]] = {}
    for cl in claims:
        if cl.power < power:
            short.setdefault(cl.hypothesis, []).append(cl)
    for hid in sorted(short, key=id_key):
        cls = short[hid]
        first = cls[0]
        where = ", ".join(f"{cl.cell.label()} ({cl.power:.0%} at {reps[cl.cell]})" for cl in cls)
        why = (
            f"needs more than {MAX_REPETITIONS} repetitions per arm"
            if not first.reachable
            else "was given up to stay within the GPU budget"
        )
        notes.append(
            f"{hid} ({first.kind}, alpha {first.alpha:.3g}) {why} for {power:.0%} power at CV {cv:.1%}; "
            f"power at the planned repetitions: {where}; it may come out inconclusive"
        )
    return reps, claims, notes


# --------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------


def _run_minutes(request: PromotionRequest, cell: Cell, p: CostParameters) -> float:
    return request.workload(cell.workload).duration_s / 60.0 + p.run_overhead_minutes


def plan_cost(
    request: PromotionRequest,
    cells: Sequence[Cell],
    repetitions: int | Mapping[Cell, int],
    stacks: int,
    p: CostParameters,
) -> PlanCost:
    """GPU-minutes = stand-ups × stand-up minutes × GPUs + Σ_cells reps × treatments × (duration + overhead) × GPUs.

    ``repetitions`` is one count for every cell or a per-cell mapping.
    """
    reps = dict.fromkeys(cells, repetitions) if isinstance(repetitions, int) else {c: repetitions[c] for c in cells}
    runs = sum(reps[c] for c in cells) * len(TREATMENTS)
    run_minutes = sum(_run_minutes(request, c, p) * reps[c] for c in cells) * len(TREATMENTS)
    standups = stacks * len(TREATMENTS)
    gpu = standups * p.standup_minutes * p.gpus_per_stack + run_minutes * p.gpus_per_stack
    return PlanCost(standups=standups, runs=runs, gpu_minutes=round(gpu, 3))


def naive_cost(request: PromotionRequest, planned: Sequence[PlannedHypothesis], p: CostParameters) -> PlanCost:
    """The seed's plan: a profile per hypothesis, each with its own baseline + evolved stand-ups and runs."""
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


def make_plan(
    request: PromotionRequest,
    hypotheses: Sequence[Hypothesis],
    *,
    prior_cv: float | None = None,
    prior_results: str | Path | None = None,
    repetitions: int | None = None,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
    gpus_per_stack: int | None = None,
    standup_minutes: float = DEFAULT_STANDUP_MINUTES,
    run_overhead_minutes: float = DEFAULT_RUN_OVERHEAD_MINUTES,
    naive_repetitions: int = NAIVE_REPETITIONS,
    max_ratio: float | None = DEFAULT_MAX_RATIO,
) -> BenchmarkPlan:
    """One experiment for every hypothesis with a prediction, repetitions sized per cell (``size_cells``).

    ``repetitions`` gives every cell that many instead (power calculation bypassed); ``max_ratio`` is
    the GPU budget as a share of the naive plan's GPU-minutes (``None``: no budget).
    """
    if prior_cv is not None and prior_results is not None:
        raise PlanError("pass either prior_cv or prior_results, not both")
    try:
        params = CostParameters(
            gpus_per_stack=gpus_per_stack if gpus_per_stack is not None else request.stack.gpus,
            standup_minutes=standup_minutes,
            run_overhead_minutes=run_overhead_minutes,
            naive_repetitions=naive_repetitions,
        )
    except ValidationError as exc:
        raise PlanError(f"cost parameters: {describe_validation_error(exc)}") from None

    ids = [h.id for h in hypotheses]
    if len(set(ids)) != len(ids):
        raise PlanError(f"hypotheses: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
    with_pred = sorted((h for h in hypotheses if h.prediction is not None), key=lambda h: id_key(h.id))
    if not with_pred:
        raise PlanError("no hypothesis has a benchmark prediction; nothing to plan (check stage 3's output)")
    planned = [_planned(h, request) for h in with_pred]
    not_benchmarked = sorted((h.id for h in hypotheses if h.prediction is None), key=id_key)

    cells = sorted({c for h in planned for c in h.cells}, key=Cell.key)
    harnesses = sorted({request.workload(c.workload).harness for c in cells})
    notes: list[str] = []

    if prior_cv is not None:
        if not (isinstance(prior_cv, (int, float)) and math.isfinite(prior_cv) and 0 < prior_cv < 1):
            raise PlanError(f"prior_cv={prior_cv!r}; pass a coefficient of variation between 0 and 1, e.g. 0.05")
        cv, cv_source = float(prior_cv), "given (prior_cv)"
    elif prior_results is not None:
        cv = prior_cv_from_results(prior_results, {h.metric for h in planned})
        cv_source = f"max baseline CV over cells and predicted metrics in {Path(prior_results).name}"
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
    stacks = len(harnesses)  # a harness is fixed per experiment, so each needs its own pair of stacks
    naive = naive_cost(request, planned, params)
    claims: list[ClaimSizing] = []
    if repetitions is None:

        def affordable(reps: dict[Cell, int]) -> bool:
            return plan_cost(request, cells, reps, stacks, params).gpu_minutes <= max_ratio * naive.gpu_minutes

        by_cell, claims, sizing_notes = size_cells(
            planned, cv, alpha=alpha, power=power, budget=affordable if max_ratio is not None else None
        )
        notes.extend(sizing_notes)
    else:
        if repetitions < 2:
            raise PlanError(f"repetitions={repetitions}; at least 2 per arm are needed to estimate a variance")
        by_cell = dict.fromkeys(cells, repetitions)
        notes.append(f"repetitions fixed at {repetitions} by the caller (power calculation bypassed)")
    sized_by = {
        c: sorted({cl.hypothesis for cl in claims if cl.cell == c and cl.sized and cl.need == by_cell[c]}, key=id_key)
        for c in cells
    }

    cost = plan_cost(request, cells, by_cell, stacks, params)
    if max_ratio is not None and naive.gpu_minutes and cost.gpu_minutes > max_ratio * naive.gpu_minutes:
        notes.append(
            f"GPU-minutes {cost.gpu_minutes:g} exceed the budget of {max_ratio:g} × the naive plan's {naive.gpu_minutes:g}; "
            "claims that can reach their power target are never given up for the budget"
        )
    return BenchmarkPlan(
        request_id=request.id,
        slug=request.slug,
        harness=",".join(harnesses),
        cells=cells,
        hypotheses=planned,
        not_benchmarked=not_benchmarked,
        repetitions=max(by_cell.values()),
        cell_repetitions=[CellRepetitions(cell=c, repetitions=by_cell[c], sized_by=sized_by[c]) for c in cells],
        claims=claims,
        max_ratio=max_ratio,
        cv=cv,
        cv_source=cv_source,
        t_eff=t_eff,
        alpha=alpha,
        power=power,
        parameters=params,
        cost=cost,
        naive_cost=naive,
        notes=notes,
    )


def id_key(hid: str) -> tuple[str, int]:
    return (hid[:1], int(hid[1:]) if hid[1:].isdigit() else 0)


# --------------------------------------------------------------------------
# Plan summary for people
# --------------------------------------------------------------------------


def _reps_range(plan: BenchmarkPlan) -> str:
    counts = [c.repetitions for c in plan.cell_repetitions]
    lo, hi = min(counts), max(counts)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def plan_markdown(plan: BenchmarkPlan) -> str:
    p = plan.parameters
    lines = [
        f"# Benchmark plan — promotion {plan.request_id} ({plan.slug})",
        "",
        (
            f"One llm-d-benchmark experiment ({plan.harness}): setup treatments `baseline` and `evolved` "
            f"(one stand-up each), {len(plan.cells)} cells, {plan.cost.runs // 2} runs per treatment "
            f"({_reps_range(plan)} repetitions per cell). Every hypothesis reads the shared runs of its cells."
        ),
        "",
        "## Cost",
        "",
        "| plan | stand-ups | runs | GPU-minutes |",
        "|---|---:|---:|---:|",
        f"| this plan | {plan.cost.standups} | {plan.cost.runs} | {plan.cost.gpu_minutes:g} |",
        (
            f"| naive (one profile per hypothesis, {p.naive_repetitions} reps, own stand-ups) | "
            f"{plan.naive_cost.standups} | {plan.naive_cost.runs} | {plan.naive_cost.gpu_minutes:g} |"
        ),
        "",
        f"Ratio: **{plan.ratio:.3f}** of the naive plan's GPU-minutes"
        + (f" (budget: {plan.max_ratio:g}). " if plan.max_ratio is not None else ". ")
        + f"Assumptions: {p.gpus_per_stack} GPUs per stack, {p.standup_minutes:g} min per stand-up + teardown, "
        f"{p.run_overhead_minutes:g} min overhead per run on top of the load duration.",
        "",
        "## Repetitions",
        "",
        (
            f"CV {plan.cv:.1%} ({plan.cv_source}); noise floor T_eff = max(5%, 2 × CV) = {plan.t_eff:.1%}. "
            "Each cell gets the repetitions per arm its most demanding hypothesis needs for "
            f"{plan.power:.0%} power, at most {MAX_REPETITIONS}: a directional claim for the one-sided Welch test "
            f"at T_eff and the full verdict rule at 2 × T_eff (alpha {plan.alpha:g}); an equivalence claim for TOST "
            "with a true change of 0; a no-worse claim for the non-inferiority test with a true change of 0, or an "
            "improvement of T_eff when a directional claim predicts one on the same cell and metric. Equivalence and "
            "no-worse claims are sized at alpha / m, m = the (hypothesis, cell) pairs of their track "
            "(Holm's first step, so a lower bound). When that sizing would exceed the GPU budget, claims that cannot "
            "reach the target within the cap stop sizing their cells (Track A/B first, then Track C)."
        ),
        "",
        "## Cells",
        "",
        "| workload | rate (req/s) | repetitions | sized by | hypotheses |",
        "|---|---:|---:|---|---|",
    ]
    for cr in plan.cell_repetitions:
        c = cr.cell
        users = [h.id for h in plan.hypotheses if c in h.cells]
        lines.append(
            f"| {c.workload} | {c.rate:g} | {cr.repetitions} | {', '.join(cr.sized_by) or '—'} | {', '.join(users)} |"
        )
    if plan.not_benchmarked:
        lines += ["", f"Not decided by benchmarks: {', '.join(plan.not_benchmarked)}."]
    if plan.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"
