"""Every power the plan prints is the chance the whole verdict rule confirms, checked by simulation.

The promotions are drawn here (``stats_synth``, numpy only) at the effects the plan prints beside
each power, under the noise the plan states, and judged by ``bot.stats.decide`` with the plan's own
decision rule: the code ``promote evaluate`` runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from bot import PROJECT_ROOT
from bot.bench.plan import make_plan
from bot.model import PromotionRequest, TranslationSummary
from bot.stats.design import DecisionRule
from tests.stats.stats_synth import batch_statuses, draw_model

SIMS = 2000


@pytest.fixture(scope="module")
def example():
    """The bundled example's request and the hypotheses stage 3 generates for it."""
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses

    req = PromotionRequest.load(PROJECT_ROOT / "examples" / "weighted-adaptive" / "promotion.yaml")
    d = load_dictionary()
    signals = ["InFlightRequests", "KVUtilization", "CacheHitRate"]
    summary = TranslationSummary(
        kind=req.kind,
        plugin_type=req.plugin_type,
        package_dir="pkg",
        signals=signals,
        freshness_gaps=signals[:2],
        touched_gaps=d.touched_gaps(req.kind, signals),
    )
    return req, generate_hypotheses(req, summary, d)


@pytest.fixture(scope="module")
def plan(example):
    return make_plan(*example)


def _truth(plan) -> dict:
    """The scenario the plan prints: one true change per (cell, metric), read off the printed effects."""
    metric = {h.id: h.metric for h in plan.hypotheses}
    truth: dict = {}
    for c in plan.claims:
        key = (c.cell.label(), metric[c.hypothesis])
        assert truth.setdefault(key, c.effect) == pytest.approx(c.effect), f"two effects printed for {key}"
    return truth


def _simulate(plan, seed, *, evolved_ratio, outlier_rate, decision=None, robust=True, reps=None) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    truth = _truth(plan)
    n_by_cell = {c.label(): n for c, n in (reps or plan.repetitions_by_cell).items()}
    arms = {
        key: draw_model(
            rng,
            sims=SIMS,
            n=n_by_cell[key[0]],
            cv=plan.cv,
            effect=effect,
            evolved_ratio=evolved_ratio,
            outlier_rate=outlier_rate,
        )
        for key, effect in sorted(truth.items())
    }
    specs = [(h.id, h.direction, h.margin, h.metric, [(c.label(), h.metric) for c in h.cells]) for h in plan.hypotheses]
    statuses = batch_statuses(specs, arms, decision or plan.decision, robust=robust)
    return {hid: float(np.mean(s == 1)) for hid, s in statuses.items()}


def test_printed_power_is_the_simulated_chance_of_confirmed(plan):
    """Acceptance: every printed power matches the simulated rate of 'confirmed' within 5 points."""
    sim = _simulate(plan, 1, evolved_ratio=plan.evolved_noise_ratio, outlier_rate=plan.outlier_rate)
    steady = _simulate(plan, 2, evolved_ratio=1.0, outlier_rate=0.0)
    for hp in plan.hypothesis_power:
        assert abs(sim[hp.hypothesis] - hp.power) <= 0.05, (hp, sim[hp.hypothesis])
        assert abs(steady[hp.hypothesis] - hp.power_equal_noise) <= 0.05, (hp, steady[hp.hypothesis])
    decidable = [hp for hp in plan.hypothesis_power if hp.decidable]
    assert decidable and all(hp.power >= plan.power for hp in decidable)


def test_the_power_floor_is_the_chance_at_the_hypothesis_own_level(plan):
    """power_floor: the whole rule at the level the hypothesis has when no other one is confirmed."""
    for hp in [hp for hp in plan.hypothesis_power if hp.decidable][:6]:
        h = next(x for x in plan.hypotheses if x.id == hp.hypothesis)
        alone = plan.model_copy(update={"hypotheses": [h], "claims": [c for c in plan.claims if c.hypothesis == h.id]})
        sim = _simulate(
            alone,
            3,
            evolved_ratio=plan.evolved_noise_ratio,
            outlier_rate=plan.outlier_rate,
            decision=DecisionRule(alpha=hp.level),
        )
        assert abs(sim[h.id] - hp.power_floor) <= 0.05, (hp, sim[h.id])


def test_outlier_runs_keep_the_planned_power(plan):
    """Acceptance: with 10% of runs x5, every decidable hypothesis is confirmed >= 80% at the plan's runs.

    Found by trying it: without the robust rule, such runs pushed the CV over the noise guard and the
    power collapsed (0.5% at n = 20); the same draws judged without it show the difference.
    """
    sim = _simulate(plan, 4, evolved_ratio=1.0, outlier_rate=0.10)
    naive = _simulate(plan, 4, evolved_ratio=1.0, outlier_rate=0.10, robust=False)
    for hp in plan.hypothesis_power:
        if hp.decidable:
            assert sim[hp.hypothesis] >= 0.80, (hp.hypothesis, sim[hp.hypothesis])
    assert np.mean([naive[h.hypothesis] for h in plan.hypothesis_power if h.decidable]) < 0.6


def test_an_evolved_arm_twice_as_noisy_keeps_the_planned_power(plan, example):
    """Acceptance: sized with Welch for unequal spreads and at the level the verdict uses, the planned
    power holds when the evolved arm is twice as noisy. Found by trying it: A3 was confirmed 28.5% of
    the time against the 81.3% the plan printed."""
    sim = _simulate(plan, 5, evolved_ratio=2.0, outlier_rate=0.0)
    for hp in plan.hypothesis_power:
        if hp.decidable:
            assert sim[hp.hypothesis] >= 0.80, (hp.hypothesis, sim[hp.hypothesis])
    # the same promotion sized for equal spreads falls short for some hypothesis: the allowance is what holds it
    equal = make_plan(*example, evolved_noise_ratio=1.0, outlier_rate=0.0)
    short = _simulate(plan, 5, evolved_ratio=2.0, outlier_rate=0.0, reps=equal.repetitions_by_cell)
    assert min(short[hp.hypothesis] for hp in plan.hypothesis_power if hp.decidable) < 0.8
