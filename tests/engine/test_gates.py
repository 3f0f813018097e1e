"""The invariant every state the engine saves keeps: a gate anything stands past has an approval that still stands
(``bot.model.gates``). A state that breaks it was not saved by the engine's moves (a forged status comment)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot import pipeline as p
from bot import recheck
from bot.model import BenchmarkDispatch, Decision, Stage, Status
from bot.model.gates import Unapproved, unapproved
from tests.engine.test_pipeline import BLOCKER, NOTE, finish, fresh, review, to_gate

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _walk(state, decide):
    """Every state from ``state`` to the end, ``decide(state, gate)`` deciding each open gate."""
    seen = [state]
    while not isinstance(step := p.next_step(state), p.Finished):
        if isinstance(step, p.RunStage):
            state = finish(state)
        elif isinstance(step, p.RunReview):
            state = review(state, NOTE)
        else:
            state = decide(state, step.gate)
        seen.append(state)
    return seen


def test_every_state_the_engine_saves_keeps_the_invariant():
    asked = set()

    def decide(state, gate):  # each gate first sent back once, then approved
        if gate in asked:
            return p.decide(state, gate, Decision.APPROVE, actor="alice", now=NOW)
        asked.add(gate)
        return p.decide(state, gate, Decision.REQUEST_CHANGES, actor="alice", now=NOW, reason="again")

    seen = _walk(fresh(), decide)
    assert seen[-1].status is Status.DONE
    for gate in (1, 2, 3):  # rejected at each gate
        at = to_gate(fresh(), gate)
        seen.append(p.decide(at, gate, Decision.REJECT, actor="alice", now=NOW, reason="no"))
    # a blocking review sends the stages back; a failure, a cancel, a benchmark sent and stopped
    at_3 = to_gate(fresh(), 3)
    seen += [review(finish(finish(p.decide(to_gate(fresh(), 2), 2, Decision.APPROVE, actor="a", now=NOW))), BLOCKER)]
    four = p.decide(to_gate(fresh(), 2), 2, Decision.APPROVE, actor="a", now=NOW)
    five = finish(four)
    sent = BenchmarkDispatch(commit="c" * 40, at=NOW)
    seen += [p.stage_failed(five, Stage.RUN_VALIDATE, "x", now=NOW), p.cancel(at_3, actor="a", now=NOW)]
    seen += [p.benchmark_sent(five, sent, now=NOW), p.benchmark_stopped(five, now=NOW, actor="a", detail="")]
    # a changed request restarts from the first stage reading it, dropping what stood past it
    done = seen[_index_done(seen)]
    for part in ("source", "claims", "origin", "title"):
        seen.append(p.restart(at_3, "fp2", {**at_3.request_parts, part: "new"}, actor="a", now=NOW, why="edit"))
    # a re-check: begun, a stage identical (the gate's decision kept), a stage different (the gate reopens)
    checking, _ = recheck.begin(at_3, {2: {"translator": "v2"}}, actor="bot", now=NOW)
    rec = checking.stages[2]
    kept, _ = recheck.stage_finished(checking, rec, now=NOW)
    other = rec.model_copy(update={"artifacts": [], "inputs_hash": "other"})
    reopened, _ = recheck.stage_finished(checking, other.model_copy(update={"artifacts": [_artifact()]}), now=NOW)
    seen += [checking, kept, reopened, done]
    assert (kept.open_gate, reopened.open_gate, reopened.decisions) == (3, 1, [])
    assert [s for s in seen if unapproved(s)] == []


def _index_done(seen):
    return next(i for i, s in enumerate(seen) if s.status is Status.DONE)


def _artifact():
    from bot.model import Artifact

    return Artifact(path="plugin.go", sha256="f" * 64, stage=Stage.TRANSLATE)


def test_a_state_past_a_gate_with_no_approval_of_it_is_named():
    at_2 = to_gate(fresh(), 2)
    moved = at_2.model_copy(update={"status": Status.RUNNING, "open_gate": None, "next_stage": Stage.IMPLEMENT_TESTS})
    assert unapproved(moved) == [Unapproved(2, "stage 4 (implement tests) is due")]
    assert unapproved(moved.model_copy(update={"decisions": []})) == [
        Unapproved(1, "stage 3 (hypothesize) is done"),
        Unapproved(2, "stage 4 (implement tests) is due"),
    ]
    sent = BenchmarkDispatch(commit="c" * 40, at=NOW)
    assert unapproved(at_2.model_copy(update={"benchmark": sent})) == [
        Unapproved(2, "stage 5's GPU benchmark is dispatched")
    ]
    assert unapproved(at_2.model_copy(update={"open_gate": 3})) == [Unapproved(2, "gate 3 is open")]
    assert unapproved(at_2.model_copy(update={"status": Status.DONE, "open_gate": None})) == [
        Unapproved(2, "the promotion is marked done"),
        Unapproved(3, "the promotion is marked done"),
    ]


def test_an_approval_a_later_decision_of_its_gate_took_back_does_not_count():
    done = _walk(fresh(), lambda s, g: p.decide(s, g, Decision.APPROVE, actor="alice", now=NOW))[-1]
    [approval_2] = [d for d in done.decisions if d.gate == 2]
    taken_back = approval_2.model_copy(update={"decision": Decision.REQUEST_CHANGES, "reason": "no"})
    forged = done.model_copy(update={"decisions": [*done.decisions, taken_back]})
    assert unapproved(forged) == [Unapproved(2, "stage 7 (pull request) is done")]


def test_a_re_check_that_resumes_past_a_gate_needs_its_approval():
    at_3 = to_gate(fresh(), 3)
    checking, _ = recheck.begin(at_3, {2: {"translator": "v2"}}, actor="bot", now=NOW)
    forged = checking.model_copy(update={"decisions": [d for d in checking.decisions if d.gate != 2]})
    # stages 4 and 5 are still recorded, and the re-check resumes at gate 3
    assert [u.gate for u in unapproved(forged)] == [2]
