"""Runs GitHub drops: the issue's concurrency group keeps one pending run, so a person's event queued after the bot's
own continuation cancels it (and the other way round). Any later run of the issue continues what is due."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot import pipeline
from tests.github.actions_sim import REPO
from tests.github.forms import example_body
from tests.github.test_github_flow import TITLE, _as, _comment, _label, _to_gate_1, labels_of, state_of

pytestmark = pytest.mark.slow


def _drop_pending(sim) -> None:
    """GitHub cancelled the bot's pending continuation (a newer run of the issue's group was queued)."""
    sim.seen_dispatches = len(sim.fake.dispatches)


def test_a_plain_comment_continues_a_promotion_whose_continuation_run_was_dropped(sim):
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim._run("issues", sim.fake.webhook("issues", "opened", REPO, number, sender="researcher"))
    _drop_pending(sim)  # the sandboxed job's run it asked for never runs
    stuck = state_of(sim, number)
    assert isinstance(pipeline.next_step(stuck), pipeline.RunStage), pipeline.describe(stuck)

    _comment(sim, number, "researcher", "Thanks! Evolved on 4 instances.")
    chat = next(r for r in sim.runs if r.event == "issue_comment")
    assert chat.result.action.startswith("ignored: no command; then continued what was due"), chat.result.action
    state = state_of(sim, number)
    assert state.status.value == "awaiting-decision" and state.open_gate == 1, pipeline.describe(state)
    assert "gate-1-pending" in labels_of(sim, number)


def test_a_refused_command_continues_too_and_a_comment_at_a_waiting_gate_changes_nothing(sim):
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim._run("issues", sim.fake.webhook("issues", "opened", REPO, number, sender="researcher"))
    _drop_pending(sim)
    _comment(sim, number, "tom", "/approve")  # a triager may not decide: refused, answered, and what is due runs
    refused = next(r for r in sim.runs if r.event == "issue_comment")
    assert refused.result.action.startswith("refused /approve; then continued what was due"), refused.result.action
    assert any("`/approve` was not applied" in c.body for c in sim.fake.comments(REPO, number))
    assert state_of(sim, number).open_gate == 1

    runs, dispatches = len(sim.runs), len(sim.fake.dispatches)
    _comment(sim, number, "researcher", "Looks right to me.")
    [chat] = sim.runs[runs:]
    assert chat.result.action == "ignored: no command" and len(sim.fake.dispatches) == dispatches
    assert chat.calls <= 3, chat.calls  # reading the status comment says nothing is due


def test_a_comment_on_a_promotion_at_rest_costs_no_call(sim):
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/reject not for this release")
    assert "promotion-rejected" in labels_of(sim, number)
    _comment(sim, number, "researcher", "Understood, thanks.")
    assert sim.runs[-1].result.action == "ignored: no command" and sim.runs[-1].calls == 0


def test_stage_5_continues_when_the_benchmarks_dispatch_back_was_dropped_and_no_benchmark_runs_again(sim):
    gpu = sim.gpu

    def gpu_whose_dispatch_back_is_dropped(inputs):
        gpu(inputs)
        _drop_pending(sim)  # benchmark.yml's `benchmark-finished` run was cancelled by a person's event

    sim.gpu = gpu_whose_dispatch_back_is_dropped
    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _label(sim, number, "gate-2-approved", "maria")
    state = state_of(sim, number)
    assert state.next_stage is not None and int(state.next_stage) == 5, pipeline.describe(state)
    bench = [d for d in sim.fake.dispatches if d.workflow.endswith("benchmark.yml")]
    assert len(bench) == 1

    sim.gpu = None  # a second benchmark dispatch would fail the test (actions_sim asserts on it)
    comment = _as(sim, "researcher").get_issue(number).create_comment("Results are in, I think.")
    sim.event("issue_comment", "created", number, sender="researcher", comment_id=comment.id)
    state = state_of(sim, number)
    assert state.open_gate == 3 and state.status.value == "awaiting-decision", pipeline.describe(state)
    assert len([d for d in sim.fake.dispatches if d.workflow.endswith("benchmark.yml")]) == 1


def _bodies(sim, number):
    return [c.body for c in sim.fake.comments(REPO, number)]


def _reply_to(sim, number, comment_id):
    return [c.body for c in sim.fake.comments(REPO, number) if f"promotion-bot:notice:reply-{comment_id} " in c.body]


def test_a_command_whose_run_was_dropped_is_answered_once_by_the_next_run(sim):
    """Found by the lead: GitHub dropped the run of maria's `/approve` (a newer event of the issue replaced it in
    the queue); the next run continued the promotion but never answered her, and gate 1 stayed waiting."""
    number = _to_gate_1(sim)
    approve = _as(sim, "maria").get_issue(number).create_comment("/approve")  # its run is dropped: never runs
    dropped = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=approve.id)
    _comment(sim, number, "researcher", "Thanks, that was quick.")
    chat = next(r for r in sim.runs if r.event == "issue_comment")
    assert chat.result.notes[0] == f"answered comment {approve.id} whose run was dropped: applied /approve"
    state = state_of(sim, number)
    assert [(d.gate, d.actor, d.via.value) for d in state.decisions] == [(1, "maria", "command")]
    assert state.decisions[0].written_at is not None  # by GitHub's clock, as its own run would have recorded
    assert state.open_gate == 2 and state.status.value == "awaiting-decision", pipeline.describe(state)
    [reply] = _reply_to(sim, number, approve.id)
    assert "@maria `/approve` was applied by a later run of this issue" in reply

    # its own run, re-run by hand after all, and more comments: nothing is decided or answered again
    sim.deliver("issue_comment", dropped)
    _comment(sim, number, "researcher", "Great.")
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value) for d in state.decisions] == [(1, "approve")] and state.open_gate == 2
    assert len(_reply_to(sim, number, approve.id)) == 1


def test_dropped_commands_of_bots_and_of_people_who_may_not_decide_never_count(sim):
    sim.fake.add_user("renovate[bot]", role="admin", type="Bot")
    number = _to_gate_1(sim)
    bot = _as(sim, "renovate[bot]").get_issue(number).create_comment("/approve")
    triager = _as(sim, "tom").get_issue(number).create_comment("/approve")
    _comment(sim, number, "researcher", "Any news?")
    state = state_of(sim, number)
    assert state.decisions == [] and state.open_gate == 1
    assert _reply_to(sim, number, bot.id) == []
    [reply] = _reply_to(sim, number, triager.id)
    assert "`/approve` was not applied: @tom has the role `triage`" in reply
    _comment(sim, number, "researcher", "Ok.")
    assert len(_reply_to(sim, number, triager.id)) == 1 and state_of(sim, number).decisions == []


def test_a_dropped_command_written_before_the_review_now_open_never_decides_it(sim):
    """Answered late, a command is judged by when it was written (bot/events/stale.py): one written before gate
    1's review was shown decides nothing, and one written while the stages ran is answered by the bot's next run."""
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim._run("issues", sim.fake.webhook("issues", "opened", REPO, number, sender="researcher"))
    early = _as(sim, "maria").get_issue(number).create_comment("/approve")  # while the stages run; run dropped
    sim.drain()  # the bot's continuation answers it: no gate was open
    [reply] = _reply_to(sim, number, early.id)
    assert "`/approve` was not applied: no gate is open: stage 2 (translate) is due" in reply

    assert state_of(sim, number).open_gate == 1
    [status] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status -->")]
    shown = status.updated_at  # when gate 1's review was shown, by GitHub's clock
    late = _as(sim, "maria").get_issue(number).create_comment("/approve")  # its run dropped too
    stored = sim.fake.state.repos[REPO].comments[late.id]
    stored.created_at = stored.updated_at = shown - timedelta(seconds=5)  # as if written before the review
    _comment(sim, number, "researcher", "Anything missing?")
    assert state_of(sim, number).decisions == []
    [reply] = _reply_to(sim, number, late.id)
    assert "before gate 1's review now open (round 1) was shown at" in reply and "comment `/approve` again" in reply


def test_a_bots_comment_or_another_label_continues_too_and_never_acts(sim):
    """Found by a fresh pass (W1): a welcome or CI bot's comment, or a label other than a gate approval, starts a run
    in the issue's group that can displace the continuation, and did not continue what was due."""
    sim.fake.add_user("welcome-bot[bot]", role="admin", type="Bot")
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    sim._run("issues", sim.fake.webhook("issues", "opened", REPO, number, sender="researcher"))
    _drop_pending(sim)
    _comment(sim, number, "welcome-bot[bot]", "/approve")  # an admin, but a bot: its text never acts
    bot = next(r for r in sim.runs if r.event == "issue_comment")
    assert bot.result.action.startswith("ignored: a bot's comment; then continued what was due"), bot.result.action
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.status.value == "awaiting-decision" and state.decisions == []
    assert not any("was not applied" in c.body for c in sim.fake.comments(REPO, number))

    change = (
        _as(sim, "maria").get_issue(number).create_comment("/request-changes recalibrate\nparam loadHighThreshold: 9")
    )
    sim._run(
        "issue_comment",
        sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=change.id),
    )
    _drop_pending(sim)  # the rerun's continuation, displaced by a label a person added by hand
    assert isinstance(pipeline.next_step(state_of(sim, number)), pipeline.RunStage)
    _label(sim, number, "gate-2-pending", "maria")
    label = [r for r in sim.runs if r.event == "issues"][-1]
    assert label.result.action.startswith("ignored: not a gate label; then continued what was due"), label.result
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.status.value == "awaiting-decision", pipeline.describe(state)


def test_a_burst_of_dropped_commands_costs_one_bounded_run_and_one_reply_per_person(sim):
    """Red team 6 #2: every missed command was answered in one run, one reply each: 60 comments from a read-role
    outsider (their runs dropped by the issue's concurrency group) cost 154 REST calls in one run, and the token's
    1,000 an hour are shared by every promotion of the repository. A person's refused and malformed commands of
    one run now get one reply, and an approver's command among them is still acted on."""
    sim.fake.add_user("mallory", role="read")
    number = _to_gate_1(sim)
    flood = _as(sim, "mallory").get_issue(number)
    for i in range(60):
        if i == 37:
            approve = _as(sim, "maria").get_issue(number).create_comment("/approve")
        flood.create_comment(f"/approve{'x' if i % 2 else ''}")
    runs = len(sim.runs)
    _comment(sim, number, "mallory", "hello")
    [run] = sim.runs[runs:]
    assert run.calls <= 30, run.calls  # it also opens gate 2's review: maria's /approve passed gate 1
    [reply] = [b for b in _bodies(sim, number) if "@mallory" in b and "promotion-bot:notice:reply-" in b]
    assert "@mallory none of your 60 commands here was applied:" in reply
    assert "- `/approve` was not applied: @mallory has the role `read`" in reply and "(30 of them)" in reply
    assert "- `/approvex` is not a command" in reply
    state = state_of(sim, number)
    assert [(d.gate, d.actor) for d in state.decisions] == [(1, "maria")] and state.open_gate == 2
    [applied] = _reply_to(sim, number, approve.id)
    assert "@maria `/approve` was applied by a later run of this issue" in applied

    _comment(sim, number, "researcher", "Thanks.")  # nothing is answered again
    assert len([b for b in _bodies(sim, number) if "@mallory" in b]) == 1


def test_commands_past_one_runs_bound_wait_for_the_next_run_and_are_never_skipped(sim):
    """The people one run answers are bounded (``comments.LATE_PEOPLE``): the next command waits, with every newer
    one (the run's own too), for the run this one dispatches; the watermark never passes it."""
    from bot.events.comments import LATE_PEOPLE

    number = _to_gate_1(sim)
    people = [f"reader{i}" for i in range(LATE_PEOPLE + 1)]
    said = {}
    for login in people:
        sim.fake.add_user(login, role="read")
        said[login] = _as(sim, login).get_issue(number).create_comment("/approve").id
    runs = len(sim.runs)
    own = _comment(sim, number, "maria", "/approve")
    first, *rest = sim.runs[runs:]
    assert first.result.action == "left for a later run: older commands come first", first.result
    assert f"left 1 command(s) from comment {said[people[-1]]} on for a later run" in first.result.notes[-1]
    assert rest and rest[0].event == "workflow_dispatch"  # the continuation takes up the rest
    for login in people:
        [reply] = _reply_to(sim, number, said[login])
        assert f"@{login} `/approve` was not applied: @{login} has the role `read`" in reply
    state = state_of(sim, number)
    assert [(d.gate, d.actor) for d in state.decisions] == [(1, "maria")] and state.open_gate == 2
    # red team 7 #4: her run ran, and the bot deferred her command: GitHub replaced nothing
    [reply] = _reply_to(sim, number, own)
    assert "@maria `/approve` was applied by a later run: older commands on this issue were answered first" in reply
    assert "(at most one per run)" in reply and "GitHub keeps one waiting run" not in reply
    deferred = f"answered comment {own} deferred by an earlier run (older commands first)"
    assert f"{deferred}: applied /approve" in rest[0].result.notes


def test_a_deferred_command_its_author_corrected_is_answered_as_it_reads_now(sim):
    """Red team 7 #4: a command the bot deferred (the bound per run) and its author then corrected (an edit starts
    no run) was skipped for good by the later runs, as any edited comment was: her own edit counts."""
    from bot.events.comments import LATE_PEOPLE

    number = _to_gate_1(sim)
    for i in range(LATE_PEOPLE + 1):
        sim.fake.add_user(f"reader{i}", role="read")
        _as(sim, f"reader{i}").get_issue(number).create_comment("/approve")  # their runs were dropped
    typo = _as(sim, "maria").get_issue(number).create_comment("/approve 2")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=typo.id)
    held = sim._run("issue_comment", payload)  # her run, before the continuation it dispatches
    assert held.result.action == "left for a later run: older commands come first", held.result
    typo.edit("/approve 1")  # she fixes the gate number
    runs = len(sim.runs)
    sim.drain()
    state = state_of(sim, number)
    assert [(d.gate, d.actor) for d in state.decisions] == [(1, "maria")] and state.open_gate == 2
    [reply] = _reply_to(sim, number, typo.id)
    assert "@maria `/approve` was applied by a later run: older commands on this issue were answered first" in reply
    assert any(
        f"answered comment {typo.id} deferred by an earlier run" in n for r in sim.runs[runs:] for n in r.result.notes
    )


def test_a_command_that_changes_nothing_is_answered_once_by_its_own_run(sim):
    """Red team 7 #3: a `/cancel` of a cancelled promotion changed nothing, so nothing recorded it answered: every
    later run acted on it again, spent its one act per run on it and left a maintainer's `/retry` for later
    runs (12 such comments cost 24 runs). It is answered once, by its own run, and recorded."""
    number = _to_gate_1(sim)
    _comment(sim, number, "researcher", "/cancel not now")  # the issue author may cancel
    noops = []
    for _ in range(3):
        runs = len(sim.runs)
        noops.append(_comment(sim, number, "researcher", "/cancel"))
        assert len(sim.runs) == runs + 1  # no continuation: nothing was left
        assert state_of(sim, number).answered_comment == noops[-1]
    for noop in noops:
        [reply] = _reply_to(sim, number, noop)
        assert "@researcher `/cancel` changed nothing: the promotion is already cancelled (`/retry` continues it)" in (
            reply
        )
    runs = len(sim.runs)
    retry = _comment(sim, number, "maria", "/retry")
    [run] = sim.runs[runs:]  # her own run applies it: nothing older waits
    assert run.result.notes == [] and run.result.action.startswith("waiting for a decision at gate 1"), run.result
    state = state_of(sim, number)
    assert state.status.value == "awaiting-decision" and state.answered_comment == retry
    assert all(len(_reply_to(sim, number, noop)) == 1 for noop in noops)


def test_a_dropped_command_that_changes_nothing_spends_no_act_of_the_runs_bound(sim):
    """A missed no-op is answered with the refused ones (one reply per person, no state change): the run's one act
    goes to the command that changes something, here a maintainer's `/retry`."""
    number = _to_gate_1(sim)
    _comment(sim, number, "researcher", "/cancel not now")
    noop = _as(sim, "researcher").get_issue(number).create_comment("/cancel").id  # its run was dropped
    retry = _as(sim, "maria").get_issue(number).create_comment("/retry").id  # so was hers
    runs = len(sim.runs)
    _comment(sim, number, "researcher", "Thanks.")
    [run] = sim.runs[runs:]
    assert run.result.notes[:2] == [
        f"answered comment {noop} whose run was dropped: answered /cancel: it changed nothing",
        f"answered comment {retry} whose run was dropped: applied /retry",
    ], run.result.notes
    state = state_of(sim, number)
    assert state.status.value == "awaiting-decision" and state.open_gate == 1 and state.answered_comment >= retry
    [reply] = _reply_to(sim, number, noop)
    assert "`/cancel` changed nothing: the promotion is already cancelled" in reply
