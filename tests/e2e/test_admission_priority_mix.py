"""An admitter's promotion, rehearsed end to end: stage 5 judges its shedding on the plan's priority mix.

Found by a maintainer: the plan ran a priority mix for an admitter and gate 2 said its shedding was
exercised, but stage 5 never read the mix, so the admission hypothesis (Map C ``priority-semantics``)
stayed "not decided by the benchmark plan". The request is the bundled example's, turned into an
admission promotion of ``examples/corpus/a01_pattern_c_adaptive_admission.go`` on one workload; its
cells get sample reports (make_sample_reports.py), its mix upstream-format runs (priority_mix_data).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.cli import main
from bot.forge.local import LocalForge
from bot.model import PipelineState, PromotionRequest, Severity, VerdictStatus
from bot.review import review_gate
from bot.stages.context import StageContext
from tests.bench.priority_mix_data import ADMITS_ALL, SHEDS_BATCH, config_keyword, write_run

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
SOURCE = PROJECT_ROOT / "examples" / "corpus" / "a01_pattern_c_adaptive_admission.go"
BRANCH = "promotion/7-evolved-adaptive-admission"
DOCS = "docs/promotion/evolved-adaptive-admission/validation"


@pytest.fixture(scope="module")
def admission(tmp_path_factory):
    """(request path, results dir with sample reports but no priority mix yet)."""
    root = tmp_path_factory.mktemp("admission")
    request = yaml.safe_load((EXAMPLE / "promotion.yaml").read_text())
    request.update(
        id="7",
        title="Evolved adaptive admission",
        kind="admission",
        source=SOURCE.name,
        plugin_name="evolved-adaptive-admission",
        origin={"framework": "openevolve", "run": "blis_admission", "iteration": 60, "fitness": -1200.0},
        baselines=[],
    )
    request["workloads"] = [w for w in request["workloads"] if w["name"] == "load-spikes"]
    request["claims"] = [c for c in request["claims"] if c["workload"] == "load-spikes"]
    (root / "promotion.yaml").write_text(yaml.safe_dump(request))
    (root / SOURCE.name).write_text(SOURCE.read_text())
    script = EXAMPLE / "make_sample_reports.py"
    cmd = [sys.executable, str(script), "--request", str(root / "promotion.yaml"), "--out", str(root / "cells")]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-800:]
    # the tests write the mix runs they judge (priority_mix_data): the script's are set aside, for the epp-config
    # keyword each arm's runs record (config_keyword)
    for arm in ("baseline", "evolved"):
        (root / "script-mix" / arm).mkdir(parents=True)
        (root / "cells" / arm / "priority-mix").rename(root / "script-mix" / arm / "priority-mix")
    assert not list((root / "cells").glob("*/priority-mix"))
    return root / "promotion.yaml", root / "cells"


def test_a_rehearsal_with_the_scripts_sample_mix_judges_the_shedding_order(admission, tmp_path):
    """Found by a researcher's trial: the sample script wrote the cells of an admitter's plan but not its priority
    mix, so every rehearsal of such an admitter ended gate 3 unconverged on "no priority-mix results found", which
    nothing a researcher could do clears. The script writes the plan's mix too (sample data like the cells)."""
    request, _ = admission
    results = tmp_path / "results"
    cmd = [sys.executable, str(EXAMPLE / "make_sample_reports.py"), "--request", str(request), "--out", str(results)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-800:]
    assert "sample priority-mix runs" in proc.stdout
    assert sorted(p.parent.name for p in results.glob("*/priority-mix")) == ["baseline", "evolved"]
    work, fork = tmp_path / "work", tmp_path / "fork"
    argv = ["run", str(request), "--results", str(results), "--allow-sample-data", "--work", str(work)]
    assert main([*argv, "--fork", str(fork), "--approve", "all", "--quiet"]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    assert "G3.priority-mix" not in thread


def _rehearse(
    admission, tmp_path, arms: dict, reps: int = 3, rates: dict | None = None, keywords=None
) -> tuple[StageContext, Path]:
    """Stages 1-7 on the cells' sample reports plus ``reps`` mix runs per arm of ``arms`` (at ``rates``' rate per arm,
    else the plan's), each recording ``keywords(arm, n)`` (else this promotion, its arm and the arm's EPP config)."""
    request, cells = admission
    results = tmp_path / "results"
    subprocess.run(["cp", "-r", str(cells), str(results)], check=True)
    for arm, counts in arms.items():
        for n in range(1, reps + 1):
            kws = keywords(arm, n) if keywords else _keywords(cells, arm)
            write_run(results, arm, n, counts, kws, **({"rate": rates[arm]} if rates else {}))
    work, fork = tmp_path / "work", tmp_path / "fork"
    argv = ["run", str(request), "--results", str(results), "--allow-sample-data", "--work", str(work)]
    assert main([*argv, "--fork", str(fork), "--approve", "all", "--quiet"]) == 0
    forge = LocalForge(fork, work)
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    ctx = StageContext(PromotionRequest.load(request), forge, state, results_dir=results, allow_sample_data=True)
    return ctx, fork


def _keywords(cells: Path, arm: str) -> str:
    """What the plan's priority-mix/experiment.yaml records for ``arm`` (promotion, arm, EPP config), as sample data."""
    return f"promotion:7,arm:{arm},{config_keyword(cells.parent / 'script-mix', arm)},sample-data"


def _read(ctx: StageContext, path: str) -> str:
    return ctx.forge.read_file(BRANCH, path).decode()


def test_stage_5_judges_an_admitters_shedding_on_the_priority_mix(admission, tmp_path):
    ctx, _ = _rehearse(admission, tmp_path, {"baseline": ADMITS_ALL, "evolved": SHEDS_BATCH})
    verdicts = json.loads(_read(ctx, f"{DOCS}/verdicts.json"))
    [shed] = [v for v in verdicts if v["admission"]]
    hyp = _read(ctx, f"docs/promotion/evolved-adaptive-admission/hypotheses/{shed['hypothesis_id']}.md")
    assert "priority-semantics" in hyp and "Decided on the plan's priority mix" in hyp
    assert shed["status"] == VerdictStatus.CONFIRMED.value, shed["summary"]
    assert "judged on the priority mix (per-class admit rate)" in shed["flags"]
    assert any(f.startswith("SAMPLE DATA") for f in shed["flags"]) and shed["summary"].startswith("[SAMPLE DATA]")
    batch = next(r for r in shed["admission"] if r["traffic_class"] == "batch")
    assert (batch["baseline_requests"], batch["baseline_admitted"], batch["baseline_shed"]) == (300, 300, 0)
    assert (batch["evolved_requests"], batch["evolved_admitted"], batch["evolved_shed"]) == (300, 120, 180)
    assert batch["change"] == "admits fewer" and batch["p_adjusted"] < 0.05 and batch["evolved_runs"] == [0.4] * 3
    page = _read(ctx, f"{DOCS}/verdicts.md")
    hid = shed["hypothesis_id"]
    assert f"## Priority mix: does the admitter shed sheddable traffic first? ({hid})" in page
    assert f"**{hid} confirmed**: the evolved arm sheds batch more than critical" in page
    assert "| batch (-10) | 300 / 300 / 0 | 100.0% (100%, 100%, 100%) | 300 / 120 / 180 | 40.0% (40%, 40%, 40%)" in page
    assert "not part of the promotion's weighted-Holm family" in page  # the error control it is under, said
    assert "Not decided by the benchmark plan: it needs requests of several priority classes" not in page
    used = json.loads(_read(ctx, f"{DOCS}/priority-mix.json"))
    assert used["used"] == {"baseline": 3, "evolved": 3} and used["not_judged"] is None
    findings = review_gate(3, ctx)
    assert not [f for f in findings if f.check in ("G3.verdict-consistent", "G3.priority-mix")], findings
    # a verdict edited by hand no longer follows from the counts it records
    edited = [dict(v, status="refuted") if v["hypothesis_id"] == hid else v for v in verdicts]
    text = json.dumps(edited, indent=2) + "\n"
    ctx.forge.commit_files(BRANCH, {f"{DOCS}/verdicts.json": text.encode()}, message="edit by hand")
    bad = [f for f in review_gate(3, ctx) if f.check == "G3.verdict-consistent"]
    assert (
        bad
        and "per-class admission counts make it confirmed" in bad[0].message
        and bad[0].severity is Severity.CRITICAL
    )


def test_a_planned_mix_with_no_evolved_result_is_a_gate_3_finding_never_a_silence(admission, tmp_path):
    from bot.review.brief import brief

    ctx, _ = _rehearse(admission, tmp_path, {"baseline": ADMITS_ALL})
    verdicts = json.loads(_read(ctx, f"{DOCS}/verdicts.json"))
    [shed] = [v for v in verdicts if "priority mix planned but not judged" in v["flags"]]
    assert shed["status"] == "inconclusive" and "no evolved priority-mix result could be used" in shed["summary"]
    page = _read(ctx, f"{DOCS}/verdicts.md")
    assert f"**Not judged: {shed['hypothesis_id']} (the shedding order) is not decided.**" in page
    # F4 #4: the count and the hypothesis's block say the mix decides it, not that no run of the plan can
    hid = shed["hypothesis_id"]
    assert f"{hid} is planned on the priority mix and not judged yet" in page
    count = next(ln for ln in page.splitlines() if "hypotheses." in ln)
    cannot = count.split("inconclusive are not judged: ")[-1].split("; each says")[0] if "not judged:" in count else ""
    assert hid not in re.findall(r"B\d+", cannot), count
    block = page[page.index(f"### {hid} ") :].split("\n### ", 1)[0]
    assert "- Prediction: sheddable traffic is shed before protected traffic (the shedding order)" in block
    assert "no benchmark prediction" not in block and "rates: none measured" not in block
    assert "- To be judged on: the plan's priority mix" in block
    [found] = [f for f in review_gate(3, ctx) if f.check == "G3.priority-mix"]
    assert (
        "no evolved priority-mix result could be used" in found.message and "priority-mix/experiment.yaml" in found.fix
    )
    # the runner runs the mix now: the fix says where its set-aside runs are, not that it cannot run them
    assert "`promote bench run` runs the plan's priority mix" in found.fix and "yet" not in found.fix
    assert "the priority mix judged nothing (no evolved priority-mix result could be used" in brief(3, ctx)[0]


@pytest.mark.slow
def test_mix_runs_that_do_not_record_this_arms_config_decide_nothing(admission, tmp_path):
    """Found by a researcher's trial: gate 1 changed a parameter, so the plan's evolved config changed; stage 5 left
    out every cell report made for the old plan, yet judged the priority-mix runs made for it ("B4 confirmed: the
    evolved arm sheds batch more than critical"): they recorded only promotion: and arm:. A mix run counts only for
    the arm config it records, as a cell report does: one with none, or another config's digest, is left out with
    the reason, listed where the cell reports' are, and the shedding order is not judged on it."""
    from bot.bench.evidence import config_digest

    _, cells = admission
    old = config_digest({"kind": "EndpointPickerConfig", "plugins": [{"type": "an-earlier-plans-config"}]})

    def keywords(arm: str, n: int) -> str:
        if arm == "baseline":
            return _keywords(cells, arm)
        trial = f"synthetic,sample-data,not-a-measurement,promotion:7,arm:{arm}"  # the trial's, no epp-config
        return trial if n < 3 else f"{trial},epp-config:{old}"

    ctx, _ = _rehearse(admission, tmp_path, {"baseline": ADMITS_ALL, "evolved": SHEDS_BATCH}, keywords=keywords)
    used = json.loads(_read(ctx, f"{DOCS}/priority-mix.json"))
    assert used["used"] == {"baseline": 3, "evolved": 0}
    reasons = {r["report"]: r["reason"] for r in used["not_used"]}
    evolved = [f"evolved/priority-mix/rate-6/rep-{n}/results.json" for n in (1, 2, 3)]
    assert sorted(reasons) == evolved
    assert all(reasons[r].startswith("records no EPP config: ") for r in evolved[:2]), reasons
    assert reasons[evolved[2]].startswith(f"run.keywords epp-config:{old} is not the evolved arm's EPP config")
    # listed where the cell reports' reasons are: reports-not-used.json and verdicts.md
    listed = {r["report"]: r["reason"] for r in json.loads(_read(ctx, f"{DOCS}/reports-not-used.json"))}
    assert all(listed.get(r) == reasons[r] for r in evolved), listed
    page = _read(ctx, f"{DOCS}/verdicts.md")
    assert all(r in page.split("Reports not used")[-1] for r in evolved)
    assert "confirmed**: the evolved arm sheds" not in page
    [shed] = [
        v
        for v in json.loads(_read(ctx, f"{DOCS}/verdicts.json"))
        if v["admission"] or "priority mix planned but not judged" in v["flags"]
    ]
    assert shed["status"] == "inconclusive", shed["summary"]
    assert "no evolved priority-mix result could be used (3 left out: for 2 different reasons)" in shed["summary"]


def test_no_path_of_the_machine_is_committed_or_posted_with_the_mixs_reasons(admission, tmp_path):
    """F4 #3: with sample reports but no priority-mix result (the ordinary case: `bench run` does not run the mix),
    the reason "no priority-mix result could be used (<--results path>: ...)" was committed in verdicts.md/.json,
    priority-mix.json, B7.md and report.md, and posted in the PR body."""
    ctx, fork = _rehearse(admission, tmp_path, {})
    results = str(ctx.results_dir)
    used = json.loads(_read(ctx, f"{DOCS}/priority-mix.json"))
    assert "no priority-mix results found in the results directory" in used["not_judged"]
    grep = subprocess.run(
        ["git", "-C", str(fork), "grep", "-n", results, BRANCH], check=False, capture_output=True, text=True
    )
    assert grep.returncode == 1 and not grep.stdout, grep.stdout[:2000]
    body = (tmp_path / "work" / "pr" / "pull-request.md").read_text()
    assert "priority-mix" in body and results not in body


@pytest.mark.slow
def test_gate_1_stops_with_the_class_action_when_the_class_mapping_is_below_the_floor(admission, tmp_path, capsys):
    """Found by an admission researcher: a01 is below the fidelity floor because of the SLO-class mapping, which no
    `param` controls, yet the gate-1 stop offered only `param NAME: VALUE`. The stop now says what fits: the class
    is fixed by llm-d's priority, which priorities map to which class, and approving records the gap knowingly."""
    request, _ = admission
    work, fork = tmp_path / "work", tmp_path / "fork"
    assert main(["run", str(request), "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "stopped at gate 1" in out and "(BELOW the floor)" in out
    (below,) = [ln for ln in out.splitlines() if ln.startswith("  below the fidelity floor: ")]
    assert "no `param` changes this: the class is fixed by llm-d's priority field" in below
    assert "above 0 → `critical`, 0 → `standard`, below 0 → `sheddable`" in below
    assert "Approve to record the gap knowingly" in below and "`fidelity_floor`" in below
    assert "param " not in below.replace("no `param` changes", "")
    # the review report shows the split by class and an example of each class that disagrees
    thread = (work / "issue" / "thread.md").read_text()
    assert "By SLO class (sampled states, disagreements:" in thread and "- Example (`background`): " in thread


def test_one_run_per_arm_leaves_the_shedding_order_undecided(admission, tmp_path):
    """N2 #4: the plan runs 3 per arm; 1 run each (p 1e-23 from one run's requests) confirmed the shedding order."""
    ctx, _ = _rehearse(admission, tmp_path, {"baseline": ADMITS_ALL, "evolved": SHEDS_BATCH}, reps=1)
    [shed] = [
        v
        for v in json.loads(_read(ctx, f"{DOCS}/verdicts.json"))
        if v["hypothesis_id"].startswith("B") and "priority mix planned but not judged" in v["flags"]
    ]
    assert shed["status"] == "inconclusive", shed["summary"]
    assert "only 1 of 3 planned baseline runs and 1 of 3 planned evolved runs could be used" in shed["summary"]
    page = _read(ctx, f"{DOCS}/verdicts.md")
    assert f"**Not judged: {shed['hypothesis_id']} (the shedding order) is not decided.**" in page
    assert "confirmed**: the evolved arm sheds" not in page
    [found] = [f for f in review_gate(3, ctx) if f.check == "G3.priority-mix"]
    assert "1 of 3 planned evolved runs" in found.message


def test_mix_runs_at_another_rate_than_the_plans_decide_nothing(admission, tmp_path):
    """N2 #4: baseline runs at 10 req/s and evolved runs at 80 (the plan's is 6) confirmed the shedding order: an arm
    driven 8 times harder "sheds" from load alone. Runs of another load are left out with the difference."""
    arms = {"baseline": ADMITS_ALL, "evolved": SHEDS_BATCH}
    ctx, _ = _rehearse(admission, tmp_path, arms, rates={"baseline": 10, "evolved": 80})
    used = json.loads(_read(ctx, f"{DOCS}/priority-mix.json"))
    assert used["used"] == {"baseline": 0, "evolved": 0}
    assert "rate 10 req/s, the plan's is 6 (priority_mix.rate)" in used["not_judged"]
    [shed] = [
        v
        for v in json.loads(_read(ctx, f"{DOCS}/verdicts.json"))
        if "priority mix planned but not judged" in v["flags"]
    ]
    assert shed["status"] == "inconclusive" and "not the plan's priority mix" in shed["summary"]
    assert "confirmed**: the evolved arm sheds" not in _read(ctx, f"{DOCS}/verdicts.md")


def test_gate_1_reads_the_capped_map_as_capped_not_as_unbounded(admission, tmp_path):
    """Found by a researcher's trial: stage 2 says a client-keyed map the plugin caps is capped (a SUGGESTION naming
    the cap), but gate 1's own reading of the evolved program added the raw IMPORTANT "grows without limit"
    back beside it, since the capped finding's message differs: gate 1 could never converge for a per-tenant
    policy, and the PR listed the map twice. Gate 1 reads the cap in the plugin on the branch, as stage 2 wrote it."""
    request, _ = admission
    work, fork = tmp_path / "work", tmp_path / "fork"
    assert main(["run", str(request), "--work", str(work), "--fork", str(fork), "--quiet"]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    rows = [ln for ln in thread.splitlines() if "hazard.unbounded-client-keyed-state" in ln]
    assert rows and all(ln.startswith("| SUGGESTION |") for ln in rows), rows
    assert all("maxTrackedTenantCounts" in ln for ln in rows)
