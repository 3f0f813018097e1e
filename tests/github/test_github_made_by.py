"""On GitHub, a promotion whose stages another bot version made is re-checked, and the issue is told once.

The re-check (``bot.recheck``) changes what people decided on: its lines reached only the run log and the audit
trail. They are now one notice on the issue (found again by its marker: a later run's lines update it, a replayed
event repeats nothing) and a line in the status comment.
"""

from __future__ import annotations

import pytest

from tests.github.actions_sim import REPO
from tests.github.test_github_flow import _comment, _to_gate_1, state_of

pytestmark = pytest.mark.slow

STATUS = "<!-- promotion-bot:status -->"
NOTICE = "<!-- promotion-bot:notice:recheck-"


def _status(sim, number):
    [c] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]
    return c


def _notices(sim, number):
    return [c for c in sim.fake.comments(REPO, number) if c.body.startswith(NOTICE)]


def _saved_by_a_bot_without_made_by(sim, number) -> None:
    """The status comment as a bot from before ``made_by`` saved it (the bot saved it: not a person's edit)."""
    from bot.github.state import decode_state, encode_state

    c = _status(sim, number)
    state = decode_state(c.body)
    old = state.model_copy(deep=True)
    for record in old.stages.values():
        record.made_by = {}
    body = c.body.replace(encode_state(state), encode_state(old))
    assert body != c.body
    sim.fake.state.update_comment(c, body, sim.fake.BOT)


def test_a_recheck_is_one_notice_on_the_issue_and_in_the_status_and_a_replay_repeats_nothing(sim):
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2
    assert not _notices(sim, number)  # this bot's own stages: nothing to re-check
    _saved_by_a_bot_without_made_by(sim, number)

    _comment(sim, number, "maria", "/approve")
    state = state_of(sim, number)
    assert [d.gate for d in state.decisions] == [1, 2] and all(state.stages[n].made_by for n in (2, 3))
    [notice] = _notices(sim, number)
    body = notice.body
    assert "**Re-check:** this promotion's stages were made by another bot version" in body, body
    assert "stages 2, 3 by a bot that did not record its versions" in body and "redoing from stage 2" in body
    assert "- stage 2 (translate) redone by this bot came out byte-identical: gate 1's decision is kept" in body
    assert "gate 2's decision is kept" in body
    assert "**Re-check:** this promotion's stages were made by another bot version" in _status(sim, number).body

    comments = [(c.id, c.body) for c in sim.fake.comments(REPO, number)]
    approve = next(r for r in reversed(sim.runs) if r.event == "issue_comment")
    sim.replay(approve)  # GitHub re-runs the /approve run: nothing is re-checked or said again
    assert [(c.id, c.body) for c in _notices(sim, number)] == [(notice.id, body)]
    assert len(sim.fake.comments(REPO, number)) == len(comments)


def test_status_says_a_recheck_is_due_and_its_notice_names_only_decided_gates_and_ends_with_the_next_step(sim):
    """Found by an llm-d maintainer: after an upgrade at gate 2, `/status` said nothing; the change request's notice
    then spoke of "the decisions at gate 1 and 2" (gate 2 had only the change request), said "gate 1 kept" twice,
    and never said what to do next."""
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/approve")
    _saved_by_a_bot_without_made_by(sim, number)

    _comment(sim, number, "researcher", "/status")  # read-only: no re-check runs, but the checklist says one is due
    status = _status(sim, number).body
    assert "**Re-check due:** this promotion's stages were made by another bot version" in status, status
    assert "the next step that moves the promotion (a decision, a retry) first redoes stages 2, 3" in status
    assert "gate 1's decision stays only if the artifacts it approved come out byte-identical" in status
    assert not _notices(sim, number) and state_of(sim, number).recheck is None

    _comment(sim, number, "maria", "/request-changes tighten\nmargin: 0.04")
    [notice] = _notices(sim, number)
    body = notice.body
    assert "gate 1's decision stays only if the artifacts it approved come out byte-identical" in body, body
    assert "gate 2" not in body.split("**Next:**")[0] and "gates 1 and 2" not in body
    assert body.count("kept") == 1 and "gate 1's decision is kept" in body
    assert body.rstrip().endswith("**Next:** waiting for a decision at gate 2.")
    status = _status(sim, number).body
    [paragraph] = [line for line in status.splitlines() if line.startswith("> **Re-check")]
    assert paragraph.startswith("> **Re-check:**") and paragraph.count("kept") == 1, paragraph
