"""`promote bench run` against fake llmdbenchmark / kubectl / make / docker on PATH (tests/bench/fakes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bot.bench.run import manifest as mf
from tests.bench import fakes
from tests.bench.bench_branch import make_branch


def _promote(env: dict, *argv, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "promote"), *map(str, argv)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _args(bench: Path, commit: str, root: Path, *extra) -> list:
    return [
        "bench",
        "run",
        bench,
        "--commit",
        commit,
        "--results",
        root / "results",
        "--workspace",
        root / "ws",
        "--namespace",
        "bench",
        "--warmup-seconds",
        "1",
        *extra,
    ]


@pytest.fixture
def cluster(tmp_path):
    env = fakes.install(tmp_path, effect={"evolved": -0.2}, noise=0.02, seconds_per_run_second=0.1)
    bench, commit = make_branch(tmp_path)
    return tmp_path, env, bench, commit


def _reports(root: Path) -> dict[str, bytes]:
    res = root / "results"
    return {p.relative_to(res).as_posix(): p.read_bytes() for p in sorted(res.rglob("benchmark_report*"))}


def _plan_cells(bench: Path):
    from bot.bench.evaluation_spec import load_evaluation_spec

    spec = load_evaluation_spec((bench / "evaluation.yaml").read_text())
    return [type("C", (), {"repetitions": spec.repetitions_by_cell[c.label()]}) for c in spec.cells]


def _events(root: Path, event: str) -> list[dict]:
    return [c for c in fakes.calls(root) if c["event"] == event]


def test_dry_run_prints_every_command_line(cluster):
    root, env, bench, commit = cluster
    proc = _promote(env, *_args(bench, commit, root, "--dry-run"))
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("$ ")]
    assert any("make -C" in ln and "image-build-epp" in ln for ln in lines)
    assert sum(" standup " in ln and " -s 8" not in ln for ln in lines) == 1  # one stand-up: the arms swap the EPP
    assert sum(" -s 8" in ln for ln in lines) == 1
    assert any(" run " in ln and "--workload-file-path" in ln and "-e" in ln for ln in lines)
    assert sum(" teardown " in ln for ln in lines) == 1
    assert fakes.calls(root) == []  # nothing ran


def test_a_dry_run_charges_no_wall_time(cluster, monkeypatch, capsys):
    """A dry run ran nothing, so the bot's own time between steps (longer on a loaded machine) is no GPU time:
    "0.001 spent" appeared where a dry run must say "0 spent". A clock that jumps a minute per reading shows it."""
    import itertools
    import types

    from bot.bench.run import runner
    from bot.cli import main

    root, env, bench, commit = cluster
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    ticks = itertools.count(step=60.0)
    monkeypatch.setattr(runner, "time", types.SimpleNamespace(monotonic=lambda: next(ticks)))
    assert main([str(a) for a in _args(bench, commit, root, "--dry-run")]) == 0
    assert "GPU-minutes: 0 spent of " in capsys.readouterr().out


def test_bench_run_plans_no_mix_for_a_class_reading_router_and_refuses_an_older_plan_that_had_one(tmp_path):
    """Found promoting a new program (newprog finding 5): a router that reads the request's class got a priority
    mix no hypothesis of it is judged on. `promote bench run` plans as stage 4 now does (no mix), and an
    evaluation.yaml an older stage 4 wrote with a mix is refused before any GPU time, not run."""
    env = fakes.install(tmp_path, effect={"evolved": -0.2}, noise=0.02, seconds_per_run_second=0.1)
    bench, commit = make_branch(tmp_path / "same", signals=["InFlightRequests", "SLOClass"])
    proc = _promote(env, *_args(bench, commit, tmp_path / "same", "--dry-run"))
    assert proc.returncode == 0, proc.stderr
    assert not list(bench.rglob("priority-mix*")) and "priority mix" not in proc.stdout + proc.stderr
    bench, commit = make_branch(tmp_path / "older", signals=["InFlightRequests", "SLOClass"], older_mix=True)
    proc = _promote(env, *_args(bench, commit, tmp_path / "older", "--dry-run"))
    assert proc.returncode == 2, proc.stderr
    assert "evaluation.yaml plans a priority mix but this bot plans no priority mix" in proc.stderr
    assert "routing policy" in proc.stderr and "re-run stage 4" in proc.stderr


def test_the_commit_may_be_abbreviated_but_must_be_the_checkouts(cluster):
    root, env, bench, commit = cluster
    proc = _promote(env, *_args(bench, commit[:9], root, "--dry-run"))
    assert proc.returncode == 0, proc.stderr
    assert commit in proc.stderr  # the full sha is what the run records and tags the image with
    for wrong in ("0" * 40, "deadbeef", "main"):
        proc = _promote(env, *_args(bench, wrong, root, "--dry-run"))
        assert proc.returncode == 2 and f"the checkout is at {commit[:12]} but --commit names" in proc.stderr
    assert fakes.calls(root) == []


def test_full_plan_run_builds_stands_up_runs_and_tears_down(cluster):
    root, env, bench, commit = cluster
    proc = _promote(env, *_args(bench, commit, root))
    assert proc.returncode == 0, proc.stderr
    m = mf.load(root / "results")
    assert m is not None and m.commit == commit
    assert m.image is not None and m.image.digest.startswith("sha256:") and m.image.commit == commit
    builds = [c for c in fakes.calls(root) if c["tool"] == "make" and c.get("target") == "image-build-epp"]
    assert [b["commit"] for b in builds] == [commit]  # built from exactly the approved commit
    assert (
        len(_events(root, "standup")) == 1 and len(_events(root, "swap")) == 1 and len(_events(root, "teardown")) == 1
    )
    finished = Counter(c["name"] for c in _events(root, "run-finished") if not c["name"].startswith("warmup"))
    assert len(m.cells) == sum(finished.values()) and all(n == 2 for n in finished.values())  # both arms once
    assert all(c.image_digest == m.image.digest and c.exit_status == 0 for c in m.cells)
    # The results evaluate: every report is evidence for its arm.
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec

    spec = load_evaluation_spec((bench / "evaluation.yaml").read_text())
    rs = load_evidence(root / "results", policy_from_spec(spec, allow_sample_data=False, image_digest=m.image.digest))
    assert rs.rejected == [] and len(rs.loaded) == len(m.cells)
    assert m.spent_gpu_minutes > 0


@pytest.mark.slow
def test_native_output_is_converted(tmp_path):
    env = fakes.install(tmp_path, mode="native", seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    assert any(c["tool"] == "benchmark-report" for c in fakes.calls(tmp_path))
    assert len(_reports(tmp_path)) == len(mf.load(tmp_path / "results").cells)


@pytest.mark.slow
@pytest.mark.parametrize(
    "failure, status",
    [({"standup": True}, 1), ({"run": "spikes-rate-20-rep-1"}, 1), ({"swap": True}, 1)],
    ids=["standup", "run", "swap"],
)
def test_every_failure_ends_with_the_stack_torn_down(tmp_path, failure, status):
    env = fakes.install(tmp_path, fail=failure, seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path))
    assert proc.returncode == status, proc.stderr
    assert "--resume" in proc.stderr
    calls = fakes.calls(tmp_path)
    assert [c["event"] for c in calls if c["event"] in ("standup", "teardown")][-1] == "teardown"
    state = json.loads((tmp_path / "cluster" / "state.json").read_text())
    assert state["up"] is False


@pytest.mark.slow
def test_cancellation_tears_down(tmp_path):
    env = fakes.install(tmp_path, hang="spikes-rate-10-rep-2", seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "promote"), *map(str, _args(bench, commit, tmp_path))],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while not any(c.get("name") == "spikes-rate-10-rep-2" for c in _events(tmp_path, "run-start")):
        assert time.time() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "cancelled" in err and "the stack was torn down. Resume with the same command plus --resume" in err
    assert json.loads((tmp_path / "cluster" / "state.json").read_text())["up"] is False
    assert _events(tmp_path, "teardown")


@pytest.mark.slow
def test_budget_stop_says_what_remains_and_what_more_would_buy(tmp_path):
    # Each fake cell holds its 2 GPUs for at least 1 wall second, so the 20 cell runs cost at least
    # 20 x 2/60 = 0.67 GPU-minutes however fast the machine is: a cap of 0.3 must stop the run part-way.
    # Estimates: (1 s / 60 + 3 s overhead) x 2 GPUs = 0.13 GPU-minutes per cell, so at least one cell runs.
    env = fakes.install(tmp_path, effect={"evolved": -0.2}, noise=0.02, seconds_per_run_second=1.0)
    bench, commit = make_branch(tmp_path)
    root = tmp_path
    proc = _promote(
        env,
        *_args(
            bench,
            commit,
            root,
            "--budget-gpu-minutes",
            "0.3",
            "--estimate-standup-minutes",
            "0",
            "--estimate-run-overhead-minutes",
            "0.05",
            "--fixed",  # the fixed plan's budget stop (the sequential one: test_bench_run_sequential.py)
        ),
    )
    m = mf.load(root / "results")
    assert proc.returncode == 3, proc.stderr
    assert "stopped before the GPU budget would be exceeded" in proc.stderr
    assert "more GPU-minutes would run them" in proc.stderr and "A1" in proc.stderr
    left = int(
        proc.stderr.split("stopped before the GPU budget would be exceeded: ")[1].split(" cell run(s) remain")[0]
    )
    assert left > 0 and len(m.cells) + left == 2 * sum(c.repetitions for c in _plan_cells(bench))
    # No cell starts once spent + its estimate (at least what cells actually cost) passes the cap: only the last
    # cell and the teardown can overrun it.
    last = max((c.gpu_minutes for c in m.cells), default=0.0)
    teardown = sum(e.gpu_minutes for e in m.events if e.kind == "teardown")
    assert m.spent_gpu_minutes <= 0.3 + last + teardown
    assert json.loads((root / "cluster" / "state.json").read_text())["up"] is False


def _calls_so_far(root: Path) -> int:
    """Finished lines only: a fake may be half-way through appending one while the test reads."""
    p = root / "cluster" / "calls.jsonl"
    return p.read_bytes().count(b"\n") if p.is_file() else 0


def _wait_for_calls(root: Path, count: int, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while _calls_so_far(root) < count and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.slow
def test_ten_kills_then_resume_give_the_uninterrupted_reports_and_no_cell_twice(tmp_path):
    import random

    ref_root, kill_root = tmp_path / "ref", tmp_path / "kill"
    for r in (ref_root, kill_root):
        r.mkdir()
    bench, commit = make_branch(tmp_path)  # one approved commit, two clusters
    env_ref = fakes.install(ref_root, effect={"evolved": -0.2}, seconds_per_run_second=0.1)
    assert _promote(env_ref, *_args(bench, commit, ref_root)).returncode == 0
    env = fakes.install(kill_root, effect={"evolved": -0.2}, seconds_per_run_second=0.1)
    rng = random.Random(7)
    kills = 0
    for attempt in range(40):
        argv = _args(bench, commit, kill_root, *(["--resume"] if attempt else []))
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "promote"), *map(str, argv)],
            env=env,
            start_new_session=True,
            stderr=subprocess.DEVNULL,
        )
        if kills < 10:
            # Kill once this attempt has made progress (a few more cluster calls), at a random moment within a
            # step: a wall-clock delay alone could outlast the work left after many resumes and kill nothing.
            _wait_for_calls(kill_root, _calls_so_far(kill_root) + rng.randint(1, 3), proc)
            time.sleep(rng.uniform(0.0, 0.4))
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)  # the job and everything it started
                proc.wait()
                kills += 1
                continue
        assert proc.wait(timeout=300) == 0
        break
    assert kills == 10
    assert _reports(kill_root) == _reports(ref_root)
    m = mf.load(kill_root / "results")
    assert len({(c.treatment, c.run_treatment) for c in m.cells}) == len(m.cells)
    finished = Counter(
        (c["setup"], c["name"]) for c in _events(kill_root, "run-finished") if not c["name"].startswith("warmup")
    )
    assert all(n == 1 for n in finished.values()), finished  # a finished run is adopted, never run again


@pytest.mark.slow
def test_the_pod_failure_treatment_deletes_a_model_server_pod_at_half_the_duration(tmp_path):
    from tests.bench.bench_branch import hypotheses, small_request
    from tests.bench.test_bench_plan import _h

    # Only the runs with a deletion take their 3 s of load in real time; the plain ones need not.
    faulty = {f"spikes+pod-failure-rate-10-rep-{n}": 3.0 for n in range(1, 21)}
    env = fakes.install(tmp_path, fault={"baseline": 0.2, "evolved": 0.1}, seconds_per_run_second=0.05, slow=faulty)
    request = small_request(
        workloads=[{"name": "spikes", "profile": "shared_prefix_synthetic", "rates": [10], "duration_s": 3}]
    )
    hyps = hypotheses([_h("B1", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    bench, commit = make_branch(tmp_path, request, hyps)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--warmup-seconds", "0"))
    assert proc.returncode == 0, proc.stderr
    m = mf.load(tmp_path / "results")
    faulty = [c for c in m.cells if c.workload == "spikes+pod-failure"]
    plain = [c for c in m.cells if c.workload == "spikes"]
    assert faulty and plain and all(c.fault is None for c in plain)
    for c in faulty:
        assert c.fault is not None and c.fault.ok and c.fault.target == "ms-decode-0"
        # From the harness pod's own start time; never early, late only by the time it took to see the pod run.
        assert c.fault.planned_at_s == 1.5 and 1.5 <= c.fault.issued_at_s < 2.5
    deletions = _events(tmp_path, "delete-pod")
    assert len(deletions) == len(faulty)  # one per faulty run, in both arms, none in plain runs
    assert all(1.4 < d["at"] < 2.9 for d in deletions)  # measured by the fake from the harness start
    hits = {c["name"]: c["fault_hit"] for c in _events(tmp_path, "run-finished")}
    assert all(hits[c.run_treatment] for c in faulty) and not any(hits[c.run_treatment] for c in plain)


@pytest.mark.slow
def test_the_fast_epp_swap_with_re_warm_leaves_no_carry_over_in_the_verdicts(tmp_path):
    """One stand-up + EPP swap + re-warm gives the reports (and so the verdicts) of a stand-up per arm, in either
    arm order; without the re-warm the fake cluster's cache carry-over shows up in the reports."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec
    from bot.hypotheses import load_hypotheses
    from bot.stats.verdicts import evaluate

    bench, commit = make_branch(tmp_path)
    spec = load_evaluation_spec((bench / "evaluation.yaml").read_text())
    hyps = load_hypotheses(bench.parents[2] / "docs/promotion/evolved-adaptive-scorer/hypotheses")
    outcomes = {}
    for name, extra in {
        "swap": [],
        "standup-per-arm": ["--no-fast-swap"],
        "evolved-first": ["--arm-order", "evolved,baseline"],
        "no-rewarm": ["--warmup-seconds", "0"],
    }.items():
        root = tmp_path / name
        root.mkdir()
        env = fakes.install(root, effect={"evolved": -0.2}, carry_over=-0.3, seconds_per_run_second=0.05)
        # the same runs in every variant (--fixed): the sequential order is checked in test_bench_run_sequential.py
        argv = _args(bench, commit, root, *extra, "--fixed")  # a later --warmup-seconds overrides the default 1
        assert _promote(env, *argv).returncode == 0
        m = mf.load(root / "results")
        rs = load_evidence(
            root / "results", policy_from_spec(spec, allow_sample_data=False, image_digest=m.image.digest)
        )
        outcomes[name] = (_reports(root), [(v.hypothesis_id, v.status, v.summary) for v in evaluate(hyps, rs)])
        swaps, standups = len(_events(root, "swap")), len(_events(root, "standup"))
        assert (standups, swaps) == ((2, 0) if name == "standup-per-arm" else (1, 1)), name
    assert outcomes["swap"] == outcomes["standup-per-arm"] == outcomes["evolved-first"]
    assert outcomes["no-rewarm"][0] != outcomes["swap"][0]  # the carry-over is real in the fake: the test can fail


@pytest.mark.parametrize("fail", [False, True], ids=["finished", "standup-failed"])
def test_raw_tool_output_stays_in_the_step_log_never_in_the_manifest(tmp_path, fail):
    """Found by the GPU operator: manifest.json, which benchmark.yml commits to the promotion branch, kept the last
    500 characters of every step's output: the stand-up's `curl ... https://<inference route>` demo line and the
    runs' result paths in the workspace. Now that output stays in the step log under --workspace."""
    from bot.bench.run.runner import STEP_LOG

    route = "https://llmd-inference-gateway-route-bench.apps.gpu-prod.corp.example.com"  # the fake's (chatty)
    env = fakes.install(tmp_path, chatty=True, seconds_per_run_second=0.05, fail={"standup": fail})
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--fixed"))
    assert proc.returncode == (1 if fail else 0), proc.stderr
    log = (tmp_path / "ws" / STEP_LOG).read_text()
    ws = str((tmp_path / "ws").resolve())
    assert route in log and "curl -sk" in log and (fail or f"done -> {ws}/" in log)  # the fake said them
    manifest = (tmp_path / "results" / "manifest.json").read_text()
    for said in (route, "curl", "apps.gpu-prod", ws, str(tmp_path)):
        assert said not in manifest, said
    assert route not in proc.stdout + proc.stderr  # a public job log is no place for it either
    m = mf.load(tmp_path / "results")
    assert m.events and all(e.detail == "" for e in m.events if e.ok and e.kind != "image")
    if fail:
        [stop] = [e for e in m.events if e.kind == "stop"]
        assert stop.detail.startswith("standup of baseline failed (exit 1; its output is in promote-bench-steps.log")
        assert f"{ws}/{STEP_LOG}" in proc.stdout


def test_an_image_given_by_hand_is_not_recorded_as_built_and_counts_only_as_the_plans_pinned_image(cluster):
    """Found by the GPU operator: `--image` ran any image, the manifest said it was built from the approved commit,
    and stage 5 bound the evolved reports to it instead of the plan's pinned image. Now an image whose tag is not
    the pinned one is refused before anything runs; one that is runs, recorded as not built here."""
    from bot.bench.evaluation_spec import load_evaluation_spec
    from bot.bench.evidence import load_evidence, policy_from_spec

    root, env, bench, commit = cluster
    spec = load_evaluation_spec((bench / "evaluation.yaml").read_text())
    digest = "sha256:" + "a" * 64
    proc = _promote(env, *_args(bench, commit, root, "--image", f"docker.io/mallory/any-epp:latest@{digest}"))
    assert proc.returncode == 2, proc.stderr
    assert f"is not the image this plan pins for the evolved arm ({spec.evolved_image})" in proc.stderr
    assert fakes.calls(root) == [] and not (root / "results").exists()  # nothing ran, nothing recorded

    pinned = spec.evolved_image.replace("ghcr.io/", "registry.example:5000/")  # the tag names the build
    proc = _promote(env, *_args(bench, commit, root, "--image", f"{pinned}@{digest}", "--fixed"))
    assert proc.returncode == 0, proc.stderr
    m = mf.load(root / "results")
    assert m.image is not None and m.image.commit is None and m.image.built is False and m.image.digest == digest
    assert not [c for c in fakes.calls(root) if c["tool"] == "make"]  # no build
    assert mf.recorded_image_built(root / "results") is False
    # Stage 5's rules (bot.stages.plan_reports.load_reports) bind the evolved reports to the plan's pin, not to the
    # manifest's record: with the pin the plan has they count; had the plan pinned another build they would not.
    rules = {"image_digest": digest, "image_ref": m.image.ref, "image_built": m.image.built}
    used = load_evidence(root / "results", policy_from_spec(spec, allow_sample_data=False, **rules))
    assert used.rejected == [] and len(used.loaded) == len(m.cells)
    other = spec.model_copy(update={"evolved_image": "ghcr.io/o/r:promotion-7-another-build"})
    # Both arms ran the one image the plan runs (bot.bench.experiment), so neither counts against another pin.
    from bot.bench.errors import ReportError

    with pytest.raises(ReportError) as left:
        load_evidence(root / "results", policy_from_spec(other, allow_sample_data=False, **rules))
    assert f"({len(m.cells)} rejected; first: baseline/" in str(left.value)
    assert "not the one this plan pins for both arms (ghcr.io/o/r:promotion-7-another-build)" in str(left.value)


def test_gate_2s_at_most_is_the_plan_readmes_and_the_runners_default_cap(tmp_path):
    """Found by the GPU operator: gate 2 said "3,040 GPU-minutes at most" (the fixed plan) while the runner's default
    cap was 3,120 (the sequential design's horizons). One figure now, BenchmarkPlan.most_gpu_minutes, in all three."""
    import re

    from bot.cli import main
    from tests.conftest import BRANCH, REQUEST, git

    work, fork = tmp_path / "w", tmp_path / "fork"
    assert main(["run", str(REQUEST), "--work", str(work), "--fork", str(fork), "--quiet", "--approve", "1,2"]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    # written alike everywhere, without thousands separators (consistency finding 9: "3040" beside "3,120")
    [said] = re.findall(r"GPU-minutes, at most (\S+) \(the cap `promote bench run`", thread)
    most = float(said)
    assert f"{most:g}" == said and re.search(
        rf"\d+ GPU-minutes as a fixed plan \(\d+% of the naive plan\), {said} at most", thread
    )
    stage4 = git(fork, "log", "--format=%H", "--grep", "^stage 4", BRANCH).split()[0]
    readme = git(fork, "show", f"{stage4}:benchmarks/promotion/evolved-adaptive-scorer/README.md")
    assert f"At most **{most:g} GPU-minutes**: the figure gate 2 approved" in readme
    assert f"| sequential, at most | {most:g} |" in readme  # this plan's sequential maximum is the larger
    checkout = tmp_path / "checkout"
    git(fork, "worktree", "add", "-q", str(checkout), stage4)
    for extra in ([], ["--fixed"]):
        argv = ["bench", "run", "benchmarks/promotion/evolved-adaptive-scorer", "--commit", stage4, "--dry-run"]
        where = ["--results", str(tmp_path / "r"), "--workspace", str(tmp_path / "ws"), "-p", "b"]
        proc = subprocess.run(
            [str(Path(sys.executable).parent / "promote"), *argv, *where, *extra],
            cwd=checkout,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert f"GPU-minutes: 0 spent of {most:g} budgeted" in proc.stdout, extra


@pytest.mark.slow
def test_a_run_that_leaves_no_results_is_not_filed_with_an_earlier_attempts_report(tmp_path):
    """benchmark.yml keeps one workspace per promotion and commit across dispatches: a harness that exits 0
    without results must not have the previous attempt's directory (another stack, another effect) filed as
    its measurement."""
    env = fakes.install(tmp_path, effect={"evolved": 0.5}, seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)

    def run(results: str) -> subprocess.CompletedProcess:
        argv = _args(bench, commit, tmp_path, "--fixed", "--warmup-seconds", "0")
        argv[argv.index(tmp_path / "results")] = tmp_path / results
        return _promote(env, *argv)

    assert run("first").returncode == 0
    fakes.configure(
        tmp_path, effect={"evolved": -0.2}, seconds_per_run_second=0.05, no_results=["evolved/spikes-rate-20-rep-2"]
    )
    proc = run("second")
    assert proc.returncode == 0, proc.stderr
    m = mf.load(tmp_path / "second")
    assert not [c for c in m.cells if c.treatment == "evolved" and c.run_treatment == "spikes-rate-20-rep-2"]
    [aside] = m.rejected
    assert aside.cell == "evolved/spikes-rate-20-rep-2" and "left no v0.2 report" in aside.reason
    assert "set aside evolved/spikes-rate-20-rep-2" in proc.stderr and "1 set aside" in proc.stdout + proc.stderr


def _pod_failure_branch(tmp_path, duration_s: int = 3):
    from tests.bench.bench_branch import hypotheses, small_request
    from tests.bench.test_bench_plan import _h

    request = small_request(
        workloads=[{"name": "spikes", "profile": "shared_prefix_synthetic", "rates": [10], "duration_s": duration_s}]
    )
    return make_branch(
        tmp_path, request, hypotheses([_h("B1", ["spikes+pod-failure"], "e2e_p95", direction="no-worse")])
    )


def test_kubectl_missing_stops_a_plan_with_pod_failure_cells_before_anything_is_built_or_stood_up(tmp_path):
    import shutil

    env = fakes.install(tmp_path)
    (tmp_path / "bin" / "kubectl").unlink()
    only = tmp_path / "only-git"  # the machine's own kubectl must not be found either
    only.mkdir()
    (only / "git").symlink_to(shutil.which("git"))
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{only}"
    bench, commit = _pod_failure_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert (
        "kubectl not found on PATH: install it on this runner; the namespace lock needs it" in proc.stderr
        and "the plan's pod-failure cells (spikes+pod-failure@10) need it" in proc.stderr
    )
    assert "Nothing was built or stood up" in proc.stderr and "Traceback" not in proc.stderr
    assert fakes.calls(tmp_path) == [] and not (tmp_path / "results").exists()


def test_a_runner_without_make_or_the_container_runtime_is_told_to_install_them_before_the_lock(tmp_path):
    """Admin findings #7: without `make` the run took the namespace lock, then failed in the image build with
    "make: No such file or directory; fix the path or its permissions". The build's tools are now checked up
    front, the container runtime as CONTAINER_RUNTIME names it, and only when this run builds the image."""
    import shutil

    from bot.bench.run.commands import Target
    from bot.bench.run.tools import needed

    env = fakes.install(tmp_path)
    (tmp_path / "bin" / "make").unlink()
    only = tmp_path / "only-git"  # the machine's own make and podman must not be found either
    only.mkdir()
    (only / "git").symlink_to(shutil.which("git"))
    env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{only}"
    env["CONTAINER_RUNTIME"] = "podman"
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert "make not found on PATH: install it on this runner; the EPP image build runs" in proc.stderr
    assert "podman not found on PATH: install it on this runner; the EPP image is built, pushed" in proc.stderr
    assert "docker" not in proc.stderr and "git not found" not in proc.stderr and "kubectl not found" not in proc.stderr
    assert "Nothing was built or stood up" in proc.stderr and "Traceback" not in proc.stderr
    assert fakes.calls(tmp_path) == [] and not (tmp_path / "results").exists()  # no lock taken, nothing run
    # an image given by hand (or one a resumed run recorded) is not built: none of the build's tools is needed
    target = Target(spec="s", namespace="n", workspace=tmp_path, container_runtime="podman")
    assert set(needed(target, [])) == {"llmdbenchmark", "kubectl"}
    assert set(needed(target, [], builds_image=True)) == {"llmdbenchmark", "kubectl", "git", "make", "podman"}


@pytest.mark.slow
def test_an_unreachable_cluster_is_reported_as_kubectl_failing_in_the_console_manifest_and_step_log(tmp_path):
    # The runs with a deletion last their 2 s of load, long enough for the failed lookups; the plain ones need not.
    faulty = {f"spikes+pod-failure-rate-10-rep-{n}": 2.0 for n in range(1, 21)}
    env = fakes.install(tmp_path, kubectl_get_fails="refused", seconds_per_run_second=0.05, slow=faulty)
    bench, commit = _pod_failure_branch(tmp_path, duration_s=2)
    proc = _promote(env, *_args(bench, commit, tmp_path, "--warmup-seconds", "0", "--fixed"))
    assert proc.returncode == 0, proc.stderr
    faults = [c.fault for c in mf.load(tmp_path / "results").cells if c.fault is not None]
    assert faults and all(
        not f.ok and f.detail.startswith("kubectl get pods failed (exit 1, connection refused") for f in faults
    )
    assert "harness pod never ran" not in proc.stderr
    assert "kubectl get pods failed (exit 1): kubectl: The connection to the server" in proc.stderr
    log = (tmp_path / "ws" / "promote-bench-steps.log").read_text()
    assert "kubectl get pods failed (exit 1): kubectl: The connection to the server 127.0.0.1:8080 was refused" in log


def test_resume_with_nothing_to_resume_stops_instead_of_starting_over(cluster):
    root, env, bench, commit = cluster
    proc = _promote(env, *_args(bench, commit, root, "--resume"))
    assert proc.returncode == 2, proc.stderr
    assert (
        f"nothing to resume in {root / 'results'} (no manifest.json); run without --resume to start over" in proc.stderr
    )
    assert fakes.calls(root) == [] and not (root / "results").exists()


def test_the_manifest_names_the_actions_runs_that_made_the_results_and_a_resume_adds_its_own(tmp_path):
    """benchmark.yml passes its run id: stage 5 on GitHub judges the results only as the answer of a run named
    here (``branch_history.other_runs``); a resumed run's results are the run's that started them too."""
    env = fakes.install(tmp_path, fail={"standup": True}, seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)
    refused = _promote(env, *_args(bench, commit, tmp_path, "--github-run", "12ab"))
    assert refused.returncode == 2 and "'12ab' is not a GitHub Actions run id" in refused.stderr, refused.stderr
    assert _promote(env, *_args(bench, commit, tmp_path, "--github-run", "7")).returncode == 1
    assert json.loads((tmp_path / "results" / "manifest.json").read_text())["runs"] == [7]
    assert _promote(env, *_args(bench, commit, tmp_path, "--resume", "--github-run", "9")).returncode == 1
    assert _promote(env, *_args(bench, commit, tmp_path, "--resume", "--github-run", "9")).returncode == 1
    assert json.loads((tmp_path / "results" / "manifest.json").read_text())["runs"] == [7, 9]
