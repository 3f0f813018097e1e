"""Stage 4's sequential design (issue 10, item 4): looks per cell, the spending function, its power and cost.

The fixed plan (``bot.bench.sizing``) says how many runs each cell needs when
every run is made before anything is judged. The sequential design runs the
same cells in rounds and stops each one once the hypotheses that need it are
decided (``bot.stats.sequential``). This module chooses it before any GPU is
spent and says what it will cost:

- every cell's horizon starts at its fixed-plan count, with looks at
  ``LOOK_FRACTIONS`` of it (3 looks);
- alpha is spent with the Pocock-type function: it stops earlier than the
  O'Brien-Fleming type (on the bundled example 0.24 vs 0.26 of the naive
  plan's GPU-minutes), and its interim levels stay where Welch's t
  approximation holds; O'Brien-Fleming's tiny interim levels sit in Welch's
  slightly liberal far tail (5.3% false confirmations at an equivalence margin
  with a twice-as-noisy evolved arm in our simulations, against 3.9-5.2% for
  Pocock). ``SequentialRule`` still accepts it for a spec edited by hand;
- the planned promotion (every claim at its planned effect, the plan's noise
  model) is simulated through the round loop; a decidable hypothesis short of
  the power target gets one more run per arm on each of its cells at the
  horizon, until every decidable hypothesis reaches it (at most ``MAX_BUMPS``
  times);
- the expected GPU-minutes are simulated at the planned effects with the noise
  as assumed (the baseline CV in both arms, no outlier runs), under the noise
  the plan is sized for (evolved arm twice as noisy, 10% outlier runs: what
  the power guarantee holds for), and with no effect at all (every cell then
  runs to its horizon unless a guard rules a regression out).

GPU-minutes follow ``bot.bench.plan.plan_cost``: two stand-ups, every run's
load plus overhead, and for every round after the first an EPP swap and
re-warm per arm (``swap_minutes``). That is an upper bound on what ``promote
bench run`` spends: it stands up once and swaps (the fast EPP swap), and it
alternates the arm order round by round, so it swaps once per round, not
twice. The plan keeps the bound so that a cap set from it is never too small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bot.bench import guard_power
from bot.bench.layout import split_condition
from bot.bench.plan import run_minutes, scenario_claims
from bot.bench.plan_model import BenchmarkPlan, Cell, CostParameters, SequentialPlan
from bot.bench.sizing import scenario_truth
from bot.model import PromotionRequest
from bot.stats.decide import Claim
from bot.stats.design import SequentialRule
from bot.stats.power import NoiseModel
from bot.stats.scenario import draw_arms
from bot.stats.sequential import LOOK_FRACTIONS, schedule_for, simulate

SPENDING = "pocock"
#: Simulated promotions while choosing the design, and for the figures the plan prints.
SEARCH_SIMS = 600
SIMS = 2000
SEED = 20261104
MAX_BUMPS = 3


def sequential_plan(plan: BenchmarkPlan, request: PromotionRequest, target: float, max_reps: int) -> SequentialPlan:
    """Choose the sequential design for ``plan`` (see the module docstring)."""
    claims, metric_of = _claims(plan)
    noise = NoiseModel(plan.cv, plan.evolved_noise_ratio, plan.outlier_rate)
    truth = {(c.label(), m): v for (c, m), v in scenario_truth(plan.hypotheses, plan.t_eff).items()}
    decidable = [h.hypothesis for h in plan.hypothesis_power if h.decidable]
    cells = {c.label(): c for c in plan.cells}
    stacks = len({request.workload(split_condition(c.workload)[0]).harness for c in plan.cells})
    horizons = {cr.cell.label(): cr.repetitions for cr in plan.cell_repetitions}
    for _ in range(MAX_BUMPS + 1):
        looks = {label: schedule_for(n, LOOK_FRACTIONS) for label, n in horizons.items()}
        rule_ = plan.decision.model_copy(
            update={"sequential": SequentialRule(spending=SPENDING, looks=looks, decidable=decidable)}
        )
        res = _simulate(claims, metric_of, truth, noise, rule_, looks, SEARCH_SIMS)
        short = [h for h in decidable if res.confirmed[h] < target]
        if not short:
            break
        grown = {c for h in plan.hypotheses if h.id in short for c in (x.label() for x in h.cells)}
        horizons = {label: min(n + (label in grown), max_reps) for label, n in horizons.items()}
    noisy = _simulate(claims, metric_of, truth, noise, rule_, looks, SIMS)
    assumed = NoiseModel(plan.cv)
    planned = _simulate(claims, metric_of, truth, assumed, rule_, looks, SIMS)
    null = _simulate(claims, metric_of, {}, assumed, rule_, looks, SIMS // 2)
    regressions = guard_power.regression_truths(plan.hypotheses, truth, plan.t_eff, key=lambda c: c.label())
    caught = [_simulate(claims, metric_of, t, noise, rule_, looks, guard_power.GUARD_SIMS).refuted for t in regressions]
    horizon_runs = {label: float(ns[-1]) for label, ns in looks.items()}
    rounds_max = max(len(ns) for ns in looks.values())
    return SequentialPlan(
        spending=SPENDING,
        looks=looks,
        decidable=decidable,
        power={h: round(v, 3) for h, v in noisy.confirmed.items()},
        expected_runs={label: round(v, 2) for label, v in planned.runs.items()},
        expected_rounds=round(planned.rounds, 2),
        expected_gpu_minutes=_cost(request, cells, planned.runs, planned.rounds, stacks, plan.parameters),
        expected_gpu_minutes_noisy=_cost(request, cells, noisy.runs, noisy.rounds, stacks, plan.parameters),
        expected_gpu_minutes_null=_cost(request, cells, null.runs, null.rounds, stacks, plan.parameters),
        max_gpu_minutes=_cost(request, cells, horizon_runs, rounds_max, stacks, plan.parameters),
        refute=guard_power.rounded(caught, plan.hypotheses),
    )


def _claims(plan: BenchmarkPlan) -> tuple[list[Claim], dict[str, str]]:
    claims, metric_of = scenario_claims(plan.hypotheses)
    return [Claim(c.id, c.kind, c.margin, c.better, tuple(x.label() for x in c.cells)) for c in claims], metric_of


def _simulate(
    claims: Sequence[Claim],
    metric_of: Mapping[str, str],
    truth: Mapping[tuple[str, str], float],
    noise: NoiseModel,
    rule_,
    looks: Mapping[str, list[int]],
    sims: int,
):
    rng = np.random.default_rng(SEED)
    keys = sorted({(cell, metric_of[c.id]) for c in claims for cell in c.cells})
    arms = {k: draw_arms(rng, sims, looks[k[0]][-1], truth.get(k, 0.0), noise) for k in keys}
    return simulate(claims, metric_of, arms, rule_, looks)


def _cost(
    request: PromotionRequest,
    cells: Mapping[str, Cell],
    runs: Mapping[str, float],
    rounds: float,
    stacks: int,
    p: CostParameters,
) -> float:
    """Two stand-ups per stack, both arms' runs, and an EPP swap per arm for every round after the first (an
    upper bound: the runner stands up once and swaps once per round; see the module docstring)."""
    run = sum(runs[label] * 2 * run_minutes(request, cells[label], p) for label in runs)
    swaps = 2 * max(rounds - 1.0, 0.0) * p.swap_minutes * stacks
    return round((2 * stacks * p.standup_minutes + run + swaps) * p.gpus_per_stack, 1)
