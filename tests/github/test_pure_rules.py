"""Labels, slash commands, authorization and configuration: the GitHub home's pure rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot import pipeline as p
from bot.events.stale import written_before
from bot.github import commands
from bot.github.authz import Actor, approvers_text, authorize
from bot.github.config import Approvers, BotConfig, ConfigError, parse_config
from bot.github.labels import Label, changes, desired, to_create
from bot.model import Decision, Stage
from tests.engine.test_pipeline import finish, fresh, to_gate

NOW = datetime(2026, 11, 23, tzinfo=UTC)


# ------------------------------------------------------------------ labels
def test_labels_follow_the_state():
    assert desired(fresh()) == {"promotion", "stage-1-analyze"}
    at_gate = to_gate(fresh(), 2)
    assert desired(at_gate) == {"promotion", "gate-1-approved", "gate-2-pending"}
    failed = p.stage_failed(finish(fresh()), Stage.TRANSLATE, "x", now=NOW)
    assert desired(failed) == {"promotion", "promotion-failed", "stage-2-translate"}
    rejected = p.decide(at_gate, 2, Decision.REJECT, actor="a", now=NOW, reason="no")
    assert desired(rejected) == {"promotion", "gate-1-approved", "promotion-rejected"}


def test_only_bot_labels_are_removed():
    add, remove = changes({"promotion", "stage-1-analyze", "bug", "needs-info"}, {"promotion", "stage-2-translate"})
    assert add == ["stage-2-translate"] and remove == ["stage-1-analyze"]


def test_label_helpers_and_metadata():
    assert Label.stage(Stage.IMPLEMENT_TESTS) == "stage-4-implement-tests"
    assert Label.approval_gate("gate-2-approved") == 2 and Label.approval_gate("gate-2-pending") is None
    assert all(len(x.description) <= 100 and len(x.color) == 6 for x in Label)


def test_a_gates_approval_label_is_created_with_its_pending_label():
    """Admin findings #6: the sidebar offers only labels that exist, and `gate-N-approved` did not until a decision."""
    assert to_create(["gate-2-pending", "stage-3-hypothesize", "bug"]) == [
        "gate-2-approved",
        "gate-2-pending",
        "stage-3-hypothesize",
    ]
    assert to_create(["promotion", "stage-1-analyze"]) == ["promotion", "stage-1-analyze"]


# ----------------------------------------------------------------- commands
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/approve", commands.Command("approve")),
        ("Looks good.\n/approve 2\n", commands.Command("approve", "2")),
        (
            "/request-changes the KV threshold is simulator-scale",
            commands.Command("request-changes", "the KV threshold is simulator-scale"),
        ),
        ("/retry 5", commands.Command("retry", "5")),
        (  # a reason goes on over the following lines: one directive per line
            "/request-changes recalibrate\nparam loadHighThreshold: 70\n",
            commands.Command("request-changes", "recalibrate\nparam loadHighThreshold: 70"),
        ),
        ("/request-changes\nexclude: A4", commands.Command("request-changes", "exclude: A4")),
        ("> /approve\nquoted, not mine", None),
        ("```\n/approve\n```", None),
        ("no command here /approve", None),
    ],
)
def test_commands_are_lines_of_their_own(body, expected):
    assert commands.parse(body) == expected


@pytest.mark.parametrize(
    "body",
    [
        "For the record the researcher asked me to run:\n\n    /approve\n\nbut I will not yet.",  # indented code
        "\t/approve",
        "Need more time to read this.\n<!--\n/approve\n-->",  # GitHub shows nothing of it
        "Not yet. <!-- /approve",  # an unclosed comment hides the rest
        "How to approve:\n````\n```\n/approve\n```\n````",  # a shorter fence does not close a longer one
        "~~~~\n/approve\n~~~\n~~~~",
        "```text\n/approve",  # an unclosed fence runs to the end
        "> the researcher wrote\n/approve",  # a lazy continuation of the quote
    ],
)
def test_a_command_github_shows_as_code_quote_or_not_at_all_is_no_command(body):
    """Found by the red team: each of these passed gate 1, though GitHub shows no command line in any."""
    assert commands.parse(body) is None


def test_a_command_after_hidden_or_code_text_still_counts():
    assert commands.parse("<!-- x -->\n```\ncode\n```\n   /approve 1") == commands.Command("approve", "1")
    assert commands.parse("> quoted\n\n/retry 5") == commands.Command("retry", "5")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/approve looks fine to me", commands.Command("approve", "", "looks fine to me")),
        ("/approve 2 looks right\nmargin is fine", commands.Command("approve", "2", "looks right\nmargin is fine")),
        ("/approve 3", commands.Command("approve", "3")),
    ],
)
def test_approve_takes_a_remark_as_the_bot_advises(body, expected):
    """Found by a maintainer: the bot advised approving "with it as the reason", then refused `/approve <reason>`."""
    assert commands.parse(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/Approve", commands.Command("approve")),
        ("/APPROVE 2 Looks right", commands.Command("approve", "2", "Looks right")),
        ("/Request-Changes Margin too wide", commands.Command("request-changes", "Margin too wide")),
        ("/Status", commands.Command("status")),
    ],
)
def test_command_names_are_case_insensitive(body, expected):
    """Found by a maintainer on a phone (ghuser2 #6): its keyboard wrote `/Approve`, which was passed over without a
    reply while she believed the gate decided. The argument keeps its case (a reason is the author's words)."""
    assert commands.parse(body) == expected


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("/Merge", "`/Merge` is not a command"),
        ("/reject", "needs a reason"),
        ("/retry eight", "optional stage number"),
        ("/merge", "is not a command"),
        ("/approve 4 ok", "optional gate number 1-3"),
    ],
)
def test_malformed_commands_say_how_to_write_them(body, needle):
    with pytest.raises(commands.CommandError, match=needle):
        commands.parse(body)


def test_a_decision_counts_only_for_the_review_its_writer_saw():
    """Its gate is not enough: a change request, or a stage running, between writing and handling means the
    review open now is not the one the writer saw."""
    written = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    sent_back = p.decide(
        to_gate(fresh(), 1), 1, Decision.REQUEST_CHANGES, actor="alice", now=NOW, reason="x", written=written
    )
    again, shown = to_gate(sent_back, 1), ["promotion", "gate-1-pending"]
    assert written_before(again, 1, written + timedelta(seconds=1), "comment `/approve` again", shown) is None
    assert (
        written_before(again, 1, None, "comment `/approve` again", shown) is None
    )  # no time known: the labels alone decide
    earlier = written_before(again, 1, written - timedelta(seconds=1), "comment `/approve` again", shown)
    assert "showed review round 1, and alice's change request written after it" in earlier
    assert "(round 1, after alice's change request)" in earlier and "comment `/approve` again" in earlier
    running = written_before(
        again, 1, written + timedelta(seconds=1), "comment `/reject` again", ["promotion", "stage-2-translate"]
    )
    assert "while stage 2 was running" in running and "comment `/reject` again" in running


def test_a_decision_written_in_the_second_its_review_was_shown_is_refused_and_named_by_the_right_rule():
    """GitHub's clock has 1-second steps: a comment stamped with the very second the review was shown may have
    been written on the one before it, so it is refused. Another gate's later decision is not this gate's review:
    a `/approve 2` written before gate 1 was approved is refused for what it is, written before gate 2 was shown."""
    shown_at = datetime(2026, 11, 23, 10, 0, 20, tzinfo=UTC)
    at_1 = to_gate(fresh(), 1).model_copy(update={"opened_at": shown_at})
    pending_1 = ["promotion", "gate-1-pending"]
    same = written_before(at_1, 1, shown_at, "comment `/approve` again", pending_1)
    assert same is not None and "written at 2026-11-23 10:00:20 UTC, before gate 1's review now open" in same
    assert written_before(at_1, 1, shown_at + timedelta(seconds=1), "comment `/approve` again", pending_1) is None

    approved = p.decide(at_1, 1, Decision.APPROVE, actor="alice", now=NOW, written=shown_at + timedelta(seconds=5))
    at_2 = to_gate(approved, 2).model_copy(update={"opened_at": shown_at + timedelta(seconds=60)})
    early = written_before(at_2, 2, shown_at + timedelta(seconds=2), "comment `/approve` again", ["gate-2-pending"])
    assert early is not None and "before gate 2's review now open" in early, early
    assert "alice's approve" not in early and "showed" not in early, early


# ---------------------------------------------------------------- authorize
@pytest.mark.parametrize("role", ["admin", "maintain", "write"])
def test_approver_roles_decide(role):
    assert authorize(Actor("maria", role=role), "decide", BotConfig()).allowed


@pytest.mark.parametrize("role", ["triage", "read", "none"])
def test_other_roles_cannot_decide_and_are_told_why(role):
    v = authorize(Actor("tom", role=role), "decide", BotConfig())
    assert not v.allowed and f"the role `{role}`" in v.why and "approvers.users" in v.why


def test_listed_users_decide_whatever_their_role_and_bots_never_do():
    config = parse_config("approvers:\n  roles: [admin]\n  users: [Tom]\n")
    assert authorize(Actor("tom", role="read"), "decide", config).allowed
    assert not authorize(Actor("maria", role="write"), "decide", config).allowed
    for bot in (Actor("github-actions[bot]", type="Bot", role="admin"), Actor("renovate[bot]", role="admin")):
        listed = Approvers.model_construct(roles=["admin"], users=[bot.login])  # parse_config refuses it: see below
        v = authorize(bot, "decide", BotConfig(approvers=listed))
        assert not v.allowed and "bot account" in v.why


def test_approvers_that_can_never_match_are_refused_with_the_fix():
    """Admin findings #5: `@maria` and `Tom Smith` never equal a login, and `roles: []` with no users admits nobody;
    both were accepted, and no gate could ever pass."""
    with pytest.raises(ConfigError) as exc:
        parse_config("approvers:\n  users: ['@maria', 'Tom Smith', 'renovate[bot]', tom-2]\n")
    assert exc.value.problems == [
        "approvers.users.0: write maria, not '@maria' (the GitHub login alone)",
        (
            "approvers.users.1: 'Tom Smith' is not a GitHub login (letters, digits and '-', as in "
            "github.com/<login>): write the login"
        ),
        "approvers.users.2: 'renovate[bot]' is a bot account, and bots never pass a gate: remove it",
    ]
    with pytest.raises(ConfigError, match=r"approvers: no role and no user may pass a gate.*remove `approvers:`"):
        parse_config("approvers:\n  roles: []\n")
    assert parse_config("approvers:\n  roles: []\n  users: [maria]\n").approvers.users == ["maria"]


def test_users_only_approvers_are_named_without_an_empty_role_list():
    only_users = parse_config("approvers:\n  roles: []\n  users: [maria, tom]\n")
    assert approvers_text(only_users) == "@maria, @tom"
    assert approvers_text(BotConfig()) == "people with the role admin, maintain, write on this repository"
    both = parse_config("approvers:\n  roles: [admin]\n  users: [maria]\n")
    assert approvers_text(both) == "people with the role admin on this repository or @maria"
    v = authorize(Actor("tom", role="write"), "decide", parse_config("approvers:\n  roles: []\n  users: [maria]\n"))
    assert not v.allowed and "one needs to be listed under approvers.users" in v.why and "(none)" not in v.why


def test_the_issue_author_may_cancel_but_not_decide_and_anyone_may_ask_for_status():
    author = Actor("researcher", role="read")
    assert authorize(author, "cancel", BotConfig(), issue_author="Researcher").allowed
    assert not authorize(author, "decide", BotConfig(), issue_author="researcher").allowed
    assert commands.Name.STATUS.read_only  # never asked: anyone may give a read-only command


# ------------------------------------------------------------------- config
def test_empty_config_is_every_default():
    assert parse_config(None) == BotConfig() and parse_config("") == BotConfig()
    assert BotConfig().approvers.roles == ["admin", "maintain", "write"]


def test_config_errors_list_every_field():
    with pytest.raises(ConfigError) as exc:
        parse_config("approvers:\n  roles: [owner]\nfork: not a repo\nmax_round: 3\n")
    text = "; ".join(exc.value.problems)
    assert "approvers.roles.0:" in text and "fork:" in text and "max_round: unknown setting" in text
    with pytest.raises(ConfigError, match=r"not valid YAML at line 2, column 1"):
        parse_config("a: [\n")
