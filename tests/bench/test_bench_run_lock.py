"""The namespace lock of `promote bench run` (bot.bench.run.lock) against the fake cluster: two promotions whose
benchmark jobs land on one cluster and namespace must not stand up over, swap or tear down each other's stack."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.bench.run import manifest as mf
from bot.bench.run.lock import GONE, LOCK_NAME, RUNNING, UNKNOWN, Holder, holder_state, this_host
from tests.bench import fakes
from tests.bench.bench_branch import make_branch, small_request
from tests.bench.test_bench_run import _args, _events, _promote


def _configmaps(root: Path, namespace: str = "bench") -> dict:
    state = json.loads((root / "cluster" / "state.json").read_text())
    return state.get("configmaps", {}).get(namespace, {})


def _files(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def _touching(root: Path, where: Path) -> list[dict]:
    """The cluster calls (stand-up, swap, run, teardown) made for the workspace ``where``."""
    return [c for c in fakes.calls(root) if c["tool"] == "llmdbenchmark" and any(str(where) in a for a in c["argv"])]


def _kubectl(env: dict, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(["kubectl", *argv], env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def two(tmp_path):
    """One fake cluster, two promotions (#7 and #9) with their own branches, results and workspaces."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = fakes.install(tmp_path, effect={"evolved": -0.2}, seconds_per_run_second=0.05, hang="spikes-rate-20-rep-1")
    a = make_branch(tmp_path / "a")
    b = make_branch(tmp_path / "b", small_request(id="9"))
    return tmp_path, env, a, b


def test_the_fake_kubectl_refuses_to_create_a_configmap_that_exists(tmp_path):
    env = fakes.install(tmp_path)
    assert _kubectl(env, "create", "configmap", "x", "-n", "ns", "--from-literal=owner=1/c/r").returncode == 0
    again = _kubectl(env, "create", "configmap", "x", "-n", "ns", "--from-literal=owner=2/d/s")
    assert again.returncode == 1 and 'Error from server (AlreadyExists): configmaps "x" already exists' in again.stderr
    got = _kubectl(env, "get", "configmap", "x", "-n", "ns", "-o", "json")
    assert json.loads(got.stdout)["data"] == {"owner": "1/c/r"}
    assert _kubectl(env, "get", "configmap", "x", "-n", "other", "-o", "json").returncode == 1  # per namespace
    assert _kubectl(env, "delete", "configmap", "x", "-n", "ns").returncode == 0
    missing = _kubectl(env, "delete", "configmap", "x", "-n", "ns")
    assert missing.returncode == 1 and "(NotFound)" in missing.stderr
    assert _kubectl(env, "delete", "configmap", "x", "-n", "ns", "--ignore-not-found").returncode == 0


@pytest.mark.slow
def test_a_second_promotion_is_refused_while_the_first_holds_the_namespace_and_the_first_is_untouched(two):
    root, env, (bench_a, commit_a), (bench_b, commit_b) = two
    first = subprocess.Popen(
        [str(Path(sys.executable).parent / "promote"), *map(str, _args(bench_a, commit_a, root / "a"))],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 120
    while not any(c.get("name") == "spikes-rate-20-rep-1" for c in _events(root, "run-start")):
        assert time.time() < deadline and first.poll() is None
        time.sleep(0.1)
    before, calls = _files(root / "a" / "results"), len(fakes.calls(root))
    assert _configmaps(root)[LOCK_NAME]["data"]["owner"].startswith(f"7/{commit_a}/")

    second = _promote(env, *_args(bench_b, commit_b, root / "b"))
    assert second.returncode == 2, second.stderr
    assert f"namespace bench is in use by promotion #7 (commit {commit_a[:12]}" in second.stderr
    assert "nothing was stood up or torn down" in second.stderr
    assert f"kubectl delete configmap {LOCK_NAME} -n bench --ignore-not-found" in second.stderr  # a stale lock
    assert "PROMOTION_BENCH_NAMESPACE" in second.stderr
    # benchmark.yml's always-step after the refused run: it must not tear down the stack #7 is measuring on.
    teardown = _promote(env, "bench", "teardown", *_args(bench_b, commit_b, root / "b")[2:])
    assert teardown.returncode == 2 and "in use by promotion #7" in teardown.stderr
    assert _touching(root, root / "b") == [] and not (root / "b" / "results").exists()
    assert [c for c in fakes.calls(root)[calls:] if c["tool"] in ("llmdbenchmark", "make", "docker")] == []
    assert _files(root / "a" / "results") == before
    assert json.loads((root / "cluster" / "state.json").read_text())["up"] is True
    assert _configmaps(root)[LOCK_NAME]["data"]["owner"].startswith(f"7/{commit_a}/")  # still #7's

    # The same promotion and commit with --resume while #7's run is going: a mistyped empty --results is refused
    # before the lock is touched, and a copy of its results is not resumed over the live run.
    empty = _promote(env, *_args(bench_a, commit_a, root / "c", "--resume"))
    assert empty.returncode == 2 and "nothing to resume in" in empty.stderr, empty.stderr
    shutil.copytree(root / "a" / "results", root / "d" / "results")
    copy = _promote(env, *_args(bench_a, commit_a, root / "d", "--resume"))
    assert copy.returncode == 2 and f"(process {first.pid} on this host) is still going" in copy.stderr, copy.stderr
    locks = [c for c in fakes.calls(root)[calls:] if c["event"] == "configmap" and c["verb"] != "get"]
    assert [(c["verb"], c["ok"]) for c in locks] == [("create", False)] * 3  # #9's run, teardown, the copy's
    assert _configmaps(root)[LOCK_NAME]["data"]["owner"] == f"7/{commit_a}/{this_host()}-{first.pid}"
    assert _touching(root, root / "c") == _touching(root, root / "d") == []

    first.send_signal(signal.SIGTERM)  # the first is cancelled: its stack is torn down and its lock released
    _, err = first.communicate(timeout=120)
    assert first.returncode == 130, err
    assert _configmaps(root) == {}
    assert [c["event"] for c in _touching(root, root / "a") if c["event"] in ("standup", "teardown")] == [
        "standup",
        "teardown",
    ]


@pytest.mark.slow
def test_the_lock_is_released_after_a_failed_run(tmp_path):
    env = fakes.install(tmp_path, fail={"run": "spikes-rate-20-rep-1"}, seconds_per_run_second=0.05)
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path))
    assert proc.returncode == 1 and "failed" in proc.stderr, proc.stderr
    locks = [c for c in fakes.calls(tmp_path) if c["event"] == "configmap" and c["verb"] != "get"]
    assert [(c["verb"], c["ok"]) for c in locks] == [("create", True), ("delete", True)]
    assert _configmaps(tmp_path) == {}


def _manifest(results: Path, commit: str) -> None:
    """A results directory a killed run of promotion #7 left: something to resume."""
    results.mkdir(parents=True)
    mf.save(results, mf.Manifest(promotion="7", slug=small_request().slug, commit=commit, planned_gpu_minutes=1))


def _lock(env: dict, owner: str) -> None:
    argv = ["create", "configmap", LOCK_NAME, "-n", "bench", f"--from-literal=owner={owner}", "--from-literal=since=T0"]
    assert _kubectl(env, *argv).returncode == 0


def _dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    return int(proc.stdout)


@pytest.mark.slow
def test_a_resume_takes_over_its_own_lock_only_when_its_run_is_gone(two):
    """A job killed outright leaves its lock; the next --resume of the same promotion and commit takes it over when
    that run is gone (a process of this host that exited, or this very GitHub run's earlier step), and never a
    run still going or one it cannot see; a run of another promotion (or the same one without --resume) is refused."""
    root, env, (bench_a, commit_a), (bench_b, commit_b) = two
    fakes.configure(root, effect={"evolved": -0.2}, seconds_per_run_second=0.05)
    _manifest(root / "a" / "results", commit_a)

    _lock(env, f"7/{commit_a}/4242")  # another GitHub run: it may still be measuring on another runner
    other = _promote(env, *_args(bench_b, commit_b, root / "b"))
    assert other.returncode == 2 and "in use by promotion #7" in other.stderr and "since T0" in other.stderr
    for where, extra in ((root / "fresh", ()), (root / "a", ("--resume",))):  # a new run, and the killed one's
        refused = _promote(env, *_args(bench_a, commit_a, where, *extra))
        assert refused.returncode == 2 and "pass --resume" not in refused.stderr, refused.stderr
        assert "GitHub Actions run 4242 (`gh run view 4242`" in refused.stderr
        assert "it is not taken over, even with --resume. Check that it is gone first" in refused.stderr
    assert _configmaps(root)[LOCK_NAME]["data"]["owner"] == f"7/{commit_a}/4242"

    live = f"{this_host()}-{os.getpid()}"  # this test's own process: a run on this host that is still going
    assert _kubectl(env, "delete", "configmap", LOCK_NAME, "-n", "bench").returncode == 0
    _lock(env, f"7/{commit_a}/{live}")
    refused = _promote(env, *_args(bench_a, commit_a, root / "a", "--resume"))
    assert refused.returncode == 2 and f"(process {os.getpid()} on this host) is still going" in refused.stderr
    assert _configmaps(root)[LOCK_NAME]["data"]["owner"] == f"7/{commit_a}/{live}"
    assert _events(root, "standup") == []

    gone = f"{this_host()}-{_dead_pid()}"  # a killed run of this host
    assert _kubectl(env, "delete", "configmap", LOCK_NAME, "-n", "bench").returncode == 0
    _lock(env, f"7/{commit_a}/{gone}")
    fresh = _promote(env, *_args(bench_a, commit_a, root / "fresh"))
    assert fresh.returncode == 2 and "its run is gone: pass --resume to take it over" in fresh.stderr
    resumed = _promote(env, *_args(bench_a, commit_a, root / "a", "--resume"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"taking over this promotion's own lock on bench (run {gone}, since T0)" in resumed.stderr
    assert _configmaps(root) == {}  # released at the end

    # benchmark.yml's always-step `promote bench teardown` after a killed step: the same GitHub run takes it over.
    _lock(env, f"7/{commit_a}/4242")
    teardown = _promote(env | {"GITHUB_RUN_ID": "4242"}, "bench", "teardown", *_args(bench_a, commit_a, root / "a")[2:])
    assert teardown.returncode == 0, teardown.stderr
    assert _configmaps(root) == {}


def test_the_holders_run_is_gone_only_when_this_run_can_see_it_is():
    me = Holder("7", "c" * 40, "host-a-100", "T1")

    def held_by(run: str) -> Holder:
        return Holder("7", "c" * 40, run, "T0")

    alive = {200}.__contains__
    assert holder_state(held_by("host-a-100"), me, "host-a", alive) == GONE  # this very run (a GitHub job's step)
    assert holder_state(held_by("host-a-200"), me, "host-a", alive) == RUNNING
    assert holder_state(held_by("host-a-300"), me, "host-a", alive) == GONE
    assert holder_state(held_by("host-b-300"), me, "host-a", alive) == UNKNOWN  # another host
    assert holder_state(held_by("host-a-b-300"), me, "host-a", alive) == UNKNOWN  # host "host-a-b", not "host-a"
    assert holder_state(held_by("4242"), me, "host-a", alive) == UNKNOWN  # another GitHub run
    assert holder_state(held_by("?"), me, "host-a", alive) == UNKNOWN  # a lock written by hand


def test_a_cluster_that_forbids_the_lock_stops_before_anything_is_stood_up(tmp_path):
    env = fakes.install(tmp_path, forbid_configmaps=True)
    bench, commit = make_branch(tmp_path)
    proc = _promote(env, *_args(bench, commit, tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert f"could not create the lock {LOCK_NAME} in namespace bench: kubectl exited 1" in proc.stderr
    assert "(Forbidden)" in proc.stderr and "Traceback" not in proc.stderr
    assert [c for c in fakes.calls(tmp_path) if c["tool"] in ("llmdbenchmark", "make")] == []
