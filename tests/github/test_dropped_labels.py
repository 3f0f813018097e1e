"""Gate labels whose own runs GitHub dropped: the issue's concurrency group keeps one pending run, so another event of
the issue queued right after a person applied `gate-N-approved` can cancel that label's run before it starts. The
next run that reads the state decides the open gate's label as its own run would have (bot/events/issues.py,
``dropped_label``): the same rule, the same reply, once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.github.actions_sim import REPO
from tests.github.test_github_flow import _as, _comment, _to_gate_1, labels_of, state_of

pytestmark = pytest.mark.slow


def _label_dropped(sim, number, label, login):
    """A person applies ``label``; GitHub delivers its event, but its run is dropped (returned: to re-run it)."""
    _as(sim, login).get_issue(number).add_to_labels(label)
    return sim.fake.webhook("issues", "labeled", REPO, number, sender=login, label=label)


def _notices(sim, number, text):
    return [
        c.body
        for c in sim.fake.comments(REPO, number)
        if c.body.startswith("<!-- promotion-bot:notice:label-") and text in c.body
    ]


def test_a_maintainers_label_whose_run_was_dropped_is_decided_once_by_the_next_run(sim):
    number = _to_gate_1(sim)
    dropped = _label_dropped(sim, number, "gate-1-approved", "maria")
    _comment(sim, number, "researcher", "Thanks, that was quick.")
    chat = next(r for r in sim.runs if r.event == "issue_comment")
    assert chat.result.notes[0] == "decided gate-1-approved, whose run was dropped: gate 1 approved by maria"
    state = state_of(sim, number)
    assert [(d.gate, d.actor, d.via.value) for d in state.decisions] == [(1, "maria", "label")]
    assert state.open_gate == 2 and state.status.value == "awaiting-decision"
    [entry] = [a for a in state.audit if a.event == "gate 1 approve"]
    assert entry.delivery.startswith("labeled-") and entry.role == "maintain"
    assert "decided by a later run of this issue: the label's own run was dropped" in entry.detail
    assert len(_notices(sim, number, "@maria `gate-1-approved` passed gate 1, decided by a later run")) == 1
    assert sim.fake.count_calls("issues/list-events") == 1  # asked once: who applied it, and when
    assert "gate-1-approved" in labels_of(sim, number)

    # its own run, re-run by hand after all, and more comments: nothing is decided or said again
    again = sim.deliver("issues", dropped)
    assert again.result.action.startswith("gate 1 is already approved"), again.result.action
    _comment(sim, number, "researcher", "Great.")
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value) for d in state.decisions] == [(1, "approve")] and state.open_gate == 2
    assert len(_notices(sim, number, "passed gate 1")) == 1


def test_a_triagers_label_whose_run_was_dropped_is_removed_with_the_same_reply(sim):
    number = _to_gate_1(sim)
    _label_dropped(sim, number, "gate-1-approved", "tom")
    _comment(sim, number, "researcher", "Any news?")
    state = state_of(sim, number)
    assert state.decisions == [] and state.open_gate == 1
    assert "gate-1-approved" not in labels_of(sim, number)
    assert len(_notices(sim, number, "@tom the `gate-1-approved` label was removed: @tom has the role `triage`")) == 1
    runs = len(sim.runs)
    _comment(sim, number, "researcher", "Ok.")
    assert sim.runs[runs].calls <= 3, sim.runs[runs].calls  # the label is gone: not looked up again
    assert len(_notices(sim, number, "@tom")) == 1 and state_of(sim, number).decisions == []


def test_a_label_applied_before_the_review_now_open_was_shown_decides_nothing(sim):
    number = _to_gate_1(sim)
    [status] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status -->")]
    _label_dropped(sim, number, "gate-1-approved", "maria")
    event = sim.fake.state.repos[REPO].issues[number].events[-1]
    assert (event.event, event.label) == ("labeled", "gate-1-approved")
    event.created_at = status.updated_at - timedelta(seconds=5)  # as if applied before gate 1's review was shown
    _comment(sim, number, "researcher", "Anything missing?")
    assert state_of(sim, number).decisions == [] and state_of(sim, number).open_gate == 1
    assert "gate-1-approved" not in labels_of(sim, number)
    [reply] = _notices(sim, number, "before gate 1's review now open (round 1) was shown at")
    assert "apply the label again" in reply


def test_no_call_is_spent_on_the_labels_when_none_waits_undecided(sim):
    number = _to_gate_1(sim)
    _comment(sim, number, "researcher", "Looks right to me.")
    assert sim.fake.count_calls("issues/list-events") == 0


# The label's own run, reaching the labels after its applier took the label off and someone else put it back (a run
# queued behind another, or re-run): the label now on the issue is decided as the application it is.


def _withdrawn_and_reapplied(sim, number, by):
    """maria applies gate 1's label, takes it off again before her run reads the labels, and ``by`` puts it back;
    both events are delivered (returned), their runs not yet run."""
    marias = _label_dropped(sim, number, "gate-1-approved", "maria")
    _as(sim, "maria").get_issue(number).remove_from_labels("gate-1-approved")  # withdrawn: `unlabeled` runs nothing
    return marias, _label_dropped(sim, number, "gate-1-approved", by)


def test_a_label_withdrawn_and_put_back_by_a_triager_is_judged_as_the_triagers(sim):
    number = _to_gate_1(sim)
    marias, toms = _withdrawn_and_reapplied(sim, number, "tom")
    run = sim.deliver("issues", marias)
    assert run.result.action == "refused gate-1-approved", run.result.action
    assert state_of(sim, number).decisions == [] and state_of(sim, number).open_gate == 1
    assert "gate-1-approved" not in labels_of(sim, number)
    [reply] = _notices(sim, number, "@tom the `gate-1-approved` label was removed: @tom has the role `triage`")
    assert _notices(sim, number, "@maria") == []
    assert sim.fake.count_calls("issues/list-events") == 1  # the issue changed after maria's event: who applied it

    again = sim.deliver("issues", toms)  # tom's own run: decided already, not said twice
    assert again.result.action == "ignored: the label was already removed", again.result.action
    assert _notices(sim, number, "@tom") == [reply] and state_of(sim, number).decisions == []


def test_a_label_put_back_by_another_approver_passes_in_that_approvers_name(sim):
    number = _to_gate_1(sim)
    sim.fake.add_user("paul", role="maintain")
    marias, pauls = _withdrawn_and_reapplied(sim, number, "paul")
    sim.deliver("issues", marias)
    state = state_of(sim, number)
    assert [(d.gate, d.actor, d.via.value) for d in state.decisions] == [(1, "paul", "label")]
    [entry] = [a for a in state.audit if a.event == "gate 1 approve"]
    assert entry.delivery.startswith("labeled-") and entry.role == "maintain"
    assert sim.deliver("issues", pauls).result.action.startswith("gate 1 is already approved")
    assert [d.actor for d in state_of(sim, number).decisions] == ["paul"]


def test_a_label_run_that_finds_the_issue_as_its_event_left_it_asks_no_one_who_applied_it(sim):
    number = _to_gate_1(sim)
    _as(sim, "maria").get_issue(number).add_to_labels("gate-1-approved")
    sim.event("issues", "labeled", number, sender="maria", label="gate-1-approved")
    assert [(d.gate, d.actor) for d in state_of(sim, number).decisions] == [(1, "maria")]
    assert sim.fake.count_calls("issues/list-events") == 0
