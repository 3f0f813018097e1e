"""Track B fault treatments in the committed plan: each condition an experiment of its own that records it.

Consistency finding 2: the experiment the PR tells users to run named `load-spikes+metric-staleness-...` run
treatments under the plain `baseline`/`evolved` setup treatments, with no refresh-interval flag anywhere, so a run
by hand measured the plain load (and stage 5 then left it out as "condition not recorded"). The experiments are read
with llm-d-benchmark's own parser (from the snapshot), and their results paths with the bot's evidence rules.
"""

from __future__ import annotations

import re
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


def _readme_commands(readme: str) -> dict[str, str]:
    """arm -> the by-hand command the plan README gives for the pod-failure condition (one line per arm)."""
    section = readme[readme.index("- `pod-failure`:") :]
    return dict(re.findall(r"^  - (baseline|evolved): `(llmdbenchmark [^`]+)`$", section, flags=re.M))


def test_pod_failure_cannot_be_said_in_the_format_and_the_plan_says_how_to_run_it(tmp_path):
    """Admission e2e finding 7: one pod-failure file with both arms and `--run-keywords condition:pod-failure`
    gave reports with the condition and no arm binding (a setup treatment's keywords and --run-keywords set one
    variable, the file's winning), which stage 5 refused. Now one file per arm carries all of its keywords."""
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    assert f"{ROOT}/pod-failure/experiment.yaml" not in files
    readme = files[f"{ROOT}/README.md"]
    assert "## Track B fault treatments (their own experiments)" in readme
    assert "`baseline+metric-staleness` and `evolved+metric-staleness`" in readme
    commands = _readme_commands(readme)
    assert sorted(commands) == ["baseline", "evolved"]
    for arm, cmd in commands.items():
        path = f"{ROOT}/pod-failure/{arm}.yaml"
        assert cmd == f"llmdbenchmark --spec guides/optimized-baseline experiment -e {path} -p <namespace>"
        assert "--run-keywords" not in cmd  # the file's keywords would replace it
        text = files[path]
        parsed, doc = _parsed(parser, text, tmp_path)
        assert [t.name for t in parsed.setup_treatments] == [arm]  # one stand-up, no label that claims a fault
        assert parsed.setup_treatments[0].overrides["description"]["keywords"][-1] == "condition:pod-failure"
        assert {parse_run_treatment(r["name"])[0] for r in doc["treatments"]} == {POD}
        header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
        assert "An experiment file cannot say this" in header and "`promote bench run`" in header
        assert f"#   {cmd}\n" in header
    # the condition is recorded by the keyword the file sets, not by where llm-d-benchmark files the run
    rel = _by_hand("baseline", doc["treatments"][0]["name"])
    assert condition_reason({"run": {"keywords": []}}, rel, "pod-failure").startswith("condition not recorded")
    assert condition_reason({"run": {"keywords": ["condition:pod-failure"]}}, rel, "pod-failure") is None


def _at_rate(report: dict, rate: float) -> dict:
    """The upstream report as a run at ``rate`` req/s records it (stage 5 checks it against the directory)."""
    report["scenario"]["load"]["standardized"]["rate_qps"] = rate
    return report


def test_a_run_of_each_readme_pod_failure_command_binds_to_its_arm_under_the_condition(tmp_path):
    """Admission e2e finding 7, end to end: the reports a person gets from each arm's README command (the keywords
    its file sets, as the harness records them, where llm-d-benchmark's workspace files them) are loaded by stage 5
    as that arm's runs of the pod-failure cell; the other arm's keywords on them are refused."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec
    from tests.bench.test_bench_evidence import _upstream as upstream_report

    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    root = tmp_path / "workspace"
    keywords = {}
    for arm, cmd in _readme_commands(files[f"{ROOT}/README.md"]).items():
        parsed, doc = _parsed(parser, files[re.search(r" -e (\S+) ", cmd).group(1)], tmp_path)
        [treatment] = parsed.setup_treatments
        keywords[arm] = treatment.overrides["description"]["keywords"]
        run = next(r for r in doc["treatments"] if r["load.stages.0.rate"] == 30)["name"]
        report = _at_rate(upstream_report(f"{arm}-pod"), 30)
        report["run"]["keywords"] = ",".join(keywords[arm]).split(",")  # LLMDBENCH_DESCRIPTION_KEYWORDS, split back
        path = root / _by_hand(treatment.name, run)
        path.parent.mkdir(parents=True)
        path.write_text(yaml.safe_dump(report), encoding="utf-8")
    assert keywords["baseline"] != keywords["evolved"]
    crossed = _at_rate(upstream_report("crossed"), 30)
    crossed["run"]["keywords"] = keywords["baseline"]
    rel = _by_hand("evolved", f"{POD}-rate-30-rep-2")
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_text(yaml.safe_dump(crossed), encoding="utf-8")

    policy = policy_from_spec(load_evaluation_spec(files[f"{ROOT}/evaluation.yaml"]), allow_sample_data=False)
    rs = load_evidence(root, policy)
    assert sorted(rs.loaded) == sorted(_by_hand(a, f"{POD}-rate-30-rep-1") for a in ("baseline", "evolved"))
    assert [r for _, r in rs.rejected] == ["run.keywords says arm 'baseline', but it is filed under 'evolved'"]


def test_following_stage_5s_hint_for_a_condition_cell_without_its_config_binds_the_report(tmp_path):
    """Red team 8 item 3: a condition cell's report that records no EPP config was told to run "from its
    experiment.yaml" (which runs no condition cell) or with `--run-keywords` (which a file's keywords replace, and
    which has no condition:), a loop. The hint names the cell's own file; its keywords, as recorded, bind it."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec
    from tests.bench.test_bench_evidence import _upstream as upstream_report

    _, _, files = _plan()
    policy = policy_from_spec(load_evaluation_spec(files[f"{ROOT}/evaluation.yaml"]), allow_sample_data=False)
    root = tmp_path / "workspace"
    cells = {  # where llm-d-benchmark files a run of each cell; what the report records of its condition
        _by_hand("baseline", f"{POD}-rate-30-rep-1"): ["condition:pod-failure"],
        _by_hand("evolved+metric-staleness", f"{STALE}-rate-30-rep-1"): [],
    }
    for rel, kws in cells.items():
        report = _at_rate(upstream_report(rel.split("/")[0]), 30)
        report["run"]["keywords"] = kws
        (root / rel).parent.mkdir(parents=True)
        (root / rel).write_text(yaml.safe_dump(report), encoding="utf-8")
    plain = _at_rate(upstream_report("plain"), 30)  # one valid report, so the directory is not refused whole
    plain["run"]["keywords"] = yaml.safe_load(files[f"{ROOT}/pod-failure/evolved.yaml"])["setup"]["treatments"][0][
        "description.keywords"
    ]
    (root / _by_hand("evolved", f"{POD}-rate-30-rep-1")).parent.mkdir(parents=True)
    (root / _by_hand("evolved", f"{POD}-rate-30-rep-1")).write_text(yaml.safe_dump(plain), encoding="utf-8")

    hints = dict(load_evidence(root, policy).rejected)
    assert sorted(hints) == sorted(cells)
    named = {}
    for rel, hint in hints.items():
        assert hint.startswith("records no EPP config") and "its experiment.yaml" not in hint, hint
        assert "llmdbenchmark --run-keywords" not in hint, hint
        [named[rel]] = re.findall(rf"from (?:the \w+ arm's own file )?({ROOT}/\S+\.yaml)", hint)
    assert named == {
        _by_hand("baseline", f"{POD}-rate-30-rep-1"): f"{ROOT}/pod-failure/baseline.yaml",
        _by_hand("evolved+metric-staleness", f"{STALE}-rate-30-rep-1"): f"{ROOT}/metric-staleness/experiment.yaml",
    }
    for rel, path in named.items():  # follow the hint: the named file's setup treatment for this directory
        setup = rel.split("/")[0].removeprefix("setup-treatment-")
        [treatment] = [t for t in yaml.safe_load(files[path])["setup"]["treatments"] if t["name"] == setup]
        report = yaml.safe_load((root / rel).read_text(encoding="utf-8"))
        report["run"]["keywords"] = ",".join(treatment["description.keywords"]).split(",")
        (root / rel).write_text(yaml.safe_dump(report), encoding="utf-8")
    rs = load_evidence(root, policy)
    assert rs.rejected == [] and len(rs.loaded) == 3


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
    names = [  # (setup treatment, run treatment): a pod-failure file runs one arm
        (t["name"].split("+")[0], r["name"])
        for path in (
            f"{ROOT}/experiment.yaml",
            f"{ROOT}/metric-staleness/experiment.yaml",
            f"{ROOT}/pod-failure/baseline.yaml",
            f"{ROOT}/pod-failure/evolved.yaml",
        )
        for doc in [yaml.safe_load(files[path])]
        for t in doc["setup"]["treatments"]
        for r in doc["treatments"]
    ]
    reps = plan.repetitions_by_cell
    assert len(names) == len(set(names)) == 2 * sum(reps.values())
    assert main["design"]["total_matrix"] == 2 * len(main["treatments"])


def test_a_plan_without_conditions_has_one_experiment():
    req = _request()
    files = render_experiment(make_plan(req, _example_hypotheses()), req, EPP_BASELINE, EPP_EVOLVED)
    assert [f for f in files if f.endswith("experiment.yaml")] == [f"{ROOT}/experiment.yaml"]
    assert "Track B" not in files[f"{ROOT}/README.md"] and "Track B" not in files[f"{ROOT}/experiment.yaml"]


def test_runs_of_the_plans_experiments_bind_to_their_arm_by_the_keywords_the_setup_treatments_set(tmp_path):
    """Upstream finding 1: llm-d-benchmark's reports record no EPP config, so a run by hand from the committed
    experiment must carry its arm's binding in description.keywords (what the harness writes to run_metadata.yaml
    and the converter copies to run.keywords); a run-level condition's per-arm files set the condition too (a
    treatment's keywords replace --run-keywords, so nothing else could add it)."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec
    from tests.bench.bench_helpers import write_report
    from tests.bench.test_bench_evidence import _upstream as upstream_report

    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    _, _, files = _plan()
    keywords = {}
    names = (
        "experiment.yaml",
        "metric-staleness/experiment.yaml",
        "pod-failure/baseline.yaml",
        "pod-failure/evolved.yaml",
    )
    for name in names:
        parsed, _ = _parsed(parser, files[f"{ROOT}/{name}"], tmp_path)
        keywords[name] = {t.name: t.overrides.get("description", {}).get("keywords") for t in parsed.setup_treatments}
    main = keywords["experiment.yaml"]
    for arm in ("baseline", "evolved"):
        assert keywords[f"pod-failure/{arm}.yaml"] == {arm: [*main[arm], "condition:pod-failure"]}
    stale = keywords["metric-staleness/experiment.yaml"]
    assert stale["evolved+metric-staleness"] == [*main["evolved"], "condition:metric-staleness"]
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
