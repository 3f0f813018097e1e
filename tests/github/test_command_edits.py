"""A command counts only as its author wrote it, even when someone else's edit lands in the second it was written
(REST's timestamps have whole seconds, so such an edit looks like none there): bot/events/edits.py."""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.state import State
from tests.github.test_github_flow import _as, _comment, _to_gate_1, state_of

pytestmark = pytest.mark.slow


def _with_walt(sim) -> int:
    """Gate 1 waits; walt has write access (he may edit anyone's comment) but may not decide gates."""
    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\napprovers:\n  roles: [admin, maintain]\n"
    )
    sim.fake.add_user("walt", role="write")
    return _to_gate_1(sim)


def _edit_in_the_same_second(sim, monkeypatch, number: int, comment, body: str, login: str = "walt") -> None:
    """``login`` edits ``comment`` within the second GitHub wrote it: REST shows ``updated_at == created_at``."""
    with monkeypatch.context() as m:
        m.setattr(State, "now", lambda self: comment.created_at)
        _as(sim, login).get_issue(number).get_comment(comment.id).edit(body)
    seen = _as(sim, "maria").get_issue(number).get_comment(comment.id)
    assert seen.updated_at == seen.created_at and seen.body == body  # what REST shows: "never edited"


def _reply(sim, number: int, comment_id: int) -> list[str]:
    marker = f"promotion-bot:notice:reply-{comment_id} "
    return [c.body for c in sim.fake.comments(REPO, number) if marker in c.body]


def test_an_edit_made_in_the_second_the_command_was_written_decides_nothing_in_its_authors_name(sim, monkeypatch):
    """Red team 7 #1: walt's script turned maria's `/reject` into `/approve` in the second she wrote it, and gate 1
    passed "approved by maria": REST's whole-second timestamps showed the comment unedited, so nobody asked who
    edited it. The text read now differs from the event's, so GraphQL is asked, and it names walt."""
    number = _with_walt(sim)
    rejected = _as(sim, "maria").get_issue(number).create_comment("/reject the fidelity is not good enough")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=rejected.id)
    _edit_in_the_same_second(sim, monkeypatch, number, rejected, "/approve")
    sim.deliver("issue_comment", payload)
    state = state_of(sim, number)
    assert state.decisions == [] and state.open_gate == 1 and state.status.value == "awaiting-decision"
    [reply] = _reply(sim, number, rejected.id)
    assert "@maria your comment was last edited by @walt, not by you, so nothing in it was applied" in reply

    own = _as(sim, "maria").get_issue(number).create_comment("/reject the fidelity is not good enough")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=own.id)
    _edit_in_the_same_second(sim, monkeypatch, number, own, "/approve", login="maria")  # her own edit counts
    sim.deliver("issue_comment", payload)
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value, d.actor) for d in state.decisions] == [(1, "approve", "maria")]


def test_a_dropped_command_edited_in_its_second_is_asked_about_not_trusted(sim, monkeypatch):
    """The late path (a command whose run GitHub dropped) has no payload text to compare: it asks GraphQL who
    edited the comment (one call) instead of trusting REST's timestamps."""
    number = _with_walt(sim)
    rejected = _as(sim, "maria").get_issue(number).create_comment("/reject the fidelity is not good enough")
    _edit_in_the_same_second(sim, monkeypatch, number, rejected, "/approve")  # its own run is dropped
    runs = len(sim.runs)
    _comment(sim, number, "researcher", "Any news?")
    state = state_of(sim, number)
    assert state.decisions == [] and state.open_gate == 1
    [reply] = _reply(sim, number, rejected.id)
    assert "@maria your comment was last edited by @walt, not by you" in reply
    [run] = sim.runs[runs:]
    assert f"answered comment {rejected.id} whose run was dropped: ignored: the command was edited by someone else" in (
        run.result.notes
    )
    _comment(sim, number, "researcher", "Ok.")  # answered once
    assert len(_reply(sim, number, rejected.id)) == 1 and state_of(sim, number).decisions == []
