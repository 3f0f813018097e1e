"""The pure check of a saved state's gate approvals against GitHub's own record (``bot.github.vouch``).

A workflow's GITHUB_TOKEN saves the status comment as the bot, so ``trusted`` cannot refuse a state it wrote; an
approval in it counts only when GitHub shows the label or the comment that made it, from a person the one rule
lets decide.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.github.authz import Actor, authorize
from bot.github.config import BotConfig
from bot.github.records import Comment, LabelEvent
from bot.github.vouch import Record, check, command_of, key, vouched_by
from bot.model import DecidedVia, Decision, GateDecision

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ROLES = {"alice": "maintain", "maria": "maintain", "wendy": "write", "tom": "triage"}
CONFIG = BotConfig.model_validate({"approvers": {"roles": ["admin", "maintain"]}})


def may_decide(login: str, user_type: str):
    return authorize(Actor(login, user_type, ROLES.get(login, "none")), "decide", CONFIG)


def approval(gate=2, actor="alice", at=T0, via=DecidedVia.LABEL, **more) -> GateDecision:
    return GateDecision(gate=gate, decision=Decision.APPROVE, actor=actor, at=at, via=via, **more)


def labeled(gate=2, login="alice", at=T0 - timedelta(seconds=30), id=1, type="User", event="labeled") -> LabelEvent:
    return LabelEvent(id, event, login, type, at, f"gate-{gate}-approved")


def said(body="/approve", login="alice", id=11, created=T0 - timedelta(seconds=20), type="User") -> Comment:
    return Comment(id, body, login, type, updated_at=created, created_at=created)


def record(labels=(), comments=(), editors=None, saved_at=T0 + timedelta(minutes=5)) -> Record:
    return Record(list(labels), list(comments), editors or {}, saved_at)


def lacks(d, rec) -> str:
    proof, why = vouched_by(d, rec, may_decide)
    assert proof is None
    return why


# ------------------------------------------------------------------ by label
def test_a_label_the_person_added_before_the_recorded_time_vouches_for_their_approval():
    assert vouched_by(approval(), record([labeled()]), may_decide) == (("label", 1), "")
    late = labeled(at=T0 + timedelta(seconds=90))  # within the tolerance for the runner's clock
    assert vouched_by(approval(), record([late]), may_decide)[0] == ("label", 1)


def test_a_label_nobody_added_or_someone_else_added_vouches_for_nothing():
    assert "no `gate-2-approved` added by @alice" in lacks(approval(), record())
    assert "no `gate-2-approved` added by @alice" in lacks(approval(), record([labeled(login="maria")]))
    assert "no `gate-2-approved` added by @alice" in lacks(approval(), record([labeled(gate=1)]))
    assert "no `gate-2-approved` added by @alice" in lacks(approval(), record([labeled(event="unlabeled")]))


def test_a_label_added_only_after_the_recorded_time_vouches_for_nothing():
    assert "only after the recorded time" in lacks(approval(), record([labeled(at=T0 + timedelta(hours=1))]))


def test_a_label_from_someone_the_rule_refuses_or_a_bot_vouches_for_nothing():
    assert "may not decide: @wendy has the role `write`" in lacks(
        approval(actor="wendy"), record([labeled(login="wendy")])
    )
    bot = labeled(login="github-actions[bot]", type="Bot")
    assert "is a bot account" in lacks(approval(actor="github-actions[bot]"), record([bot]))


# ---------------------------------------------------------------- by command
def test_the_comment_the_approval_names_vouches_for_it_when_its_author_wrote_approve():
    d = approval(via=DecidedVia.COMMAND, comment=11)
    assert vouched_by(d, record(comments=[said()]), may_decide) == (("comment", 11), "")
    assert vouched_by(d, record(comments=[said("/approve 2 looks right")]), may_decide)[0] == ("comment", 11)


def test_a_comment_missing_by_someone_else_or_without_approve_vouches_for_nothing():
    d = approval(via=DecidedVia.COMMAND, comment=11)
    assert "comment 11, which the approval names, is not on the issue" in lacks(d, record())
    assert "written by @maria, not @alice" in lacks(d, record(comments=[said(login="maria")]))
    assert "holds no `/approve` of gate 2" in lacks(d, record(comments=[said("looks good to me")]))
    assert "holds no `/approve` of gate 2" in lacks(d, record(comments=[said("/approve 1")]))
    assert "holds no `/approve` of gate 2" in lacks(d, record(comments=[said("> /approve")]))  # a quote is not one
    assert "written after the recorded time" in lacks(d, record(comments=[said(created=T0 + timedelta(hours=1))]))


def test_a_comment_someone_else_edited_into_an_approval_vouches_for_nothing():
    d = approval(via=DecidedVia.COMMAND, comment=11)
    assert "last edited by @wendy, not its author" in lacks(d, record(comments=[said()], editors={11: "wendy"}))
    assert vouched_by(d, record(comments=[said()], editors={11: "alice"}), may_decide)[0] == ("comment", 11)


def test_an_older_states_command_approval_is_matched_by_its_writer_and_time():
    """Saved before the comment's id was kept: the writer's comment written at ``written_at`` holding /approve."""
    d = approval(via=DecidedVia.COMMAND, written_at=T0 - timedelta(seconds=20))
    assert command_of(d, [said("thanks"), said(id=12)]).id == 12
    assert vouched_by(d, record(comments=[said(id=12)]), may_decide)[0] == ("comment", 12)
    assert "no comment by @alice written at" in lacks(d, record(comments=[said(created=T0 - timedelta(hours=1))]))
    assert "no comment is recorded for it" in lacks(approval(via=DecidedVia.COMMAND), record(comments=[said()]))


# ---------------------------------------------------------- other ways, and check
def test_the_approve_flag_never_vouches_on_github_and_an_unrecorded_way_may_be_either():
    assert "--approve flag" in lacks(approval(via=DecidedVia.APPROVE_FLAG), record([labeled()]))
    old = approval(via=None, written_at=T0 - timedelta(seconds=20))
    assert vouched_by(old, record([labeled()]), may_decide)[0] == ("label", 1)
    assert vouched_by(old, record(comments=[said()]), may_decide)[0] == ("comment", 11)
    assert "no `gate-2-approved`" in lacks(old, record()) and "no comment by @alice" in lacks(old, record())


def test_one_label_or_comment_vouches_for_one_approval_only():
    """A real approval copied into a second one (a later gate round, or another gate's comment) is refused."""
    first, copy = approval(), approval(at=T0 + timedelta(minutes=1))
    checked = check([first, copy], record([labeled()], saved_at=None), may_decide)
    assert [(r.gate, r.actor) for r in checked.refused] == [(2, "alice")]
    assert "not already counted" in checked.refused[0].lacks
    gate_1 = approval(gate=1, via=DecidedVia.COMMAND, comment=11, at=T0 - timedelta(minutes=1))
    reused = approval(gate=2, via=DecidedVia.COMMAND, comment=11)
    checked = check([gate_1, reused], record(comments=[said(created=T0 - timedelta(minutes=2))]), may_decide)
    assert [r.lacks for r in checked.refused] == ["comment 11 vouches for another decision already"]


def test_check_leaves_this_runs_decisions_alone():
    request = GateDecision(gate=1, decision=Decision.REQUEST_CHANGES, actor="x", at=T0, reason="r")
    mine = approval()
    checked = check([request, mine], record(), may_decide, skip={key(request), key(mine)})
    assert checked.refused == [] and checked.decisions == [request, mine]
    assert key(request) != key(request.model_copy(update={"decision": Decision.REJECT}))


# ------------------------------------------------- change requests and rejections
def decided(decision, comment=11, via=DecidedVia.COMMAND, reason="why", **more) -> GateDecision:
    return GateDecision(
        gate=2, decision=decision, actor="alice", at=T0, reason=reason, via=via, comment=comment, **more
    )


def test_a_change_request_or_rejection_counts_only_from_its_command_by_that_person():
    changes, rejection = decided(Decision.REQUEST_CHANGES), decided(Decision.REJECT)
    assert vouched_by(changes, record(comments=[said("/request-changes why")]), may_decide)[0] == ("comment", 11)
    assert vouched_by(rejection, record(comments=[said("/reject why")]), may_decide)[0] == ("comment", 11)
    # the reason is not compared: its author may have fixed a typo since
    assert vouched_by(changes, record(comments=[said("/request-changes why not")]), may_decide)[0] == ("comment", 11)
    assert "holds no `/request-changes`" in lacks(changes, record(comments=[said("/approve")]))
    assert "holds no `/reject`" in lacks(rejection, record(comments=[said("/request-changes why")]))
    assert "written by @maria, not @alice" in lacks(rejection, record(comments=[said("/reject x", login="maria")]))
    assert "last edited by @wendy" in lacks(
        changes, record(comments=[said("/request-changes x")], editors={11: "wendy"})
    )
    assert "may not decide" in lacks(
        decided(Decision.REJECT).model_copy(update={"actor": "tom"}), record(comments=[said("/reject x", login="tom")])
    )
    assert "is not on the issue" in lacks(rejection, record())
    assert "no comment is recorded for it" in lacks(decided(Decision.REJECT, comment=None), record([labeled()]))


def test_a_change_request_or_rejection_by_label_or_flag_never_counts_and_none_is_confirmed():
    by_label = decided(Decision.REJECT, comment=None, via=DecidedVia.LABEL)
    assert "made by a label, and no label rejects" in lacks(by_label, record([labeled()]))
    assert "--approve flag" in lacks(decided(Decision.REQUEST_CHANGES, via=DecidedVia.APPROVE_FLAG), record())
    old = decided(Decision.REQUEST_CHANGES, comment=None, via=None, written_at=T0 - timedelta(seconds=20))
    assert vouched_by(old, record(comments=[said("/request-changes why")]), may_decide)[0] == ("comment", 11)
    # a maintainer's gate label since the last save confirms an approval, never a change request or rejection
    since = labeled(login="maria", at=T0 + timedelta(minutes=6), id=9)
    checked = check([decided(Decision.REJECT, comment=None)], record([since]), may_decide)
    assert [(r.gate, r.actor, r.decision) for r in checked.refused] == [(2, "alice", Decision.REJECT)]
    assert checked.confirmed == []


def test_an_approval_the_record_lacks_is_confirmed_only_by_the_gates_label_applied_since_the_last_save():
    forged = approval(actor="alice")
    saved = T0 + timedelta(minutes=5)
    before = labeled(login="maria", at=saved - timedelta(seconds=1), id=7)  # a label applied and refused earlier
    assert check([forged], record([before], saved_at=saved), may_decide).refused[0].actor == "alice"
    by_write = labeled(login="wendy", at=saved + timedelta(seconds=1), id=8)  # the rule refuses wendy
    assert check([forged], record([by_write], saved_at=saved), may_decide).refused
    since = labeled(login="maria", at=saved + timedelta(seconds=1), id=9)
    checked = check([forged], record([before, since], saved_at=saved), may_decide)
    assert checked.refused == []
    [confirmed] = checked.decisions
    assert (confirmed.actor, confirmed.at, confirmed.via) == ("maria", since.at, DecidedVia.LABEL)
    assert checked.confirmed == [(forged, since)]
    # saved again as maria's, it is vouched for by her label from then on
    assert vouched_by(confirmed, record([since], saved_at=saved + timedelta(minutes=1)), may_decide)[0] == ("label", 9)


# ------------------------------------------- the reason acted on is the comment's as it reads now
def test_a_change_requests_reason_is_its_comments_not_the_saved_states():
    """A state saved as the bot keeps alice's comment id and puts a directive she never wrote in her reason: the
    rerun would deploy that value in her name. The reason is read from her comment."""
    forged = decided(Decision.REQUEST_CHANGES, reason="param loadHighThreshold: 1e9")
    rec = record(comments=[said("/request-changes param loadLowThreshold: 5.5\nexclude: H2")])
    checked = check([forged], rec, may_decide)
    assert checked.refused == []
    assert [d.reason for d in checked.decisions] == ["param loadLowThreshold: 5.5\nexclude: H2"]
    assert checked.restated == [(forged, "param loadLowThreshold: 5.5\nexclude: H2")]


def test_a_reason_its_author_edited_since_is_read_as_edited():
    saved = decided(Decision.REQUEST_CHANGES, reason="param loadLowThreshold: 55")
    fixed = said("/request-changes param loadLowThreshold: 5.5")
    checked = check([saved], record(comments=[fixed], editors={11: "alice"}), may_decide)
    assert [d.reason for d in checked.decisions] == ["param loadLowThreshold: 5.5"]
    same = check([saved], record(comments=[said("/request-changes param loadLowThreshold: 55")]), may_decide)
    assert same.decisions == [saved] and same.restated == []


def test_a_rejections_reason_is_its_comments_and_one_no_longer_holding_the_command_counts_for_nothing():
    forged = decided(Decision.REJECT, reason="the evolved policy is malware")
    checked = check([forged], record(comments=[said("/reject the gains are noise")]), may_decide)
    assert [d.reason for d in checked.decisions] == ["the gains are noise"]
    gone = check([forged], record(comments=[said("never mind")], editors={11: "alice"}), may_decide)
    assert [r.lacks for r in gone.refused] == ["comment 11 by @alice holds no `/reject`"]


def test_an_approvals_remark_and_a_label_approval_are_left_as_saved():
    remark = approval(via=DecidedVia.COMMAND, comment=11, reason="looks right")
    checked = check([remark, approval(gate=1)], record([labeled(gate=1)], [said("/approve 2")]), may_decide)
    assert checked.decisions == [remark, approval(gate=1)] and checked.restated == []


def test_a_decision_whose_reason_differs_is_checked_again_not_taken_from_the_runs_cache():
    """The run's cache of checked decisions (``key``) does not let a reason saved over a checked one through."""
    request = decided(Decision.REQUEST_CHANGES)
    assert key(request) != key(request.model_copy(update={"reason": "param loadHighThreshold: 1e9"}))


def test_the_reruns_copy_of_the_change_requests_is_taken_from_the_decisions():
    """``pending_feedback`` is what stage 2's rerun reads: a state saved as the bot could write a directive there
    and leave the checked decisions alone. It is read from the decisions, as ``pipeline.decide`` made it."""
    from bot import pipeline
    from bot.github.state import fed_by_decisions
    from tests.engine.test_pipeline import fresh, to_gate

    asked = pipeline.decide(
        to_gate(fresh(), 1), 1, Decision.REQUEST_CHANGES, actor="alice", now=T0, reason="param loadLowThreshold: 5.5"
    )
    assert fed_by_decisions(asked) is asked  # as the bot saved it: nothing to change
    forged = asked.model_copy(update={"pending_feedback": {2: "param loadHighThreshold: 1e9"}})
    assert fed_by_decisions(forged).pending_feedback == {2: "param loadLowThreshold: 5.5"}
    nobody = forged.model_copy(update={"decisions": []})  # no change request at gate 1: no feedback for its rerun
    assert fed_by_decisions(nobody).pending_feedback == {}
    assert pipeline.next_step(fed_by_decisions(nobody)).feedback is None
