"""The state machine on its own: every legal move, every illegal one, no I/O."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot import pipeline as p
from bot.model import Decision, Finding, ReviewRound, Severity, Stage, StageRecord, Status

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def fresh():
    return p.new_state("7", "fp", "promotion/7-x", actor="alice", now=NOW)


def finish(state, *, changed=True):
    step = p.next_step(state)
    assert isinstance(step, p.RunStage), step
    rec = StageRecord(
        stage=step.stage, inputs_hash=f"h{int(step.stage)}", finished_at=NOW, feedback=step.feedback, review=step.review
    )
    return p.stage_finished(state, rec, changed=changed, now=NOW)


def review(state, *findings: Finding, max_rounds=3):
    step = p.next_step(state)
    assert isinstance(step, p.RunReview), step
    return p.review_finished(
        state, ReviewRound(gate=step.gate, round=step.round, findings=list(findings)), now=NOW, max_rounds=max_rounds
    )


BLOCKER = Finding(severity=Severity.IMPORTANT, check="G1.x", message="fix me", file="a.go", line=3)
NOTE = Finding(severity=Severity.SUGGESTION, check="G1.y", message="consider")


def to_gate(state, gate):
    """Run stages and clean reviews until ``gate`` awaits a decision."""
    while True:
        step = p.next_step(state)
        if isinstance(step, p.AwaitDecision):
            if step.gate == gate:
                return state
            state = p.decide(state, step.gate, Decision.APPROVE, actor="alice", now=NOW)
        elif isinstance(step, p.RunStage):
            state = finish(state)
        elif isinstance(step, p.RunReview):
            state = review(state)
        else:
            raise AssertionError(step)


def test_happy_path_visits_stages_and_gates_in_order():
    state = fresh()
    seen = []
    while not isinstance(step := p.next_step(state), p.Finished):
        seen.append(step)
        if isinstance(step, p.RunStage):
            state = finish(state)
        elif isinstance(step, p.RunReview):
            state = review(state, NOTE)  # suggestions never block
        else:
            state = p.decide(state, step.gate, Decision.APPROVE, actor="alice", now=NOW)
    labels = [
        f"S{int(s.stage)}"
        if isinstance(s, p.RunStage)
        else (f"R{s.gate}" if isinstance(s, p.RunReview) else f"G{s.gate}")
        for s in seen
    ]
    assert labels == ["S1", "S2", "R1", "G1", "S3", "R2", "G2", "S4", "S5", "R3", "G3", "S6", "S7"]
    assert state.status is Status.DONE
    assert [d.gate for d in state.decisions] == [1, 2, 3]
    assert sorted(state.stages) == [1, 2, 3, 4, 5, 6, 7]


def test_blocking_review_goes_back_to_author_with_findings_then_converges():
    state = finish(finish(fresh()))  # S1, S2
    state = review(state, BLOCKER)
    step = p.next_step(state)
    assert isinstance(step, p.RunStage) and step.stage == Stage.TRANSLATE
    assert "G1.x" in step.review and "a.go:3" in step.review and step.feedback is None
    state = finish(state, changed=True)
    assert p.next_step(state) == p.RunReview(1, 2)
    state = review(state)
    assert p.next_step(state) == p.AwaitDecision(1)
    assert 1 not in state.unconverged


def test_author_rerun_that_changes_nothing_opens_gate_unconverged():
    state = finish(finish(fresh()))
    state = review(state, BLOCKER)
    state = finish(state, changed=False)
    assert p.next_step(state) == p.AwaitDecision(1)
    assert state.unconverged == [1]
    assert "unconverged" in p.describe(state) or "did not converge" in p.describe(state)


def test_review_rounds_run_out():
    state = finish(finish(fresh()))
    for n in range(2):  # a different blocking finding each round: no stall, the rounds run out
        state = review(state, BLOCKER.model_copy(update={"line": 3 + n}), max_rounds=3)
        state = finish(state, changed=True)
    state = review(state, BLOCKER.model_copy(update={"line": 9}), max_rounds=3)
    assert p.next_step(state) == p.AwaitDecision(1)
    assert state.unconverged == [1]
    assert len(state.reviews[1]) == 3
    assert "3 rounds ran out" in state.audit[-1].detail


def test_an_unconverged_review_says_which_way_it_stopped():
    """Found by a README audit: the review report said only "the author could not resolve them", never which of
    the three ways a review stops without converging (nothing changed, a stall, the rounds ran out)."""
    from bot.review import unconverged_because

    nothing = finish(review(finish(finish(fresh())), BLOCKER), changed=False)
    assert unconverged_because(nothing, 1) == " (the author's rerun changed nothing)"
    stalled = finish(review(finish(finish(fresh())), BLOCKER), changed=True)
    stalled = review(stalled, BLOCKER)
    assert unconverged_because(stalled, 1) == " (the same blocking findings twice: the author's fix did not help)"
    ran_out = review(finish(finish(fresh())), BLOCKER, max_rounds=1)
    assert unconverged_because(ran_out, 1) == " (1 round ran out)"
    assert unconverged_because(review(finish(finish(fresh()))), 1) == ""


def test_the_same_blocking_findings_twice_is_a_stall():
    state = finish(finish(fresh()))
    state = review(state, BLOCKER, NOTE, max_rounds=5)
    state = finish(state, changed=True)
    state = review(state, BLOCKER, max_rounds=5)  # the author changed files, the finding stayed
    assert p.next_step(state) == p.AwaitDecision(1)
    assert state.unconverged == [1] and len(state.reviews[1]) == 2
    assert "the same blocking findings twice" in state.audit[-1].detail


def test_gate3_author_fix_reruns_stage_4_and_5():
    state = to_gate(fresh(), 2)
    state = p.decide(state, 2, Decision.APPROVE, actor="a", now=NOW)
    state = finish(finish(state))  # S4, S5
    state = review(state, BLOCKER.model_copy(update={"check": "G3.x"}))
    assert p.next_step(state).stage == Stage.IMPLEMENT_TESTS
    state = finish(state, changed=False)  # S4 unchanged
    assert p.next_step(state).stage == Stage.RUN_VALIDATE
    state = finish(state, changed=True)  # S5 changed: review again
    assert p.next_step(state) == p.RunReview(3, 2)


@pytest.mark.parametrize("gate,stage", [(1, Stage.TRANSLATE), (2, Stage.HYPOTHESIZE), (3, Stage.IMPLEMENT_TESTS)])
def test_request_changes_reruns_the_gates_first_stage_with_reason(gate, stage):
    state = to_gate(fresh(), gate)
    state = p.decide(state, gate, Decision.REQUEST_CHANGES, actor="bob", now=NOW, reason="use weight 3")
    assert p.next_step(state) == p.RunStage(stage, "use weight 3", None)
    assert state.decisions[-1].reason == "use weight 3" and state.decisions[-1].actor == "bob"
    state = finish(state)
    assert state.stages[int(stage)].feedback == "use weight 3"
    if gate == 3:
        state = finish(state)
    assert p.next_step(state) == p.RunReview(gate, 1)  # a new review cycle


@pytest.mark.parametrize("gate", [1, 2, 3])
def test_reject_ends_the_promotion(gate):
    state = p.decide(to_gate(fresh(), gate), gate, Decision.REJECT, actor="c", now=NOW, reason="no gain")
    assert p.next_step(state) == p.Finished(Status.REJECTED)
    assert state.status is Status.REJECTED
    with pytest.raises(p.IllegalTransition, match="rejected"):
        p.decide(state, gate, Decision.APPROVE, actor="c", now=NOW)


@pytest.mark.parametrize("gate", [1, 2, 3])
def test_approve_moves_to_the_stage_after_the_gate(gate):
    state = p.decide(to_gate(fresh(), gate), gate, Decision.APPROVE, actor="a", now=NOW)
    assert p.next_step(state) == p.RunStage(Stage({1: 3, 2: 4, 3: 6}[gate]), None)


# ----------------------------------------------------------- illegal moves
def test_approve_gate3_while_at_gate1_is_refused():
    state = to_gate(fresh(), 1)
    with pytest.raises(p.IllegalTransition, match="gate 3 is not open"):
        p.decide(state, 3, Decision.APPROVE, actor="a", now=NOW)


def test_approve_twice_is_refused():
    state = p.decide(to_gate(fresh(), 1), 1, Decision.APPROVE, actor="a", now=NOW)
    with pytest.raises(p.IllegalTransition, match="already approved by a"):
        p.decide(state, 1, Decision.APPROVE, actor="a", now=NOW)


def test_deciding_before_the_review_ran_is_refused():
    state = finish(finish(fresh()))  # gate 1 review due, not run
    with pytest.raises(p.IllegalTransition, match="review has not finished"):
        p.decide(state, 1, Decision.APPROVE, actor="a", now=NOW)


def test_deciding_during_a_stage_is_refused():
    with pytest.raises(p.IllegalTransition, match="not open"):
        p.decide(fresh(), 1, Decision.APPROVE, actor="a", now=NOW)


@pytest.mark.parametrize("decision", [Decision.REQUEST_CHANGES, Decision.REJECT])
@pytest.mark.parametrize("reason", [None, "", "   "])
def test_request_changes_and_reject_need_a_reason(decision, reason):
    with pytest.raises(p.IllegalTransition, match="needs a reason"):
        p.decide(to_gate(fresh(), 1), 1, decision, actor="a", now=NOW, reason=reason)


def test_unknown_gate_is_refused():
    with pytest.raises(p.IllegalTransition, match="no gate 4"):
        p.decide(to_gate(fresh(), 1), 4, Decision.APPROVE, actor="a", now=NOW)


def test_deciding_after_done_is_refused():
    state = fresh()
    for g in (1, 2, 3):
        state = p.decide(to_gate(state, g), g, Decision.APPROVE, actor="a", now=NOW)
    while isinstance(p.next_step(state), p.RunStage):
        state = finish(state)
    assert state.status is Status.DONE
    with pytest.raises(p.IllegalTransition, match="finished"):
        p.decide(state, 3, Decision.APPROVE, actor="a", now=NOW)


def test_reporting_the_wrong_stage_or_review_is_refused():
    state = fresh()
    with pytest.raises(p.IllegalTransition):
        p.stage_finished(state, StageRecord(stage=Stage.PR, inputs_hash="x", finished_at=NOW), changed=True, now=NOW)
    with pytest.raises(p.IllegalTransition):
        p.review_finished(state, ReviewRound(gate=1, round=1), now=NOW)


def test_every_move_is_audited_and_the_state_round_trips_as_json():
    state = p.decide(to_gate(fresh(), 1), 1, Decision.REQUEST_CHANGES, actor="bob", now=NOW, reason="why")
    events = [a.event for a in state.audit]
    assert events[0] == "started" and "gate 1 request-changes" in events
    again = type(state).model_validate_json(state.model_dump_json())
    assert again == state


def test_a_persons_reason_survives_the_author_fix_loop_and_clears_on_decision():
    state = to_gate(fresh(), 1)
    state = p.decide(state, 1, Decision.REQUEST_CHANGES, actor="bob", now=NOW, reason="rename the params")
    state = finish(state)  # S2 with the reason
    state = review(state, BLOCKER)
    step = p.next_step(state)
    assert step.feedback == "rename the params" and "G1.x" in step.review
    state = finish(state, changed=False)
    assert p.next_step(state) == p.AwaitDecision(1)
    state = p.decide(state, 1, Decision.APPROVE, actor="bob", now=NOW)
    assert state.pending_feedback == {} and state.review_findings == {}
    assert p.next_step(state) == p.RunStage(Stage.HYPOTHESIZE, None, None)


def test_a_gate_approved_by_the_flag_is_recorded_and_said_as_such():
    from bot.model import DecidedVia

    state = p.decide(to_gate(fresh(), 1), 1, Decision.APPROVE, actor="alice", now=NOW, via=DecidedVia.APPROVE_FLAG)
    flagged = state.decisions[-1]
    assert flagged.via is DecidedVia.APPROVE_FLAG and not flagged.via.by_person
    assert "--approve" in flagged.how() and "no person decided" in flagged.how()
    assert state.audit[-1].detail == "via the --approve flag, not at the open gate"
    state = p.decide(to_gate(state, 2), 2, Decision.APPROVE, actor="bob", now=NOW)
    assert state.decisions[-1].via is DecidedVia.COMMAND and state.decisions[-1].how() == "by bob"
    old = state.decisions[-1].model_copy(update={"via": None})  # saved before the field existed
    assert old.how() == "by bob; how it was decided is not recorded (saved by an older bot)"


@pytest.mark.parametrize("gate,stage", [(1, Stage.TRANSLATE), (2, Stage.HYPOTHESIZE)])
def test_a_second_change_request_keeps_the_first(gate, stage):
    """Found by a scheduler author: `exclude: B3 B5` then `guard: ttft_p99_ms` brought B3 and B5 back, because a
    rerun was given only the last reason. Every change request at the gate reaches the rerun, oldest first."""
    state = to_gate(fresh(), gate)
    state = p.decide(state, gate, Decision.REQUEST_CHANGES, actor="bob", now=NOW, reason="exclude: B3 B5\n")
    state = to_gate(finish(state), gate)
    state = p.decide(state, gate, Decision.REQUEST_CHANGES, actor="carol", now=NOW, reason="guard: ttft_p99_ms")
    assert p.next_step(state) == p.RunStage(stage, "exclude: B3 B5\n\nguard: ttft_p99_ms", None)
    state = to_gate(finish(state), gate)
    assert state.stages[int(stage)].feedback == "exclude: B3 B5\n\nguard: ttft_p99_ms"
    # Another gate's requests are its own.
    if gate == 1:
        state = p.decide(state, 1, Decision.APPROVE, actor="bob", now=NOW)
        state = p.decide(to_gate(state, 2), 2, Decision.REQUEST_CHANGES, actor="bob", now=NOW, reason="margin: 3%")
        assert p.next_step(state) == p.RunStage(Stage.HYPOTHESIZE, "margin: 3%", None)
