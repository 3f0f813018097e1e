"""The loose ends of a02's mix-only plan (consistency4, DJ1): an admitter whose cells cannot exercise it.

Gate 2 said of a02's 10 set-aside hypotheses that excluding them changes neither the plan nor its GPU time, yet
excluding them all failed stage 4 ("nothing to plan") on every `promote resume`; and B4, the shedding order the
plan's priority mix decides, was "not benchmarked" in the plan README, the hypotheses index, B4.md's Prediction
and gate 2's table while the verdicts and the PR said it was planned on the mix.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.cli import main
from bot.forge.local import LocalForge
from bot.model import PipelineState, Status

pytestmark = pytest.mark.slow

CORPUS = PROJECT_ROOT / "examples" / "corpus"
SET_ASIDE = "A1, B1, B2, B3, C1, C2, C3, C4, C5, C6"


def _a02(tmp_path: Path) -> Path:
    request = yaml.safe_load((CORPUS / "promote" / "a02-admission.yaml").read_text())
    request["source"] = str(CORPUS / "a02_gaie_saturation_shedder.go")
    path = tmp_path / "promotion.yaml"
    path.write_text(yaml.safe_dump(request))
    return path


def test_excluding_every_set_aside_hypothesis_keeps_the_mix_only_plan_and_b4_is_decided_on_the_mix(tmp_path, capsys):
    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet"]
    assert main(["run", str(_a02(tmp_path)), "--fork", str(fork), "--approve", "1", *common]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    # Item 2: gate 2 counts and tables B4 as decided on the mix, never "not benchmarked".
    assert "1 decided on the priority mix (B4)" in thread and "not benchmarked" not in thread.split("## Gate 2")[-1]
    assert re.search(r"^\| B4 \|.*\| decided on the priority mix \(per-class admit rate\) \| none \|$", thread, re.M)
    [raised] = [line for line in thread.splitlines() if "`G2.priority-exercised#" in line]
    assert "leaves stage 4 nothing to plan" not in raised and "some or all of them changes neither the plan" in raised

    # Excluding B4 as well would leave stage 4 nothing to plan: refused before it is recorded.
    capsys.readouterr()
    assert main(["request-changes", "2", "--reason", f"exclude: {SET_ASIDE}, B4", *common]) == 2
    assert "leaves stage 4 nothing to plan" in capsys.readouterr().err
    assert main(["request-changes", "2", "--reason", f"exclude: {SET_ASIDE}", *common]) == 0
    assert main(["approve", "2", *common]) == 0  # stage 4 used to fail here, and on every resume
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.status is Status.AWAITING_DECISION and state.open_gate == 3

    forge = LocalForge(fork, work)
    branch = "promotion/a02-saturation-shedder"
    readme = forge.read_file(branch, "benchmarks/promotion/saturation-shedder/README.md").decode()
    assert readme.startswith("# Benchmark plan") and "0 cells, priority mix only: no hypothesis left" in readme
    assert "## Not measurable on these cells" not in readme  # nothing set aside: no empty table
    assert "Decided on the priority mix (per-class admit rate): B4." in readme
    assert "Not decided by benchmarks" not in readme
    docs = "docs/promotion/saturation-shedder/hypotheses"
    index = forge.read_file(branch, f"{docs}/README.md").decode()
    [row] = [line for line in index.splitlines() if line.startswith("| [B4]")]
    assert "decided on the priority mix (per-class admit rate)" in row and "not benchmarked" not in row
    b4 = forge.read_file(branch, f"{docs}/B4.md").decode()
    prediction = b4.split("## Prediction", 1)[1].split("## Operating points", 1)[0]
    assert "decided on the priority mix" in prediction and "no llm-d-benchmark run decides" not in prediction


def test_sample_data_for_a_mix_only_plan_is_the_mix_and_gate_3_converges(tmp_path):
    """Consistency4 #4: the documented sample-data recipe wrote 60 cell reports for a02, whose plan runs no cell,
    and no mix result; gate 3 then blocked on them ("report-invalid") and every verdict was "not judged". The
    script now samples what the plan runs: the priority mix, and no cell report."""
    import json
    import subprocess
    import sys

    path, results = _a02(tmp_path), tmp_path / "results"
    script = PROJECT_ROOT / "examples" / "weighted-adaptive" / "make_sample_reports.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--request", str(path), "--out", str(results)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "no cell report: the plan is 0 cells, priority mix only" in proc.stdout
    files = sorted(p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file())
    assert files and all(f.split("/")[1] == "priority-mix" for f in files), files
    assert not [f for f in files if "benchmark_report" in f]
    work, fork = tmp_path / "work", tmp_path / "fork"
    argv = ["run", str(path), "--results", str(results), "--allow-sample-data", "--approve", "all"]
    assert main([*argv, "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    gate3 = thread.split("## Gate 3")[-1] if "## Gate 3" in thread else thread
    assert "G3.report-invalid" not in thread
    assert re.search(r"^\| 3 \| approve \|.*\| converged \|$", (work / "pr" / "pull-request.md").read_text(), re.M)
    forge = LocalForge(fork, work)
    raw = forge.read_file(
        "promotion/a02-saturation-shedder", "docs/promotion/saturation-shedder/validation/verdicts.json"
    )
    [shed] = [v for v in json.loads(raw) if v["admission"]]
    assert shed["hypothesis_id"] == "B4" and shed["status"] == "confirmed", gate3[:400]


def test_cell_reports_a_mix_only_plan_never_reads_get_no_gpu_time_line_no_rates_and_do_not_block(tmp_path):
    """Consistency4 #4 and #6: with cell reports only (the old sample recipe's 60), a02's verdicts.md said their GPU
    time was "not recorded: these reports came without the manifest" though stage 5 read none of them, listed
    "rates: 45" for set-aside hypotheses the 0-cell plan never runs, and gate 3 raised them as a blocking
    G3.report-invalid ("fix or leave out") though nothing is wrong with them."""
    import subprocess
    import sys

    # a02's own cell reports, as the script wrote them before it followed the set-aside: sampled for an admitter
    # whose plan has cells (a01's program under a02's id and workloads)
    other = tmp_path / "other"
    other.mkdir()
    request = yaml.safe_load(_a02(tmp_path).read_text())
    request["source"] = str(CORPUS / "a01_pattern_c_adaptive_admission.go")
    (other / "promotion.yaml").write_text(yaml.safe_dump(request))
    results = tmp_path / "results"
    script = PROJECT_ROOT / "examples" / "weighted-adaptive" / "make_sample_reports.py"
    cmd = [sys.executable, str(script), "--request", str(other / "promotion.yaml"), "--out", str(results)]
    # cell reports only: the script's sample priority mix for that plan would be a02's mix results
    proc = subprocess.run([*cmd, "--no-priority-mix"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "sample reports under" in proc.stdout, proc.stderr[-800:]
    work, fork = tmp_path / "work", tmp_path / "fork"
    argv = ["run", str(_a02(tmp_path)), "--results", str(results), "--allow-sample-data", "--approve", "all"]
    assert main([*argv, "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    page = LocalForge(fork, work).read_file(
        "promotion/a02-saturation-shedder", "docs/promotion/saturation-shedder/validation/verdicts.md"
    )
    page = page.decode()
    assert "came without the manifest" not in page
    assert "**GPU time:** none counted: no report or run under the results was read (the plan: 348" in page
    assert not re.search(r"rates: \d", page), re.findall(r"- Workloads: .*", page)
    assert "rates: none planned (not measurable on these cells)" in page
    thread = (work / "issue" / "thread.md").read_text()
    assert "G3.report-invalid" not in thread
    [line] = [t for t in thread.splitlines() if "`G3.report-unused#" in t]
    assert line.startswith("| SUGGESTION |") and "not read: the plan has no cells" in line
    status = [t for t in thread.splitlines() if "5. run and validate" in t]
    assert status and "not recorded" not in status[0] and "none counted" in status[0], status
