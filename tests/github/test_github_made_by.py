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


def _made_by_an_older_bot_whose_plan_differs(sim, number) -> None:
    """The status comment as an older bot saved it: its dictionary made stages 1-4, and its stage 3 wrote another
    plan (the bot saved it: not a person's edit)."""
    from bot.github.state import decode_state, encode_state

    c = _status(sim, number)
    state = decode_state(c.body)
    old = state.model_copy(deep=True)
    for n in (1, 2, 3, 4):
        old.stages[n].made_by["dictionary"] = "1.0.0 (sha256 000000000000)"
    old.stages[3].artifacts[0].sha256 = "0" * 64
    body = c.body.replace(encode_state(state), encode_state(old))
    assert body != c.body
    sim.fake.state.update_comment(c, body, sim.fake.BOT)


def test_a_recheck_that_reopens_gate_2_cancels_the_benchmark_run_and_takes_the_dropped_approval_off(sim):
    """bg4: the re-check cleared the benchmark it no longer waits for but left its GPU run going (a restart cancels
    it), and left `gate-2-approved` on the issue for a decision that no longer counts (a restart takes it off):
    the reopened gate's own run then found it there. Both now go through the restart's path, and the notice says so."""
    from tests.github.test_github_benchmark_wait import _benchmark_out
    from tests.github.test_github_flow import _label, labels_of

    number, held, _ = _benchmark_out(sim)  # gates 1 and 2 approved by label; stage 5 waits for the GPU run
    run = sim.benchmark_run(held[0])
    assert state_of(sim, number).benchmark.run_id == run.run_id and run.status == "queued"
    assert {"gate-1-approved", "gate-2-approved"} <= labels_of(sim, number)
    _made_by_an_older_bot_whose_plan_differs(sim, number)

    _comment(sim, number, "researcher", "any news?")  # the run that resumes it re-checks the older bot's stages
    state = state_of(sim, number)
    assert state.open_gate == 2 and [d.gate for d in state.decisions] == [1] and state.benchmark is None
    assert run.conclusion == "cancelled", run
    assert ("benchmark run stopped", "bot") in [(a.event, a.actor) for a in state.audit]
    labels = labels_of(sim, number)
    assert "gate-2-approved" not in labels and "gate-1-approved" in labels, labels  # the kept gate's label stays
    [notice] = _notices(sim, number)
    body = notice.body
    assert "gate 2 reopens for a fresh review and decision" in body, body
    assert f"the GPU benchmark of `{run.inputs['commit'][:12]}` (run {run.run_id}) it waited for was cancelled" in body
    assert "the approval label `gate-2-approved` came off" in body, body

    _label(sim, number, "gate-2-approved", "maria")  # decided anew on the plan this bot wrote
    assert len(held) == 2 and state_of(sim, number).benchmark.run_id == sim.benchmark_run(held[1]).run_id


def test_stage_4_different_while_stage_5_waits_reopens_gate_3_and_cancels_the_benchmark_run(sim):
    """bg5: only stage 4 came out different while stage 5 waited for the GPU run. Gate 3 covers stage 4, but the
    re-check reopened it only after stage 5, which had not finished: it ended saying every stage redone came out
    identical and left the old run going. Now gate 3 reopens at once, the old run is cancelled through the
    restart's path, and stage 5 dispatches the benchmark anew."""
    from bot.github.state import decode_state, encode_state
    from tests.github.test_github_benchmark_wait import _benchmark_out
    from tests.github.test_github_flow import labels_of

    number, held, _ = _benchmark_out(sim)  # gates 1 and 2 approved by label; stage 5 waits for the GPU run
    run = sim.benchmark_run(held[0])
    assert state_of(sim, number).benchmark.run_id == run.run_id and run.status == "queued"
    c = _status(sim, number)
    state = decode_state(c.body)
    old = state.model_copy(deep=True)
    for n in (1, 2, 3, 4):
        old.stages[n].made_by["dictionary"] = "1.0.0 (sha256 000000000000)"
    old.stages[4].artifacts[0].sha256 = "0" * 64  # what the old bot's stage 4 wrote
    sim.fake.state.update_comment(c, c.body.replace(encode_state(state), encode_state(old)), sim.fake.BOT)

    _comment(sim, number, "researcher", "any news?")  # the run that resumes it re-checks the older bot's stages
    state = state_of(sim, number)
    assert [d.gate for d in state.decisions] == [1, 2] and state.open_gate is None and state.recheck is None
    assert run.conclusion == "cancelled", run
    stopped = next(a for a in state.audit if a.event == "benchmark run stopped")
    assert stopped.actor == "bot" and stopped.detail == f"run {run.run_id}: the re-check reopened gate 3", stopped
    assert {"gate-1-approved", "gate-2-approved"} <= labels_of(sim, number)  # the kept gates' labels stay
    [notice] = _notices(sim, number)
    body = notice.body
    assert "gate 2's decision is kept" in body, body
    path = old.stages[4].artifacts[0].path
    assert f"stage 4 (implement tests) redone by this bot came out different ({path} differs)" in body, body
    assert "gate 3 reopens for a fresh review and decision once stage 5 (run and validate) has run again" in body
    assert f"the GPU benchmark of `{run.inputs['commit'][:12]}` (run {run.run_id}) it waited for was cancelled" in body
    assert "every stage redone came out identical" not in body, body
    assert len(held) == 2 and state.benchmark.run_id == sim.benchmark_run(held[1]).run_id  # dispatched anew


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
