"""Verdicts on synthetic report sets whose truth is known, and the error rates of the decision rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bot.model import Direction, VerdictStatus
from bot.stats import StatsError
from bot.stats.verdicts import evaluate, holm
from tests.stats.stats_synth import (
    SynthReports,
    arm_pair,
    batch_statuses,
    build,
    draw_pair,
    hypothesis,
    with_sample_cv,
)

CONFIRMED, REFUTED, INCONCLUSIVE = VerdictStatus.CONFIRMED, VerdictStatus.REFUTED, VerdictStatus.INCONCLUSIVE
SEEDS = range(20)


def _cell(rng, *, workload="chat", rate=10, metric="ttft_mean", cv=0.03, effect=0.0, n=5, **extra):
    b, e = arm_pair(rng, cv=cv, effect=effect, n=n)
    return dict(workload=workload, rate=rate, metric=metric, baseline=b, evolved=e, **extra)


def _by_id(verdicts):
    return {v.hypothesis_id: v for v in verdicts}


# --------------------------------------------------------------------------
# Known truth, every seed
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_better_is_confirmed(seed):
    rng = np.random.default_rng(seed)
    reports = build([_cell(rng, effect=-0.20), _cell(rng, metric="throughput", effect=0.20)])
    hs = [
        hypothesis("A1", metric="ttft_mean", direction=Direction.DECREASE),
        hypothesis("A2", metric="throughput", direction=Direction.INCREASE),
        hypothesis("C1", metric="ttft_mean", direction=Direction.NO_WORSE),
        hypothesis("C2", metric="throughput", direction=Direction.NO_WORSE),
    ]
    v = _by_id(evaluate(hs, reports))
    assert {k: x.status for k, x in v.items()} == dict.fromkeys(v, CONFIRMED)
    e = v["A1"].effects[0]
    assert e.ci_high < 0 < -e.rel_change and -e.rel_change > e.t_eff and e.p_adjusted < 0.05
    assert v["A1"].flags == []


@pytest.mark.parametrize("seed", SEEDS)
def test_equal_is_equivalent_and_not_a_directional_win(seed):
    rng = np.random.default_rng(seed)
    reports = build([_cell(rng, effect=0.0, cv=0.015, n=6)])
    hs = [
        hypothesis("A1", direction=Direction.DECREASE),
        hypothesis("A2", direction=Direction.INCREASE),
        hypothesis("C1", direction=Direction.EQUIVALENT),
        hypothesis("C2", direction=Direction.NO_WORSE),
    ]
    v = _by_id(evaluate(hs, reports))
    assert v["A1"].status is INCONCLUSIVE and v["A2"].status is INCONCLUSIVE
    assert v["C1"].status is CONFIRMED and v["C2"].status is CONFIRMED
    assert "noise floor" in v["A1"].summary


@pytest.mark.parametrize("seed", SEEDS)
def test_worse_is_refuted(seed):
    rng = np.random.default_rng(seed)
    reports = build([_cell(rng, effect=0.20), _cell(rng, metric="throughput", effect=-0.20)])
    hs = [
        hypothesis("A1", metric="ttft_mean", direction=Direction.DECREASE),
        hypothesis("A2", metric="throughput", direction=Direction.INCREASE),
        hypothesis("C1", metric="ttft_mean", direction=Direction.EQUIVALENT),
        hypothesis("C2", metric="ttft_mean", direction=Direction.NO_WORSE),
        hypothesis("C3", metric="throughput", direction=Direction.NO_WORSE),
    ]
    v = _by_id(evaluate(hs, reports))
    assert {k: x.status for k, x in v.items()} == dict.fromkeys(v, REFUTED)


@pytest.mark.parametrize("seed", SEEDS)
def test_too_noisy_cluster_is_inconclusive_whatever_the_effect(seed):
    rng = np.random.default_rng(seed)
    # a true 40% gain, but baseline CV 30%: the halt must fire, not a lucky confirm
    _, e = arm_pair(rng, cv=0.30, effect=-0.40, n=5)
    # baseline sample CV pinned near 28% (a spread of +-36% around 100), in a seeded random order
    b = 100 * (1 + 0.30 * rng.permutation(np.linspace(-1.2, 1.2, 5))) * rng.lognormal(0, 0.01, 5)
    reports = build([{"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e}])
    v = evaluate([hypothesis("A1"), hypothesis("C1", direction=Direction.NO_WORSE)], reports)
    for x in v:
        assert x.status is INCONCLUSIVE
        assert any(f.startswith("cluster too noisy") for f in x.flags)
        assert x.effects[0].cv_baseline > 0.15 and x.effects[0].p_value is None


@pytest.mark.parametrize(("cv", "halted"), [(0.14, False), (0.16, True)])
def test_the_noise_halt_is_at_15_percent_baseline_cv(cv, halted):
    """The limit the report prints ("at most 15%"), not merely a cluster twice as noisy: a cell just over it is
    halted whatever the effect, one just under it is judged."""
    b = with_sample_cv(cv)
    reports = build([{"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": 0.5 * b}])
    [v] = evaluate([hypothesis("A1")], reports)
    assert v.effects[0].cv_baseline == pytest.approx(cv)
    noisy = [f for f in v.flags if f.startswith("cluster too noisy")]
    if halted:
        assert v.status is INCONCLUSIVE and v.effects[0].p_value is None, v.summary
        assert noisy == ["cluster too noisy: baseline CV 16.0% > 15% on ttft_mean at chat @ 10 req/s"], v.flags
    else:
        assert v.status is CONFIRMED and not noisy, (v.summary, v.flags)


@pytest.mark.parametrize("seed", SEEDS)
def test_shedding_masks_latency(seed):
    """An admission policy that drops 5% of requests looks 20% faster; it must not be confirmed."""
    rng = np.random.default_rng(seed)
    reports = build([_cell(rng, effect=-0.20, total=1000, lost_baseline=2, lost_evolved=50)])
    v = _by_id(evaluate([hypothesis("A1"), hypothesis("C1", direction=Direction.NO_WORSE)], reports))
    for x in v.values():
        assert x.status is INCONCLUSIVE
        assert any(f.startswith("shedding may mask latency") for f in x.flags)
    assert "shedding" in v["A1"].summary
    # the same numbers without the shedding are confirmed: the guard is what changed the verdict
    clean = build([_cell(np.random.default_rng(seed), effect=-0.20, total=1000, lost_baseline=2, lost_evolved=2)])
    assert evaluate([hypothesis("A1")], clean)[0].status is CONFIRMED


def test_small_shedding_is_held_where_it_fills_the_tail_and_only_flagged_where_it_cannot():
    """0.5 pp more lost in every run (below the 1 pp tolerance, but steady): half of a p99's 1% tail, so it could
    fake a 20% p99 gain; on a mean, counted at 10x the served mean, it moves it by 4.5% and the -20% still holds."""
    rng = np.random.default_rng(3)
    reports = build([_cell(rng, metric="ttft_p99", effect=-0.2, n=3, total=1000, lost_baseline=0, lost_evolved=5)])
    v = evaluate([hypothesis("A1", metric="ttft_p99")], reports)[0]
    assert v.status is INCONCLUSIVE and any(f.startswith("shedding may mask latency") for f in v.flags)
    reports = build([_cell(np.random.default_rng(3), effect=-0.2, n=3, total=1000, lost_baseline=0, lost_evolved=5)])
    v = evaluate([hypothesis("A1")], reports)[0]
    assert v.status is CONFIRMED and any("too few to explain the ttft_mean change" in f for f in v.flags), v.flags
    # one failed request in one run is no real loss, runs as the unit: not flagged
    reports = build([_cell(np.random.default_rng(3), effect=-0.2, n=3, total=1000, lost_evolved=0)])
    reports.requests.loc[reports.requests.index[-1], "failures"] = 1
    v = evaluate([hypothesis("A1")], reports)[0]
    assert v.status is CONFIRMED and not any("shedding" in f or "lost" in f for f in v.flags)


def _load_spikes_45(failures_evolved):
    """The bundled sample's load-spikes @ 45 cell in shape: 7 runs of ~5,400 requests per arm, e2e_p95 -14%,
    baseline 8 failed requests in all, the evolved arm ``failures_evolved`` per run."""
    rng = np.random.default_rng(45)
    b, e = arm_pair(rng, cv=0.014, effect=-0.144, n=7, mean=4229.0)
    reports = build(
        [{"workload": "load-spikes", "rate": 45, "metric": "e2e_p95", "baseline": b, "evolved": e, "total": 5400}]
    )
    req = reports.requests
    req.loc[req["treatment"] == "baseline", "failures"] = [2, 1, 1, 1, 1, 1, 1]
    req.loc[req["treatment"] == "evolved", "failures"] = failures_evolved
    return reports


@pytest.mark.parametrize("failures", [[8, 8, 8, 0, 0, 0, 0], [4] * 7])
def test_a_handful_of_failed_requests_does_not_demote_a_large_p95_gain(failures):
    """Stats review #2: 16-20 extra failed requests in ~37,800 demoted a -14.4% p95 improvement (a two-proportion
    z-test with n = requests, p = 7e-6). Runs as the unit, 8 extra in each of 3 runs is no real loss; 3 extra in
    every run is, but as worst-case latencies it moves the p95 by about 1%, which cannot explain -14%."""
    reports = _load_spikes_45(failures)
    hs = [
        hypothesis("A1", metric="e2e_p95", workloads=("load-spikes",)),
        hypothesis("B1", metric="e2e_p95", workloads=("load-spikes",), direction=Direction.NO_WORSE),
    ]
    for v in evaluate(hs, reports):
        assert v.status is CONFIRMED, v.summary
        assert not any(f.startswith("shedding may mask latency") for f in v.flags), v.flags


@pytest.mark.parametrize("share", [0.01, 0.05, 0.2])
def test_an_admitter_shedding_a_share_of_requests_to_look_fast_is_held(share):
    """The case the guard exists for, at the same cell: 1-20% of the evolved arm's requests shed in every run."""
    reports = _load_spikes_45([int(5400 * share)] * 7)
    v = evaluate([hypothesis("A1", metric="e2e_p95", workloads=("load-spikes",))], reports)[0]
    assert v.status is INCONCLUSIVE and v.effects[0].held_by == "shedding-guard"
    assert any(f.startswith("shedding may mask latency") for f in v.flags)


def test_an_admitter_shedding_unevenly_below_the_tolerance_is_held_where_the_loss_explains_the_gain():
    """0.1%, 0.2% and 2.4% of requests shed over 3 runs (0.9 pp on average): too uneven for a per-run test to call
    real, but counted as worst-case latencies it moves a p95 by +21%, more than the -15% gain. Held, and flagged
    as possible; the same loss on a mean (+8%) cannot explain the gain and leaves it confirmed, unflagged."""

    def cell(metric):
        b, e = arm_pair(np.random.default_rng(7), cv=0.01, effect=-0.15, n=3)
        reports = build([{"workload": "chat", "rate": 20, "metric": metric, "baseline": b, "evolved": e}])
        req = reports.requests
        req["total"] = 10000
        req.loc[req["treatment"] == "baseline", "failures"] = [0, 0, 0]
        req.loc[req["treatment"] == "evolved", "failures"] = [10, 20, 240]
        return evaluate([hypothesis("A1", metric=metric)], reports)[0]

    v = cell("e2e_p95")
    assert v.status is INCONCLUSIVE and v.effects[0].held_by == "shedding-guard", v.summary
    [flag] = [f for f in v.flags if f.startswith("shedding may mask latency")]
    assert "the per-run gap is not significant" in flag and "e2e_p95 by +20.9%" in flag, flag
    v = cell("ttft_mean")
    assert v.status is CONFIRMED and not any("shedding" in f or "lost" in f for f in v.flags), v.flags


def test_shedding_does_not_block_a_throughput_claim_but_is_flagged():
    rng = np.random.default_rng(4)
    reports = build([_cell(rng, metric="throughput", effect=0.2, lost_evolved=50)])
    v = evaluate([hypothesis("A1", metric="throughput", direction=Direction.INCREASE)], reports)[0]
    # flagged as the regression throughput does not count, not as latency the shedding may mask (bj2 5)
    assert v.status is CONFIRMED and any(
        f.startswith("more requests lost, a regression not counted by") for f in v.flags
    )
    assert not any("mask latency" in f for f in v.flags)


def test_missing_request_counts_are_flagged_not_assumed():
    rng = np.random.default_rng(5)
    r = build([_cell(rng, effect=-0.2)])
    reports = SynthReports(r.table, r.requests.iloc[0:0])
    v = evaluate([hypothesis("A1")], reports)[0]
    assert any("shedding guard not applied" in f for f in v.flags)


# --------------------------------------------------------------------------
# Error rates
# --------------------------------------------------------------------------


def test_null_experiments_false_confirm_rate_at_most_5_percent():
    """6,000 null experiments; a directional claim is (falsely) confirmed at most 5% of the time.

    The raw Welch p-values are also checked for calibration (about 5% below 0.05), so the
    test cannot pass merely because the rule never confirms anything.
    """
    from bot.stats.rule import cell_stats, p_values

    confirmed = significant = tested = runs = 0
    for i, (cv, n) in enumerate((cv, n) for cv in (0.02, 0.05, 0.10) for n in (3, 5)):
        b, e = draw_pair(np.random.default_rng(2024 + i), "lognormal", sims=1000, n=n, cv=cv, effect=0.0)
        status = batch_statuses([("A1", Direction.DECREASE, 0.05, "ttft_mean", ["c"])], {"c": (b, e)})["A1"]
        st = cell_stats(b, e)
        p = p_values(st, "decrease", 0.05, "lower")[0][st.testable]  # halted cells (too noisy) are not tested
        confirmed += int(np.sum(status == 1))
        significant += int(np.sum(p < 0.05))
        tested += int(p.size)
        runs += 1000
    assert confirmed / runs <= 0.05
    assert tested > 0.9 * runs
    assert 0.03 <= significant / tested <= 0.07, significant / tested


def test_holm_controls_a_track_of_many_null_cells():
    """Ten null cells in one promotion: without multiplicity control ~40% of such experiments would confirm
    something; the batch decision and evaluate() agree on the first few."""
    rng = np.random.default_rng(77)
    specs = [(f"A{i}", Direction.DECREASE, 0.05, "ttft_mean", [f"w{i}"]) for i in range(10)]
    arms = {f"w{i}": draw_pair(rng, "lognormal", sims=1000, n=3, cv=0.01, effect=0.0) for i in range(10)}
    statuses = batch_statuses(specs, arms)
    any_confirmed = np.zeros(1000, bool)
    for x in statuses.values():
        any_confirmed |= x == 1
    assert any_confirmed.mean() <= 0.05
    hs = [hypothesis(f"A{i}", workloads=[f"w{i}"]) for i in range(10)]
    for j in range(5):
        cells = [
            {
                "workload": f"w{i}",
                "rate": 10,
                "metric": "ttft_mean",
                "baseline": arms[f"w{i}"][0][j],
                "evolved": arms[f"w{i}"][1][j],
            }
            for i in range(10)
        ]
        for v in evaluate(hs, build(cells)):
            assert (v.status is CONFIRMED) == (statuses[v.hypothesis_id][j] == 1)
            assert v.effects[0].p_adjusted >= v.effects[0].p_value


def test_holm_known_values():
    assert np.allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    assert np.allclose(holm([0.5, 0.001]), [0.5, 0.002])
    assert holm([]).size == 0


def test_multiplicity_spans_the_whole_promotion():
    """Holm runs over every hypothesis of the promotion, whatever its track (at the hypothesis level)."""
    rng = np.random.default_rng(8)
    cells = [_cell(rng, workload="chat", effect=-0.2), _cell(rng, workload="code", effect=-0.2)]
    reports = build(cells)
    alone = evaluate([hypothesis("A1")], reports)[0].effects[0]
    assert alone.p_adjusted == pytest.approx(alone.p_value)
    for other in ("A2", "B1", "C1"):
        hs = [hypothesis("A1"), hypothesis(other, workloads=["code"])]
        effects = [v.effects[0] for v in evaluate(hs, reports)]
        # another track costs power exactly as the same track does: the smaller p-value is doubled
        smallest = min(effects, key=lambda e: e.p_value)
        assert smallest.p_adjusted == pytest.approx(2 * smallest.p_value)
        assert max(e.p_adjusted for e in effects) == pytest.approx(max(e.p_value for e in effects))


def test_a_hypothesis_is_judged_on_its_worst_cell_without_a_multiplicity_cost():
    """Every cell must confirm (intersection-union): the hypothesis's p is its largest cell p, not a Holm step."""
    rng = np.random.default_rng(30)
    reports = build([_cell(rng, rate=r, effect=-0.2) for r in (5, 10, 20)])
    v = evaluate([hypothesis("A1")], reports)[0]
    assert v.status is CONFIRMED
    assert {e.p_adjusted for e in v.effects} == {max(e.p_value for e in v.effects)}


def test_the_plans_weights_are_applied():
    """A zero-weight hypothesis gets alpha only once every weighted one is confirmed."""
    from bot.stats.design import DecisionRule

    rng = np.random.default_rng(31)
    reports = build([_cell(rng, workload="chat", effect=-0.25), _cell(rng, workload="code", effect=0.0, cv=0.01)])
    hs = [hypothesis("A1"), hypothesis("C1", direction=Direction.EQUIVALENT, workloads=["code"])]
    both = _by_id(evaluate(hs, reports, decision=DecisionRule(weights={"A1": 1.0})))
    assert both["A1"].status is CONFIRMED and both["C1"].status is CONFIRMED
    p_a1, p_c1 = both["A1"].effects[0].p_value, both["C1"].effects[0].p_value
    assert both["C1"].effects[0].p_adjusted == pytest.approx(max(p_a1, p_c1))  # A1's alpha passed on to C1
    # when A1 fails, C1 (weight 0) is not confirmed however small its p-value
    flat = build([_cell(rng, workload="chat", effect=0.0), _cell(rng, workload="code", effect=0.0, cv=0.01)])
    v = _by_id(evaluate(hs, flat, decision=DecisionRule(weights={"A1": 1.0})))
    assert v["A1"].status is INCONCLUSIVE and v["C1"].status is INCONCLUSIVE
    assert v["C1"].effects[0].p_value < 0.001 and "at level 0" in v["C1"].summary
    # the same data with equal weights confirms C1
    assert _by_id(evaluate(hs, flat))["C1"].status is CONFIRMED


# --------------------------------------------------------------------------
# Cells and aggregation
# --------------------------------------------------------------------------


def test_too_few_repetitions_say_why():
    rng = np.random.default_rng(9)
    b, e = arm_pair(rng, cv=0.03, effect=-0.3, n=1, n_evolved=4)
    v = evaluate(
        [hypothesis("A1")],
        build([{"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": b, "evolved": e}]),
    )[0]
    assert v.status is INCONCLUSIVE
    assert "only 1 baseline and 4 evolved" in v.summary
    assert v.effects[0].n_baseline == 1 and v.effects[0].p_value is None


def test_missing_workload_and_rate_are_inconclusive_not_dropped():
    rng = np.random.default_rng(10)
    reports = build([_cell(rng, effect=-0.2)])
    v = _by_id(evaluate([hypothesis("A1", workloads=["chat", "code"]), hypothesis("A2", rates=[10, 20])], reports))
    assert v["A1"].status is INCONCLUSIVE and "no reports for workload code" in v["A1"].summary
    assert v["A2"].status is INCONCLUSIVE and "chat @ 20 req/s" in v["A2"].summary
    assert [e.rate for e in v["A2"].effects] == [10.0]


def test_all_cells_must_confirm_and_mixed_cells_are_parameter_dependent():
    rng = np.random.default_rng(11)
    reports = build(
        [_cell(rng, rate=5, effect=-0.2), _cell(rng, rate=10, effect=0.0, cv=0.01), _cell(rng, rate=20, effect=0.25)]
    )
    v = _by_id(
        evaluate(
            [
                hypothesis("A1", rates=[5, 10]),
                hypothesis("A2", rates=[5, 20]),
                hypothesis("A3", rates=[10, 20]),
                hypothesis("A4", rates=[5]),
            ],
            reports,
        )
    )
    assert v["A4"].status is CONFIRMED
    assert v["A1"].status is INCONCLUSIVE  # one cell confirms, one is flat
    assert v["A2"].status is INCONCLUSIVE and any("parameter-dependent" in f for f in v["A2"].flags)
    assert v["A3"].status is REFUTED  # a contradicting cell and no confirming one
    assert [e.rate for e in v["A2"].effects] == [5.0, 20.0]


def test_empty_rates_means_every_rate_of_the_workload():
    rng = np.random.default_rng(12)
    reports = build([_cell(rng, rate=r, effect=-0.2) for r in (20, 5, 10)])
    v = evaluate([hypothesis("A1")], reports)[0]
    assert [e.rate for e in v.effects] == [5.0, 10.0, 20.0] and v.status is CONFIRMED


def test_regression_in_one_cell_refutes_a_no_regression_claim():
    rng = np.random.default_rng(13)
    reports = build([_cell(rng, rate=5, effect=-0.1), _cell(rng, rate=10, effect=0.3)])
    v = evaluate([hypothesis("C1", direction=Direction.NO_WORSE)], reports)[0]
    assert v.status is REFUTED


def test_significant_opposite_move_inside_the_noise_floor_is_not_a_refutation():
    rng = np.random.default_rng(14)
    reports = build([_cell(rng, effect=0.03, cv=0.003, n=6)])
    v = evaluate([hypothesis("A1")], reports)[0]
    assert v.effects[0].ci_low > 0 and v.effects[0].rel_change < v.effects[0].t_eff
    assert v.status is INCONCLUSIVE and "noise floor" in v.summary


def test_non_positive_values_are_inconclusive():
    reports = build(
        [
            {
                "workload": "chat",
                "rate": 10,
                "metric": "ttft_mean",
                "baseline": [1.0, 0.0, 2.0],
                "evolved": [1.0, 1.0, 1.0],
            }
        ]
    )
    v = evaluate([hypothesis("A1")], reports)[0]
    assert v.status is INCONCLUSIVE and "positive" in v.summary
    assert "has 1 zero baseline value(s) at chat @ 10 req/s" in v.summary


def test_an_unusable_value_is_named_by_its_cause_not_as_zero_negative_or_missing():
    """An infinite value (a report that overflowed) must not read as "zero, negative or missing"."""
    inf, nan = float("inf"), float("nan")
    cell = {"workload": "chat", "rate": 10, "metric": "ttft_mean", "baseline": [1.0, 1.1, 0.9]}
    v = evaluate([hypothesis("A1")], build([{**cell, "evolved": [inf, inf, 1.0]}]))[0]
    assert v.status is INCONCLUSIVE
    assert "has 2 infinite evolved value(s) at chat @ 10 req/s" in v.summary
    assert "zero" not in v.summary and "missing" not in v.summary
    v = evaluate([hypothesis("A1")], build([{**cell, "evolved": [nan, -1.0, 1.0]}]))[0]
    assert "has 1 missing, 1 negative evolved value(s)" in v.summary


# --------------------------------------------------------------------------
# Guards and checks
# --------------------------------------------------------------------------


def test_mechanism_check_flags_uniform_gains():
    rng = np.random.default_rng(15)
    cells = [_cell(rng, workload=w, effect=-0.20, cv=0.01) for w in ("chat", "code", "rag")]
    v = evaluate([hypothesis("A1")], build(cells), evolved_for="chat")[0]
    assert v.status is CONFIRMED
    assert any(f.startswith("gain may not come from the evolved mechanism") for f in v.flags)


def test_mechanism_check_flags_when_evolved_for_is_not_top():
    rng = np.random.default_rng(16)
    cells = [_cell(rng, workload="chat", effect=-0.10, cv=0.01), _cell(rng, workload="code", effect=-0.30, cv=0.01)]
    v = evaluate([hypothesis("A1"), hypothesis("C1", direction=Direction.NO_WORSE)], build(cells), evolved_for="chat")
    flags = _by_id(v)["A1"].flags
    assert any("chat is not the most improved" in f for f in flags)
    assert not any("gain may not come" in f for f in flags)
    assert not any("mechanism" in f for f in _by_id(v)["C1"].flags)  # Track A only


def test_mechanism_check_is_silent_when_evolved_for_wins_clearly():
    rng = np.random.default_rng(17)
    cells = [_cell(rng, workload="chat", effect=-0.30, cv=0.01), _cell(rng, workload="code", effect=-0.05, cv=0.01)]
    v = evaluate([hypothesis("A1")], build(cells), evolved_for="chat")[0]
    assert not any("mechanism" in f for f in v.flags)


def test_mechanism_check_reads_only_the_runs_the_verdicts_used():
    """Found by an evidence audit: runs past a cell's last planned look were "not used" by its verdict, yet the
    mechanism check read them and flagged the evolved-for workload as not the most improved."""
    from bot.stats.design import DecisionRule, SequentialRule

    rng = np.random.default_rng(18)
    chat = _cell(rng, workload="chat", effect=-0.30, cv=0.01, n=7)
    code = _cell(rng, workload="code", effect=-0.05, cv=0.01, n=7)
    extra_b, extra_e = arm_pair(rng, cv=0.01, effect=-0.60, n=7)  # seven more, never planned, far better
    code["baseline"], code["evolved"] = (
        np.concatenate([code["baseline"], extra_b]),
        np.concatenate([code["evolved"], extra_e]),
    )
    looks = {f"{w}@10": [4, 7] for w in ("chat", "code")}
    rule = DecisionRule(sequential=SequentialRule(spending="pocock", looks=looks, decidable=["A1"]))
    v = evaluate([hypothesis("A1")], build([chat, code]), evolved_for="chat", decision=rule)[0]
    assert not any("mechanism" in f for f in v.flags), v.flags
    everything = evaluate([hypothesis("A1")], build([chat, code]), evolved_for="chat")[0]
    assert any("chat is not the most improved" in f for f in everything.flags), everything.flags


def _decided_at_look_1(rng, **extra):
    """A latency cell of 7 runs per arm with looks at 4 and 7, decided at look 1 (4 runs per arm)."""
    from bot.stats.design import DecisionRule, SequentialRule

    cell = _cell(rng, workload="chat", metric="e2e_p95", effect=0.0, cv=0.01, n=7, total=10_000, **extra)
    cell["evolved"][:4] *= 0.7  # the gain is in the first look's runs only, so that look decides
    looks = {"chat@10": [4, 7]}
    return cell, DecisionRule(sequential=SequentialRule(spending="pocock", looks=looks, decidable=["A1"]))


def test_an_early_decision_names_only_outliers_among_the_runs_it_judged():
    """Stats review #4: rep 5 of both arms x5, decided at look 1 (runs 1-4). The flag said the verdict excluded
    rep 5 (the last look's outlier rule); the verdict never used it. The effect records the look it judged."""
    cell, rule = _decided_at_look_1(np.random.default_rng(21))
    cell["baseline"][4] *= 5
    cell["evolved"][4] *= 5
    v = evaluate([hypothesis("A1", metric="e2e_p95")], build([cell]), decision=rule)[0]
    assert v.status is VerdictStatus.CONFIRMED, v.summary
    eff = v.effects[0]
    assert (eff.runs_judged, eff.n_baseline, eff.n_evolved, eff.excluded_runs) == (4, 4, 4, [])
    assert not any(f.startswith("outlier runs excluded") for f in v.flags), v.flags
    assert any(f.startswith("decided at look 1") for f in v.flags)
    fixed = evaluate([hypothesis("A1", metric="e2e_p95")], build([cell]))[0].effects[0]
    assert fixed.runs_judged is None and len(fixed.excluded_runs) == 2  # every run judged: rep 5 of each arm out


def test_the_shedding_guard_reads_the_runs_the_deciding_look_judged():
    """Stats review #5: 5% of the evolved arm's requests lost in runs 5-7 only, decided at look 1 (runs 1-4, none
    lost). The guard pooled all 7 runs and demoted the confirmation with runs the verdict says it did not use."""
    cell, rule = _decided_at_look_1(np.random.default_rng(22))
    reports = build([cell])
    req = reports.requests
    late = (req["treatment"] == "evolved") & (req["repetition"] >= 4)
    reports.requests.loc[late, "failures"] = 500
    v = evaluate([hypothesis("A1", metric="e2e_p95")], reports, decision=rule)[0]
    assert v.status is VerdictStatus.CONFIRMED, v.summary
    assert not any("shedding may mask latency" in f for f in v.flags), v.flags
    assert (v.effects[0].lost_baseline, v.effects[0].lost_evolved) == (0.0, 0.0)
    every = evaluate([hypothesis("A1", metric="e2e_p95")], reports)[0]  # a fixed design judges all 7: held
    assert every.status is VerdictStatus.INCONCLUSIVE and every.effects[0].held_by == "shedding-guard"


def test_the_shedding_sentence_needs_the_shedding_flag_not_a_missing_count():
    """Found by an evidence audit: "More requests failed ... with the evolved plugin" was said when the counts
    were merely missing (that flag says "shedding guard not applied")."""
    rng = np.random.default_rng(5)
    r = build([_cell(rng, effect=-0.2)])
    v = evaluate([hypothesis("A1")], SynthReports(r.table, r.requests.iloc[0:0]))[0]
    assert any("shedding guard not applied" in f for f in v.flags)
    assert "More requests failed" not in v.summary


def test_blis_magnitude_attenuation_and_amplification():
    rng = np.random.default_rng(18)
    reports = build([_cell(rng, effect=-0.20, cv=0.01)])
    hs = [
        hypothesis("A1", blis_magnitude=-0.9),
        hypothesis("A2", blis_magnitude=-0.05),
        hypothesis("A3", blis_magnitude=-0.25),
        hypothesis("A4", blis_magnitude=0.1),
    ]
    v = _by_id(evaluate(hs, reports))
    assert any(f.startswith("attenuated") for f in v["A1"].flags)
    assert any(f.startswith("amplified") for f in v["A2"].flags)
    assert not any(f.startswith(("attenuated", "amplified")) for f in v["A3"].flags)
    assert any(f.startswith("opposite to BLIS") for f in v["A4"].flags)
    # the override map wins over the prediction's value
    over = evaluate([hypothesis("A1", blis_magnitude=-0.9)], reports, blis_magnitudes={"A1": -0.2})[0]
    assert not any(f.startswith("attenuated") for f in over.flags)


def test_every_effect_is_filled_and_verdicts_round_trip_through_json():
    rng = np.random.default_rng(19)
    reports = build([_cell(rng, effect=-0.2), _cell(rng, workload="code", effect=0.0)])
    hs = [
        hypothesis("A1", workloads=["chat", "code"]),
        hypothesis("C1", direction=Direction.EQUIVALENT, workloads=["code"]),
    ]
    from bot.model import Verdict

    for v in evaluate(hs, reports):
        assert v.summary and v.hypothesis_id in v.summary
        for e in v.effects:
            assert e.test and e.p_value is not None and e.p_adjusted is not None and e.n_baseline == 5
            assert e.ci_low <= e.rel_change <= e.ci_high or abs(e.rel_change) < 1e-9
        assert Verdict.model_validate_json(v.model_dump_json()) == v


def test_deterministic_and_independent_of_hypothesis_order():
    rng = np.random.default_rng(20)
    reports = build([_cell(rng, effect=-0.1, cv=0.05, n=3), _cell(rng, workload="code", effect=0.02, n=3)])
    hs = [
        hypothesis("A1", workloads=["chat", "code"]),
        hypothesis("A2", workloads=["code"]),
        hypothesis("C1", direction=Direction.NO_WORSE),
    ]
    first = [v.model_dump_json() for v in evaluate(hs, reports, evolved_for="chat")]
    again = [v.model_dump_json() for v in evaluate(hs, reports, evolved_for="chat")]
    reversed_ = {v.hypothesis_id: v.model_dump_json() for v in evaluate(hs[::-1], reports, evolved_for="chat")}
    assert first == again
    assert first == [reversed_[h.id] for h in hs]


def test_same_cell_same_interval_across_hypotheses():
    rng = np.random.default_rng(21)
    reports = build([_cell(rng, effect=-0.1, n=3)])
    v = evaluate([hypothesis("A1"), hypothesis("B1")], reports)
    assert (v[0].effects[0].ci_low, v[0].effects[0].ci_high) == (v[1].effects[0].ci_low, v[1].effects[0].ci_high)


def test_hypothesis_without_prediction_is_reported_not_dropped():
    h = hypothesis("B1").model_copy(update={"prediction": None})
    v = evaluate([h], build([_cell(np.random.default_rng(0))]))[0]
    assert v.status is INCONCLUSIVE and v.flags == ["not decided by benchmarks"] and v.effects == []


def test_bad_inputs_raise_one_line_errors():
    reports = build([_cell(np.random.default_rng(0))])
    with pytest.raises(StatsError, match="unknown metric"):
        evaluate([hypothesis("A1", metric="ttft_median")], reports)
    with pytest.raises(StatsError, match="missing columns"):
        evaluate([hypothesis("A1")], SynthReports(pd.DataFrame({"x": [1]}), pd.DataFrame()))
    with pytest.raises(StatsError, match="duplicate ids"):
        evaluate([hypothesis("A1"), hypothesis("A1")], reports)
    with pytest.raises(StatsError, match="alpha"):
        evaluate([hypothesis("A1")], reports, alpha=0.9)


def test_blis_metric_names_are_accepted():
    rng = np.random.default_rng(22)
    v = evaluate([hypothesis("A1", metric="ttft_mean_ms")], build([_cell(rng, effect=-0.2)]))[0]
    assert v.status is CONFIRMED and v.effects[0].metric == "ttft_mean"


def test_unreported_failure_counts_are_flagged_not_assumed_zero():
    """load_results keeps unreported counts as pd.NA (nullable Int64); the guard must say it could not run."""
    rng = np.random.default_rng(23)
    r = build([_cell(rng, effect=-0.2)])
    req = r.requests.copy()
    for col in ("total", "failures", "incomplete"):
        req[col] = req[col].astype("Int64")
    req.loc[req["treatment"] == "evolved", ["failures", "incomplete"]] = pd.NA
    v = evaluate([hypothesis("A1")], SynthReports(r.table, req))[0]
    assert any("shedding guard not applied" in f for f in v.flags)
    # with counts reported as nullable integers the guard runs normally
    req2 = r.requests.copy()
    for col in ("total", "failures", "incomplete"):
        req2[col] = req2[col].astype("Int64")
    v2 = evaluate([hypothesis("A1")], SynthReports(r.table, req2))[0]
    assert v2.status is CONFIRMED and not any("shedding" in f for f in v2.flags)


def test_a_cell_decides_exactly_when_its_adjusted_p_is_within_alpha():
    """What gate 3 checks: p_adjusted <= alpha for every confirmed or refuted cell, and for no other."""
    rng = np.random.default_rng(32)
    hs = [
        hypothesis("A1", workloads=["chat", "code"]),
        hypothesis("A2", direction=Direction.INCREASE, workloads=["code"]),
        hypothesis("B1", direction=Direction.NO_WORSE, workloads=["rag"]),
        hypothesis("C1", direction=Direction.EQUIVALENT, workloads=["rag"]),
    ]
    seen = set()
    for _ in range(40):
        effects = rng.choice([-0.25, -0.08, 0.0, 0.08, 0.25], size=3)
        cells = [
            _cell(rng, workload=w, effect=float(x), cv=0.04, n=4)
            for w, x in zip(("chat", "code", "rag"), effects, strict=True)
        ]
        for v in evaluate(hs, build(cells)):
            for e in v.effects:
                seen.add(e.status)
                decides = e.p_adjusted <= 0.05 and not e.held_by  # within the floor, no p-value decides
                assert (e.status in (CONFIRMED, REFUTED)) == decides, (v.summary, e)
    assert seen == {CONFIRMED, REFUTED, INCONCLUSIVE}


def test_a_hypothesis_the_cluster_cannot_run_says_so_with_the_reason():
    why = "needs a run this cluster cannot do: stack.cluster.pod_deletion is false"
    h = hypothesis("B1").model_copy(update={"prediction": None, "not_in_plan": f"it {why}"})
    v = evaluate([h], build([_cell(np.random.default_rng(0))]))[0]
    assert v.status is INCONCLUSIVE and v.flags == ["not runnable on this cluster"] and v.effects == []
    assert why in v.summary


def test_an_equivalence_the_noise_cannot_decide_says_its_interval_reaches_beyond_the_margin():
    """Found by a new user: 'the evidence does not contradict the prediction' when the real reason was runs too
    noisy for the ±5% margin. Said from what decides (the interval against the margin), not from T_eff."""
    rng = np.random.default_rng(3)
    h = hypothesis("C1", direction=Direction.EQUIVALENT)
    v = evaluate([h], build([_cell(rng, cv=0.06, n=5)]))[0]
    assert v.status is INCONCLUSIVE
    assert "90% interval reaches beyond the ±5% margin" in v.summary, v.summary
    quiet = evaluate([h], build([_cell(np.random.default_rng(3), cv=0.01, n=8)]))[0]
    assert "reaches beyond" not in quiet.summary


# --------------------------------------------------------------------------
# One number per quantity: the prose, the table and the comparison agree
# --------------------------------------------------------------------------


def _one_cell_promotion(decision=None):
    """Seven one-cell hypotheses: A1 confirmed, guards on three workloads of which several stay undecided with
    different p-values (so Holm's adjusted p differs from a p scaled by alpha / level, the table's old number),
    each with its interval within the 5% margin."""
    rng = np.random.default_rng(12)
    workloads = ("code", "rag", "doc")
    cells = [_cell(rng, workload="chat", effect=-0.25, cv=0.02, n=7)]
    cells += [_cell(rng, workload=w, effect=0.0, cv=0.03, n=7) for w in workloads]
    hs = [hypothesis("A1", workloads=["chat"])]
    for i, w in enumerate(workloads):
        hs.append(hypothesis(f"C{2 * i + 1}", direction=Direction.EQUIVALENT, workloads=[w]))
        hs.append(hypothesis(f"C{2 * i + 2}", direction=Direction.NO_WORSE, workloads=[w]))
    return hs, evaluate(hs, build(cells), decision=decision)


def _sequential_rule():
    from bot.stats.design import DecisionRule, SequentialRule

    looks = {f"{w}@10": [4, 6, 7] for w in ("chat", "code", "rag", "doc")}
    return DecisionRule(sequential=SequentialRule(spending="pocock", looks=looks, decidable=["A1"]))


@pytest.mark.parametrize("sequential", [False, True])
def test_a_one_cell_hypothesis_has_one_adjusted_p_in_the_prose_and_the_table(sequential):
    """Found by a new user: C2's summary said adjusted p 0.19 and its table 0.197 (and C4 0.383 vs 0.41)."""
    from bot.stats.evidence import evidence_table
    from bot.stats.explain import p_text

    _, verdicts = _one_cell_promotion(_sequential_rule() if sequential else None)
    statuses = {v.hypothesis_id: v.status for v in verdicts}
    assert statuses["A1"] is CONFIRMED and list(statuses.values()).count(INCONCLUSIVE) >= 3, statuses
    for v in verdicts:
        (e,) = v.effects
        assert f"Adjusted p = {p_text(e.p_adjusted)} " in v.summary, (v.summary, e.p_adjusted)
        assert evidence_table(v).loc[0, "p (adj.)"] == p_text(e.p_adjusted)
        assert (e.status is CONFIRMED) == (e.p_adjusted <= 0.05)


@pytest.mark.parametrize("sequential", [False, True])
def test_the_p_and_level_a_reason_shows_are_the_ones_compared(sequential):
    """Found by a new user: 'p = 0.00157 ... not shown at level 0.0016': the p shown was the last look's own test,
    the decision compared the group-sequential repeated p, and the level was rounded to two digits."""
    import re

    from bot.stats.explain import p_text

    _, verdicts = _one_cell_promotion(_sequential_rule() if sequential else None)
    undecided = [(v, v.effects[0]) for v in verdicts if v.status is INCONCLUSIVE]
    assert undecided
    for v, e in undecided:
        m = re.search(r"\(p = (\S+) (<=|>) (\S+), the level after multiplicity control\)", e.reason)
        assert m, e.reason
        shown, sign, level = m.groups()
        assert shown == p_text(e.p_value) and sign == ">", (e.reason, e.p_value)
        assert f"p = {shown};" in v.summary  # the cell's numbers show the same p
        assert f"tested at level {level})" in v.summary  # ... and the summary the same level
        assert float(shown) > float(level)  # what is printed agrees with the comparison made


def test_an_undecided_guard_within_its_margin_is_held_back_by_the_level_not_the_noise_floor():
    """Found by a new user: C2 'noise floor (5.0%) is wider than the ±5% margin, so these runs can neither show the
    claim nor rule it out', while C3 with the same floor and margin was confirmed. The noise floor does not
    enter an equivalence or no-regression test; the level does, and the report's cause says so too."""
    from bot.render import claims

    hs, verdicts = _one_cell_promotion()
    by_h = {h.id: h for h in hs}
    undecided = [v for v in verdicts if v.status is INCONCLUSIVE]
    assert undecided
    for v in undecided:
        (e,) = v.effects
        assert e.ci_low > -0.05 and e.ci_high < 0.05, e  # the interval lies within the margin
        assert "noise floor (" not in v.summary and "wider than" not in v.summary
        assert "lies within the" in v.summary and "what holds it back is the level" in v.summary
        assert claims.cause(by_h[v.hypothesis_id], e) == "not significant after multiplicity control"
        # the same cell with a floor above its margin reads the same: the floor decides nothing here
        wide = e.model_copy(update={"t_eff": 0.08})
        assert claims.cause(by_h[v.hypothesis_id], wide) == "not significant after multiplicity control"


def test_a_cell_within_the_noise_floor_shows_its_true_adjusted_p_and_says_what_held_it():
    """Found by an llm-d reader (A3): 'p 0.00303, p (adj.) 1' and 'Adjusted p = 1 (weighted Holm ...)': Holm over a
    few hypotheses cannot make 0.003 into 1; the 1 stood in for 'within the noise floor'. The adjusted p shown is
    weighted Holm over the tests' own p-values, and the floor is said beside it (held_by in verdicts.json)."""
    from bot.model.evidence import HELD_NOISE_FLOOR
    from bot.stats.evidence import evidence_table
    from bot.stats.explain import p_text

    rng = np.random.default_rng(5)
    cells = [
        _cell(rng, rate=20, effect=-0.035, cv=0.01, n=7),  # significant, but inside the 5% floor
        _cell(rng, rate=35, effect=-0.20, cv=0.01, n=7),
        _cell(rng, workload="code", effect=0.0, cv=0.01, n=7),
    ]
    hs = [hypothesis("A3", workloads=["chat"]), hypothesis("C1", direction=Direction.EQUIVALENT, workloads=["code"])]
    v = _by_id(evaluate(hs, build(cells)))["A3"]
    floor, beyond = v.effects
    assert v.status is INCONCLUSIVE and "within the noise floor" in floor.reason
    assert floor.p_value < 0.01 and floor.held_by == HELD_NOISE_FLOOR and beyond.held_by == ""
    # two hypotheses, equal weights: Holm's adjusted p of A3 is at most twice its largest cell p, never 1
    assert floor.p_adjusted <= 2 * max(floor.p_value, beyond.p_value) < 0.05
    assert f"Adjusted p = {p_text(floor.p_adjusted)} " in v.summary
    assert "but it decides nothing: at chat @ 20 req/s the change is within the noise floor" in v.summary
    assert "Welch t on log values, one-sided; p = " in v.summary  # the p does not run into the test's name
    table = evidence_table(v)
    assert table.loc[0, "p (adj.)"] == f"{p_text(floor.p_adjusted)}, within the noise floor"
    assert table.loc[1, "p (adj.)"] == p_text(beyond.p_adjusted)


def test_runs_no_look_reached_are_named_with_why():
    """Reanalysis finding 5: an 8th evolved run where the looks stop at 7 was counted as used while every cell's flag
    said it was not. The runs no look reached are named (the ones past the horizon, and those past the other arm's
    count); a fixed design and a cell below its first look name none."""
    from bot.stats.design import DecisionRule, SequentialRule
    from bot.stats.judged import PAST_LAST_LOOK, runs_past_last_look

    rng = np.random.default_rng(30)
    chat = _cell(rng, workload="chat", n=7)
    chat["evolved"] = np.append(chat["evolved"], chat["evolved"][-1])  # an 8th evolved run
    code = _cell(rng, workload="code", n=8)
    code["baseline"] = code["baseline"][:5]  # 5 baseline runs: the looks reach 4
    doc = _cell(rng, workload="doc", n=3)  # below its first look: its verdict says why nothing was judged
    looks = {f"{w}@10": [4, 6, 7] for w in ("chat", "code", "doc")}
    rule = DecisionRule(sequential=SequentialRule(spending="pocock", looks=looks, decidable=["A1"]))
    past = runs_past_last_look(build([chat, code, doc]), rule)
    assert sorted(past) == [
        ("baseline", "code", 10.0, "4"),
        ("evolved", "chat", 10.0, "7"),
        *(("evolved", "code", 10.0, str(r)) for r in range(4, 8)),
    ]
    assert past[("evolved", "chat", 10.0, "7")].startswith(
        f"{PAST_LAST_LOOK} (chat @ 10 req/s): the plan's looks end at 7 runs per arm, so its looks use the first 7"
    )
    # A run left out for the other arm's missing runs names them (found by a statistician: a valid baseline run was
    # listed as failing validation, and the evolved run actually missing was named nowhere).
    assert past[("evolved", "code", 10.0, "5")].startswith(
        f"{PAST_LAST_LOOK} (code @ 10 req/s): the baseline arm has 5 run(s) here (baseline rep-5, rep-6 missing); "
        "the next look needs 6 runs per arm; the plan's looks end at 7 runs per arm, so its looks use the first 4 "
        "runs per arm (looks at [4, 6, 7]) and no verdict uses this run; it is valid"
    )
    assert runs_past_last_look(build([chat, code, doc]), None) == {}
    assert runs_past_last_look(build([chat]), DecisionRule()) == {}


def test_an_equivalence_measured_beyond_its_margin_says_more_runs_would_more_likely_refute_it():
    """Found end to end (s01 B3, -6.4% against ±5%, interval -9.2% to -3.5%): the verdict said "these runs are too
    few or too noisy to show the claim ...; more runs or a quieter cluster would". Its measured change is already
    beyond the margin, so more runs would more likely refute it than show it."""
    h = hypothesis("B3", direction=Direction.EQUIVALENT)
    for seed in range(200):
        v = evaluate([h], build([_cell(np.random.default_rng(seed), effect=-0.065, cv=0.03, n=5)]))[0]
        [e] = v.effects
        if v.status is INCONCLUSIVE and e.rel_change < -0.05 < e.ci_high:
            break
    else:
        pytest.fail("no seed gave a cell measured beyond the margin with an interval reaching inside")
    assert "measured change already lies beyond the ±5% margin" in v.summary, v.summary
    assert "more likely as a refutation" in v.summary and "more runs or a quieter cluster would" not in v.summary
