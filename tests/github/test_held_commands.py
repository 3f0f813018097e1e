"""Commands one run leaves for a later one (``comments.LATE_ACTS``, ``LATE_PEOPLE``: the bound per run) are said
where people look, the status comment and the job summary, not only in the run log; their replies come out in
the order the commands were given."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.test_github_flow import _as, _to_gate_1, state_of

pytestmark = pytest.mark.slow


def _status(sim, number) -> str:
    [status] = [c.body for c in sim.fake.comments(REPO, number) if "promotion-bot:status" in c.body]
    return status.split("<!-- promotion-bot:state")[0]


def _replies(sim, number) -> list[tuple[int, int]]:
    """(the reply's id, the comment it answers), in the order the bot posted them."""
    out = []
    for c in sim.fake.comments(REPO, number):
        if "promotion-bot:notice:reply-" in c.body:
            out.append((c.id, int(c.body.split("promotion-bot:notice:reply-")[1].split()[0])))
    return sorted(out)


def _burst(sim, number) -> dict[str, int]:
    """ghuser3 #5: at gate 1, commands from o1, o2 (read), tom (triage), o3 (read), then maria's approval; all
    their runs were dropped (a newer event of the issue replaced each in the queue)."""
    said = {}
    for login, body in [
        ("o1", "/approve"),
        ("o2", "/reject nope"),
        ("tom", "/approve"),
        ("o3", "/retry"),
        ("maria", "/approve looks right"),
    ]:
        if login.startswith("o"):
            sim.fake.add_user(login, role="read")
        said[login] = _as(sim, login).get_issue(number).create_comment(body).id
    return said


def test_commands_left_for_a_later_run_are_named_on_the_status_comment_and_in_the_job_summary(sim):
    """ghuser3 #5: maria's `/approve` and o3's `/retry`, past the run's bound, were only in the run log: the status
    comment still just waited at gate 1, and the job summary said "status refreshed"."""
    number = _to_gate_1(sim)
    said = _burst(sim, number)
    own = _as(sim, "researcher").get_issue(number).create_comment("/status")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="researcher", comment_id=own.id)
    run = sim._run("issue_comment", payload)  # the continuation it dispatches has not run yet
    status = _status(sim, number)
    line = "**2 commands wait for the next run:** `@o3`'s `/retry`, `@maria`'s `/approve` (oldest first: "
    assert line in status, status
    assert line in run.summary, run.summary

    sim.drain()  # the continuation answers them: the line goes
    assert "wait for the next run" not in _status(sim, number)
    state = state_of(sim, number)
    assert [(d.gate, d.actor) for d in state.decisions] == [(1, "maria")]
    answered = [to for _, to in _replies(sim, number)]
    assert answered == sorted(answered) and answered[-2:] == [said["o3"], said["maria"]], answered


def test_a_refusal_after_the_command_a_run_acts_on_is_posted_after_its_reply(sim):
    """ghuser3 #5: replies come out in the order the commands were given. A run folded every refusal into its
    replies before acting, so an outsider's `/approve` written after maria's was answered above hers."""
    number = _to_gate_1(sim)
    sim.fake.add_user("o1", role="read")
    marias = _as(sim, "maria").get_issue(number).create_comment("/approve").id  # both runs dropped
    o1s = _as(sim, "o1").get_issue(number).create_comment("/approve").id
    runs = len(sim.runs)
    thanks = _as(sim, "researcher").get_issue(number).create_comment("Thanks!")
    sim.event("issue_comment", "created", number, sender="researcher", comment_id=thanks.id)
    assert [(d.gate, d.actor) for d in state_of(sim, number).decisions] == [(1, "maria")]
    assert [to for _, to in _replies(sim, number)] == [marias, o1s]
    assert max(r.calls for r in sim.runs[runs:]) <= 30  # the refusal posted after the act costs no save of its own
    assert state_of(sim, number).answered_comment == o1s


def test_a_refusal_posted_after_the_act_is_recorded_at_the_runs_end_when_nothing_else_saves(sim):
    """The refusal replied to after the act is recorded by the run's next save; a run that saves nothing after it
    (maria's `/reject` leaves nothing due) records it at its end, so no later run answers it again."""
    number = _to_gate_1(sim)
    sim.fake.add_user("o1", role="read")
    marias = _as(sim, "maria").get_issue(number).create_comment("/reject not for this release").id
    o1s = _as(sim, "o1").get_issue(number).create_comment("/approve").id
    _as(sim, "researcher").get_issue(number).create_comment("/status")  # its run is dropped too
    thanks = _as(sim, "researcher").get_issue(number).create_comment("Thanks!")
    sim.event("issue_comment", "created", number, sender="researcher", comment_id=thanks.id)
    state = state_of(sim, number)
    assert state.status.value == "rejected" and state.answered_comment == o1s, state.answered_comment
    assert [to for _, to in _replies(sim, number)] == [marias, o1s]
