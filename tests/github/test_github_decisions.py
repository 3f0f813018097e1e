"""Deciding on GitHub: a decision counts once, on the issue, for the gate open when it was made, from people
the one rule lets make it; whatever the bot reposts mentions nobody."""

from __future__ import annotations

import re

import pytest

from tests.github.actions_sim import REPO
from tests.github.forms import example_body, example_values, render_form
from tests.github.test_github_flow import TITLE, _as, _comment, _label, _to_gate_1, comment_with, labels_of, state_of

pytestmark = pytest.mark.slow


def _bodies(sim, number):
    return [c.body for c in sim.fake.comments(REPO, number)]


def test_a_refused_command_stays_refused_and_a_late_run_never_decides_a_later_gate(sim):
    """Found by the red team: `/approve 2` refused at gate 1 passed gate 2 when its run was re-run later."""
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/approve 2")
    refused = sim.runs[-1]
    assert refused.event == "issue_comment" and refused.result.action == "refused /approve"
    # a bare /approve written at gate 1 whose run GitHub dropped (the label's run replaced it in the queue): the
    # label's run answers it first, on gate 1 where it was written, and the label then finds gate 1 approved
    late = _as(sim, "maria").get_issue(number).create_comment("/approve")
    late_payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=late.id)
    _label(sim, number, "gate-1-approved", "maria")
    assert state_of(sim, number).open_gate == 2

    sim.replay(refused)  # re-run by hand later: neither decides gate 2
    sim.drain()
    sim.deliver("issue_comment", late_payload)
    state = state_of(sim, number)
    assert state.open_gate == 2 and state.status.value == "awaiting-decision"
    assert [(d.gate, d.via.value) for d in state.decisions] == [(1, "command")]
    assert len([b for b in _bodies(sim, number) if "@maria `/approve` was applied by a later run" in b]) == 1


def test_an_approval_written_before_a_change_request_never_approves_the_review_that_followed(sim):
    """A bare `/approve` written while gate 1 showed round 1, run only after a change request started a new review
    (a queued or re-run workflow run), approved a review its writer never saw. Its run dropped, it is now answered
    first, on the review it was written on, by the change request's run; its own run, re-run later, decides
    nothing."""
    sim.fake.add_user("alice", role="maintain")
    number = _to_gate_1(sim)
    late = _as(sim, "maria").get_issue(number).create_comment("/approve")
    late_payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=late.id)
    _comment(sim, number, "alice", "/request-changes recalibrate for 100-request pods\nparam loadHighThreshold: 9")
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value, d.round) for d in state.decisions] == [(1, "approve", 1)]
    assert state.open_gate == 2 and state.status.value == "awaiting-decision"
    [reply] = [b for b in _bodies(sim, number) if "@alice `/request-changes` was not applied" in b]
    assert "no gate is open" in reply

    sim.deliver("issue_comment", late_payload)
    state = state_of(sim, number)
    assert state.open_gate == 2 and [d.decision.value for d in state.decisions] == ["approve"]
    assert not any("@maria `/approve` was not applied" in b for b in _bodies(sim, number))


def _edit_program(sim, number, factor: str) -> None:
    """The researcher edits the evolved program on GitHub (no event delivered yet)."""
    values = example_values()
    values["source"] = values["source"].replace("adj *= 1.0 - 0.12*(load-4.5)", f"adj *= 1.0 - {factor}*(load-4.5)")
    assert factor == "0.12" or "0.12*(load-4.5)" not in values["source"]
    sim.fake.issue(REPO, number).body = render_form(values, {"baselines": [0, 1], "consent": [0]})


def test_an_approval_written_before_an_edit_restarted_the_promotion_never_approves_the_new_review(sim):
    """Found by the red team (round 2): a bare `/approve` written at gate 1, run late after an edit restarted the
    promotion, approved the edited program's review unseen; then its run read the payload's old body, took it
    for a configuration change ("`stack:` configuration, or a bot upgrade") and restarted onto the old program."""
    number = _to_gate_1(sim)
    late = _as(sim, "maria").get_issue(number).create_comment("/approve")
    late_payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=late.id)
    _edit_program(sim, number, "0.50")
    sim.event("issues", "edited", number, sender="researcher")
    edited = state_of(sim, number)
    assert edited.open_gate == 1 and edited.status.value == "awaiting-decision" and edited.decisions == []
    restarts = [a for a in edited.audit if a.event.startswith("restarted")]
    assert [a.detail for a in restarts] == ["@researcher edited the issue: the evolved program changed"]

    sim.deliver("issue_comment", late_payload)
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    assert state.request_fingerprint == edited.request_fingerprint  # the current body, not the payload's
    assert [a for a in state.audit if a.event.startswith("restarted")] == restarts
    # its run dropped, the edit's run answered it first, on the review it was written on; the restart then
    # threw that approval away with the review, and its own run, re-run later, approves nothing
    assert [a.event for a in state.audit if a.event.startswith("gate 1")].count("gate 1 approve") == 1
    assert not any("bot upgrade" in b or "stack:" in b[:300] for b in _bodies(sim, number))

    _comment(sim, number, "maria", "/approve")  # written now, on the review it shows: it counts
    assert [(d.gate, d.decision.value) for d in state_of(sim, number).decisions] == [(1, "approve")]


def test_a_gate_label_applied_before_an_edit_restarted_the_promotion_never_approves_the_new_review(sim):
    """A label is a decision too: `gate-1-approved` applied while an edit's run was restarting the promotion (after
    that run had read the issue's labels, so the label stayed), its own run starting only then, approved the edited
    program's review unseen. The payload's `updated_at` says when it was applied, by GitHub's clock."""
    number = _to_gate_1(sim)
    _edit_program(sim, number, "0.50")
    edit_payload = sim.fake.webhook("issues", "edited", REPO, number, sender="researcher")
    repo, issue = sim.fake.state.repos[REPO], sim.fake.issue(REPO, number)
    sim.fake.state.add_labels(repo, issue, ["gate-1-approved"], "maria", emit=False)  # its event queues behind
    label_payload = sim.fake.webhook("issues", "labeled", REPO, number, sender="maria", label="gate-1-approved")
    sim.fake.state.remove_label(repo, issue, "gate-1-approved", "maria")  # the edit's run read the labels before
    undone = issue.events[-1]
    sim.deliver("issues", edit_payload)
    sim.fake.state.add_labels(repo, issue, ["gate-1-approved"], "maria", emit=False)  # ... she applied it
    # GitHub lists her one application: not the simulation's removal and later one (a later one would count)
    issue.events[:] = [e for e in issue.events if e is not undone and e is not issue.events[-1]]
    edited = state_of(sim, number)
    assert edited.open_gate == 1 and edited.decisions == []

    sim.deliver("issues", label_payload)
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    assert "gate-1-approved" not in labels_of(sim, number)
    [reply] = [b for b in _bodies(sim, number) if "@maria the `gate-1-approved` label was removed" in b]
    assert "before gate 1's review now open (round 1) was shown at" in reply, reply
    assert "apply the label again" in reply, reply

    _label(sim, number, "gate-1-approved", "maria")  # applied now, on the review it shows: it counts
    assert [(d.gate, d.via.value) for d in state_of(sim, number).decisions] == [(1, "label")]


def test_an_edit_first_read_by_another_run_restarts_with_the_issue_named_as_the_cause(sim):
    """The edit's own run may never come (GitHub's concurrency group drops a pending run for a later one): the
    next run reads the current body and restarts, naming the issue, not the configuration, as the cause; the
    approval, made on the old program's review that the labels still showed, goes with that review."""
    number = _to_gate_1(sim)
    _edit_program(sim, number, "0.50")
    _comment(sim, number, "maria", "/approve")
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    [restart] = [a for a in state.audit if a.event.startswith("restarted")]
    assert restart.detail.startswith("the issue changed since the bot last read it"), restart.detail
    assert restart.detail.endswith(": the evolved program changed")
    [notice] = [b for b in _bodies(sim, number) if "restarted from stage 1" in b]
    assert notice.startswith("<!-- promotion-bot:notice:restart-") and "The issue changed" in notice, notice
    assert "configuration" not in notice and "stack:" not in notice, notice


def _noise(n: int, seed: int = 1) -> str:
    """Random letters and digits: text zlib cannot shrink much, as a pasted log or an attacker's would be."""
    import random
    import string

    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def test_a_reason_too_long_to_keep_is_refused_with_a_reply_not_a_crash(sim):
    """Found by the red team (round 2): a 30,000-60,000 character `/cancel`, `/reject` or `/request-changes`
    reason crashed the run ("the promotion state does not fit in a GitHub comment ... a bug in the bot"), and
    nothing was recorded or answered. Any issue author could do it with `/cancel`."""
    number = _to_gate_1(sim)
    before = state_of(sim, number)
    tries = [
        ("researcher", "cancel", "reason", "/cancel " + _noise(30_000)),
        ("maria", "reject", "reason", "/reject " + _noise(60_000)),
        ("maria", "request-changes", "reason", "/request-changes param loadHighThreshold: 70\n" + _noise(45_000)),
        ("maria", "approve", "remark", "/approve\n" + _noise(45_000)),
    ]
    for login, name, what, body in tries:
        comment = _as(sim, login).get_issue(number).create_comment(body)
        run = sim.event("issue_comment", "created", number, sender=login, comment_id=comment.id)
        assert run.result.action == "malformed command", run.result
        reply = next(c.body for c in sim.fake.comments(REPO, number) if f"reply-{comment.id}" in c.body[:80])
        n = len(body.split(" ", 1)[1]) if name in ("cancel", "reject") else None
        assert f"@{login} `/{name}` was not applied: its {what} is " in reply, reply
        assert f"a {what} may be at most 2,000" in reply and (n is None or f"{n:,} characters long" in reply)
        assert len(reply) < 600
    after = state_of(sim, number)
    assert after.status == before.status and after.open_gate == 1 and after.decisions == []

    _comment(sim, number, "maria", "/reject " + _noise(2_000))  # at the limit: decided, saved, shown
    state = state_of(sim, number)
    assert state.status.value == "rejected" and len(state.decisions[-1].reason) == 2_000


def test_a_gates_change_requests_together_stay_within_what_the_state_keeps(sim):
    """Each change request is kept whole, and the rerun reads all of them: together, at one gate, they are
    bounded too, or many of them would overflow the status comment the same way one long reason did."""
    number = _to_gate_1(sim)
    first = "param loadLowThreshold: 5.5\n" + _noise(2_000 - 28, seed=2)
    _comment(sim, number, "maria", "/request-changes " + first)
    state = state_of(sim, number)
    assert state.open_gate == 1 and [d.decision.value for d in state.decisions] == ["request-changes"]
    assert len(state.stages[2].feedback) == 2_000

    second = (
        _as(sim, "maria")
        .get_issue(number)
        .create_comment("/request-changes param loadLowThreshold: 6.5\n" + _noise(1_000, seed=3))
    )
    run = sim.event("issue_comment", "created", number, sender="maria", comment_id=second.id)
    assert run.result.action == "refused /request-changes", run.result
    reply = next(c.body for c in sim.fake.comments(REPO, number) if f"reply-{second.id}" in c.body[:80])
    assert "gate 1's change requests would hold 3,030 characters with this one (2,000 already)" in reply, reply
    assert "at most 3,000" in reply and "approve or reject the gate" in reply
    assert [d.decision.value for d in state_of(sim, number).decisions] == ["request-changes"]


def test_an_approval_remark_is_recorded_and_reposted_text_mentions_nobody(sim):
    """Found by the red team: `cc @octocat` in the title pinged @octocat from the status comment and the PR.
    Found by a maintainer: the bot advised approving "with it as the reason", then refused `/approve <reason>`."""
    number = sim.fake.create_issue(REPO, f"{TITLE} cc @octocat", example_body(), "researcher", labels=("promotion",))
    sim.event("issues", "opened", number, sender="researcher")
    assert state_of(sim, number).open_gate == 1
    [pull] = sim.fake.pulls(REPO)
    assert "cc `@octocat`" in comment_with(sim, number, "<!-- promotion-bot:status -->")

    _comment(sim, number, "maria", "/approve looks fine to me, cc @octocat")
    state = state_of(sim, number)
    assert [(d.gate, d.reason) for d in state.decisions] == [(1, "looks fine to me, cc @octocat")]
    assert any(a.event == "gate 1 approve" and a.detail == "looks fine to me, cc @octocat" for a in state.audit)
    posted = [b for b in _bodies(sim, number) if not b.startswith("/approve")] + [
        sim.fake.issue(REPO, pull.number).body
    ]
    posted += [r.body for r in sim.fake.reviews(REPO, pull.number)]
    live = [line for b in posted for line in b.splitlines() if re.search(r"(?<![\w`])@octocat", line)]
    assert live == []


def test_closing_the_issue_needs_what_cancel_needs_and_is_audited_with_the_role(sim):
    """Found by the red team: a triager, whose `/cancel` is refused, cancelled the promotion by closing the issue."""
    number = _to_gate_1(sim)
    _as(sim, "tom").get_issue(number).edit(state="closed")
    sim.event("issues", "closed", number, sender="tom")
    assert sim.fake.issue(REPO, number).state == "open"
    assert state_of(sim, number).status.value == "awaiting-decision"
    assert any(
        b.startswith("<!-- promotion-bot:notice:close-")
        and "@tom the issue was reopened" in b
        and "the role `triage`" in b
        for b in _bodies(sim, number)
    )
    sim.replay(sim.runs[-1])  # a re-run reopens nothing and answers nothing again
    assert sum("@tom the issue was reopened" in b for b in _bodies(sim, number)) == 1

    _as(sim, "researcher").get_issue(number).edit(state="closed")  # the person who filed it may cancel it
    sim.event("issues", "closed", number, sender="researcher")
    state = state_of(sim, number)
    assert state.status.value == "cancelled" and "promotion-cancelled" in labels_of(sim, number)
    last = state.audit[-1]
    assert (last.event, last.actor, last.role, last.detail) == ("cancelled", "researcher", "read", "issue closed")

    _as(sim, "researcher").get_issue(number).edit(state="open")  # an accidental close, undone: say what continues it
    sim.event("issues", "reopened", number, sender="researcher")
    assert state_of(sim, number).status.value == "cancelled"
    [told] = [b for b in _bodies(sim, number) if "@researcher reopening the issue does not continue" in b]
    assert "Comment `/retry` to continue it" in told


def test_a_retry_that_continues_a_promotion_cancelled_by_closing_its_issue_reopens_the_issue(sim):
    """Found by a new user: after the issue was closed, an approver's `/retry` took the promotion back to its gate
    while the issue stayed closed, hiding a promotion that waits for a decision."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    _as(sim, "researcher").get_issue(number).edit(state="closed")
    sim.event("issues", "closed", number, sender="researcher")
    assert state_of(sim, number).status.value == "cancelled" and sim.fake.issue(REPO, pull.number).state == "closed"

    _comment(sim, number, "maria", "/retry")
    assert state_of(sim, number).status.value == "awaiting-decision"
    assert sim.fake.issue(REPO, number).state == "open" and sim.fake.issue(REPO, pull.number).state == "open"
    assert any("@maria the issue was reopened" in b and "`/retry` continues it" in b for b in _bodies(sim, number))


def test_a_command_on_the_pull_request_is_answered_there_with_a_link_to_the_issue(sim):
    """Found by a maintainer: `/approve` on the PR, where the review is, was silently ignored."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    assert "promotion" in labels_of(sim, pull.number)  # what lets the workflow start for a comment on it
    review = [r for r in sim.fake.reviews(REPO, pull.number) if "review-gate-1" in r.body][-1]
    assert f"The full report is on #{number}; decide there" in review.body

    _comment(sim, pull.number, "maria", "/approve")
    [reply] = [b for b in _bodies(sim, pull.number) if "was not applied" in b]
    assert reply.startswith("<!-- promotion-bot:notice:reply-") and "@maria `/approve` was not applied" in reply
    assert f"[#{number}]({sim.fake.server_url}/{REPO}/issues/{number})" in reply
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    sim.replay(sim.runs[-1])
    assert sum("was not applied" in b for b in _bodies(sim, pull.number)) == 1


def test_a_command_in_a_review_or_a_line_comment_on_the_pull_request_is_answered_like_a_comment(sim):
    """ghflow2 #2: maria clicked "Request changes" on the PR with `/request-changes` as the review's body; no
    workflow listened to reviews, so nothing answered, and gate 1 later passed with her review still standing.
    A review and a line comment are now answered as a PR comment is; one without a command is not."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    link = f"[#{number}]({sim.fake.server_url}/{REPO}/issues/{number})"
    on_pr = _as(sim, "maria").get_pull(pull.number)

    asked = on_pr.create_review(body="/request-changes\nparam loadHighThreshold: 56", event="REQUEST_CHANGES")
    run = sim.event("pull_request_review", "submitted", pull.number, review_id=asked.id)
    assert run.result.action == "answered: a command in a pull request review", run.result.action
    assert run.calls <= 6, run.calls  # the payload names the PR, its body and author: no read of them
    [reply] = [b for b in _bodies(sim, pull.number) if "was not applied" in b]
    assert "@maria `/request-changes` was not applied" in reply and link in reply, reply
    sim.replay(run)
    assert sum("was not applied" in b for b in _bodies(sim, pull.number)) == 1

    praised = on_pr.create_review(body="Nice work, reading the report now.", event="COMMENT")
    quiet = sim.event("pull_request_review", "submitted", pull.number, review_id=praised.id)
    assert quiet.result.action == "ignored: a pull request review" and quiet.calls <= 2, quiet.calls

    [line] = sim.fake.review_comments(REPO, pull.number)[:1]
    on_pr.create_review(
        body="",
        event="COMMENT",
        comments=[{"path": line.path, "line": line.line, "body": "/request-changes why 0.12?"}],
    )
    mine = sim.fake.review_comments(REPO, pull.number)[-1]
    assert mine.user == "maria"
    run = sim.event("pull_request_review_comment", "created", pull.number, comment_id=mine.id, sender="maria")
    assert run.result.action == "answered: a command in a pull request comment" and run.calls <= 6, run.calls
    assert sum("@maria `/request-changes` was not applied" in b for b in _bodies(sim, pull.number)) == 2
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []


def test_a_command_on_another_apps_pull_request_naming_the_issue_is_not_answered(sim):
    """Found in review: any `[bot]` account's PR (dependabot, renovate, ...) whose body had a `Refs #N` line got
    the bot's answer, pointing to promotion issue N. Only the promotion's own PR is answered: the one on the
    branch its status comment's state records, opened by the account that wrote that comment."""
    number = _to_gate_1(sim)
    app, head = "dependabot[bot]", "dependabot/go_modules/x-1.2"
    sim.fake.add_user(app, role="write", type="Bot")
    sim.fake.git_commit(REPO, head, {"go.mod": "module x\n"}, "Bump x to 1.2")
    theirs = _as(sim, app).create_pull(title="Bump x", body=f"Bumps x.\n\nRefs #{number}", head=head, base="main")
    _as(sim, "maria").get_issue(theirs.number).add_to_labels("promotion")  # the workflow then starts for it
    on_pr = _as(sim, "maria").get_pull(theirs.number)

    review = on_pr.create_review(body="/request-changes\nnot this one", event="REQUEST_CHANGES")
    run = sim.event("pull_request_review", "submitted", theirs.number, review_id=review.id)
    assert run.result.action == "ignored: a pull request review of no promotion", run.result.action
    comment = _as(sim, "maria").get_issue(theirs.number).create_comment("/approve")
    run = sim.event("issue_comment", "created", theirs.number, sender="maria", comment_id=comment.id)
    assert run.result.action == "ignored: a pull request comment of no promotion", run.result.action
    assert not [b for b in _bodies(sim, theirs.number) if "was not applied" in b]
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []

    # a status comment a person saved last vouches for no branch: not even the promotion's own PR is answered
    [ours] = [p for p in sim.fake.pulls(REPO) if p.number != theirs.number]
    [status] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith("<!-- promotion-bot:status -->")]
    _as(sim, "maria").get_issue(number).get_comment(status.id).edit(f"{status.body}\n\n(maria was here)")
    comment = _as(sim, "maria").get_issue(ours.number).create_comment("/approve")
    run = sim.event("issue_comment", "created", ours.number, sender="maria", comment_id=comment.id)
    assert run.result.action == "ignored: a pull request comment of no promotion", run.result.action
    assert not [b for b in _bodies(sim, ours.number) if "was not applied" in b]


def test_a_decided_gates_review_report_says_who_decided_it_how_when_and_at_which_commit(sim):
    """Found by a maintainer: a week after gate 1 was approved, its review report on the issue still read "open for
    a human decision" and offered the change-request forms. The same comment now says how the gate was decided."""
    number = _to_gate_1(sim)
    marker = "<!-- promotion-bot:review-gate-1 -->"
    [before] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith(marker)]
    assert "open for a human decision" in before.body and "**Request changes with**" in before.body
    head = state_of(sim, number).head
    [pull] = sim.fake.pulls(REPO)
    [pr_before] = [r for r in sim.fake.reviews(REPO, pull.number) if r.body.startswith(marker)]
    assert "the gate is open for a decision" in pr_before.body and "decide there" in pr_before.body
    inline = sorted(c.body for c in sim.fake.review_comments(REPO, pull.number) if c.body.startswith(marker))

    _label(sim, number, "gate-1-approved", "maria")
    [after] = [c for c in sim.fake.comments(REPO, number) if c.body.startswith(marker)]
    assert after.id == before.id  # updated in place, no new comment
    assert re.search(
        rf"\*\*Approved\*\* by maria with the `gate-1-approved` label, \d{{4}}-\d\d-\d\d \d\d:\d\d UTC, at commit "
        rf"`{head[:12]}`",
        after.body,
    ), after.body
    assert "open for a human decision" not in after.body and "the gate was decided with these findings" in after.body
    assert "**Request changes with**" not in after.body  # the gate takes no more decisions
    assert after.body.split("\n", 1)[1].startswith("## Gate 1 review, round 1 (translation)")
    # newuser4 #9: the PR's review of the round says it too, edited in place (its inline comments kept), in the
    # issue report's words; it kept "the gate is open for a decision" for gates decided long ago
    [pr_after] = [r for r in sim.fake.reviews(REPO, pull.number) if r.body.startswith(marker)]
    assert pr_after.id == pr_before.id
    decided = re.search(r"\*\*Approved\*\* by maria .*? the gate takes no more decisions\.", after.body).group(0)
    assert decided in pr_after.body, pr_after.body
    assert "open for a decision" not in pr_after.body and "decide there" not in pr_after.body
    assert pr_after.body.split("\n")[2:] == pr_before.body.split("\n")[2:]  # the findings listed under it stay
    assert sorted(c.body for c in sim.fake.review_comments(REPO, pull.number) if c.body.startswith(marker)) == inline

    labelled = sim.runs[-1]
    calls = sim.replay(labelled).calls  # a re-run changes nothing: the report already says so
    assert [c.body for c in sim.fake.comments(REPO, number) if c.body.startswith(marker)] == [after.body]
    assert calls <= labelled.calls

    head = state_of(sim, number).head
    _comment(sim, number, "maria", "/reject not for this cluster")
    report = comment_with(sim, number, "<!-- promotion-bot:review-gate-2 -->")
    assert (
        "**Rejected** by maria with `/reject`" in report and f"at commit `{head[:12]}`: not for this cluster." in report
    )
    assert "**Request changes with**" not in report


def test_an_approval_label_applied_while_another_run_reads_the_labels_is_decided_by_its_own_run(sim):
    """Found by a fresh pass (W1): the edit's run, reading the issue after maria applied `gate-1-approved` but before
    her run started, removed the label as not in its state; her run found it gone and said nothing."""
    number = _to_gate_1(sim)
    sim.fake.issue(REPO, number).title += " (v2)"  # a change no finished stage read: the gate stays open
    edit = sim.fake.webhook("issues", "edited", REPO, number, sender="researcher", changes={"title": {"from": "x"}})
    _as(sim, "maria").get_issue(number).add_to_labels("gate-1-approved")
    label = sim.fake.webhook("issues", "labeled", REPO, number, sender="maria", label="gate-1-approved")
    sim.deliver("issues", edit)
    assert "gate-1-approved" in labels_of(sim, number)  # left for its own run, queued behind

    sim.deliver("issues", label)
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value, d.actor, d.via.value) for d in state.decisions] == [
        (1, "approve", "maria", "label")
    ]
    assert state.open_gate == 2 and "gate-1-approved" in labels_of(sim, number)


def test_an_approval_label_a_cancel_run_removed_first_is_answered_by_its_own_run(sim):
    """Found by a fresh pass (W1): `gate-1-approved` applied just before a `/cancel` whose run went first was removed
    by the cancel (gate 1 is not open any more), and the label's own run said nothing. The label is applied just
    after the `/cancel` was written: one applied before it, on the cancel's payload, is decided first by the
    cancel's run (``dropped_label``: that run cannot tell a queued label run from a dropped one)."""
    number = _to_gate_1(sim)
    cancel = _as(sim, "researcher").get_issue(number).create_comment("/cancel changed my mind")
    said = sim.fake.webhook("issue_comment", "created", REPO, number, sender="researcher", comment_id=cancel.id)
    _as(sim, "maria").get_issue(number).add_to_labels("gate-1-approved")
    label = sim.fake.webhook("issues", "labeled", REPO, number, sender="maria", label="gate-1-approved")
    sim.deliver("issue_comment", said)
    assert state_of(sim, number).status.value == "cancelled"
    assert "gate-1-approved" not in labels_of(sim, number)

    sim.deliver("issues", label)
    assert sim.runs[-1].result.action == "refused gate-1-approved", sim.runs[-1].result
    state = state_of(sim, number)
    assert state.status.value == "cancelled" and state.decisions == []
    [reply] = [b for b in _bodies(sim, number) if "@maria the `gate-1-approved` label was removed" in b]
    assert "gate 1 is not open: cancelled by researcher (changed my mind)" in reply, reply
    sim.replay(sim.runs[-1])  # a re-run answers nothing again
    assert sum("@maria the `gate-1-approved` label was removed" in b for b in _bodies(sim, number)) == 1

    _comment(sim, number, "maria", "/retry")  # and a label applied after the cancel is answered as before
    _comment(sim, number, "researcher", "/cancel again")
    _label(sim, number, "gate-1-approved", "maria")
    assert state_of(sim, number).decisions == [] and "gate-1-approved" not in labels_of(sim, number)
    assert sum("@maria the `gate-1-approved` label was removed" in b for b in _bodies(sim, number)) == 2


def test_a_command_deleted_or_edited_before_its_run_counts_as_it_is_now(sim):
    """Found by a fresh pass (W1): a `/approve` deleted, or corrected into another command, before its queued run
    started still passed the gate, pointing the audit at a comment that says otherwise or at none."""
    number = _to_gate_1(sim)
    deleted = _as(sim, "maria").get_issue(number).create_comment("/approve")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=deleted.id)
    deleted.delete()
    sim.deliver("issue_comment", payload)
    assert sim.runs[-1].result.action == "ignored: the command was deleted or edited away", sim.runs[-1].result
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.status.value == "awaiting-decision" and state.decisions == []

    edited = _as(sim, "maria").get_issue(number).create_comment("/approve")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=edited.id)
    edited.edit("Oops, wrong issue.")
    sim.deliver("issue_comment", payload)
    assert state_of(sim, number).decisions == []

    corrected = _as(sim, "maria").get_issue(number).create_comment("/approve")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=corrected.id)
    corrected.edit("/reject the claims do not hold at 4 instances")
    sim.deliver("issue_comment", payload)
    state = state_of(sim, number)
    assert state.status.value == "rejected"
    assert [(d.gate, d.decision.value, d.actor, d.reason) for d in state.decisions] == [
        (1, "reject", "maria", "the claims do not hold at 4 instances")
    ]


def test_a_command_someone_else_edited_decides_nothing_in_its_authors_name(sim):
    """Red team 6 #1: any write collaborator may edit anyone's comment, and REST names only its author: walt (write,
    not an approver) turned maria's queued `/reject` into `/approve`, and gate 1 passed "approved by maria". A
    command whose text someone else saved last now decides nothing, and its author is told who edited it."""
    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\napprovers:\n  roles: [admin, maintain]\n"
    )
    sim.fake.add_user("walt", role="write")
    number = _to_gate_1(sim)
    _comment(sim, number, "walt", "/approve")  # walt alone is refused
    assert state_of(sim, number).decisions == []

    rejected = _as(sim, "maria").get_issue(number).create_comment("/reject the fidelity is not good enough")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=rejected.id)
    _as(sim, "walt").get_issue(number).get_comment(rejected.id).edit("/approve")  # while maria's run is queued
    sim.deliver("issue_comment", payload)
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.status.value == "awaiting-decision" and state.decisions == []
    assert not [a for a in state.audit if a.event.startswith("gate 1 approve")]
    marker = f"promotion-bot:notice:reply-{rejected.id} "
    [reply] = [b for b in _bodies(sim, number) if marker in b]
    assert "@maria your comment was last edited by @walt, not by you, so nothing in it was applied" in reply
    assert "post the command again in a new comment" in reply
    sim.replay(sim.runs[-1])  # a re-run decides nothing and says it once
    assert state_of(sim, number).decisions == [] and len([b for b in _bodies(sim, number) if marker in b]) == 1

    own = _as(sim, "maria").get_issue(number).create_comment("/reject the fidelity is not good enough")
    payload = sim.fake.webhook("issue_comment", "created", REPO, number, sender="maria", comment_id=own.id)
    own.edit("/approve")  # her own edit still counts
    sim.deliver("issue_comment", payload)
    state = state_of(sim, number)
    assert [(d.gate, d.decision.value, d.actor) for d in state.decisions] == [(1, "approve", "maria")]
    assert state.open_gate == 2


def test_an_edit_that_throws_gate_2s_approval_away_removes_its_label_though_the_same_run_opens_gate_2_again(sim):
    """The label of the gate open now is left to its own run; one whose decision a restart threw away has no run
    coming, so the restart removes it (its notice says the decision no longer counts), before gate 2 opens again."""
    held = []
    sim.gpu = held.append  # the benchmark is out: stage 5 waits
    number = _to_gate_1(sim)
    _label(sim, number, "gate-1-approved", "maria")
    _comment(sim, number, "maria", "/approve")
    assert len(held) == 1 and {"gate-1-approved", "gate-2-approved"} <= labels_of(sim, number)

    values = example_values()
    values["claims"] = values["claims"].replace("idle instances.", "idle instances nearby.", 1)
    assert values["claims"] != example_values()["claims"]
    sim.fake.issue(REPO, number).body = render_form(values, {"baselines": [0, 1], "consent": [0]})
    sim.event("issues", "edited", number, sender="researcher")
    state = state_of(sim, number)
    assert state.open_gate == 2 and state.status.value == "awaiting-decision", state.status
    assert [(d.gate, d.decision.value) for d in state.decisions] == [(1, "approve")]
    labels = labels_of(sim, number)
    assert "gate-1-approved" in labels and "gate-2-approved" not in labels and "gate-2-pending" in labels
    assert any(
        "the decisions at gate 2 were made on the old request and no longer count" in b for b in _bodies(sim, number)
    )


def test_a_pull_request_a_person_closed_is_reopened_with_a_word_on_the_pr_and_the_issue_once_per_close(sim):
    """Found by a fresh-eyes pass: a maintainer closed the draft PR and the next stage reopened it without a word."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    _as(sim, "maria").get_pull(pull.number).edit(state="closed")
    _label(sim, number, "gate-1-approved", "maria")
    assert sim.fake.issue(REPO, pull.number).state == "open"
    [on_pr] = [b for b in _bodies(sim, pull.number) if "closed this pull request" in b]
    assert on_pr.startswith("<!-- promotion-bot:notice:pr-closed-") and on_pr.count("\n") == 1
    assert "@maria closed this pull request" in on_pr and "the promotion continues" in on_pr
    assert f"close issue #{number} or comment `/cancel` there" in on_pr
    [on_issue] = [b for b in _bodies(sim, number) if "closed the promotion's pull request" in b]
    assert f"@maria closed the promotion's pull request #{pull.number}" in on_issue
    assert "close this issue or comment `/cancel`" in on_issue
    sim.replay(sim.runs[-1])  # a re-run says nothing again
    assert sum("closed this pull request" in b for b in _bodies(sim, pull.number)) == 1

    # The bot's own close (closing the issue cancels, and closes the PR) is undone by a retry without a notice.
    _as(sim, "researcher").get_issue(number).edit(state="closed")
    sim.event("issues", "closed", number, sender="researcher")
    assert sim.fake.issue(REPO, pull.number).state == "closed"
    _comment(sim, number, "maria", "/retry")
    assert sim.fake.issue(REPO, pull.number).state == "open"
    assert sum("closed this pull request" in b for b in _bodies(sim, pull.number)) == 1
    assert sum("closed the promotion's pull request" in b for b in _bodies(sim, number)) == 1


def _delete_status_comment(sim, number):
    [status] = [
        c for c in _as(sim, "maria").get_issue(number).get_comments() if c.body.startswith("<!-- promotion-bot:status")
    ]
    status.delete()  # a maintainer tidying the thread


def test_a_deleted_status_comment_is_named_as_such_and_retry_says_it_starts_over(sim):
    """Found by a fresh-eyes pass: with the status comment deleted at gate 2, a gate label was refused with "this
    promotion has not started" under the PR and reviews, and `/retry` silently restarted from stage 1."""
    number = _to_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    _label(sim, number, "gate-1-approved", "maria")
    assert state_of(sim, number).open_gate == 2
    _delete_status_comment(sim, number)

    _label(sim, number, "gate-2-approved", "maria")
    assert "gate-2-approved" not in labels_of(sim, number)
    [told] = [b for b in _bodies(sim, number) if "the `gate-2-approved` label was removed" in b]
    assert "has not started" not in told
    assert "the status comment that holds this promotion's state is missing (deleted?)" in told
    assert "`/retry` starts it over from stage 1" in told and "the gates passed before are not remembered" in told
    branch = f"`{pull.head}` and its pull request are kept"
    assert branch in told

    _comment(sim, number, "maria", "/approve")  # nothing is decided on a state the bot cannot read
    [refused] = [b for b in _bodies(sim, number) if "@maria `/approve` was not applied" in b]
    assert "state is missing (deleted?)" in refused
    assert not [b for b in _bodies(sim, number) if b.startswith("<!-- promotion-bot:status")]

    _comment(sim, number, "maria", "/retry")
    [said] = [b for b in _bodies(sim, number) if "@maria `/retry` started the promotion over from stage 1" in b]
    assert "the status comment that held its state is missing" in said and branch in said
    state = state_of(sim, number)
    assert state.open_gate == 1 and state.decisions == []
    assert [p.number for p in sim.fake.pulls(REPO)] == [pull.number]  # the same PR, reused
    assert "gate-1-approved" not in labels_of(sim, number)
    sim.replay(sim.runs[-1])  # a re-run of the /retry's run continues; it does not retry (or answer) again
    assert state_of(sim, number).open_gate == 1
    assert [b for b in _bodies(sim, number) if "@maria `/retry`" in b] == [said]


def test_a_gate_label_on_a_promotion_that_never_started_says_so(sim):
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "researcher", labels=("promotion",))
    _label(sim, number, "gate-1-approved", "maria")
    [told] = [b for b in _bodies(sim, number) if "the `gate-1-approved` label was removed" in b]
    assert "this promotion has not started, so gate 1 is not open" in told


def test_a_gate_label_the_issue_was_filed_with_is_removed_with_the_same_reply_as_any_refused_label(sim):
    """ghflow2 #4: maria filed the promotion with `gate-1-approved` on it (`gh issue create -l`); gate 1 rightly
    did not pass, but the label vanished without a word (its own run, queued behind the opened run's chain, found
    it gone and took that for its author's doing), so she believed she had pre-approved gate 1."""
    number = sim.fake.create_issue(REPO, TITLE, example_body(), "maria", labels=("promotion", "gate-1-approved"))
    labeled = sim.fake.webhook("issues", "labeled", REPO, number, sender="maria", label="gate-1-approved")
    sim.event("issues", "opened", number, sender="maria")
    assert state_of(sim, number).open_gate == 1 and "gate-1-approved" not in labels_of(sim, number)
    said = [b for b in _bodies(sim, number) if "the `gate-1-approved` label was removed" in b]
    assert len(said) == 1 and "@maria" in said[0], said
    assert "applied before gate 1's review existed; apply it again once you have read the review" in said[0]
    sim.deliver("issues", labeled)  # the label's own run, late: it says nothing more, and decides nothing
    assert [b for b in _bodies(sim, number) if "the `gate-1-approved` label was removed" in b] == said
    assert state_of(sim, number).decisions == []


def test_approvers_listed_by_login_only_are_named_on_the_gate_and_decide(sim):
    """Admin findings #5: with `roles: []` the gate line read "waiting for people with the role  on this
    repository", and a refusal asked for "a role in (none)"."""
    (sim.root / "config.yml").write_text("allow_sample_data: true\napprovers:\n  roles: []\n  users: [maria]\n")
    number = _to_gate_1(sim)
    [gate_line] = [
        line for line in comment_with(sim, number, "<!-- promotion-bot:status -->").splitlines() if "**gate 1**" in line
    ]
    assert "waiting for `@maria`" in gate_line and "role" not in gate_line, gate_line
    _comment(sim, number, "tom", "/approve")
    reply = _bodies(sim, number)[-1]
    assert "one needs to be listed under approvers.users" in reply and "(none)" not in reply, reply
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2
