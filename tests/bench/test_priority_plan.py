"""The plan's priority mix: planned for an admitter, priced, and written in upstream's own formats.

The experiment is parsed with llm-d-benchmark's own experiment parser and the profile run by its own
priority-mix harness (both from the llm-d-benchmark snapshot), whose output the bot's loader reads back.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from bot.bench.evidence import arm_keywords
from bot.bench.experiment import render_experiment
from bot.bench.layout import parse_run_treatment
from bot.bench.plan import make_plan
from bot.bench.plan_markdown import plan_markdown
from bot.bench.priority_mix import load_priority_mix_results
from bot.bench.priority_plan import DEFAULT_CLASSES, REPETITIONS
from tests.bench.test_bench_plan import EPP_BASELINE, EPP_EVOLVED, _example_hypotheses, _request

MIRROR = Path("/work/.mirror/llm-d+llm-d-benchmark/repo")
ROOT = "benchmarks/promotion/evolved-adaptive-scorer"


def _upstream(path: str, tmp_path: Path):
    """A module of the llm-d-benchmark snapshot, imported from its own text (skips when there is no snapshot)."""
    if not MIRROR.is_dir():
        pytest.skip("no llm-d-benchmark snapshot")
    text = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "show", f"HEAD:{path}"], capture_output=True, text=True, check=True
    ).stdout
    file = tmp_path / Path(path).name
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(f"upstream_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _admission():
    req = _request(kind="admission")
    return req, make_plan(req, _example_hypotheses())


def test_an_admitter_gets_the_priority_mix_priced_into_the_plan():
    req, plan = _admission()
    pm = plan.priority_mix
    assert pm is not None and "admitter" in pm.reason
    assert [(c.name, c.priority, c.objective) for c in pm.classes] == [
        ("critical", 100, "app-critical"),
        ("normal", 0, "app-normal"),
        ("batch", -10, "app-batch"),
    ]
    assert (pm.rate, pm.duration_s, pm.repetitions) == (6.0, 90.0, REPETITIONS)  # upstream's load
    p = plan.parameters
    per_run = 90 / 60 + p.run_overhead_minutes
    assert pm.gpu_minutes == pytest.approx((2 * p.standup_minutes + 2 * REPETITIONS * per_run) * p.gpus_per_stack)
    assert plan.total_gpu_minutes == pytest.approx(plan.cost.gpu_minutes + pm.gpu_minutes)
    limits = json.loads(render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)[f"{ROOT}/run-limits.json"])
    assert limits["planned_gpu_minutes"] == plan.total_gpu_minutes
    # `promote bench run` runs the mix, so the one "at most" (gate 2, the README, the runner's default cap) has it
    cells = max(plan.cost.gpu_minutes, plan.sequential.max_gpu_minutes if plan.sequential else 0.0)
    assert plan.most_gpu_minutes == pytest.approx(cells + pm.gpu_minutes)
    wall = plan.most_gpu_minutes / p.gpus_per_stack
    assert limits["timeout_minutes"] == math.ceil(wall * 1.5 + 60)
    md = plan_markdown(plan)
    assert f"At most **{plan.most_gpu_minutes:g} GPU-minutes**" in md and "plus the priority mix's" in md
    assert "## Priority mix (per-class admission)" in md and "`batch` (weight 0.2, priority -10" in md
    assert f"| **in all** | {plan.cost.standups + 2} | {plan.cost.runs + 2 * REPETITIONS} |" in md


@pytest.mark.parametrize("kind", ["routing", "scheduling"])
def test_a_router_or_scheduler_that_reads_the_class_gets_no_mix(kind):
    """Found promoting a new program (newprog finding 5): p2, a router that reads the SLO class, got the mix (348
    GPU-minutes) although only an admitter's shedding order is judged on it (per-class admit rate); gate 3 then
    raised G3.priority-mix about shedding on a plugin that sheds nothing."""
    req = _request(kind=kind)
    hyps = _example_hypotheses()
    a = next(h for h in hyps if h.track.value == "A" and h.benchmarked)
    reads = [h.model_copy(update={"signals": [*h.signals, "SLOClass"]}) if h is a else h for h in hyps]
    plan = make_plan(req, reads)
    assert plan.priority_mix is None
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    assert not any("/priority-mix/" in f for f in files) and "priority mix" not in plan_markdown(plan).lower()


def test_the_priority_mix_experiment_is_what_upstreams_parser_reads(tmp_path):
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    req, plan = _admission()
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    path = tmp_path / "experiment.yaml"
    path.write_text(files[f"{ROOT}/priority-mix/experiment.yaml"])
    parsed = parser.parse_experiment(path)
    assert parsed.harness == "priority-mix" and parsed.has_setup_phase
    assert parsed.run_treatments_count == REPETITIONS
    by_arm = {t.name: t.overrides for t in parsed.setup_treatments}
    assert sorted(by_arm) == ["baseline", "evolved"]
    for arm, o in by_arm.items():
        # the main experiment's binding, EPP config digest included (a mix run under another config is refused)
        config = yaml.safe_load(EPP_BASELINE if arm == "baseline" else EPP_EVOLVED)
        assert o["description"]["keywords"] == arm_keywords("7", arm, config)
        assert o["description"]["keywords"][2].startswith("epp-config:sha256:")
        assert o["router"]["inferenceObjectives"] == [
            {"name": "app-critical", "priority": 100},
            {"name": "app-normal", "priority": 0},
            {"name": "app-batch", "priority": -10},
        ]
        assert o["router"]["epp"]["pluginsConfigFile"] == f"promotion-{arm}.yaml"
        assert o["model"]["name"] == req.stack.model
    runs = yaml.safe_load(path.read_text())["treatments"]
    assert [parse_run_treatment(r["name"]) for r in runs] == [("priority-mix", 6.0, n) for n in (1, 2, 3)]


class _Gateway(BaseHTTPRequestHandler):
    """Stands in for the gateway: sheds (429) every sheddable request, as a saturated admitter would."""

    shed = {c.objective for c in DEFAULT_CLASSES if c.sheddable}

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        code = 429 if self.headers.get("x-llm-d-inference-objective") in self.shed else 200
        body = b'{"choices": []}'
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_):
        return


def test_upstreams_harness_runs_the_profile_and_the_loader_reads_its_output(tmp_path, monkeypatch):
    harness = _upstream("workload/harnesses/priority_mix.py", tmp_path)
    req, plan = _admission()
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    profile = yaml.safe_load(files[f"{ROOT}/priority-mix/priority-mix.yaml"])
    classes = harness.traffic_classes(profile)
    objectives = {
        o["name"]
        for o in yaml.safe_load(files[f"{ROOT}/priority-mix/experiment.yaml"])["setup"]["constants"][
            "router.inferenceObjectives"
        ]
    }
    assert {c.headers[harness.OBJECTIVE_HEADER] for c in classes} == objectives  # every header resolves

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        profile.update(endpoint_url=f"http://127.0.0.1:{server.server_port}", model="m")
        profile["load"].update(total_requests=10, rate_per_second=200, max_in_flight=4)
        profile["request"]["stream"] = False
        ws = tmp_path / "ws"
        (ws / "profiles" / "priority-mix").mkdir(parents=True)
        (ws / "profiles" / "priority-mix" / "priority-mix.yaml").write_text(yaml.safe_dump(profile))
        run = tmp_path / "results" / "setup-treatment-evolved" / "results"
        out = run / "priority-mix-priority-mix-rate-6-rep-1-1760000000-abc1"
        env = {
            "LLMDBENCH_RUN_EXPERIMENT_RESULTS_DIR": str(out),
            "LLMDBENCH_RUN_WORKSPACE_DIR": str(ws),
            "LLMDBENCH_RUN_EXPERIMENT_HARNESS_WORKLOAD_NAME": "priority-mix.yaml",
            "LLMDBENCH_DESCRIPTION_KEYWORDS": "promotion:7,arm:evolved",
        }
        for k, v in env.items():
            monkeypatch.setitem(os.environ, k, v)
        assert harness.main() == 0
    finally:
        server.shutdown()
    pm = load_priority_mix_results(tmp_path / "results")
    t = pm.table.set_index("traffic_class")
    assert t.loc["batch", "shed"] == t.loc["batch", "requests"] == 2
    assert t.loc["critical", "successes"] == t.loc["critical", "requests"] == 2
    assert set(t["workload"]) == {"priority-mix"} and set(t["treatment"]) == {"evolved"}


def _sheds_nothing():
    """An admitter whose translation shows it admits priority 0 even overloaded (a02): its cells cannot exercise it."""
    from bot.model import PolicyKind, TranslationSummary

    return TranslationSummary(
        kind=PolicyKind.ADMISSION,
        plugin_type="evolved-adaptive-scorer",
        package_dir="pkg/x",
        signals=["SLOClass"],
        behaviour={"idle:0": "admit", "overloaded:0": "admit"},
    )


def _shedding(hid: str = "B2"):
    """The admitter's Map C ``priority-semantics`` hypothesis, decided on the mix (no prediction of its own)."""
    from tests.bench.test_bench_plan import _h

    h = _h(hid, ["load-spikes"], None)
    return h.model_copy(update={"source": "priority-semantics", "not_in_plan": "it is judged on the priority mix"})


def test_an_admitter_whose_cells_cannot_exercise_it_plans_the_mix_and_no_cell(tmp_path):
    """DB1: every benchmarked hypothesis set aside used to leave the plan all its cells (1948 GPU-minutes at most for
    a02, 1600 of them on runs deciding nothing); the plan is now the mix alone, written without a cell experiment,
    and its evaluation spec, README and cap say so."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.mix_only import is_mix_only
    from bot.bench.set_aside import for_plan

    req = _request(kind="admission")
    hyps = [h for h in _example_hypotheses() if h.id != "B2"] + [_shedding()]
    planned = for_plan(req, _sheds_nothing(), None, hyps)
    assert not any(h.benchmarked for h in planned)
    plan = make_plan(req, planned)
    assert is_mix_only(plan) and not plan.cells and not plan.hypotheses and plan.cost.gpu_minutes == 0
    assert plan.most_gpu_minutes == plan.total_gpu_minutes == plan.priority_mix.gpu_minutes == 348
    assert "B2" not in plan.not_measurable and len(plan.not_measurable) == len(hyps) - 1
    files = render_experiment(plan, req, EPP_BASELINE, EPP_EVOLVED)
    assert f"{ROOT}/experiment.yaml" not in files and not [f for f in files if "/workloads/" in f]
    spec = load_evaluation_spec(files[f"{ROOT}/evaluation.yaml"])
    assert spec.cells == [] and spec.hypotheses == {} and spec.priority_mix == plan.priority_mix
    readme = files[f"{ROOT}/README.md"]
    assert readme.count("0 cells, priority mix only") == 1 and "No cell experiment is written" in readme
    assert "| A1 | not measurable on these cells: " in readme and "## Priority mix" in readme
    assert json.loads(files[f"{ROOT}/run-limits.json"])["budget_gpu_minutes"] == 348
    # the mix's experiment is still what upstream's parser reads
    parser = _upstream("llmdbenchmark/experiment/parser.py", tmp_path)
    path = tmp_path / "experiment.yaml"
    path.write_text(files[f"{ROOT}/priority-mix/experiment.yaml"])
    assert parser.parse_experiment(path).run_treatments_count == REPETITIONS


def test_the_shedding_hypothesis_left_alone_is_planned_on_the_mix():
    """DJ1 (consistency4 #1, #2): a person who excludes at gate 2 every hypothesis the cells cannot measure leaves
    the shedding order alone; the mix still decides it, so the plan is the mix (it used to be a PlanError that
    failed stage 4 on every resume), and the README says the mix decides it, not "not decided by benchmarks"."""
    from bot.bench.mix_only import is_mix_only

    req = _request(kind="admission")
    plan = make_plan(req, [_shedding()])
    assert is_mix_only(plan) and plan.not_measurable == {} and plan.decided_on_mix == ["B2"]
    readme = plan_markdown(plan)
    assert "no hypothesis left has a benchmark prediction" in readme and "## Not measurable" not in readme
    assert "Decided on the priority mix (per-class admit rate): B2." in readme and "Not decided by" not in readme


def test_with_no_mix_to_decide_anything_the_set_aside_keeps_the_cells_as_before():
    """With no shedding hypothesis the mix decides nothing, so nothing would run: the plan keeps the cells (and
    gate 2 says none of them will be judged), and a plan with neither is refused as before."""
    from bot.bench.evaluation_spec import EvaluationSpecError, load_evaluation_spec
    from bot.bench.plan import PlanError
    from bot.bench.set_aside import for_plan

    req = _request(kind="admission")
    hyps = [h for h in _example_hypotheses() if h.id != "B2"]
    assert for_plan(req, _sheds_nothing(), None, hyps) == hyps
    with pytest.raises(PlanError, match="no hypothesis has a benchmark prediction; nothing to plan"):
        make_plan(req, [h for h in hyps if not h.benchmarked])
    with pytest.raises(PlanError, match="no hypothesis has a benchmark prediction; nothing to plan"):
        make_plan(_request(kind="scheduling"), [_shedding()])  # no mix to run
    text = render_experiment(make_plan(req, hyps), req, EPP_BASELINE, EPP_EVOLVED)[f"{ROOT}/evaluation.yaml"]
    doc = yaml.safe_load(text)
    doc.update(cells=[], repetitions=0, repetitions_by_cell={}, hypotheses={}, decision={"alpha": doc["alpha"]})
    doc.pop("priority_mix")
    with pytest.raises(EvaluationSpecError, match="no cells and no priority mix, so nothing to judge"):
        load_evaluation_spec(yaml.safe_dump(doc))
