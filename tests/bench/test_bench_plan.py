"""The benchmark plan: shared baselines, power-driven repetitions, cost vs the naive plan, rendered files."""

from __future__ import annotations

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.bench.evaluation_spec import EvaluationSpecError, evaluation_spec, load_evaluation_spec
from bot.bench.experiment import _set_dotted, render_experiment, run_treatment_name
from bot.bench.plan import (
    BASELINE_CONFIG_FILE,
    DEFAULT_CV,
    EVOLVED_CONFIG_FILE,
    MAX_REPETITIONS,
    Cell,
    PlanError,
    make_plan,
    plan_repetitions,
)
from bot.model import (
    VVUQ,
    Direction,
    Family,
    Hypothesis,
    HypothesisType,
    Prediction,
    PromotionRequest,
    RequestError,
    Track,
)
from bot.stats.power import noise_floor, power_at, power_margin, repetitions_for_margin
from tests.bench.bench_helpers import make_doc

EPP_BASELINE = """apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
"""
EPP_EVOLVED = EPP_BASELINE.replace("queue-scorer", "evolved-adaptive-scorer")


def _request(**extra) -> PromotionRequest:
    """Shaped like examples/weighted-adaptive: 3 claims, 5 inference-perf workloads, 2 baseline scenarios."""
    raw = {
        "id": "7",
        "title": "Evolved adaptive scorer",
        "kind": "routing",
        "source": "best_program.py",
        "plugin_name": "evolved-adaptive-scorer",
        "origin": {"run": "r", "iteration": 1, "fitness": 1.0},
        "claims": [
            {"id": f"c{i}", "statement": "s", "metric": m, "direction": "decrease", "magnitude": -0.2, "workload": w}
            for i, (m, w) in enumerate(
                [("e2e_p95_ms", "load-spikes"), ("ttft_mean_ms", "multiturn"), ("e2e_mean_ms", "cache-warmup")]
            )
        ],
        "workloads": [
            {
                "name": "cache-warmup",
                "profile": "shared_prefix_synthetic",
                "rates": [20, 35],
                "overrides": {"data.shared_prefix.num_groups": 3},
            },
            {
                "name": "load-spikes",
                "profile": "shared_prefix_synthetic",
                "rates": [30, 45],
                "overrides": {"load.type": "poisson"},
            },
            {
                "name": "multiturn",
                "profile": "shared_prefix_synthetic",
                "rates": [15, 30],
                "overrides": {"data.shared_prefix.enable_multi_turn_chat": True},
            },
            {"name": "optimized-baseline", "profile": "guide_optimized-baseline_1", "rates": [10]},
            {"name": "sanity-random", "profile": "sanity_random", "rates": [10], "duration_s": 60},
        ],
        "evolved_for": "load-spikes",
        "baselines": [
            {"name": "optimized-baseline", "workload": "optimized-baseline", "rate": 10},
            {"name": "sanity-random", "workload": "sanity-random", "rate": 10},
        ],
        "fork": {"repo": "example-org/llm-d-router"},
    }
    raw.update(extra)
    return PromotionRequest.model_validate(raw)


def _h(
    hid: str, workloads: list[str], metric: str | None, direction: str = "decrease", rates=(), margin=0.05
) -> Hypothesis:
    track = Track(hid[0])
    return Hypothesis(
        id=hid,
        track=track,
        title=f"hypothesis {hid}",
        statement="the evolved scorer does something",
        family=Family.CROSS_POLICY,
        vvuq=VVUQ.VALIDATION,
        type=HypothesisType.EQUIVALENCE if direction in ("equivalent", "no-worse") else HypothesisType.DOMINANCE,
        diagnostic="If this fails, it would indicate something.",
        workloads=workloads,
        rates=list(rates),
        prediction=None if metric is None else Prediction(metric=metric, direction=Direction(direction), margin=margin),
        source="test",
    )


def _example_hypotheses() -> list[Hypothesis]:
    """Track A per claim, Track B per gap on the evolved-for workload, Track C per scenario × guarded metric."""
    hs = [
        _h("A1", ["load-spikes"], "e2e_p95"),
        _h("A2", ["multiturn"], "ttft_mean"),
        _h("A3", ["cache-warmup"], "e2e_mean"),
        _h("B1", ["load-spikes"], "e2e_p95", "no-worse", rates=[45]),
        _h("B2", ["load-spikes"], None),
        _h("B3", ["cache-warmup", "load-spikes", "multiturn"], "ttft_mean", "no-worse"),
        _h("B4", ["load-spikes"], "e2e_p95", "no-worse"),
    ]
    n = 1
    for scenario in ("optimized-baseline", "sanity-random"):
        hs.append(_h(f"C{n}", [scenario], "ttft_mean", "equivalent", rates=[10]))
        n += 1
        for m in ("ttft_mean", "e2e_p95", "throughput"):
            hs.append(_h(f"C{n}", [scenario], m, "no-worse", rates=[10]))
            n += 1
    return hs


# --------------------------------------------------------------------------
# Cells and sharing
# --------------------------------------------------------------------------


def test_one_shared_baseline_per_cell():
    req = _request()
    one = make_plan(req, [_h("A1", ["load-spikes"], "e2e_p95", rates=[30])])
    two = make_plan(
        req, [_h("A1", ["load-spikes"], "e2e_p95", rates=[30]), _h("A2", ["load-spikes"], "ttft_mean", rates=[30])]
    )
    assert two.cells == one.cells == [Cell(workload="load-spikes", rate=30.0)]
    assert two.repetitions == one.repetitions
    assert two.cost == one.cost  # the second hypothesis reads the same runs
    assert two.cost.runs == 1 * 2 * two.repetitions and two.cost.standups == 2
    # The naive plan pays for the second hypothesis in full.
    assert two.naive_cost.runs == 2 * one.naive_cost.runs
    assert two.naive_cost.standups == 2 * one.naive_cost.standups == 4


def test_cells_follow_hypothesis_rates():
    req = _request()
    plan = make_plan(req, _example_hypotheses())
    cells = {h.id: [c.label() for c in h.cells] for h in plan.hypotheses}
    assert cells["A1"] == ["load-spikes@30", "load-spikes@45"]  # no rates: every rate of the workload
    assert cells["B1"] == ["load-spikes@45"]
    assert cells["C1"] == ["optimized-baseline@10"]
    assert [c.label() for c in plan.cells] == [
        "cache-warmup@20",
        "cache-warmup@35",
        "load-spikes@30",
        "load-spikes@45",
        "multiturn@15",
        "multiturn@30",
        "optimized-baseline@10",
        "sanity-random@10",
    ]
    assert plan.not_benchmarked == ["B2"]
    assert [h.id for h in plan.hypotheses][:4] == ["A1", "A2", "A3", "B1"]


def test_metrics_are_resolved_and_checked():
    req = _request()
    plan = make_plan(req, [_h("A1", ["load-spikes"], "e2e_p95_ms")])  # a BLIS name
    assert (plan.hypotheses[0].metric, plan.hypotheses[0].statistic, plan.hypotheses[0].better) == (
        "e2e_p95",
        "p95",
        "lower",
    )
    with pytest.raises(PlanError, match="hypothesis A1: unknown metric 'latency'"):
        make_plan(req, [_h("A1", ["load-spikes"], "latency")])


def test_bad_inputs_are_request_errors():
    req = _request()
    with pytest.raises(PlanError, match=r"hypothesis A1: workload 'nope' is not one of the request's workloads"):
        make_plan(req, [_h("A1", ["nope"], "ttft_mean")])
    with pytest.raises(PlanError, match="no hypothesis has a benchmark prediction"):
        make_plan(req, [_h("B1", ["load-spikes"], None)])
    with pytest.raises(PlanError, match="duplicate ids"):
        make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean"), _h("A1", ["multiturn"], "ttft_mean")])
    with pytest.raises(PlanError, match="prior_cv=1.5"):
        make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean")], prior_cv=1.5)
    with pytest.raises(PlanError, match="gpus_per_stack"):
        make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean")], gpus_per_stack=0)
    with pytest.raises(PlanError, match="at least 2 per arm"):
        make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean")], repetitions=1)
    assert issubclass(PlanError, RequestError)


# --------------------------------------------------------------------------
# Repetitions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("cv", [0.01, DEFAULT_CV, 0.12])
def test_repetitions_come_from_the_power_calculation(cv):
    req = _request()
    plan = make_plan(req, [_h("A1", ["load-spikes"], "e2e_p95")], prior_cv=cv)
    n, t_eff = plan.repetitions, noise_floor(cv)
    assert plan.cv == cv and plan.t_eff == t_eff == max(0.05, 2 * cv)
    # >= 80% power for the test at the noise floor, and for the full verdict rule at 2 x T_eff ...
    assert power_at(cv, -t_eff, n, rule="test") >= 0.8
    assert power_at(cv, -2 * t_eff, n) >= 0.8
    # ... and no smaller n would do.
    if n > 2:
        assert power_at(cv, -t_eff, n - 1, rule="test") < 0.8 or power_at(cv, -2 * t_eff, n - 1) < 0.8


def test_an_increase_claim_is_sized_too():
    decrease_only = plan_repetitions(0.05, [Direction.DECREASE], alpha=0.05, power=0.8)
    both = plan_repetitions(0.05, [Direction.DECREASE, Direction.INCREASE], alpha=0.05, power=0.8)
    assert both >= decrease_only
    assert power_at(0.05, noise_floor(0.05), both, rule="test") >= 0.8


def test_quieter_cluster_needs_fewer_repetitions():
    req = _request()
    hs = [_h("A1", ["load-spikes"], "e2e_p95")]
    assert make_plan(req, hs, prior_cv=0.01).repetitions < make_plan(req, hs, prior_cv=0.05).repetitions


def test_cv_from_prior_results(results_factory):
    root, write = results_factory
    for rep, ttft in enumerate((90.0, 100.0, 110.0), start=1):  # CV = 10 / 100
        write("baseline", "load-spikes", 30, rep, make_doc(ttft_ms=ttft, e2e_ms=1000.0, rate=30))
        write("evolved", "load-spikes", 30, rep, make_doc(ttft_ms=ttft * 3, e2e_ms=1000.0, rate=30))  # not used
    req = _request()
    plan = make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean")], prior_results=root)
    assert plan.cv == pytest.approx(0.10)
    assert plan.t_eff == pytest.approx(0.20)
    assert "max baseline CV" in plan.cv_source
    # Only predicted metrics count: e2e is constant, so a plan on e2e sees CV 0 ... which is floored by T_eff.
    flat = make_plan(req, [_h("A1", ["load-spikes"], "e2e_mean")], prior_results=root)
    assert flat.cv == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(PlanError, match="either prior_cv or prior_results"):
        make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean")], prior_results=root, prior_cv=0.05)


def test_single_repetition_priors_are_refused(results_factory):
    root, write = results_factory
    write("baseline", "load-spikes", 30, 1, make_doc(rate=30))
    with pytest.raises(PlanError, match="no baseline cell with 2 or more repetitions"):
        make_plan(_request(), [_h("A1", ["load-spikes"], "ttft_mean")], prior_results=root)


def test_noisy_cluster_is_flagged():
    plan = make_plan(_request(), [_h("A1", ["load-spikes"], "ttft_mean")], prior_cv=0.2)
    assert any("above the 15% halt threshold" in n for n in plan.notes)


# --------------------------------------------------------------------------
# Per-cell repetitions
# --------------------------------------------------------------------------


def _claim(plan, hid, label):
    return next(c for c in plan.claims if c.hypothesis == hid and c.cell.label() == label)


def test_an_equivalence_cell_gets_more_repetitions_than_a_directional_cell():
    req = _request()
    hs = [
        _h("A1", ["load-spikes"], "e2e_p95", rates=[30]),
        _h("C1", ["sanity-random"], "ttft_mean", "equivalent", rates=[10]),
    ]
    plan = make_plan(req, hs, max_ratio=None)
    reps = {c.label(): n for c, n in plan.repetitions_by_cell.items()}
    assert reps["load-spikes@30"] == plan_repetitions(DEFAULT_CV, [Direction.DECREASE], alpha=0.05, power=0.8)
    # Track C holds one (hypothesis, cell) pair: Holm's first step is alpha / 1.
    assert reps["sanity-random@10"] == repetitions_for_margin(DEFAULT_CV, 0.05, alpha=0.05, kind="equivalent")
    assert reps["sanity-random@10"] > reps["load-spikes@30"]
    assert plan.repetitions == max(reps.values())
    assert power_margin(DEFAULT_CV, 0.05, reps["sanity-random@10"], 0.05) >= 0.8
    assert [c.sized_by for c in plan.cell_repetitions] == [["A1"], ["C1"]]


def test_a_shared_cell_gets_the_largest_need():
    req = _request()
    directional = _h("A1", ["sanity-random"], "e2e_p95", rates=[10])
    equivalent = _h("C1", ["sanity-random"], "ttft_mean", "equivalent", rates=[10])
    both = make_plan(req, [directional, equivalent], max_ratio=None)
    alone = [make_plan(req, [h], max_ratio=None).repetitions for h in (directional, equivalent)]
    assert both.cells == [Cell(workload="sanity-random", rate=10.0)]
    assert both.repetitions == max(alone) == alone[1] > alone[0]
    assert _claim(both, "A1", "sanity-random@10").need == alone[0]
    assert _claim(both, "C1", "sanity-random@10").need == alone[1]


def test_margin_claims_are_sized_at_holms_first_step():
    req = _request()
    hs = [_h(f"C{i}", ["sanity-random"], m, "no-worse", rates=[10]) for i, m in enumerate(("ttft_mean", "e2e_p95"), 1)]
    hs.append(_h("C3", ["optimized-baseline"], "ttft_mean", "equivalent", rates=[10]))
    plan = make_plan(req, hs, prior_cv=0.03, max_ratio=None)
    for cl in plan.claims:
        assert cl.alpha == pytest.approx(0.05 / 3)
    c1 = _claim(plan, "C1", "sanity-random@10")
    assert c1.need == repetitions_for_margin(0.03, 0.05, alpha=0.05 / 3, kind="no-worse")
    assert c1.need > repetitions_for_margin(0.03, 0.05, alpha=0.05, kind="no-worse")


def test_no_worse_is_easy_where_a_directional_claim_predicts_an_improvement():
    req = _request()
    guard = _h("B1", ["load-spikes"], "e2e_p95", "no-worse", rates=[30])
    alone = make_plan(req, [guard], max_ratio=None)
    with_claim = make_plan(req, [_h("A1", ["load-spikes"], "e2e_p95", rates=[30]), guard], max_ratio=None)
    assert _claim(alone, "B1", "load-spikes@30").true_effect == 0.0
    eased = _claim(with_claim, "B1", "load-spikes@30")
    assert eased.true_effect == pytest.approx(-noise_floor(DEFAULT_CV))
    assert eased.need < _claim(alone, "B1", "load-spikes@30").need
    # A directional claim on another metric, or one predicting a regression, does not ease it.
    other = make_plan(req, [_h("A1", ["load-spikes"], "ttft_mean", rates=[30]), guard], max_ratio=None)
    worse = make_plan(req, [_h("A1", ["load-spikes"], "e2e_p95", "increase", rates=[30]), guard], max_ratio=None)
    assert _claim(other, "B1", "load-spikes@30").true_effect == 0.0
    assert _claim(worse, "B1", "load-spikes@30").true_effect == 0.0
    # Higher-is-better: an increase is the improvement, and the bad side is a decrease.
    thr = make_plan(
        req,
        [
            _h("A1", ["load-spikes"], "throughput", "increase", rates=[30]),
            _h("B1", ["load-spikes"], "throughput", "no-worse", rates=[30]),
        ],
        max_ratio=None,
    )
    t_eff = noise_floor(DEFAULT_CV)
    assert _claim(thr, "B1", "load-spikes@30").true_effect == pytest.approx(1 / (1 + t_eff) - 1)


def test_unreachable_power_is_capped_and_said():
    req = _request()
    plan = make_plan(
        req, [_h("C1", ["sanity-random"], "ttft_mean", "equivalent", rates=[10])], prior_cv=0.12, max_ratio=None
    )
    cl = _claim(plan, "C1", "sanity-random@10")
    assert plan.repetitions == cl.need == MAX_REPETITIONS and not cl.reachable
    assert cl.power == pytest.approx(power_margin(0.12, 0.05, MAX_REPETITIONS, 0.05), abs=1e-4) and cl.power < 0.8
    assert any(n.startswith(f"C1 (equivalent, alpha 0.05) needs more than {MAX_REPETITIONS}") for n in plan.notes)


def test_the_budget_gives_up_only_unreachable_claims_track_c_last():
    req = _request()
    hs = _example_hypotheses()
    full = make_plan(req, hs, max_ratio=None)
    plan = make_plan(req, hs)
    assert plan.ratio <= 0.5 < full.ratio
    given_up = [cl for cl in plan.claims if not cl.sized]
    assert given_up and all(not cl.reachable and cl.kind != "directional" for cl in given_up)
    assert {cl.track for cl in given_up} == {"B"}  # dropping B's unreachable claims was enough
    assert any("exceed the GPU budget" in n and "B3" in n for n in plan.notes)
    reps = plan.repetitions_by_cell
    for c in plan.cells:  # every cell: the largest need of the claims still sizing it (or the directional floor)
        needs = [cl.need for cl in plan.claims if cl.cell == c and cl.sized]
        assert reps[c] >= max(needs, default=2)
        assert reps[c] == max(needs) or not any(cl.cell == c and cl.kind == "directional" for cl in plan.claims)
    # Track C cells keep their (capped) sizing.
    assert (
        reps[Cell(workload="optimized-baseline", rate=10.0)]
        == full.repetitions_by_cell[Cell(workload="optimized-baseline", rate=10.0)]
    )
    with pytest.raises(PlanError, match="max_ratio"):
        make_plan(req, hs, max_ratio=0)


# --------------------------------------------------------------------------
# Cost
# --------------------------------------------------------------------------


def test_cost_sums_per_cell():
    req = _request()
    hs = [_h("A1", ["load-spikes"], "e2e_p95"), _h("C1", ["sanity-random"], "ttft_mean", "equivalent", rates=[10])]
    plan = make_plan(req, hs, gpus_per_stack=8, standup_minutes=40, run_overhead_minutes=2, max_ratio=None)
    reps = plan.repetitions_by_cell
    ls30, ls45, sr = (
        Cell(workload="load-spikes", rate=30.0),
        Cell(workload="load-spikes", rate=45.0),
        Cell(workload="sanity-random", rate=10.0),
    )
    assert reps[ls30] == reps[ls45] < reps[sr]
    runs = 2 * (reps[ls30] + reps[ls45] + reps[sr])
    run_minutes = 2 * ((2 + 2) * (reps[ls30] + reps[ls45]) + (1 + 2) * reps[sr])  # 120 s and 60 s loads
    assert plan.cost.runs == runs
    assert plan.cost.gpu_minutes == pytest.approx(2 * 40 * 8 + run_minutes * 8)
    assert (
        plan.cost.gpu_minutes
        < make_plan(
            req, hs, gpus_per_stack=8, standup_minutes=40, run_overhead_minutes=2, repetitions=plan.repetitions
        ).cost.gpu_minutes
    )


def test_cost_formula():
    req = _request()
    hs = [_h("A1", ["load-spikes"], "e2e_p95"), _h("C1", ["sanity-random"], "ttft_mean", "no-worse", rates=[10])]
    plan = make_plan(req, hs, gpus_per_stack=8, standup_minutes=40, run_overhead_minutes=2, repetitions=5)
    # cells: load-spikes@30, @45 (120 s runs), sanity-random@10 (60 s runs)
    runs = 3 * 2 * 5
    run_minutes = (2 * (2 + 2) + (1 + 2)) * 2 * 5
    assert plan.cost.runs == runs and plan.cost.standups == 2
    assert plan.cost.gpu_minutes == pytest.approx(2 * 40 * 8 + run_minutes * 8)
    # naive: A1 = 2 cells x 2 treatments x 3 reps, C1 = 1 cell; 2 stand-ups each
    assert plan.naive_cost.runs == (2 + 1) * 2 * 3 and plan.naive_cost.standups == 4
    naive_minutes = 4 * 40 * 8 + ((2 * (2 + 2)) + (1 + 2)) * 2 * 3 * 8
    assert plan.naive_cost.gpu_minutes == pytest.approx(naive_minutes)
    assert plan.ratio == pytest.approx(plan.cost.gpu_minutes / naive_minutes)


def test_cost_ratio_on_an_example_shaped_request():
    plan = make_plan(_request(), _example_hypotheses())
    assert plan.cost.standups == 2
    assert plan.naive_cost.standups == 2 * len(plan.hypotheses)
    assert plan.ratio <= 0.5, plan


def test_cost_ratio_on_the_bundled_example():
    """The acceptance line: the bundled example with the hypotheses stage 3 generates for it."""
    from bot.dictionary import load_dictionary
    from bot.hypotheses import generate_hypotheses
    from bot.model import TranslationSummary

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
    hs = generate_hypotheses(req, summary, d)
    plan = make_plan(req, hs)
    assert plan.ratio <= 0.5
    assert plan.cost.standups == 2
    reps = {c.label(): n for c, n in plan.repetitions_by_cell.items()}
    # The Track C scenarios (equivalence / no-worse only) get more runs than the directional-only cells.
    assert min(reps["optimized-baseline@10"], reps["sanity-random@10"]) > max(
        reps["cache-warmup@20"], reps["cache-warmup@35"]
    )
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    assert f"benchmarks/promotion/{req.slug}/experiment.yaml" in files


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def _dotted_to_nested(flat: dict) -> dict:
    """llm-d-benchmark's experiment parser rule (llmdbenchmark/experiment/parser.py), raising on conflicts."""
    nested: dict = {}
    for key, value in flat.items():
        parts = key.split(".")
        target = nested
        for part in parts[:-1]:
            assert not (part in target and not isinstance(target[part], dict)), key
            target = target.setdefault(part, {})
        assert not isinstance(target.get(parts[-1]), dict), key
        target[parts[-1]] = value
    return nested


def test_experiment_has_the_llmdbenchmark_shape():
    req = _request()
    plan = make_plan(req, _example_hypotheses())
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    root = "benchmarks/promotion/evolved-adaptive-scorer"
    assert sorted(files) == sorted(
        [f"{root}/experiment.yaml", f"{root}/evaluation.yaml", f"{root}/README.md", f"{root}/request.json"]
        + [
            f"{root}/workloads/{w}.yaml"
            for w in ("cache-warmup", "load-spikes", "multiturn", "optimized-baseline", "sanity-random")
        ]
    )
    exp = yaml.safe_load(files[f"{root}/experiment.yaml"])
    assert exp["experiment"] == {
        "name": "promotion-7-evolved-adaptive-scorer",
        "harness": "inference-perf",
        "profile": "cache-warmup.yaml",
    }
    reps = plan.repetitions_by_cell
    assert "design" in exp and exp["design"]["total_matrix"] == 2 * sum(reps.values())
    assert exp["design"]["run"]["replicates"] == {c.label(): reps[c] for c in plan.cells}
    assert len(set(reps.values())) > 1  # the example shape sizes cells differently
    assert exp["reset_caches"] is True

    setup = exp["setup"]
    assert [t["name"] for t in setup["treatments"]] == ["baseline", "evolved"]
    configs = []
    for t in setup["treatments"]:
        merged = dict(setup["constants"])
        merged.update({k: v for k, v in t.items() if k != "name"})
        epp = _dotted_to_nested(merged)["router"]["epp"]
        assert epp["image"] == {
            "registry": "ghcr.io",
            "repository": "example-org/llm-d-router",
            "tag": "promotion-7-evolved-adaptive-scorer",
        }
        assert epp["flags"] == {"allow-experimental-plugins": True}
        assert epp["pluginsCustomConfig"] == {BASELINE_CONFIG_FILE: EPP_BASELINE, EVOLVED_CONFIG_FILE: EPP_EVOLVED}
        configs.append(epp["pluginsConfigFile"])
    assert configs == [BASELINE_CONFIG_FILE, EVOLVED_CONFIG_FILE]

    runs = exp["treatments"]
    assert len(runs) == sum(reps.values())
    assert len({r["name"] for r in runs}) == len(runs)
    for c in plan.cells:  # each cell gets exactly its own rep-1 .. rep-n run treatments
        names = [r["name"] for r in runs if r["profile"] == f"{c.workload}.yaml" and r["load.stages.0.rate"] == c.rate]
        assert names == [run_treatment_name(c, n) for n in range(1, reps[c] + 1)]
    assert runs[0] == {"name": "cache-warmup-rate-20-rep-1", "profile": "cache-warmup.yaml", "load.stages.0.rate": 20.0}
    assert runs[len(plan.cells)]["name"].endswith("rep-2")  # repetition-major order
    for r in runs:
        assert set(r) == {"name", "profile", "load.stages.0.rate"}
        profile = yaml.safe_load(files[f"{root}/workloads/{r['profile']}"])
        _set_dotted(profile, "load.stages.0.rate", r["load.stages.0.rate"], "test")  # the path exists


def test_workload_profiles_are_inference_perf():
    req = _request()
    files = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)
    root = "benchmarks/promotion/evolved-adaptive-scorer/workloads"
    for name, text in files.items():
        if not name.startswith(root):
            continue
        p = yaml.safe_load(text)
        assert set(p) == {"load", "api", "server", "tokenizer", "data", "report", "storage"}
        assert len(p["load"]["stages"]) == 1 and p["load"]["stages"][0]["duration"] > 0
        assert p["server"]["model_name"] == "REPLACE_ENV_LLMDBENCH_DEPLOY_CURRENT_MODEL"
        assert p["server"]["base_url"] == "REPLACE_ENV_LLMDBENCH_HARNESS_STACK_ENDPOINT_URL"
        assert p["report"]["request_lifecycle"] == {"summary": True, "per_stage": True, "per_request": True}
    cw = yaml.safe_load(files[f"{root}/cache-warmup.yaml"])
    assert cw["data"]["type"] == "shared_prefix" and cw["data"]["shared_prefix"]["num_groups"] == 3
    assert yaml.safe_load(files[f"{root}/load-spikes.yaml"])["load"]["type"] == "poisson"
    assert yaml.safe_load(files[f"{root}/multiturn.yaml"])["data"]["shared_prefix"]["enable_multi_turn_chat"] is True
    assert yaml.safe_load(files[f"{root}/sanity-random.yaml"])["data"]["type"] == "random"
    assert yaml.safe_load(files[f"{root}/sanity-random.yaml"])["load"]["stages"][0]["duration"] == 60


def test_rendering_is_deterministic():
    req = _request()
    a = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)
    b = render_experiment(make_plan(req, list(reversed(_example_hypotheses()))), req, EPP_BASELINE, EPP_EVOLVED)
    assert a == b


def test_render_refuses_what_it_cannot_run():
    req = _request()
    plan = make_plan(req, _example_hypotheses())
    with pytest.raises(PlanError, match="epp_config_evolved: expected an EndpointPickerConfig"):
        render_experiment(plan, req, EPP_BASELINE, "kind: Deployment\n")
    with pytest.raises(PlanError, match="epp_config_baseline: not valid YAML"):
        render_experiment(plan, req, "a: [", EPP_EVOLVED)
    with pytest.raises(PlanError, match="evolved_image"):
        render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED, evolved_image="no-tag")
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED, evolved_image="quay.io/me/epp:v1")
    consts = yaml.safe_load(files["benchmarks/promotion/evolved-adaptive-scorer/experiment.yaml"])["setup"]["constants"]
    assert (
        consts["router.epp.image.registry"],
        consts["router.epp.image.repository"],
        consts["router.epp.image.tag"],
    ) == ("quay.io", "me/epp", "v1")

    guide = _request(
        workloads=[{"name": "w", "profile": "sharegpt", "rates": [1], "harness": "guidellm"}],
        claims=[],
        baselines=[],
        evolved_for=None,
    )
    gplan = make_plan(guide, [_h("A1", ["w"], "ttft_mean")])
    with pytest.raises(PlanError, match="inference-perf profiles only"):
        render_experiment(gplan, guide, EPP_BASELINE, EPP_EVOLVED)

    odd = _request(
        workloads=[{"name": "w", "profile": "my_profile", "rates": [1]}], claims=[], baselines=[], evolved_for=None
    )
    oplan = make_plan(odd, [_h("A1", ["w"], "ttft_mean")])
    with pytest.raises(PlanError, match="profile 'my_profile' is not one the planner knows"):
        render_experiment(oplan, odd, EPP_BASELINE, EPP_EVOLVED)
    ok = _request(
        workloads=[
            {
                "name": "w",
                "profile": "my_profile",
                "rates": [1],
                "overrides": {"data.type": "random", "load.stages.0.duration": 30},
            }
        ],
        claims=[],
        baselines=[],
        evolved_for=None,
    )
    text = render_experiment(make_plan(ok, [_h("A1", ["w"], "ttft_mean")]), ok, EPP_BASELINE, EPP_EVOLVED)[
        "benchmarks/promotion/evolved-adaptive-scorer/workloads/w.yaml"
    ]
    assert yaml.safe_load(text)["load"]["stages"] == [{"rate": 1.0, "duration": 30}]
    bad = _request(
        workloads=[{"name": "w", "profile": "sanity_random", "rates": [1], "overrides": {"load.stages.3.rate": 2}}],
        claims=[],
        baselines=[],
        evolved_for=None,
    )
    with pytest.raises(PlanError, match="'3' is not an index of a 1-element list"):
        render_experiment(make_plan(bad, [_h("A1", ["w"], "ttft_mean")]), bad, EPP_BASELINE, EPP_EVOLVED)


# --------------------------------------------------------------------------
# Evaluation spec
# --------------------------------------------------------------------------


def test_evaluation_spec_round_trip():
    req = _request()
    plan = make_plan(req, _example_hypotheses())
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    spec = load_evaluation_spec(files["benchmarks/promotion/evolved-adaptive-scorer/evaluation.yaml"])
    assert spec == evaluation_spec(plan, req, {"baseline": EPP_BASELINE, "evolved": EPP_EVOLVED})
    assert spec.stack == req.stack and set(spec.arms) == {"baseline", "evolved"}
    assert spec.treatments == ["baseline", "evolved"]
    assert spec.repetitions == plan.repetitions and spec.cells == plan.cells
    assert spec.repetitions_by_cell == {c.label(): n for c, n in plan.repetitions_by_cell.items()}
    assert (
        spec.noise_floor.min_effect == 0.05 and spec.noise_floor.cv_multiplier == 2 and spec.noise_floor.halt_cv == 0.15
    )
    assert spec.evolved_for == "load-spikes"
    assert list(spec.hypotheses) == [h.id for h in plan.hypotheses]
    a1 = spec.hypotheses["A1"]
    assert (a1.metric, a1.direction, a1.margin, a1.better) == ("e2e_p95", Direction.DECREASE, 0.05, "lower")
    assert spec.results_layout.startswith("RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/")
    assert run_treatment_name(plan.cells[0], 2) == spec.run_treatment_pattern.format(
        workload=plan.cells[0].workload, rate=plan.cells[0].rate, n=2
    )


def test_evaluation_spec_errors():
    req = _request()
    text = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)[
        "benchmarks/promotion/evolved-adaptive-scorer/evaluation.yaml"
    ]
    with pytest.raises(EvaluationSpecError, match="not valid YAML at line"):
        load_evaluation_spec("a: [\n")
    with pytest.raises(EvaluationSpecError, match="expected a mapping"):
        load_evaluation_spec("- 1\n")
    with pytest.raises(EvaluationSpecError, match=r"field 'extra': unknown field"):
        load_evaluation_spec(text + "extra: 1\n")
    doc = yaml.safe_load(text)
    doc["hypotheses"]["A1"]["cells"].append({"workload": "load-spikes", "rate": 99.0})
    with pytest.raises(EvaluationSpecError, match=r"hypothesis A1 uses cells \['load-spikes@99'\]"):
        load_evaluation_spec(yaml.safe_dump(doc))
    doc = yaml.safe_load(text)
    doc["repetitions"] = 1
    with pytest.raises(EvaluationSpecError, match="field 'repetitions'"):
        load_evaluation_spec(yaml.safe_dump(doc))
    doc = yaml.safe_load(text)
    doc["repetitions_by_cell"]["nope@1"] = 3
    with pytest.raises(EvaluationSpecError, match=r"repetitions_by_cell names cells \['nope@1'\]"):
        load_evaluation_spec(yaml.safe_dump(doc))
    doc = yaml.safe_load(text)
    doc["repetitions_by_cell"]["sanity-random@10"] = doc["repetitions"] + 1
    with pytest.raises(EvaluationSpecError, match=r"repetitions_by_cell\['sanity-random@10'\]"):
        load_evaluation_spec(yaml.safe_dump(doc))
    doc = yaml.safe_load(text)  # a spec without per-cell counts (written before they existed) still loads
    del doc["repetitions_by_cell"]
    assert load_evaluation_spec(yaml.safe_dump(doc)).repetitions_by_cell == {}
