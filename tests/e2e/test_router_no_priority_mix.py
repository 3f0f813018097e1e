"""A router that reads the request's class, rehearsed end to end: no priority mix is planned, billed or missed.

Found promoting a new program (newprog finding 5): p2 (tests/golang/fixtures/routing_critical_fast_path.go) sends `critical` requests to
the shortest queue. Its plan had llm-d-benchmark's priority mix (2 stand-ups, 6 runs, 348 GPU-minutes), which is
judged by per-class admit rate only, the shedding order of an admitter; a router sheds nothing, and none of its
hypotheses is judged on it. With no mix result, gate 3 then raised IMPORTANT `G3.priority-mix` about shedding.
The request is the bundled example's on one workload, with p2's claim; the cells get sample reports.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.cli import main
from bot.forge.local import LocalForge
from bot.model import PipelineState, PromotionRequest
from bot.review import review_gate
from bot.stages.context import StageContext
from tests.bench.priority_mix_data import ADMITS_ALL, write_run

pytestmark = pytest.mark.slow

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
SOURCE = PROJECT_ROOT / "tests" / "golang" / "fixtures" / "routing_critical_fast_path.go"
BRANCH = "promotion/42-critical-fast-path-scorer"
SLUG = "critical-fast-path-scorer"
CLAIM = {
    "id": "spikes-p95",
    "statement": "Under load-spikes at rate 1000 the evolved router lowers e2e_p95_ms by 15%.",
    "metric": "e2e_p95_ms",
    "direction": "decrease",
    "magnitude": -0.15,
    "workload": "load-spikes",
    "rate": 1000,
    "seeds": [42, 123, 456],
    "mechanism": "critical requests take the shortest queue; others get -0.3 above BatchSize 12 and -0.5 when a "
    "long prompt meets an instance with under 500 free KV blocks.",
}


def test_a_class_reading_router_gets_no_priority_mix_and_gate_3_raises_none(tmp_path):
    request = yaml.safe_load((EXAMPLE / "promotion.yaml").read_text())
    request.update(
        id="42",
        title="Critical fast path with sorted snapshots",
        kind="routing",
        source=SOURCE.name,
        plugin_name=SLUG,
        origin={"framework": "openevolve", "run": "blis_router/n1-p2", "iteration": 21, "fitness": -3700.0},
        baselines=[],
        claims=[CLAIM],
        evolved_for="load-spikes",
    )
    request["workloads"] = [w for w in request["workloads"] if w["name"] == "load-spikes"]
    path = tmp_path / "promotion.yaml"
    path.write_text(yaml.safe_dump(request))
    (tmp_path / SOURCE.name).write_text(SOURCE.read_text())
    results = tmp_path / "results"
    cmd = [sys.executable, str(EXAMPLE / "make_sample_reports.py"), "--request", str(path), "--out", str(results)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-800:]
    for arm in ("baseline", "evolved"):  # mix runs nobody planned (GPU operator finding): listed, never passed over
        write_run(results, arm, 1, ADMITS_ALL, f"promotion:42,arm:{arm},sample-data")
    work, fork = tmp_path / "work", tmp_path / "fork"
    argv = ["run", str(path), "--results", str(results), "--allow-sample-data", "--work", str(work)]
    assert main([*argv, "--fork", str(fork), "--approve", "all", "--quiet"]) == 0

    forge = LocalForge(fork, work)
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    ctx = StageContext(PromotionRequest.load(path), forge, state, results_dir=results, allow_sample_data=True)
    translation = forge.read_file(BRANCH, f"docs/promotion/{SLUG}/translation.json").decode()
    assert '"SLOClass"' in translation  # the router does read the class
    files = forge.list_files(BRANCH, f"benchmarks/promotion/{SLUG}")
    assert files and not [f for f in files if "priority-mix" in f]
    evaluation = forge.read_file(BRANCH, f"benchmarks/promotion/{SLUG}/evaluation.yaml").decode()
    assert "priority_mix" not in evaluation
    readme = forge.read_file(BRANCH, f"benchmarks/promotion/{SLUG}/README.md").decode()
    assert "priority mix" not in readme.lower()
    checks = {f.check for f in review_gate(3, ctx)}
    assert "G3.priority-mix" not in checks
    # gate 2 still says the class-dependent score is measured on one priority only, with no mix to fall back on
    exercised = [f for f in review_gate(2, ctx) if f.check == "G2.priority-exercised"]
    assert exercised and "no priority mix" in exercised[0].message
    not_used = json.loads(forge.read_file(BRANCH, f"docs/promotion/{SLUG}/validation/reports-not-used.json"))
    mix = {e["report"]: e["reason"] for e in not_used if "/priority-mix/" in e["report"]}
    assert sorted(mix) == [f"{arm}/priority-mix/rate-6/rep-1/results.json" for arm in ("baseline", "evolved")]
    assert all("the plan has no priority mix" in r and "routing policy" in r for r in mix.values()), mix
    verdicts = forge.read_file(BRANCH, f"docs/promotion/{SLUG}/validation/verdicts.md").decode()
    assert "baseline/priority-mix/rate-6/rep-1/results.json" in verdicts
