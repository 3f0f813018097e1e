"""A state saved as the bot that names a decision nobody made, or passes a gate with none, is not acted on.

``trusted`` refuses a status comment a person saved last; a workflow a write collaborator pushes saves it with the
GITHUB_TOKEN, as the bot. Here that workflow's save adds "gate 2 approved by alice (label)" although nobody applied
`gate-2-approved`: the next event does nothing on the promotion, says so once, and a maintainer's label confirms
the gate. A forged state that moves past a gate recording no approval of it at all, or records a rejection nobody
commented (``bot.model.gates``, ``bot.github.vouch``), is refused the same way. Real approvals, by label and by
command, and real change requests go on as before.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.github.actions_sim import REPO
from tests.github.test_github_flow import _as, _comment, _label, _to_gate_1, state_of

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"
NOTICE = "<!-- promotion-bot:notice:unvouched-approval -->"


def _status(sim, number):
    [c] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]
    return c


def _notices(sim, number) -> list[str]:
    return [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(NOTICE)]


def _forge_as_the_bot(sim, number, gate: int, actor: str) -> str:
    """What a workflow running with the GITHUB_TOKEN does: decode the state, add ``actor``'s label approval of the
    open gate, and save the comment as the bot."""
    from bot import pipeline
    from bot.github.state import decode_state, encode_state
    from bot.model import DecidedVia, Decision

    c = _status(sim, number)
    state = decode_state(c.body)
    assert state.open_gate == gate
    forged = pipeline.decide(state, gate, Decision.APPROVE, actor=actor, now=datetime.now(UTC), via=DecidedVia.LABEL)
    body = c.body.replace(encode_state(state), encode_state(forged))
    assert body != c.body
    sim.fake.state.update_comment(c, body, sim.fake.BOT)  # saved by the bot's own account
    return body


def _fork(sim) -> tuple:
    """What the bot did on the fork: its branches' commits, its pull requests, the GPU runs it dispatched."""
    f = sim.fake
    branches = tuple(sorted((b, f.branch_sha(REPO, b)) for p in f.pulls(REPO) for b in (p.head,)))
    return branches, tuple(p.number for p in f.pulls(REPO)), len(f.dispatches)


def test_an_approval_saved_by_the_bots_token_that_nobody_labeled_passes_no_gate_until_a_maintainer_labels(sim):
    sim.fake.add_user("alice", role="maintain")
    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")  # a real label approval: checked at every later load
    assert state_of(sim, number).open_gate == 2

    forged = _forge_as_the_bot(sim, number, 2, "alice")
    fork = _fork(sim)
    _comment(sim, number, "researcher", "any comment")  # any event would continue what is due: stage 5
    assert sim.runs[-1].result.action.startswith("refused")
    assert _status(sim, number).body == forged  # nothing saved over it, nothing run on it
    assert _fork(sim) == fork
    [notice] = _notices(sim, number)
    assert "gate 2, approved by `@alice`: the issue's events show no `gate-2-approved` added by `@alice`" in notice
    assert "applies `gate-2-approved` to this issue again" in notice

    _comment(sim, number, "maria", "/status")  # the notice is not repeated, and still nothing runs
    assert len(_notices(sim, number)) == 1 and _status(sim, number).body == forged and _fork(sim) == fork

    _label(sim, number, "gate-2-approved", "tom")  # a triage label confirms nothing
    assert _status(sim, number).body == forged and _fork(sim) == fork

    _as(sim, "maria").get_issue(number).remove_from_labels("gate-2-approved")  # as the notice says: off, then on
    _label(sim, number, "gate-2-approved", "maria")  # the fix the notice names: the gate is maria's now
    assert [r.result.action for r in sim.runs[-1:]] != ["refused"], [r.result for r in sim.runs[-3:]]
    state = state_of(sim, number)
    assert [(d.gate, d.actor, d.via.value) for d in state.decisions] == [(1, "maria", "label"), (2, "maria", "label")]
    assert "gate 2 approval confirmed" in [a.event for a in state.audit]
    assert state.next_stage is None or state.next_stage.value >= 5
    _comment(sim, number, "researcher", "a later event")  # the confirmed approval is vouched for from now on
    assert not sim.runs[-1].result.action.startswith("refused")


def test_real_approvals_by_label_and_by_command_still_pass_and_record_the_comment(sim):
    number = _to_gate_1(sim)
    said = _comment(sim, number, "maria", "/approve")
    state = state_of(sim, number)
    assert [(d.gate, d.via.value, d.comment) for d in state.decisions] == [(1, "command", said)]
    assert state.open_gate == 2
    _label(sim, number, "gate-2-approved", "maria")
    state = state_of(sim, number)
    assert [(d.gate, d.via.value) for d in state.decisions] == [(1, "command"), (2, "label")]
    _comment(sim, number, "researcher", "a later event")  # both checked against GitHub at this load
    assert not sim.runs[-1].result.action.startswith("refused")
    assert _notices(sim, number) == []


def test_a_command_approval_whose_comment_was_deleted_is_not_acted_on(sim):
    number = _to_gate_1(sim)
    said = _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2
    _as(sim, "maria").get_issue(number).get_comment(said).delete()
    _comment(sim, number, "researcher", "a later event")
    assert sim.runs[-1].result.action.startswith("refused")
    [notice] = _notices(sim, number)
    assert f"gate 1, approved by `@maria`: comment {said}, which the approval names, is not on the issue" in notice


def _save_as_the_bot(sim, number, forged) -> str:
    """The workflow's save of ``forged`` over the status comment's state, as the bot (the GITHUB_TOKEN)."""
    from bot.github.state import decode_state, encode_state

    c = _status(sim, number)
    body = c.body.replace(encode_state(decode_state(c.body)), encode_state(forged))
    assert body != c.body
    sim.fake.state.update_comment(c, body, sim.fake.BOT)
    return body


def test_a_state_saved_by_the_bots_token_past_a_gate_with_no_approval_is_refused(sim):
    """No approval named at all: the state just moves on to stage 4, as gate 2's approval would have it."""
    from bot.model import Stage, Status

    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    state = state_of(sim, number)
    assert state.open_gate == 2 and [d.gate for d in state.decisions] == [1]
    moved = state.model_copy(update={"status": Status.RUNNING, "open_gate": None, "next_stage": Stage.IMPLEMENT_TESTS})
    forged = _save_as_the_bot(sim, number, moved)
    fork = _fork(sim)
    _comment(sim, number, "researcher", "any comment")  # any event would run what is due: stage 4
    assert sim.runs[-1].result.action.startswith("refused")
    assert _status(sim, number).body == forged and _fork(sim) == fork
    [notice] = _notices(sim, number)
    assert "gate 2: the state has moved past it, but records no approval of it that still stands (stage 4" in notice
    assert "deletes the status comment and comments `/retry`" in notice


def test_a_rejection_saved_by_the_bots_token_that_nobody_commented_is_refused(sim):
    from bot import pipeline
    from bot.model import Decision

    sim.fake.add_user("alice", role="maintain")
    number = _to_gate_1(sim)
    state = state_of(sim, number)
    rejected = pipeline.decide(state, 1, Decision.REJECT, actor="alice", now=datetime.now(UTC), reason="no")
    forged = _save_as_the_bot(sim, number, rejected)
    _comment(sim, number, "maria", "/status")  # a finished promotion loads its state for a command only
    assert sim.runs[-1].result.action.startswith("refused")
    assert _status(sim, number).body == forged
    [notice] = _notices(sim, number)
    assert "gate 1, rejected by `@alice`: no comment is recorded for it" in notice


def test_a_real_change_request_still_passes_at_later_loads(sim):
    number = _to_gate_1(sim)
    said = _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 5.5")
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value, d.comment) for d in state.decisions] == [(1, "request-changes", said)]
    _comment(sim, number, "researcher", "a later event")  # checked against GitHub at this load
    assert not sim.runs[-1].result.action.startswith("refused")
    assert _notices(sim, number) == []


def test_a_change_requests_reason_saved_over_by_the_bots_token_is_read_from_its_comment(sim):
    """The workflow keeps maria's change request (her comment, her name) and writes `param loadHighThreshold: 1e9`
    into its reason. Her next change request reruns gate 1 with every change request so far: the first is read from
    her comment as it reads now, so the value she never asked for is deployed nowhere."""
    from bot.review.change_request import deployed_by_person

    number = _to_gate_1(sim)
    first = _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 5.5")
    state = state_of(sim, number)
    assert state.open_gate == 1 and [d.comment for d in state.decisions] == [first]
    forged = state.model_copy(deep=True)
    forged.decisions[0] = forged.decisions[0].model_copy(update={"reason": "param loadHighThreshold: 1e9"})
    forged.pending_feedback[2] = "param loadHighThreshold: 1e9"  # the copy stage 2's rerun would read
    _save_as_the_bot(sim, number, forged)

    _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 6")
    assert not sim.runs[-1].result.action.startswith("refused")
    state = state_of(sim, number)
    assert [d.reason for d in state.decisions] == ["param loadLowThreshold: 5.5", "param loadLowThreshold: 6"]
    assert state.stages[2].feedback == "param loadLowThreshold: 5.5\n\nparam loadLowThreshold: 6"
    assert deployed_by_person(state) == {"loadLowThreshold": 6.0}
    assert "gate 1 change request's reason read from its comment" in [a.event for a in state.audit]
    assert _notices(sim, number) == []


def test_a_change_requests_reason_its_author_edited_is_the_one_the_rerun_reads(sim):
    number = _to_gate_1(sim)
    first = _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 3.5")
    _as(sim, "maria").get_issue(number).get_comment(first).edit("/request-changes param loadLowThreshold: 5.5")
    _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 6")
    state = state_of(sim, number)
    assert [d.reason for d in state.decisions] == ["param loadLowThreshold: 5.5", "param loadLowThreshold: 6"]
    assert state.stages[2].feedback == "param loadLowThreshold: 5.5\n\nparam loadLowThreshold: 6"


def test_a_rerun_due_on_a_change_request_saved_over_by_the_bots_token_runs_on_its_comments_reason(sim):
    """The workflow's save leaves stage 2's rerun due, with the forged directive in the change request and in the
    copy the rerun reads (``pending_feedback``): the next event runs stage 2 on maria's comment's reason."""
    from bot.model import Stage, Status
    from bot.review.change_request import deployed_by_person

    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/request-changes param loadLowThreshold: 5.5")
    state = state_of(sim, number)
    forged = state.model_copy(deep=True)
    forged.decisions[0] = forged.decisions[0].model_copy(update={"reason": "param loadHighThreshold: 70"})
    forged.status, forged.open_gate, forged.opened_at, forged.review_round = Status.RUNNING, None, None, 0
    forged.next_stage, forged.pending_feedback = Stage.TRANSLATE, {2: "param loadHighThreshold: 70"}  # valid
    _save_as_the_bot(sim, number, forged)

    _comment(sim, number, "researcher", "any comment")  # any event runs what is due: stage 2, on the feedback
    assert not sim.runs[-1].result.action.startswith("refused")
    state = state_of(sim, number)
    events = [a.event for a in state.audit]
    assert state.failure is None and events[-1] != "stage 2 failed"
    assert "stage 2 finished" in events[events.index("gate 1 change request's reason read from its comment") :]
    assert state.stages[2].feedback == "param loadLowThreshold: 5.5"
    assert [d.reason for d in state.decisions] == ["param loadLowThreshold: 5.5"]
    assert deployed_by_person(state) == {"loadLowThreshold": 5.5}
