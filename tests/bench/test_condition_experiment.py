"""Track B fault treatments in the committed plan: each condition an experiment of its own that records it.

Consistency finding 2: the experiment the PR tells users to run named `load-spikes+metric-staleness-...` run
treatments under the plain `baseline`/`evolved` setup treatments, with no refresh-interval flag anywhere, so a run
by hand measured the plain load (and stage 5 then left it out as "condition not recorded"). The experiments are read
with llm-d-benchmark's own parser (from the snapshot), and their results paths with the bot's evidence rules.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.bench.conditions import STALE_METRICS_INTERVAL, condition_reason
from bot.bench.experiment import render_experiment
from bot.bench.layout import parse_layout, parse_run_treatment, split_condition
from bot.bench.plan import make_plan
from tests.bench.test_bench_plan import EPP_BASELINE, EPP_EVOLVED, _example_hypotheses, _h, _request
from tests.bench.test_priority_plan import _upstream

ROOT = "benchmarks/promotion/evolved-adaptive-scorer"
STALE, POD = "load-spikes+metric-staleness", "load-spikes+pod-failure"


def _plan():
    req = _request()
    track_b = [_h("B8", [STALE], "ttft_mean", direction="no-worse"), _h("B9", [POD], "e2e_p95", direction="no-worse")]
    plan = make_plan(req, [*_example_hypotheses(), *track_b])
    return req, plan, render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)


def _parsed(parser, text: str, tmp_path: Path):
    path = tmp_path / "experiment.yaml"
    path.write_text(text)
    return parser.parse_experiment(path), yaml.safe_load(text)


def _by_hand(setup: str, run: str) -> str:
    """Where llm-d-benchmark leaves a run of ``run`` under setup treatment ``setup`` (llm-d.md §B4)."""
    return f"setup-treatment-{setup}/results/inference-perf-{run}-1760000000-abcd/benchmark_report_v0.2,_x.yaml"


def test_a_setup_level_condition_is_its_own_setup_treatment_that_the_evidence_rules_accept(tmp_path):
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    parsed, doc = _parsed(parser, files[f"{ROOT}/metric-staleness/experiment.yaml"], tmp_path)
    assert [t.name for t in parsed.setup_treatments] == ["baseline+metric-staleness", "evolved+metric-staleness"]
    for t in parsed.setup_treatments:  # upstream's deep-merge input: the flag rides with the arm's config
        epp = t.overrides["router"]["epp"]
        assert epp["flags"] == {"allow-experimental-plugins": True, "refresh-metrics-interval": STALE_METRICS_INTERVAL}
        assert epp["pluginsConfigFile"] == f"promotion-{t.name.split('+')[0]}.yaml"
    runs = [r["name"] for r in doc["treatments"]]
    assert parsed.run_treatments_count == len(runs) > 0
    assert {parse_run_treatment(r)[0] for r in runs} == {STALE}
    # a by-hand run of it is evidence about the condition, and lands in the cell the plan sized
    rel = _by_hand(parsed.setup_treatments[1].name, runs[0])
    key = parse_layout(Path(rel))
    assert (key.treatment, key.workload) == ("evolved", STALE)
    assert condition_reason({"run": {"keywords": []}}, rel, split_condition(key.workload)[1]) is None


def test_pod_failure_cannot_be_said_in_the_format_and_the_plan_says_how_to_run_it(tmp_path):
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    text = files[f"{ROOT}/pod-failure/experiment.yaml"]
    parsed, doc = _parsed(parser, text, tmp_path)
    assert [t.name for t in parsed.setup_treatments] == ["baseline", "evolved"]  # no label that claims a fault
    assert {parse_run_treatment(r["name"])[0] for r in doc["treatments"]} == {POD}
    header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    assert "An experiment file cannot say this" in header and "`promote bench run`" in header
    assert (
        f"experiment -e {ROOT}/pod-failure/experiment.yaml -p <namespace> --run-keywords condition:pod-failure"
        in header
    )
    readme = files[f"{ROOT}/README.md"]
    assert "## Track B fault treatments (their own experiments)" in readme
    assert "--run-keywords condition:pod-failure` while doing what the condition says" in readme
    assert "`baseline+metric-staleness` and `evolved+metric-staleness`" in readme
    # run without the keyword it is the plain load and is left out; with it, it counts
    rel = _by_hand("baseline", doc["treatments"][0]["name"])
    assert condition_reason({"run": {"keywords": []}}, rel, "pod-failure").startswith("condition not recorded")
    assert condition_reason({"run": {"keywords": ["condition:pod-failure"]}}, rel, "pod-failure") is None


def test_the_main_experiment_holds_the_plain_cells_and_every_run_is_in_exactly_one_experiment(tmp_path):
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, plan, files = _plan()
    main_text = files[f"{ROOT}/experiment.yaml"]
    parsed, main = _parsed(parser, main_text, tmp_path)
    assert [t.name for t in parsed.setup_treatments] == ["baseline", "evolved"]
    assert not any("+" in r["name"] for r in main["treatments"])
    assert f"# Track B condition metric-staleness: not in this file, see {ROOT}/metric-staleness/experiment.yaml" in (
        main_text
    )
    names = [
        r["name"]
        for path in (
            f"{ROOT}/experiment.yaml",
            f"{ROOT}/metric-staleness/experiment.yaml",
            f"{ROOT}/pod-failure/experiment.yaml",
        )
        for r in yaml.safe_load(files[path])["treatments"]
    ]
    reps = plan.repetitions_by_cell
    assert len(names) == len(set(names)) == sum(reps.values())
    assert main["design"]["total_matrix"] == 2 * len(main["treatments"])


def test_a_plan_without_conditions_has_one_experiment():
    req = _request()
    files = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)
    assert [f for f in files if f.endswith("experiment.yaml")] == [f"{ROOT}/experiment.yaml"]
    assert "Track B" not in files[f"{ROOT}/README.md"] and "Track B" not in files[f"{ROOT}/experiment.yaml"]


def test_runs_of_the_plans_experiments_bind_to_their_arm_by_the_keywords_the_setup_treatments_set(tmp_path):
    """Upstream finding 1: llm-d-benchmark's reports record no EPP config, so a run by hand from the committed
    experiment must carry its arm's binding in description.keywords (what the harness writes to run_metadata.yaml
    and the converter copies to run.keywords); a run-level condition's setup treatments set none (a treatment's
    keywords would replace the --run-keywords condition:<name> its header asks for)."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec
    from tests.bench.bench_helpers import write_report
    from tests.bench.test_bench_evidence import _upstream as upstream_report

    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    keywords = {}
    for name in ("experiment.yaml", "metric-staleness/experiment.yaml", "pod-failure/experiment.yaml"):
        parsed, _ = _parsed(parser, files[f"{ROOT}/{name}"], tmp_path)
        keywords[name] = {t.name: t.overrides.get("description", {}).get("keywords") for t in parsed.setup_treatments}
    assert keywords["pod-failure/experiment.yaml"] == {"baseline": None, "evolved": None}
    stale = keywords["metric-staleness/experiment.yaml"]
    assert stale["evolved+metric-staleness"] == [*keywords["experiment.yaml"]["evolved"], "condition:metric-staleness"]
    main = keywords["experiment.yaml"]
    assert [k.split(":")[0] for k in main["baseline"]] == ["promotion", "arm", "epp-config"]
    assert main["baseline"] != main["evolved"]

    root = tmp_path / "results"
    for arm, kws in main.items():  # as the harness records them: comma-joined, split back by the converter
        doc = upstream_report(f"{arm}-1")
        doc["run"]["keywords"] = ",".join(kws).split(",")
        write_report(root, arm, "w", 1, 1, doc)
    crossed = upstream_report("crossed")
    crossed["run"]["keywords"] = main["baseline"]
    write_report(root, "evolved", "w", 1, 2, crossed)
    policy = policy_from_spec(load_evaluation_spec(files[f"{ROOT}/evaluation.yaml"]), allow_sample_data=False)
    rs = load_evidence(root, policy)
    assert sorted(rs.loaded) == [
        f"{a}/w/rate-1/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
        for a in ("baseline", "evolved")
    ]
    assert [r for _, r in rs.rejected] == ["run.keywords says arm 'baseline', but it is filed under 'evolved'"]
