"""Gates decided one at a time from the CLI, and a killed run resumed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.model import PipelineState, Status
from tests.conftest import BRANCH, REQUEST, RESULTS, branch_tree, git

pytestmark = pytest.mark.slow


def state_of(work: Path) -> PipelineState:
    return PipelineState.model_validate_json((work / "state.json").read_text())


def test_gate_by_gate_with_request_changes_and_illegal_decisions(tmp_path, capsys):
    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert (
        main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--fork", str(fork), *common]) == 0
    )
    out = capsys.readouterr().out
    assert "stopped at gate 1" in out and "promote approve 1" in out and "promote request-changes 1" in out
    # The stop says what to decide: headline, counts by severity, what to read first, the gate's directives.
    assert "deciding on the translation into `evolved-adaptive-scorer`: decides like the BLIS original in" in out
    assert re.search(r"findings: \d+ CRITICAL, \d+ IMPORTANT, \d+ SUGGESTION", out)
    assert f"show {BRANCH}:docs/promotion/evolved-adaptive-scorer/translation-report.md" in out
    assert f"diff main...{BRANCH} -- pkg/epp/framework/plugins/" in out
    assert "param NAME: VALUE" in out and "e.g. scorers: prefix-affinity:1, load-balance:1" in out
    assert main(["status", "--work", str(work)]) == 0
    assert "deciding on the translation into" in capsys.readouterr().out  # status shows the same
    s = state_of(work)
    assert s.status is Status.AWAITING_DECISION and s.open_gate == 1 and sorted(s.stages) == [1, 2]
    first_stage2 = s.stages[2].commit

    # Illegal: a gate that is not open, and request-changes without a reason.
    assert main(["approve", "3", *common]) == 2
    assert "gate 3 is not open" in capsys.readouterr().err
    assert main(["reject", "2", "--reason", "x", *common]) == 2
    assert "not open" in capsys.readouterr().err

    # Request changes in prose only: offline nothing would act on it, so it is answered at once with gate 1's
    # directives (and the one it probably means); nothing is recorded and nothing reruns.
    assert main(["request-changes", "1", "--reason", "set loadThreshold to 40 for real pods", *common]) == 2
    err = capsys.readouterr().err
    assert "names no directive gate 1 applies" in err and "nothing was recorded" in err
    assert "`param loadHighThreshold: 40`" in err and "`scorers: NAME:WEIGHT, NAME:WEIGHT`" in err
    assert state_of(work) == s

    # Request changes with a directive: stage 2 reruns with the reason, the review runs again, we stop at gate 1.
    note = "Name the KV-pressure threshold parameter explicitly in the report"
    reason = f"{note}\nparam loadHighThreshold: 9"
    assert main(["request-changes", "1", "--reason", reason, *common]) == 0
    s = state_of(work)
    assert s.open_gate == 1 and s.status is Status.AWAITING_DECISION
    assert s.stages[2].feedback == reason
    assert s.decisions[-1].decision.value == "request-changes" and s.decisions[-1].actor == "bob"
    log = git(fork, "log", "--format=%B", f"main..{BRANCH}")
    assert note in log, "the rerun's commit records the reason"
    assert s.stages[2].commit != first_stage2
    report = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/translation-report.md")
    assert note in report

    # Approve gate 1: continues to gate 2.
    capsys.readouterr()
    assert main(["approve", "1", *common]) == 0
    out = capsys.readouterr().out
    assert "stopped at gate 2" in out and re.search(r"deciding on the hypotheses: \d+ \(Track A \d+", out)
    assert (
        re.search(r"expected \S+ GPU-minutes, at most \S+ \(the cap", out)
        and "    the cells, " in out
        and "e.g. exclude: B2, B4" in out
        and "param NAME" not in out
    )
    s = state_of(work)
    assert s.open_gate == 2 and sorted(s.stages) == [1, 2, 3]
    # Stage 3 describes the plugin as deployed: gate 1's `param loadHighThreshold: 9` beside BLIS's value.
    a1 = git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/hypotheses/A1.md")
    assert "`loadHighThreshold` = 9 (BLIS: 7)" in a1 and "re-calibrated at gate 1" in a1, a1
    thread = (work / "issue" / "thread.md").read_text()  # gate 1's review report says it was decided, and how
    assert re.search(r"\*\*Approved\*\* by bob with `promote approve`, [-0-9: ]+ UTC, at commit `[0-9a-f]{12}`", thread)

    # Approving gate 1 twice is refused.
    assert main(["approve", "1", *common]) == 2
    assert "already approved by bob" in capsys.readouterr().err

    # Reject gate 2: the promotion ends, recorded.
    assert main(["reject", "2", "--reason", "hypotheses miss the LoRA gap", *common]) == 0
    s = state_of(work)
    assert s.status is Status.REJECTED
    assert main(["approve", "2", *common]) == 2
    assert "rejected" in capsys.readouterr().err
    assert main(["status", "--work", str(work)]) == 0
    assert "rejected at gate 2" in capsys.readouterr().out
    # The PR record says so and is closed (it read as an open draft awaiting its stage 7 description).
    pr = json.loads((work / "pr" / "pr.json").read_text())
    described = (work / "pr" / "pull-request.md").read_text()
    assert pr["state"] == "closed" and described.startswith("# PR #1 (closed, not merged): ")
    assert "**Rejected at gate 2** by bob: hypotheses miss the LoRA gap." in described and "stage 7" not in described
    thread = (work / "issue" / "thread.md").read_text()
    assert "**Rejected** by bob with `promote reject`" in thread and ": hypotheses miss the LoRA gap." in thread


def test_scorers_blis_would_refuse_are_answered_by_request_changes_and_nothing_is_recorded(tmp_path, capsys):
    """Found by a new user: `scorers:` with a scorer twice or a weight of 0 was recorded and stage 2 reran into a
    plugin that fails its own Validate() (3 CRITICAL, 0.0% agreement); the CLI refuses it like an unknown name."""
    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert main(["run", str(REQUEST), "--fork", str(fork), *common]) == 0
    s = state_of(work)
    head = git(fork, "rev-parse", BRANCH)
    capsys.readouterr()
    for reason, needle in [
        ("scorers: prefix-affinity:1, queue-depth:0", "the weight of queue-depth is 0; every weight must be > 0"),
        ("scorers: prefix-affinity:1, prefix-affinity:2", "prefix-affinity is listed twice"),
    ]:
        assert main(["request-changes", "1", "--reason", reason, *common]) == 2, reason
        err = capsys.readouterr().err
        assert needle in err and f"`{reason}`" in err and "nothing was recorded" in err, err
        assert state_of(work) == s and git(fork, "rev-parse", BRANCH) == head


def test_gate2_change_request_keeps_ids_records_exclusions_and_refuses_unknown_ids(tmp_path, capsys):
    """Found by a new user: an unknown id was accepted and reran stage 3 for nothing; the README's own
    `exclude: B2, B4 (...)` left gate 2 unconverged on "Map C gap has no Track B hypothesis"; `margin C2: 3%`
    changed another hypothesis and renumbered C2..C7."""
    from bot import directives

    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert main(["run", str(REQUEST), "--fork", str(fork), "--approve", "1", *common]) == 0
    hyp_dir = "docs/promotion/evolved-adaptive-scorer/hypotheses"
    before = git(fork, "show", f"{BRANCH}:{hyp_dir}/README.md")
    s = state_of(work)
    assert s.open_gate == 2
    capsys.readouterr()

    for reason, needle in [
        ("exclude: B9 (nope)", "B9 is not a hypothesis of this promotion (its hypotheses: A1, A2, A3, B1,"),
        ("margin C40: 3%", "C40 is not a hypothesis"),
        ("margin A1: 3%", "`margin A1` names a directional prediction, which has no margin"),
    ]:
        assert main(["request-changes", "2", "--reason", reason, *common]) == 2, reason
        err = capsys.readouterr().err
        assert needle in err and "nothing was recorded" in err, err
        assert state_of(work) == s

    (example,) = [d.example for d in directives.for_gate(2) if d.name == "exclude"]
    assert main(["request-changes", "2", "--reason", f"{example}\nmargin C2: 3%", *common]) == 0
    s = state_of(work)
    assert s.open_gate == 2 and 2 not in s.unconverged
    assert not [f for f in s.reviews[2][-1].findings if f.check == "G2.track-b-coverage"]
    after = git(fork, "show", f"{BRANCH}:{hyp_dir}/README.md")
    rows = {ln.split("]")[0][3:]: ln for ln in after.splitlines() if ln.startswith("| [")}
    old = {ln.split("]")[0][3:]: ln for ln in before.splitlines() if ln.startswith("| [")}
    assert set(old) - set(rows) == {"B2", "B4"}
    assert all(rows[i] == old[i] for i in rows if i != "C2")
    assert rows["C2"] == old["C2"].replace("5%", "3%") != old["C2"]
    assert "- B2, Map C gap `lora-affinity`" in after and "(this cluster has no LoRA or P/D split)" in after
    assert git(fork, "show", f"{BRANCH}:{hyp_dir}/excluded.json")
    assert main(["request-changes", "2", "--reason", "exclude: B2, B4 (still none)", *common]) == 0  # named again


def test_killed_run_resumes_to_the_same_branch_content(tmp_path, full_run):
    _, _, full_fork = full_run
    work, fork = tmp_path / "work", tmp_path / "fork"
    exe = Path(sys.executable).parent / "promote"
    proc = subprocess.Popen(
        [
            str(exe),
            "run",
            str(REQUEST),
            "--results",
            str(RESULTS),
            "--allow-sample-data",
            "--work",
            str(work),
            "--fork",
            str(fork),
            "--approve",
            "all",
            "--quiet",
            "--actor",
            "alice",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    killed_after = None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            stages = json.loads((work / "state.json").read_text())["stages"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError):
            stages = {}
        if "3" in stages:
            os.killpg(proc.pid, signal.SIGKILL)
            killed_after = sorted(int(k) for k in stages)
            break
        time.sleep(0.02)
    proc.wait(timeout=30)
    assert killed_after is not None and max(killed_after) < 7, "the run was killed part-way"
    done_before = {k: v.commit for k, v in state_of(work).stages.items()}

    assert main(["resume", "--work", str(work), "--approve", "all", "--quiet", "--actor", "alice"]) == 0
    s = state_of(work)
    assert s.status is Status.DONE
    for k, commit in done_before.items():
        assert s.stages[k].commit == commit, f"stage {k} was redone"
    assert branch_tree(fork) == branch_tree(full_fork)
    subjects = git(fork, "log", "--format=%s", f"main..{BRANCH}").splitlines()
    assert len(subjects) == 7
