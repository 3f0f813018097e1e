"""A scheduler whose evolved order the planned cells leave inert, promoted end to end: never "transferred".

Found by CB1 (sched-e2e findings 1 and 6): s01 orders by SLO class and every cell sends priority 0; s02 orders
shortest prompt first and every load-spikes prompt (912 tokens) is longer than incumbentInputTokens (512). On those
cells the plugin only re-weights queue length, yet A1 and B7 (queue-ordering-authority) came out confirmed, the
report's headline and the PR said "Transferred", and for s02 gate 2 raised nothing. The corpus templates are
promoted on sample reports whose evolved load-spikes TTFT is 7% lower (so both A1 cells clear the noise floor).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT
from bot.cli import main
from bot.forge.local import LocalForge
from tests.e2e.perturbed import scale_latency

pytestmark = pytest.mark.slow

CORPUS = PROJECT_ROOT / "examples" / "corpus"
SCHEDULERS = {
    "s01": ("s01_slo_aging_scheduler.go", "slo-aging-scheduler", "G2.priority-exercised", "priority 0"),
    "s02": ("s02_sjf_starvation_guard.go", "sjf-starvation-guard", "G2.prompt-length-exercised", "912 tokens"),
}


@pytest.mark.parametrize("sid", sorted(SCHEDULERS))
def test_a_schedulers_order_claims_on_inert_cells_are_not_measurable_everywhere(sid, tmp_path, capsys, monkeypatch):
    source, slug, check, why = SCHEDULERS[sid]
    request = yaml.safe_load((CORPUS / "promote" / "s01-scheduling.yaml").read_text())
    request.update(id=sid, title=slug, source=str(CORPUS / source), plugin_name=slug)

    def planted(results: Path) -> bool:
        return scale_latency(results, "load-spikes", "time_to_first_token", 0.93)

    forge, branch, work, path, results = _promote(request, tmp_path, planted)

    def doc(rel: str) -> str:
        return forge.read_file(branch, f"docs/promotion/{slug}/{rel}").decode()

    verdicts = {v["hypothesis_id"]: v for v in json.loads(doc("validation/verdicts.json"))}
    hyps = {h: doc(f"hypotheses/{h}.md") for h in verdicts}
    order = sorted(h for h, text in hyps.items() if h.startswith("A") or "source: queue-ordering-authority" in text)
    assert len(order) == 2  # A1 and the queue-ordering-authority gap
    for h, v in verdicts.items():
        set_aside = "not measurable on these cells" in v["flags"]
        assert set_aside == (h in order), (h, v["flags"])
        assert v["status"] != "confirmed" or not set_aside
    assert check in verdicts[order[0]]["summary"] and why in verdicts[order[0]]["summary"]
    headline = doc("report.md").split("\n")[2]
    assert headline.startswith("**Not measurable on these cells:") and "ransferred" not in headline
    pr = (work / "pr" / "pull-request.md").read_text()
    assert "## Claims (Track A: none measurable on these cells)" in pr and "transferred" not in pr.split("\n")[0]
    thread = (work / "issue" / "thread.md").read_text()
    raised = [line for line in thread.splitlines() if f"`{check}#" in line]
    assert raised and f"{', '.join(order)} will be reported not measurable on these cells" in raised[0]
    # CF1 (consistency3 #2): set aside, they cost nothing, so the fix says what excluding them does and does not do.
    assert "approving as is costs nothing extra for them" in raised[0]
    assert "changes neither the plan nor its GPU time" in raised[0] and "until you approve" in raised[0]
    _plan_is_what_stage_5_judges(forge, branch, slug, verdicts, order, thread)
    _bench_run_plans_as_stage_4(tmp_path / "fork", branch, slug, tmp_path)
    _plan_cli_plans_as_stage_4(forge, branch, slug, path, tmp_path, capsys)
    capsys.readouterr()
    assert main(["status", "--work", str(work)]) == 0
    status = capsys.readouterr().out.splitlines()[0]
    assert re.search(r"\(Track A none measurable on these cells\)$", status), status
    _evaluate_agrees_with_stage_5(forge, branch, slug, path, results, tmp_path, capsys, monkeypatch)


def _plan_is_what_stage_5_judges(forge, branch, slug, verdicts: dict, order: list[str], thread: str) -> None:
    """CF1 (consistency3 #1): the approved plan sizes, weighs and prices exactly the hypotheses stage 5 judges, at
    the levels stage 5 starts them at; the set-aside ones get a "not measurable" row instead of a power, and gate
    2's line counts them apart. Before, A1 and B7 took 0.45 of alpha each and the guards were planned at 0.00056,
    while stage 5 shared alpha among the 9 judged ones."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.stats.multiplicity import normalized_weights
    from bot.stats.unjudged import UNJUDGED_REASONS

    bench = f"benchmarks/promotion/{slug}"
    spec = load_evaluation_spec(forge.read_file(branch, f"{bench}/evaluation.yaml").decode())
    judged = sorted(h for h, v in verdicts.items() if not set(v["flags"]) & set(UNJUDGED_REASONS))
    assert sorted(spec.hypotheses) == judged and not set(order) & set(spec.hypotheses)
    assert set(spec.decision.weights) <= set(judged)
    readme = forge.read_file(branch, f"{bench}/README.md").decode()
    levels = dict(re.findall(r"^\| ([ABC]\d+) \| [\w-]+ \| [^|]+ \| ([\d.]+) \|", readme, re.M))
    stage5 = normalized_weights(judged, spec.decision.weights) * spec.decision.alpha
    assert levels == {h: f"{w:.2g}" for h, w in zip(judged, stage5, strict=True)}
    for h in order:
        assert re.search(rf"^\| {h} \| — .*\| not measurable on these cells: ", readme, re.M), h
    cells = [line for line in readme.split("## Cells", 1)[1].splitlines() if line.startswith("| ")]
    assert not any(h in line.rsplit("|", 2)[1] for line in cells for h in order)
    line = next(t for t in thread.splitlines() if "approving plans" in t)
    assert f"approving plans {len(judged)} benchmarked" in line
    assert f"{len(order)} not measurable on these cells ({', '.join(order)})" in line
    for h in order:  # gate 2's hypothesis table lists no cells for them either
        assert re.search(
            rf"^\| {h} \|.*\(not measurable on these cells: no cells, no alpha\) \| none \|$", thread, re.M
        )


def _bench_run_plans_as_stage_4(fork: Path, branch: str, slug: str, tmp_path: Path) -> None:
    """`promote bench run` plans again from the branch and refuses a plan other than stage 4's: it must set the
    same hypotheses aside (before CF1 it would have planned A1 and B7 and refused stage 4's plan)."""
    tree = tmp_path / "tree"
    subprocess.run(["git", "-C", str(fork), "worktree", "add", "-q", str(tree), branch], check=True)
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    argv = ["bench", "run", tree / f"benchmarks/promotion/{slug}", "--commit", head.stdout.strip(), "--dry-run"]
    argv += ["--results", tmp_path / "bench-results", "--workspace", tmp_path / "ws", "--namespace", "bench"]
    assert main([str(a) for a in argv]) == 0


def _plan_cli_plans_as_stage_4(forge, branch, slug, request: Path, tmp_path: Path, capsys) -> None:
    """CH1: `promote plan --translation` on the request and stage 2's translation plans the hypotheses stage 4 planned,
    at the same levels (it used to plan A1/B7 with alpha and cells); without it, it says the set-aside was not
    applied and how to apply it."""
    from bot.bench.evaluation_spec import load_evaluation_spec

    docs = tmp_path / "plan-docs"
    for rel in forge.list_files(branch, f"docs/promotion/{slug}/"):
        if not rel.endswith("/"):
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            (docs / rel).write_bytes(forge.read_file(branch, rel))
    docs = docs / f"docs/promotion/{slug}"
    bench = f"benchmarks/promotion/{slug}"
    stage4 = load_evaluation_spec(forge.read_file(branch, f"{bench}/evaluation.yaml").decode())

    def rows(readme: str) -> dict[str, str]:
        return {row.split(" | ", 1)[0]: row for row in re.findall(r"^\| ([ABC]\d+ \|.*)$", readme, re.M)}

    def plan(out: str, *extra) -> tuple[object, str, str]:
        capsys.readouterr()
        argv = ["plan", request, "--hypotheses", docs / "hypotheses", "--out", tmp_path / out, *extra]
        assert main([str(a) for a in argv]) == 0
        line = capsys.readouterr().out
        written = tmp_path / out / bench
        return (
            load_evaluation_spec((written / "evaluation.yaml").read_text()),
            (written / "README.md").read_text(),
            line,
        )

    spec, readme, line = plan("plan-given", "--translation", docs / "translation.json")
    assert spec.hypotheses == stage4.hypotheses and spec.decision == stage4.decision, line
    assert rows(readme) == rows(forge.read_file(branch, f"{bench}/README.md").decode())
    assert "set-aside not applied" not in line, line
    assert any("| not measurable on these cells: " in row for row in rows(readme).values())
    spec, _, line = plan("plan-unchecked")
    assert spec.hypotheses != stage4.hypotheses  # A1 and B7 planned with alpha and cells
    assert "WARNING: not-measurable set-aside not applied" in line and "pass --translation <translation.json>" in line


def _promote(request: dict, tmp_path: Path, adjust=None) -> tuple[LocalForge, str, Path, Path, Path]:
    """`promote run` of ``request`` on its sample reports (``adjust``ed: it returns whether it could):
    (forge, branch, work, promotion.yaml, results)."""
    path = tmp_path / "promotion.yaml"
    path.write_text(yaml.safe_dump(request))
    results = tmp_path / "results"
    cmd = [sys.executable, str(PROJECT_ROOT / "examples/weighted-adaptive/make_sample_reports.py")]
    proc = subprocess.run(
        [*cmd, "--request", str(path), "--out", str(results)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    assert adjust is None or adjust(results)
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--approve", "all"]
    assert main(["run", str(path), "--results", str(results), "--allow-sample-data", *args]) == 0
    return LocalForge(fork, work), f"promotion/{request['id']}-{request['plugin_name']}", work, path, results


def _evaluate_agrees_with_stage_5(
    forge, branch, slug, request: Path, results: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    """CC4: `promote evaluate` on the branch's hypotheses, spec and translation gives stage 5's statuses (the same
    set-aside); without a translation it says the set-aside was not checked, and how to give it one."""
    checkout = tmp_path / "checkout"
    for prefix in (f"docs/promotion/{slug}/", f"benchmarks/promotion/{slug}/", "deploy/config/"):
        for rel in forge.list_files(branch, prefix):
            if not rel.endswith("/") and (data := forge.read_file(branch, rel)) is not None:
                (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
                (checkout / rel).write_bytes(data)
    docs, spec = checkout / f"docs/promotion/{slug}", checkout / f"benchmarks/promotion/{slug}/evaluation.yaml"
    stage5 = {v["hypothesis_id"]: v["status"] for v in json.loads((docs / "validation/verdicts.json").read_text())}
    loose = tmp_path / "loose"  # the same files where no branch layout says whose they are
    shutil.copytree(docs / "hypotheses", loose / "hyp")
    shutil.copy(spec, loose / "evaluation.yaml")

    def evaluate(out: str, hyps: Path, *extra) -> tuple[dict[str, str], str]:
        capsys.readouterr()
        argv = ["evaluate", "--hypotheses", hyps, "--results", results, "--out", tmp_path / out, "--request", request]
        assert main([str(a) for a in [*argv, "--allow-sample-data", *extra]]) == 0
        line = capsys.readouterr().out
        verdicts = json.loads((tmp_path / out / "verdicts.json").read_text())
        return {v["hypothesis_id"]: v["status"] for v in verdicts}, line

    on_branch, line = evaluate("ev-branch", docs / "hypotheses", "--spec", spec)
    assert on_branch == stage5 and "set-aside not checked" not in line, line
    given, line = evaluate(
        "ev-given", loose / "hyp", "--spec", loose / "evaluation.yaml", "--translation", docs / "translation.json"
    )
    assert given == stage5 and "set-aside not checked" not in line, line
    unchecked, line = evaluate("ev-unchecked", loose / "hyp", "--spec", loose / "evaluation.yaml")
    assert "WARNING: not-measurable set-aside not checked: pass --translation <translation.json>" in line, line
    assert "Not-measurable set-aside not checked" in (tmp_path / "ev-unchecked" / "verdicts.md").read_text()
    assert unchecked != stage5  # judged as if the cells exercised the plugin
    _reproducing_agrees(docs, checkout, results, tmp_path, stage5, monkeypatch)
    _set_aside_findings_say_what_would_decide_them(docs)


def _reproducing_agrees(docs: Path, checkout: Path, results: Path, tmp_path: Path, stage5: dict, monkeypatch) -> None:
    """CF2 (consistency3 3): the findings' "Reproducing" command, copied and run in the branch's checkout, gives
    stage 5's statuses; it used to omit --spec/--request, and confirmed B7, which stage 5 had set aside."""
    hid = sorted(stage5)[0]  # every findings document prints the same command
    text = (docs / "findings" / f"{hid}.md").read_text().split("## Reproducing", 1)[1]
    command = re.search(r"`(promote evaluate [^`]+)`", text).group(1)
    out = tmp_path / "ev-repro"
    argv = shlex.split(command.replace("<results dir>", shlex.quote(str(results))).replace("<dir>", str(out)))
    monkeypatch.chdir(checkout)
    assert main(argv[1:]) == 0, command
    verdicts = json.loads((out / "verdicts.json").read_text())
    assert {v["hypothesis_id"]: v["status"] for v in verdicts} == stage5, command
    # a scheduler's texts point to stage 5's waiting-queue section: the reproduction writes it too
    queues = "## Waiting queues" in (docs / "validation/verdicts.md").read_text()
    assert ("## Waiting queues" in (out / "verdicts.md").read_text()) == queues


def test_an_admitter_that_sheds_nothing_on_the_cells_plans_and_runs_its_priority_mix_alone(
    tmp_path, capsys, monkeypatch
):
    """CC4, DB1: a02 sheds only sheddable traffic and every cell sends priority 0, so every benchmarked hypothesis
    is set aside. Stage 4 used to plan and price all their cells anyway (1948 GPU-minutes at most, 1600 of them on
    runs that decide nothing); now the plan is the priority mix alone, stage 5 judges the shedding order on its runs
    with no cell report at all, and `promote plan` and `promote evaluate` (--translation) apply the same rule."""
    from tests.bench.priority_mix_data import ADMITS_ALL, SHEDS_BATCH, config_keyword, write_run

    request = yaml.safe_load((CORPUS / "promote" / "a02-admission.yaml").read_text())
    request["source"] = str(CORPUS / "a02_gaie_saturation_shedder.go")

    def mix_only(results: Path) -> bool:  # no cell report: the plan has no cell
        configs = {arm: config_keyword(results, arm) for arm in ("baseline", "evolved")}  # the script's mix runs'
        shutil.rmtree(results)
        for arm, counts in (("baseline", ADMITS_ALL), ("evolved", SHEDS_BATCH)):
            for n in (1, 2, 3):
                kws = f"promotion:a02,arm:{arm},{configs[arm]},sample-data"
                write_run(results, arm, n, counts, kws, model=request["stack"]["model"])
        return True

    forge, branch, work, path, results = _promote(request, tmp_path, mix_only)
    slug, bench = request["plugin_name"], f"benchmarks/promotion/{request['plugin_name']}"
    thread = (work / "issue" / "thread.md").read_text()
    assert "approving plans 0 cells, priority mix only: 348 GPU-minutes (6 runs," in thread
    [raised] = [line for line in thread.splitlines() if "`G2.priority-exercised#" in line]
    assert "stage 4 plans 0 cells, priority mix only" in raised and "spends the plan's cells' GPU time" not in raised
    assert "exclude: A1'" not in raised
    files = forge.list_files(branch, f"{bench}/")
    assert f"{bench}/experiment.yaml" not in files and not [f for f in files if "/workloads/" in f]
    assert f"{bench}/priority-mix/experiment.yaml" in files
    spec = yaml.safe_load(forge.read_file(branch, f"{bench}/evaluation.yaml"))
    assert spec["cells"] == [] and spec["hypotheses"] == {} and spec["priority_mix"]["runs"] == 6
    readme = forge.read_file(branch, f"{bench}/README.md").decode()
    assert "0 cells, priority mix only" in readme and "No cell experiment is written" in readme
    limits = json.loads(forge.read_file(branch, f"{bench}/run-limits.json"))
    assert limits["planned_gpu_minutes"] == limits["budget_gpu_minutes"] == 348
    verdicts = json.loads(forge.read_file(branch, f"docs/promotion/{slug}/validation/verdicts.json"))
    [shed] = [v for v in verdicts if v["admission"]]
    assert shed["status"] == "confirmed" and "judged on the priority mix (per-class admit rate)" in shed["flags"]
    aside = [v["hypothesis_id"] for v in verdicts if "not measurable on these cells" in v["flags"]]
    assert {*aside, shed["hypothesis_id"]} == set(spec["not_benchmarked"])
    assert len(aside) == 10
    page = forge.read_file(branch, f"docs/promotion/{slug}/validation/verdicts.md").decode()
    assert "(the plan: 348 GPU-minutes in all)" in page and "confirmed**: the evolved arm sheds" in page
    assert "**SAMPLE DATA (--allow-sample-data)" in page  # the mix's runs are: said as for cell reports
    assert "Benchmark reports: no cell report read, the plan has no cells (0 cells, priority mix only): " in page
    _plan_cli_plans_as_stage_4(forge, branch, slug, path, tmp_path, capsys)
    docs = tmp_path / "plan-docs" / f"docs/promotion/{slug}"  # written by _plan_cli_plans_as_stage_4
    argv = ["plan", path, "--hypotheses", docs / "hypotheses", "--translation", docs / "translation.json"]
    assert main([str(a) for a in [*argv, "--out", tmp_path / "plan-line"]]) == 0
    assert "plan: 0 cells, priority mix only: 6 runs, 348 GPU-minutes; 10 hypotheses not measurable" in (
        capsys.readouterr().out
    )
    _evaluate_mix_only_as_stage_5(forge, branch, slug, path, results, tmp_path, capsys)


def _evaluate_mix_only_as_stage_5(forge, branch, slug, request: Path, results: Path, tmp_path: Path, capsys) -> None:
    """`promote evaluate --spec --translation` on the mix-only plan's results gives stage 5's statuses."""
    checkout = tmp_path / "checkout"
    for prefix in (f"docs/promotion/{slug}/", f"benchmarks/promotion/{slug}/"):
        for rel in forge.list_files(branch, prefix):
            if not rel.endswith("/") and (data := forge.read_file(branch, rel)) is not None:
                (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
                (checkout / rel).write_bytes(data)
    docs, spec = checkout / f"docs/promotion/{slug}", checkout / f"benchmarks/promotion/{slug}/evaluation.yaml"
    stage5 = {v["hypothesis_id"]: v["status"] for v in json.loads((docs / "validation/verdicts.json").read_text())}
    argv = ["evaluate", "--hypotheses", docs / "hypotheses", "--results", results, "--out", tmp_path / "ev"]
    argv += ["--request", request, "--spec", spec, "--translation", docs / "translation.json", "--allow-sample-data"]
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 0
    verdicts = json.loads((tmp_path / "ev" / "verdicts.json").read_text())
    assert {v["hypothesis_id"]: v["status"] for v in verdicts} == stage5, capsys.readouterr().out


def _set_aside_findings_say_what_would_decide_them(docs: Path) -> None:
    """CF2 (consistency3 5): a set-aside claim's devil's advocate said "more repetitions or a quieter cluster may
    still resolve it", beside Results saying the cells cannot exercise it."""
    verdicts = json.loads((docs / "validation/verdicts.json").read_text())
    aside = [v["hypothesis_id"] for v in verdicts if "not measurable on these cells" in v["flags"]]
    assert aside
    for hid in aside:
        text = (docs / "findings" / f"{hid}.md").read_text()
        devil = text.split("## Devil's advocate", 1)[1].split("## Findings classification", 1)[0]
        assert "may still resolve it" not in devil and "cells that exercise it" in devil, (hid, devil)
