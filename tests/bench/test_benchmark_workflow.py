"""benchmark.yml's own `run:` scripts, executed with bash against the fakes, a bare git remote and a fake `gh`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from tests.bench import fakes
from tests.bench.bench_branch import SLUG, git, make_branch
from tests.bench.workflow_runner import Runner, checkout, jobs, run_job

WORKFLOW = PROJECT_ROOT / ".github" / "workflows" / "benchmark.yml"
FAKE_GH = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_CLUSTER/gh-calls"
"""


@pytest.fixture
def github(tmp_path):
    bench, commit = make_branch(tmp_path)
    repo = bench.parents[2]
    git(repo, "branch", "-M", "promotion/7-" + SLUG)
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(origin)], check=True)
    env = fakes.install(tmp_path, effect={"evolved": -0.2}, seconds_per_run_second=0.05)
    (tmp_path / "bin" / "gh").write_text(FAKE_GH)
    (tmp_path / "bin" / "gh").chmod(0o755)
    runner_temp = tmp_path / "runner-temp"
    (runner_temp / "promote-venv" / "bin").mkdir(parents=True)
    (runner_temp / "promote-venv" / "bin" / "promote").symlink_to(Path(__import__("sys").executable).parent / "promote")
    env.update(
        RUNNER_TEMP=str(runner_temp),
        BENCHMARK_REMOTE=str(origin),
        PROMOTION_BENCH_STATE=str(tmp_path / "state"),
        GITHUB_SERVER_URL="https://github.invalid",
        GITHUB_REPOSITORY="org/fork",
    )
    inputs = {
        "issue": "7",
        "branch": f"promotion/7-{SLUG}",
        "commit": commit,
        "resume": "false",
        "runner_labels": '["self-hosted", "gpu"]',
        "pool": "gpu",
        "budget_gpu_minutes": "",
        "image_repo": "",
    }
    return tmp_path, origin, env, inputs


def test_benchmark_yml_runs_the_plan_commits_the_results_and_continues_the_promotion(github):
    root, origin, env, inputs = github
    r = Runner(root, env, inputs)
    ws = checkout(root, origin, inputs["commit"], "ws-plan")
    run_job(r, "plan", ws, {})
    assert r.outcomes["check"] == "success", r.last.stdout + r.last.stderr
    assert r.outputs["plan"]["slug"] == SLUG and int(r.outputs["plan"]["timeout"]) > 60
    needs = {"plan": r.outputs["plan"]}
    ws = checkout(root, origin, inputs["commit"], "ws-gpu")
    run_job(r, "benchmark", ws, needs)
    assert r.outcomes["run"] == "success", r.last.stderr
    state = json.loads((root / "cluster" / "state.json").read_text())
    assert state["up"] is False and state["teardowns"] >= 1
    ws = checkout(root, origin, inputs["commit"], "ws-publish")
    run_job(r, "publish", ws, needs)
    assert r.last.returncode == 0, r.last.stderr
    assert (root / "cluster" / "gh-calls").read_text().split() == [
        "workflow",
        "run",
        "promotion.yml",
        "-f",
        "issue=7",
        "-f",
        "step=benchmark-finished",
    ]
    files = git(origin, "ls-tree", "-r", "--name-only", inputs["branch"]).splitlines()
    results = [f for f in files if f.startswith(f"benchmarks/promotion/{SLUG}/results/")]
    assert f"benchmarks/promotion/{SLUG}/results/manifest.json" in results
    assert sum("benchmark_report_v0.2" in f for f in results) > 4
    assert git(origin, "rev-parse", f"{inputs['branch']}~1") == inputs["commit"]  # one commit on the approved one


def test_benchmark_yml_refuses_a_moved_branch(github):
    root, origin, env, inputs = github
    other = checkout(root, origin, inputs["commit"], "someone")
    (other / "extra.txt").write_text("pushed after gate 2\n")
    git(other, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "late", "--allow-empty")
    git(other, "push", "-q", "origin", f"HEAD:refs/heads/{inputs['branch']}")
    r = Runner(root, env, inputs)
    ws = checkout(root, origin, inputs["commit"], "ws-plan")
    run_job(r, "plan", ws, {})
    assert r.outcomes["check"] == "failure"
    assert "not the commit approved at gate 2" in r.last.stdout
    assert fakes.calls(root) == []  # nothing reached the cluster


def test_benchmark_yml_takes_the_runners_own_namespace_and_a_locked_one_is_left_alone(github):
    """PROMOTION_BENCH_NAMESPACE on the runner host comes before the repository variable; in a namespace another
    promotion holds, the run is refused and the always-step tears nothing down."""
    root, origin, env, inputs = github
    env = {**env, "PROMOTION_BENCH_NAMESPACE": "gpu-runner-2"}
    owner = "--from-literal=owner=9/" + "f" * 40 + "/1234"
    lock = ["configmap", "promotion-bench-lock", "-n", "gpu-runner-2"]
    held = subprocess.run(["kubectl", "create", *lock, owner, "--from-literal=since=T0"], env=env, check=False)
    assert held.returncode == 0
    r = Runner(root, env, inputs)
    ws = checkout(root, origin, inputs["commit"], "ws-plan")
    run_job(r, "plan", ws, {})
    needs = {"plan": r.outputs["plan"]}
    ws = checkout(root, origin, inputs["commit"], "ws-gpu")
    run_job(r, "benchmark", ws, needs)
    assert r.outcomes["run"] == "failure"
    said = (root / "summary.md").read_text()  # the run's refusal; the always-step, with no run to undo, is silent
    assert "namespace gpu-runner-2 is in use by promotion #9 (commit ffffffffffff, run 1234" in said, said
    assert "Benchmark not started" in said and "resume=true" not in said
    assert [c for c in fakes.calls(root) if c["tool"] in ("llmdbenchmark", "make")] == []  # no stand-up, no teardown
    calls = [c for c in fakes.calls(root) if c["tool"] == "kubectl"]
    assert calls and all(c["argv"][c["argv"].index("-n") + 1] == "gpu-runner-2" for c in calls)

    # the lock cleared, dispatched again: from the start, since the refused run measured nothing to resume
    subprocess.run(["kubectl", "delete", *lock], env=env, check=True)
    r = Runner(root, env, inputs)
    run_job(r, "benchmark", ws, needs)
    assert r.outcomes["run"] == "success", r.last.stderr
    standups = [c for c in fakes.calls(root) if c["event"] == "standup"]
    assert standups and all(c["argv"][c["argv"].index("-p") + 1] == "gpu-runner-2" for c in standups)
    state = json.loads((root / "cluster" / "state.json").read_text())
    assert state["up"] is False and state["configmaps"]["gpu-runner-2"] == {}


def _manifest(results: Path, report: str, mix: str | None = None) -> None:
    from bot.bench.run import manifest as mf

    cell = mf.CellRecord(
        treatment="evolved",
        workload="w",
        rate=6.0,
        repetition=1,
        run_treatment="w-rate-6-rep-1",
        setup_treatment="s",
        commit="c",
        start="t0",
        end="t1",
        gpu_minutes=1.0,
        exit_status=0,
        report=report,
        sha256="0" * 64,
    )
    runs = (
        [
            mf.MixRunRecord(
                arm="evolved",
                run_treatment="m",
                repetition=1,
                setup_treatment="s",
                start="t0",
                end="t1",
                gpu_minutes=1.0,
                ok=True,
                results=mix,
                sha256="0" * 64,
            )
        ]
        if mix
        else []
    )
    m = mf.Manifest(promotion="7", slug="s", commit="c", planned_gpu_minutes=1.0, cells=[cell], priority_mix=runs)
    mf.save(results, m)


def test_bench_files_lists_what_the_manifest_records_and_refuses_a_path_out_of_the_results(tmp_path, capsys):
    """`promote bench files` is what benchmark.yml's publish job copies: the manifest's own list, every file of it
    checked before one is printed, since the manifest comes from the job that ran the evolved code."""
    from bot.cli import main

    results = tmp_path / "results"
    (results / "evolved/mix").mkdir(parents=True)
    (results / "evolved/r.yaml").write_text("x")
    (results / "evolved/mix/results.json").write_text("{}")
    (results / "stray.log").write_text("not recorded")
    _manifest(results, "evolved/r.yaml", mix="evolved/mix/results.json")
    assert main(["bench", "files", str(results)]) == 0
    assert capsys.readouterr().out.split() == ["manifest.json", "evolved/mix/results.json", "evolved/r.yaml"]
    (tmp_path / "secret").write_text("outside")
    _manifest(results, "../secret")
    assert main(["bench", "files", str(results)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "not a plain path inside the results directory" in out.err
    (results / "link").symlink_to(tmp_path)
    _manifest(results, "link/secret")
    assert main(["bench", "files", str(results)]) == 2
    assert "symbolic link" in capsys.readouterr().err


def test_a_resume_on_a_runner_without_the_state_starts_from_the_uploaded_results_or_refuses(github):
    """resume=true may land on another GPU runner: it continues from the results the stopped run uploaded
    (`plan` hands them over as resume-results), never silently from zero; with nothing to resume it stops."""
    import shutil

    root, origin, env, inputs = github
    r = Runner(root, env, inputs)
    run_job(r, "plan", checkout(root, origin, inputs["commit"], "ws-plan"), {})
    needs = {"plan": r.outputs["plan"]}
    run_job(r, "benchmark", checkout(root, origin, inputs["commit"], "ws-gpu"), needs)
    assert r.outcomes["run"] == "success", r.last.stderr
    temp, state = Path(env["RUNNER_TEMP"]), root / "state" / f"7-{inputs['commit'][:12]}"
    (temp / "bench-results").rename(temp / "resume-results")  # what the download step puts there
    shutil.rmtree(state)  # another runner: no state of this promotion
    ran = len(fakes.calls(root))

    resumed = Runner(root, env, {**inputs, "resume": "true"})
    run_job(resumed, "benchmark", checkout(root, origin, inputs["commit"], "ws-gpu2"), needs)
    assert resumed.outcomes["run"] == "success", resumed.last.stdout + resumed.last.stderr
    assert (state / "results" / "manifest.json").is_file()
    assert not [c for c in fakes.calls(root)[ran:] if c["event"] in ("standup", "run-start")]  # nothing run again

    shutil.rmtree(state)
    shutil.rmtree(temp / "resume-results")
    shutil.rmtree(temp / "bench-results")
    ran = len(fakes.calls(root))
    refused = Runner(root, env, {**inputs, "resume": "true"})
    [step] = [s for s in jobs()["benchmark"]["steps"] if s.get("id") == "run"]
    assert refused.step("benchmark", step, checkout(root, origin, inputs["commit"], "ws-gpu3"), needs) != 0
    assert "resume=true, but there is nothing to resume: no results of issue 7" in refused.last.stdout
    assert "dispatch with resume=false to start over" in refused.last.stdout
    assert fakes.calls(root)[ran:] == [] and not (state / "results" / "manifest.json").exists()


def test_a_run_refused_before_it_started_says_why_in_the_summary_and_tears_nothing_down(github):
    """Found by the second re-verification (item 7): on a runner without make, the run step said so, but the job
    summary offered a resume of cells that never ran ("Finished cells are kept in ..."), the copy of the results
    failed (`cp: cannot stat`), and the always-run teardown took the namespace lock and ran llm-d-benchmark's
    teardown for a stack never stood up. Without the manifest (written under the lock, before any stand-up) the
    summary repeats the refusal and its fix, offers no resume, and nothing touches the cluster."""
    import os

    root, origin, env, inputs = github
    (root / "bin" / "make").unlink(missing_ok=True)
    sysdir = root / "sysbin"  # the system's tools, less make
    sysdir.mkdir()
    for d in map(Path, env["PATH"].split(os.pathsep)[1:]):
        for tool in d.iterdir() if d.is_dir() else []:
            if tool.name not in ("make", "gmake") and not (sysdir / tool.name).exists():
                (sysdir / tool.name).symlink_to(tool)
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{sysdir}"
    r = Runner(root, env, inputs)
    run_job(r, "plan", checkout(root, origin, inputs["commit"], "ws-plan"), {})
    needs = {"plan": r.outputs["plan"]}
    ran = len(fakes.calls(root))
    ws = checkout(root, origin, inputs["commit"], "ws-gpu")
    [step] = [s for s in jobs()["benchmark"]["steps"] if s.get("id") == "run"]
    assert r.step("benchmark", step, ws, needs) != 0
    assert "make not found on PATH" in r.last.stderr and "cannot stat" not in r.last.stderr, r.last.stderr
    run_job(r, "benchmark", ws, needs)
    assert r.outcomes["run"] == "failure"
    summary = (root / "summary.md").read_text()
    assert "### Benchmark not started (failure): nothing was built, stood up or run" in summary, summary
    assert "`promote bench run` refused to start: make not found on PATH: install it on this runner" in summary
    assert "resume=false" in summary and "resume=true" not in summary and "Finished cells" not in summary
    assert fakes.calls(root)[ran:] == []  # no lock taken, no teardown of a stack never stood up
