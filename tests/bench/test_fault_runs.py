"""Runs whose Track B fault never happened are no evidence about it (bot.bench.fault_runs), and the runner records
a failed pod deletion in its own words (bot.bench.run.faults)."""

from __future__ import annotations

import json
import time

from bot.bench import fault_runs
from bot.bench.layout import run_dir
from bot.bench.run import manifest as mf
from bot.bench.run.commands import Target
from bot.bench.run.faults import PodDeletion
from tests.bench import fakes
from tests.bench.test_bench_plan import _h

FAULTY = "spikes+pod-failure"


def _cell(arm: str, rep: int, ok: bool | None, workload: str = FAULTY) -> mf.CellRecord:
    fault = None
    if ok is not None:
        detail = "pod ms-decode-0 deleted" if ok else "the run ended before t = duration/2; no pod was deleted"
        fault = mf.FaultRecord(kind="pod-failure", planned_at_s=1.5, ok=ok, detail=detail)
    return mf.CellRecord(
        treatment=arm,
        workload=workload,
        rate=10.0,
        repetition=rep,
        run_treatment=f"{workload}-rate-10-rep-{rep}",
        setup_treatment=arm,
        commit="c" * 40,
        start="2026-01-01T00:00:00Z",
        end="2026-01-01T00:01:00Z",
        gpu_minutes=1.0,
        exit_status=0,
        report=f"{run_dir(arm, workload, 10.0, rep)}/report.yaml",
        sha256="0" * 64,
        fault=fault,
    )


def _manifest(cells: list[mf.CellRecord]) -> mf.Manifest:
    return mf.Manifest(promotion="7", slug="s", commit="c" * 40, planned_gpu_minutes=10.0, cells=cells)


def test_runs_whose_fault_happened_still_count_and_a_claim_without_any_in_an_arm_is_not_runnable():
    plain = _h("A1", ["spikes"], "e2e_p95")
    claim = _h("B1", [FAULTY], "e2e_p95", direction="no-worse")
    partly = _manifest(
        [_cell(arm, rep, ok=rep != 2) for arm in ("baseline", "evolved") for rep in (1, 2, 3)]
        + [_cell("baseline", 1, None, "spikes")]
    )
    missed = fault_runs.missed(partly)
    assert sorted(missed) == [f"{run_dir(a, FAULTY, 10.0, 2)}/report.yaml" for a in ("baseline", "evolved")]
    assert all(r.startswith(fault_runs.NEVER_HAPPENED) and "ended before" in r for r in missed.values())
    judged, flags = fault_runs.judged_as([plain, claim], partly)
    assert judged == [plain, claim]  # faulted runs in both arms: judged on them
    assert flags == {"B1": "2 of 6 pod-failure run(s) left out: the fault never happened in them"}

    # The fault happened only in the baseline arm: no report measured it in both arms.
    one_arm = _manifest([_cell("baseline", 1, ok=True), _cell("evolved", 1, ok=False), _cell("evolved", 2, ok=False)])
    judged, flags = fault_runs.judged_as([plain, claim], one_arm)
    assert judged[0] == plain and flags == {}
    b1 = judged[1]
    assert b1.prediction is None and "cluster cannot do: the pod-failure fault never happened in 2 of its 3" in (
        b1.not_in_plan or ""
    )
    [line] = fault_runs.summary_lines(one_arm)
    assert line.startswith("pod-failure: the fault never happened in 2 of 3 run(s) (the run ended before")
    assert fault_runs.summary_lines(_manifest([_cell("baseline", 1, ok=True)])) == []


def test_a_forbidden_pod_deletion_is_recorded_in_the_runners_words_and_kubectls_go_to_the_log(tmp_path):
    env = fakes.install(tmp_path, forbid_delete=True)
    state = {"harness": {"since": time.time(), "name": "x"}, "pods": {"ms-decode-0": "Running"}, "up": True}
    (tmp_path / "cluster" / "state.json").write_text(json.dumps(state))
    said: list[str] = []
    target = Target(spec="s", namespace="bench", workspace=tmp_path / "ws")
    fault = PodDeletion(target, 0.2, said.append, env=env, poll_s=0.01)
    fault.start()
    fault.join(timeout=30)
    r = fault.record
    assert not r.ok and r.target == "ms-decode-0"
    assert r.detail == "kubectl delete pod exited 1; no pod was deleted (its output is in the runner's log)"
    assert any("Error from server (Forbidden)" in line for line in said) and "serviceaccount" not in r.detail


def test_a_finished_run_is_adopted_only_for_the_arm_its_keywords_name(tmp_path):
    """A report left in a setup's workspace is this arm's only if its keywords say so: the keywords are the one
    record of which arm a run measured (the mix checked the arm; the cells did not)."""
    import yaml

    from bot.bench.run import found
    from tests.bench.bench_helpers import make_doc

    target = Target(spec="spec", namespace="ns", workspace=tmp_path)
    run = tmp_path / "setup-treatment-evolved" / "results" / "inference-perf-w-rate-10-rep-1-20261127-abcd"
    run.mkdir(parents=True)
    doc = make_doc()
    doc["run"]["keywords"] = ["promotion:1", "arm:baseline", "cell:w-rate-10-rep-1", "commit:c0ffee"]
    (run / found.REPORT_NAME).write_text(yaml.safe_dump(doc), encoding="utf-8")
    assert found.adoptable(target, "evolved", "evolved", "w-rate-10-rep-1", "c0ffee") is None
    assert found.adoptable(target, "evolved", "baseline", "w-rate-10-rep-1", "c0ffee") == run / found.REPORT_NAME
    assert found.adoptable(target, "evolved", "baseline", "w-rate-10-rep-1", "another") is None


def _fault(tmp_path, env, **target) -> tuple[PodDeletion, list[str]]:
    said: list[str] = []
    fault = PodDeletion(
        Target(spec="s", namespace="bench", workspace=tmp_path / "ws", **target), 0.2, said.append, env=env, poll_s=0.01
    )
    fault.start()
    fault.join(timeout=30)
    assert not fault.is_alive()
    return fault, said


def test_kubectl_missing_is_the_faults_reason_never_a_traceback_and_an_empty_one_is_still_said(tmp_path):
    import threading

    env = fakes.install(tmp_path)
    died: list[BaseException] = []
    old, threading.excepthook = threading.excepthook, lambda a: died.append(a.exc_value)
    try:
        fault, said = _fault(tmp_path, env, kubectl=str(tmp_path / "nowhere" / "kubectl"))
    finally:
        threading.excepthook = old
    assert died == []
    r = fault.record
    assert not r.ok and r.detail.startswith(f"{tmp_path / 'nowhere' / 'kubectl'} not found on PATH; no pod was deleted")
    assert any("not found on PATH" in line for line in said) and fault.notes
    # A fault recorded by an older runner with no reason is still said to have one missing, never "()".
    empty = _cell("baseline", 1, ok=False)
    assert empty.fault is not None
    empty.fault.detail = ""
    [line] = fault_runs.summary_lines(_manifest([empty]))
    assert "(no detail recorded)" in line and "()" not in line


def test_kubectl_get_pods_failing_is_said_as_such_not_as_a_harness_pod_that_never_ran(tmp_path):
    env = fakes.install(tmp_path, kubectl_get_fails="refused")
    state = {"harness": {"since": time.time(), "name": "x"}, "pods": {"ms-decode-0": "Running"}, "up": True}
    (tmp_path / "cluster" / "state.json").write_text(json.dumps(state))
    fault, said = _fault(tmp_path, env)
    r = fault.record
    assert not r.ok and "harness pod never ran" not in r.detail
    assert (
        r.detail.startswith("kubectl get pods failed (exit 1, connection refused") and "no pod was deleted" in r.detail
    )
    assert any("kubectl get pods failed (exit 1): kubectl: The connection to the server" in line for line in said)
    assert "127.0.0.1" not in r.detail  # the API server's address stays in the console and the step log

    fakes.configure(tmp_path, kubectl_get_fails="forbidden")
    fault, said = _fault(tmp_path, env)
    assert fault.record.detail.startswith("kubectl get pods failed (exit 1, forbidden: ")
    assert "serviceaccount" not in fault.record.detail and any("serviceaccount" in n for n in fault.notes)
