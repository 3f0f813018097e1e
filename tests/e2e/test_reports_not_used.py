"""Reports that are not evidence for this plugin reach gate 3 as findings, not only a table on a page."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from bot.cli import main
from bot.model import PipelineState
from tests.conftest import BRANCH, REQUEST, RESULTS, git


@pytest.mark.slow
def test_reports_for_other_parameters_are_raised_at_gate_3(tmp_path):
    example = tmp_path / "example"
    shutil.copytree(REQUEST.parent, example, ignore=shutil.ignore_patterns("results"))
    program = example / "best_program.py"
    text = program.read_text()
    assert "delta > 0.2 {" in text
    program.write_text(text.replace("delta > 0.2 {", "delta > 0.5 {"))  # the sample reports ran 0.2
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    code = main(["run", str(example / REQUEST.name), "--results", str(RESULTS), "--allow-sample-data", *args])
    assert code == 0
    for gate in (1, 2):
        assert main(["approve", str(gate), "--work", str(work), "--quiet", "--actor", "alice"]) == 0

    not_used = json.loads(
        git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/validation/reports-not-used.json")
    )
    assert not_used and all("0.5" in r["reason"] for r in not_used if r["report"].startswith("evolved/"))
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.open_gate == 3
    thread = (work / "issue" / "thread.md").read_text()
    assert "G3.report-invalid" in thread
    # One finding per reason, however many reports share it, naming the first of them.
    assert f"benchmark reports were not used: {not_used[0]['reason']}" in thread
    assert not_used[0]["report"] in thread


@pytest.mark.slow
def test_evolved_reports_that_ran_another_plugins_image_are_raised_at_gate_3(tmp_path):
    """Found by a new user: a scheduler promotion's sample reports said the evolved arm ran the routing example's
    image; gate 3 approved with no finding and the report printed that image as the testbed."""
    other = "ghcr.io/example-org/llm-d-router:v0.10.0-evolved-adaptive-scorer"
    pinned = "ghcr.io/example-org/llm-d-router:promotion-1-evolved-adaptive-scorer"  # what the plan pins
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    for path in (results / "evolved").rglob("benchmark_report*.yaml"):
        text = path.read_text()
        assert pinned in text
        path.write_text(text.replace(pinned, other))
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0
    for gate in (1, 2):
        assert main(["approve", str(gate), "--work", str(work), "--quiet", "--actor", "alice"]) == 0

    docs = "docs/promotion/evolved-adaptive-scorer/validation"
    not_used = json.loads(git(fork, "show", f"{BRANCH}:{docs}/reports-not-used.json"))
    evolved = [r for r in not_used if r["report"].startswith("evolved/")]
    assert evolved and len(evolved) == sum(1 for _ in (results / "evolved").rglob("benchmark_report*.yaml"))
    reason = (
        f"its evolved EPP image {other} is not the one this plan pins for both arms ({pinned}): tag "
        "'v0.10.0-evolved-adaptive-scorer', the plan's is 'promotion-1-evolved-adaptive-scorer', so it measured "
        "another build or plugin"
    )
    assert {r["reason"] for r in evolved} == {reason}
    thread = (work / "issue" / "thread.md").read_text()
    assert f"{len(evolved)} benchmark reports were not used: {evolved[0]['reason']}" in thread
    assert "G3.report-invalid" in thread
    # No kept report ran the other image, so the testbed names it nowhere (the table of reports not used does).
    verdicts = git(fork, "show", f"{BRANCH}:{docs}/verdicts.md")
    [line] = [ln for ln in verdicts.splitlines() if ln.startswith("**Testbed")]
    assert f"Router image: baseline `{pinned}` (from scenario.stack)." in line and other not in line  # the pin too
    assert other not in git(fork, "show", f"{BRANCH}:{docs}/testbed.json")


@pytest.mark.slow
def test_reports_benchmarked_on_other_plugin_code_are_not_evidence(tmp_path):
    """Found by a new user: reports of the cubic build counted for a branch whose plugin squares (same config)."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.bench import fakes

    base = ["--quiet", "--actor", "alice", "--approve", "all", "--allow-sample-data"]
    fork = tmp_path / "fork"
    assert (
        main(
            ["run", str(REQUEST), "--results", str(RESULTS), "--work", str(tmp_path / "w1"), "--fork", str(fork), *base]
        )
        == 0
    )
    stage4 = git(fork, "log", "--format=%H", "--grep", "^stage 4", BRANCH).split()[0]
    checkout = tmp_path / "checkout"
    git(fork, "worktree", "add", "-q", str(checkout), stage4)
    env = fakes.install(tmp_path / "gpu", effect={"evolved": -0.2}, seconds_per_run_second=0.0)
    bench = subprocess.run(
        [
            str(Path(sys.executable).parent / "promote"),
            "bench",
            "run",
            "benchmarks/promotion/evolved-adaptive-scorer",
            "--commit",
            stage4,
            "--results",
            str(tmp_path / "results"),
            "--workspace",
            str(tmp_path / "ws"),
            "-p",
            "b",
        ],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bench.returncode == 0, bench.stderr[-2000:]

    example = tmp_path / "example"
    shutil.copytree(REQUEST.parent, example, ignore=shutil.ignore_patterns("results"))
    program = example / "best_program.py"
    assert "delta*delta*delta" in program.read_text()
    program.write_text(program.read_text().replace("delta*delta*delta", "delta*delta"))  # same parameters
    fork2 = tmp_path / "fork2"
    args = ["--results", str(tmp_path / "results"), "--work", str(tmp_path / "w2"), "--fork", str(fork2)]
    assert main(["run", str(example / REQUEST.name), *args, "--quiet", "--actor", "alice", "--approve", "1,2"]) == 0
    not_used = json.loads(
        git(fork2, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/validation/reports-not-used.json")
    )
    # (the pod-failure runs, over before t = duration/2 with this fast fake, are left out first: no pod was deleted)
    code = [r for r in not_used if "+pod-failure/" not in r["report"]]
    assert code and all("measured on plugin code that differs from this branch's" in r["reason"] for r in code)
    assert all(stage4[:12] in r["reason"] for r in code)
    thread = (tmp_path / "w2" / "issue" / "thread.md").read_text()
    assert "G3.report-invalid" in thread


def test_a_rejudge_stage_5_could_not_judge_is_refused_and_leaves_no_trace(tmp_path, capsys):
    """Found by a new user: the decision stayed on record for a rejudge that exited 2, and status then said
    both "stage 5 is due" and "stage 5 done". The reports are asked before the decision is recorded."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--quiet", "--actor", "alice"]
    run = ["run", str(REQUEST), "--results", str(results), "--allow-sample-data", "--fork", str(fork)]
    assert main([*run, "--approve", "1,2", *args]) == 0
    before, head = (work / "state.json").read_text(), git(fork, "rev-parse", BRANCH)
    for report in results.rglob("*.yaml"):  # replaced by reports of another promotion
        report.write_text(report.read_text().replace("- promotion:1\n", "- promotion:2\n"))
    capsys.readouterr()
    assert main(["request-changes", "3", "--reason", "rejudge: replaced the reports", *args]) == 2
    err = capsys.readouterr().err
    assert "belongs to promotion '2' (run.keywords), not '1'" in err and "nothing was recorded" in err, err
    assert (work / "state.json").read_text() == before and git(fork, "rev-parse", BRANCH) == head


def test_results_given_to_run_at_the_open_gate_3_are_said_not_judged_with_the_command_that_judges_them(
    tmp_path, capsys
):
    """Found end to end (admission a01): `promote run --results R` at the gate 3 a run without results opened
    recorded R and re-printed the "no results" verdicts without a word; the user read "inconclusive" as the
    benchmark's answer. The run says the verdicts predate R and prints the rejudge, which then judges R."""
    from bot.review.gate3 import REJUDGE_RESULTS

    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--allow-sample-data", "--quiet", "--actor", "alice"]
    assert main(["run", str(REQUEST), "--approve", "1,2", *args]) == 0
    before = PipelineState.model_validate_json((work / "state.json").read_text())
    capsys.readouterr()
    assert main(["run", str(REQUEST), "--results", str(RESULTS), *args]) == 0
    out = capsys.readouterr().out
    command = f"promote request-changes 3 --reason '{REJUDGE_RESULTS}' --work {work}"
    assert "stopped at gate 3" in out and "NOT JUDGED YET" in out and command in out, out
    assert f"the reports now in {RESULTS}" in out, out
    after = PipelineState.model_validate_json((work / "state.json").read_text())
    assert after.stages[5] == before.stages[5] and json.loads((work / "run.json").read_text())["results"] == str(
        RESULTS
    )
    assert main(["request-changes", "3", "--reason", REJUDGE_RESULTS, "--work", str(work), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "stopped at gate 3" in out and "NOT JUDGED YET" not in out, out
    judged = PipelineState.model_validate_json((work / "state.json").read_text())
    assert judged.stages[5].inputs_hash != before.stages[5].inputs_hash
    assert main(["run", str(REQUEST), "--results", str(RESULTS), *args]) == 0  # the same reports: nothing to say
    assert "NOT JUDGED YET" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_pod_failure_claim_whose_pods_were_never_deleted_is_not_runnable_not_confirmed(tmp_path):
    """Found by the GPU operator: with every `kubectl delete pod` forbidden, B5 (e2e p95 no worse when a model-server
    pod fails) was confirmed on runs that never lost a pod, and gate 3 raised nothing. Now those runs are no
    evidence about pod failure: B5 is inconclusive, flagged "not runnable on this cluster", the runner's summary
    says why, and gate 3 raises the reports left out; the other claims are judged on their runs as before."""
    import subprocess
    import sys
    from pathlib import Path

    from tests.bench import fakes
    from tests.bench.bench_branch import SLUG

    fork = tmp_path / "fork"
    args = ["--quiet", "--actor", "alice", "--approve", "1,2"]
    assert main(["run", str(REQUEST), "--work", str(tmp_path / "w1"), "--fork", str(fork), *args]) == 0
    stage4 = git(fork, "log", "--format=%H", "--grep", "^stage 4", BRANCH).split()[0]
    checkout = tmp_path / "checkout"
    git(fork, "worktree", "add", "-q", str(checkout), stage4)
    # Every deletion forbidden; the runs are also over before t = duration/2 (seconds_per_run_second 0), as a run
    # whose load ends early is: either way no pod is deleted.
    env = fakes.install(tmp_path / "gpu", effect={"evolved": -0.2}, seconds_per_run_second=0.0, forbid_delete=True)
    where = ["--results", str(tmp_path / "results"), "--workspace", str(tmp_path / "ws"), "-p", "b", "--commit", stage4]
    bench = subprocess.run(
        [str(Path(sys.executable).parent / "promote"), "bench", "run", f"benchmarks/promotion/{SLUG}", *where],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bench.returncode == 0, bench.stderr[-2000:]
    assert "pod-failure: the fault never happened in 8 of 8 run(s) (" in bench.stdout
    assert "flagged 'not runnable on this cluster'" in bench.stdout

    fork2 = tmp_path / "fork2"
    run = ["run", str(REQUEST), "--results", str(tmp_path / "results"), "--work", str(tmp_path / "w2")]
    assert main([*run, "--fork", str(fork2), *args]) == 0
    docs = f"docs/promotion/{SLUG}/validation"
    verdicts = {v["hypothesis_id"]: v for v in json.loads(git(fork2, "show", f"{BRANCH}:{docs}/verdicts.json"))}
    b5 = verdicts["B5"]
    assert b5["status"] == "inconclusive" and b5["flags"] == ["not runnable on this cluster"] and not b5["effects"]
    assert "the pod-failure fault never happened in 8 of its 8 run(s)" in b5["summary"]
    assert verdicts["A1"]["effects"]  # the runs without a fault treatment count as before
    not_used = json.loads(git(fork2, "show", f"{BRANCH}:{docs}/reports-not-used.json"))
    assert sorted(r["report"].split("/")[1] for r in not_used) == ["load-spikes+pod-failure"] * 8
    table = git(fork2, "show", f"{BRANCH}:{docs}/verdicts.md")
    section = table.split("### B5 ")[1].split("\n### ")[0]
    assert "**Verdict: INCONCLUSIVE**" in section and "- not runnable on this cluster" in section
    thread = (tmp_path / "w2" / "issue" / "thread.md").read_text()
    # One finding per distinct reason: a run that ended before t = duration/2 and one whose delete was forbidden
    # give two (which, depends on the machine's speed); together they name all 8 reports.
    never = re.findall(
        r"(?:(\d+) benchmark reports were not used|benchmark report \S+ was not used): the fault of its run never "
        r"happened \(pod-failure: ",
        thread,
    )
    assert never and sum(int(n or 1) for n in never) == 8, thread
    assert "let it (for pod-failure, `kubectl delete pod` in the benchmark namespace must succeed" in thread


@pytest.mark.slow
def test_an_arm_with_no_report_at_all_blocks_gate_3_and_the_headline_says_it_was_not_measured(tmp_path):
    """Found by the evidence audit: with no evolved/ directory at all, gate 3 passed with 0 findings and the headline
    read "no regression found" about a plugin that was never run (nothing was left out, so nothing was raised)."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS / "baseline", results / "baseline")
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0
    for gate in (1, 2):
        assert main(["approve", str(gate), "--work", str(work), "--quiet", "--actor", "alice"]) == 0

    docs = "docs/promotion/evolved-adaptive-scorer/validation"
    verdicts = git(fork, "show", f"{BRANCH}:{docs}/verdicts.md")
    assert "Not measured: nothing was measured for the evolved arm (no report of it was used)" in verdicts
    assert "no regression found" not in verdicts
    thread = (work / "issue" / "thread.md").read_text()
    assert "G3.arm-not-measured" in thread
    assert "nothing measured for the evolved arm: no evolved report was used (the results hold none)" in thread
    assert "the results hold no evolved report, so no claim is measured" in thread  # the gate's headline
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.open_gate == 3
    assert "the review did not converge: the blocking ones are open" in thread


def _manifest_of(results, promotion: str = "1"):
    """The manifest `promote bench run` would have written for every report now under ``results``."""
    from bot.bench.layout import parse_layout
    from bot.bench.run import manifest as mf

    cells = []
    for path in sorted(results.rglob("benchmark_report*")):
        rel = path.relative_to(results)
        k = parse_layout(rel)
        cells.append(
            mf.CellRecord(
                treatment=k.treatment,
                workload=k.workload,
                rate=k.rate,
                repetition=k.repetition,
                run_treatment=f"{k.workload}-rate-{k.rate:g}-rep-{k.repetition}",
                setup_treatment=k.treatment,
                commit="0" * 40,
                start="2026-03-23T10:00:00Z",
                end="2026-03-23T10:02:00Z",
                gpu_minutes=10.0,
                exit_status=0,
                report=rel.as_posix(),
                sha256=mf.sha256_file(path),
            )
        )
    manifest = mf.Manifest(
        promotion=promotion, slug="evolved-adaptive-scorer", commit="0" * 40, planned_gpu_minutes=3040.0, cells=cells
    )
    mf.save(results, manifest)
    return manifest


@pytest.mark.slow
def test_reports_edited_or_added_after_the_run_its_manifest_records_are_left_out(tmp_path):
    """Found by the evidence audit: evolved reports scaled by 0.8 after the run confirmed A3, and the GPU time was
    credited to them; nothing compared a report with the SHA-256 its manifest.json recorded, or looked for one the
    manifest does not list."""
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    manifest = _manifest_of(results)
    edited = sorted((results / "evolved" / "cache-warmup").rglob("benchmark_report*"))
    assert edited
    for path in edited:  # any change of bytes counts, whatever it does to the numbers
        path.write_text(path.read_text() + "# improved\n")
    added = results / "evolved" / "multiturn" / "rate-20" / "rep-99" / edited[0].name
    added.parent.mkdir(parents=True)
    added.write_text(edited[0].read_text().replace("uid:", "uid: added-", 1))
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0
    for gate in (1, 2):
        assert main(["approve", str(gate), "--work", str(work), "--quiet", "--actor", "alice"]) == 0

    docs = "docs/promotion/evolved-adaptive-scorer/validation"
    not_used = {
        r["report"]: r["reason"] for r in json.loads(git(fork, "show", f"{BRANCH}:{docs}/reports-not-used.json"))
    }
    rel = lambda p: p.relative_to(results).as_posix()  # noqa: E731
    assert {rel(p) for p in edited} | {rel(added)} == set(not_used)
    assert all("differ from the SHA-256 the run's manifest.json recorded" in not_used[rel(p)] for p in edited)
    assert not_used[rel(added)].startswith("not listed in the run's manifest.json")
    thread = (work / "issue" / "thread.md").read_text()
    assert f"{len(edited)} benchmark reports were not used: its bytes differ from the SHA-256" in thread
    assert "G3.report-invalid" in thread
    # GPU time is credited to the runs whose report is still the one recorded, and says how many are not.
    verdicts = git(fork, "show", f"{BRANCH}:{docs}/verdicts.md")
    runs = len(manifest.cells)
    assert f"over {runs - len(edited)} cell run(s); {len(edited)} more recorded run(s) are not credited" in verdicts


@pytest.mark.slow
def test_reports_of_a_cell_the_plan_does_not_run_are_not_counted_as_used(tmp_path):
    """DJ1 (consistency4 #3): s01's stage 5 counted 12 reports of load-spikes@30, a cell its plan does not run, among
    "72 reports used"; reports-not-used.json was empty. Here gate 2 excludes the sanity-random guards, so that cell
    leaves the plan while the sample results still hold its 14 reports: they are listed not used (cell not in the
    plan), out of the testbed count, and gate 3 suggests, never blocks, since nothing is wrong with them."""
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    assert main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", *args]) == 0
    assert main(["approve", "1", "--work", str(work), "--quiet", "--actor", "alice"]) == 0
    reason = "exclude: C4, C5, C6"
    assert main(["request-changes", "2", "--reason", reason, "--work", str(work), "--quiet", "--actor", "alice"]) == 0
    assert main(["approve", "2", "--work", str(work), "--quiet", "--actor", "alice"]) == 0
    docs = "docs/promotion/evolved-adaptive-scorer/validation"
    not_used = json.loads(git(fork, "show", f"{BRANCH}:{docs}/reports-not-used.json"))
    aside = [r["report"] for r in not_used if r["reason"].startswith("cell not in the plan")]
    assert len(aside) == 14 and all("/sanity-random/rate-10/" in r for r in aside)
    page = git(fork, "show", f"{BRANCH}:{docs}/verdicts.md")
    used = int(re.search(r"\*\*Testbed\*\* \((\d+) reports used\)", page).group(1))
    assert used == 140 - len(not_used), used
    thread = (work / "issue" / "thread.md").read_text()
    [line] = [t for t in thread.splitlines() if "cell not in the plan" in t and "`G3." in t]
    assert "SUGGESTION" in line and "G3.report-unused" in line and "G3.report-invalid" not in line
