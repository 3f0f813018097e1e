"""The plan's repetition count: analytic power checked against simulation, including the full verdict rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bot.model import Direction, VerdictStatus
from bot.stats import StatsError
from bot.stats.power import MAX_CV, log_sd, noise_floor, power_at, repetitions_for
from bot.stats.verdicts import evaluate
from tests.stats.stats_synth import arm_pair, batch_statuses, build, draw_pair, hypothesis


def _simulated_welch_power(cv: float, effect: float, n: int, alpha: float, sims: int, seed: int) -> float:
    """Power of the one-sided Welch test on logs, by brute force on raw log-normal data."""
    rng = np.random.default_rng(seed)
    s = log_sd(cv)
    b = rng.lognormal(0.0, s, (sims, n))
    e = rng.lognormal(np.log1p(effect), s, (sims, n))
    alternative = "less" if effect < 0 else "greater"
    p = stats.ttest_ind(np.log(e), np.log(b), axis=1, equal_var=False, alternative=alternative).pvalue
    return float(np.mean(p < alpha))


@pytest.mark.parametrize(
    "cv, effect, n",
    [(0.05, -0.05, 3), (0.05, -0.05, 8), (0.10, 0.08, 5), (0.03, -0.04, 2), (0.12, -0.15, 4)],
)
def test_welch_power_matches_simulation(cv, effect, n):
    analytic = power_at(cv, effect, n, 0.05, rule="test")
    simulated = _simulated_welch_power(cv, effect, n, 0.05, sims=20000, seed=11)
    assert abs(analytic - simulated) < 0.015, (analytic, simulated)


def test_welch_power_is_below_the_pooled_t_power_at_small_n():
    """Welch's df (between n-1 and 2n-2) costs power at n = 3; the plan must not use the pooled-t shortcut."""
    cv, effect, n = 0.05, -0.06, 3
    sigma = log_sd(cv)
    df = 2 * n - 2
    pooled = stats.nct.sf(stats.t.ppf(0.95, df), df, abs(np.log1p(effect)) / (sigma * np.sqrt(2 / n)))
    assert power_at(cv, effect, n, rule="test") < pooled - 0.02


@pytest.mark.parametrize("cv", [0.02, 0.05, 0.10])
def test_planned_repetitions_give_80_percent_power_at_twice_the_noise_floor(cv):
    """At repetitions_for(cv, 2 x T_eff) the full verdict rule confirms >= 80% of true effects."""
    effect = -2 * noise_floor(cv)
    n = repetitions_for(cv, effect)
    assert 2 <= n <= 20
    b, e = draw_pair(np.random.default_rng(int(cv * 1000)), "lognormal", sims=4000, n=n, cv=cv, effect=effect)
    simulated = float(
        np.mean(batch_statuses([("A1", Direction.DECREASE, 0.05, "ttft_mean", ["c"])], {"c": (b, e)})["A1"] == 1)
    )
    assert simulated >= 0.80, (cv, n, simulated)
    # The analytic verdict-rule power is what the plan trusts; it must agree with the simulation.
    assert abs(power_at(cv, effect, n) - simulated) < 0.03, (power_at(cv, effect, n), simulated)
    # ... and n is the smallest count that reaches it.
    if n > 2:
        assert power_at(cv, effect, n - 1) < 0.8


def test_evaluate_confirms_like_the_power_model():
    """The same check through evaluate() itself on a few hundred report sets (the wiring, not the batch)."""
    cv, n = 0.05, 4
    effect = -2 * noise_floor(cv)
    rng = np.random.default_rng(7)
    h = [hypothesis("A1", metric="ttft_mean")]
    sims = 300
    confirmed = 0
    for _ in range(sims):
        b, e = arm_pair(rng, cv=cv, effect=effect, n=n)
        reports = build([{"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e}])
        confirmed += evaluate(h, reports)[0].status is VerdictStatus.CONFIRMED
    assert abs(confirmed / sims - power_at(cv, effect, n)) < 0.07


def test_repetitions_grow_with_noise_and_shrink_with_effect():
    by_cv = [repetitions_for(cv, -0.12, rule="test") for cv in (0.02, 0.05, 0.08, 0.12)]
    assert by_cv == sorted(by_cv) and by_cv[0] < by_cv[-1]
    by_effect = [repetitions_for(0.08, eff, rule="test") for eff in (-0.05, -0.08, -0.12, -0.2)]
    assert by_effect == sorted(by_effect, reverse=True) and by_effect[0] > by_effect[-1]
    # a stricter alpha (e.g. Holm's worst case alpha/m) needs at least as many runs
    assert repetitions_for(0.06, -0.1, alpha=0.05 / 6) >= repetitions_for(0.06, -0.1)


def test_unreachable_power_returns_max_reps_and_power_at_says_so():
    # A cluster at the 15% halt can never be confirmed reliably: half its baselines halt as too noisy.
    n = repetitions_for(MAX_CV, -0.3, max_reps=12)
    assert n == 12 and power_at(MAX_CV, -0.3, 12) < 0.8
    # An effect inside the 5% noise floor is never confirmed under the verdict rule, however many runs.
    assert power_at(0.01, -0.04, 20) < 0.01
    assert repetitions_for(0.01, -0.04, max_reps=6) == 6


def test_no_noise_edge_case():
    assert power_at(0.0, -0.10, 2) == 1.0
    assert power_at(0.0, -0.03, 2) == 0.0  # inside the 5% floor
    assert repetitions_for(0.0, -0.10) == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cv": -0.1, "effect": -0.1},
        {"cv": float("nan"), "effect": -0.1},
        {"cv": 0.05, "effect": -1.0},
        {"cv": 0.05, "effect": -0.1, "alpha": 0.7},
        {"cv": 0.05, "effect": -0.1, "power": 1.0},
        {"cv": 0.05, "effect": -0.1, "max_reps": 1},
    ],
)
def test_bad_parameters_raise_one_line_errors(kwargs):
    with pytest.raises(StatsError) as exc:
        repetitions_for(**kwargs)
    assert "\n" not in str(exc.value)


def test_power_at_rejects_n_below_two():
    with pytest.raises(StatsError):
        power_at(0.05, -0.1, 1)


@pytest.mark.parametrize("kind", ["equivalent", "no-worse"])
def test_margin_power_matches_the_full_rule_by_simulation(kind):
    """Track C: repetitions_for_margin's n confirms a true null shift >= 80% of the time through the verdict rule."""
    from bot.stats.power import power_margin, repetitions_for_margin

    cv = 0.025
    n = repetitions_for_margin(cv, 0.05, kind=kind)
    assert 2 < n < 20
    b, e = draw_pair(np.random.default_rng(99), "lognormal", sims=4000, n=n, cv=cv, effect=0.0)
    status = batch_statuses([("C1", Direction(kind), 0.05, "ttft_mean", ["c"])], {"c": (b, e)})["C1"]
    simulated = float(np.mean(status == 1))
    assert simulated >= 0.78, (n, simulated)
    assert abs(power_margin(cv, 0.05, n, kind=kind) - simulated) < 0.03
    assert power_margin(cv, 0.05, n - 1, kind=kind) < 0.8


def test_margin_claims_need_more_runs_than_directional_ones():
    from bot.stats.power import repetitions_for_margin

    cv = 0.04
    assert repetitions_for_margin(cv, 0.05) > 2 * repetitions_for(cv, -2 * noise_floor(cv))


@pytest.mark.parametrize("q", [0.01, 0.1, 0.25, 0.49])
def test_the_outlier_count_distribution_is_scipys_binomial(q):
    """power._binomial replaces scipy.stats.binom.pmf (whose import every planning process paid for): it must give
    the same probabilities, for every arm size a plan can have."""
    from bot.stats.power import _binomial

    for n in range(1, 41):
        np.testing.assert_allclose(_binomial(n, q), stats.binom.pmf(np.arange(n + 1), n, q), rtol=1e-11, atol=0)
