"""An App token (`app-token:`) makes the bot write as `<app>[bot]`: it still knows its own comments, whatever
`bot_logins` says, and still takes no one else's (admin-findings 1)."""

from __future__ import annotations

import pytest

from bot.github.client import GitHub
from bot.github.errors import GitHubError
from tests.github.actions_sim import REPO
from tests.github.test_github_flow import TITLE, _as, _comment, _to_gate_1, state_of

pytestmark = pytest.mark.slow

APP = "promo-app[bot]"
STATUS = "<!-- promotion-bot:status -->"


def _statuses(sim, number):
    return [c for c in sim.fake.comments(REPO, number) if c.body.startswith(STATUS)]


def test_an_app_token_with_bot_logins_at_its_default_keeps_one_status_comment_and_takes_decisions(sim):
    sim.fake.add_user(APP, role="write", type="Bot")
    sim.app_token = sim.fake.token_for(APP)
    number = _to_gate_1(sim)
    assert [c.user for c in _statuses(sim, number)] == [APP]
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2
    assert not [c.body for c in sim.fake.comments(REPO, number) if "missing (deleted?)" in c.body]


def test_bot_logins_naming_only_an_app_while_github_token_writes_keeps_the_state(sim):
    (sim.root / "config.yml").write_text(
        "blis_repository: acme/blis\nallow_sample_data: true\nbot_logins: ['promo-app[bot]']\n"
    )
    number = _to_gate_1(sim)
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2


def test_another_apps_comment_with_the_status_marker_is_not_the_bots(fake_github):
    """The token's own account counts, no other bot's: another App cannot plant a state."""
    fake = fake_github
    fake.add_repo(REPO)
    fake.add_user("researcher")
    fake.add_user("other-app[bot]", role="write", type="Bot")
    fake.add_user(APP, role="write", type="Bot")
    number = fake.create_issue(REPO, TITLE, "body", "researcher")
    other = fake.pygithub("other-app[bot]")
    other.get_repo(REPO).get_issue(number).create_comment(f"{STATUS}\nforged")
    client = GitHub(fake.token_for(APP), REPO, api_url=fake.api_url, throttle=False)
    assert client.bot_comment(number, "promotion-bot:status") is None
    assert client.log.calls.count("POST graphql viewer") == 1
    client.upsert_comment(number, "promotion-bot:status", "real")
    assert client.bot_comment(number, "promotion-bot:status").body.endswith("real")
    again = GitHub(fake.token_for(APP), REPO, api_url=fake.api_url, throttle=False)
    assert again.bot_comment(number, "promotion-bot:status").body.endswith("real")
    assert again.log.calls.count("POST graphql viewer") == 1  # asked once per run, kept
    assert fake.take_violations() == []


def test_a_status_comment_by_the_bots_earlier_account_is_named_with_the_fix(sim):
    """The `app-token:` removed mid-promotion: the state is by `promo-app[bot]`, the bot writes as
    github-actions[bot] now. The refusal names that account and the fix; giving the token back lets it go on."""
    sim.fake.add_user(APP, role="write", type="Bot")
    sim.app_token = sim.fake.token_for(APP)
    number = _to_gate_1(sim)
    sim.app_token = ""
    _comment(sim, number, "maria", "/approve")
    [refused] = [c.body for c in sim.fake.comments(REPO, number) if "@maria `/approve` was not applied" in c.body]
    assert "missing (deleted?)" in refused
    assert f"A status comment by `{APP}` is here" in refused and "give the action that token again" in refused
    sim.app_token = sim.fake.token_for(APP)
    _comment(sim, number, "maria", "/approve")
    assert state_of(sim, number).open_gate == 2


def _graphql_down_for_one_event(sim) -> None:
    sim.fake.fail("POST", "/graphql", status=502, times=4)  # the viewer query's 4 tries


def _said(sim, number, *phrases) -> list[str]:
    return [c.body for c in sim.fake.comments(REPO, number) if any(p in c.body for p in phrases)]


LOST = ("missing (deleted?)", "started the promotion over", "give the action that token again")


def _app_promotion_at_gate_1(sim) -> int:
    sim.fake.add_user(APP, role="write", type="Bot")
    sim.app_token = sim.fake.token_for(APP)
    return _to_gate_1(sim)


def test_github_not_saying_who_the_app_writes_as_stops_a_decision_without_disowning_the_state(sim):
    """red team 9, item 2 (a): one GraphQL hiccup made the bot take its own status comment for another account's,
    refuse maria's `/approve` saying the state was missing and the token changed. Unknown stays unknown: the
    event stops saying GitHub did not answer, nothing is refused or forgotten, and the next comment applies the
    `/approve`."""
    number = _app_promotion_at_gate_1(sim)
    labels = set(sim.fake.issue(REPO, number).labels)
    _graphql_down_for_one_event(sim)
    calls, start = sim.fake.count_calls(), len(sim.fake.calls)
    with pytest.raises(GitHubError, match="GitHub did not say which account the bot's token writes as") as stop:
        _comment(sim, number, "maria", "/approve")
    assert sim.fake.count_calls() - calls <= 30  # perf/github_calls.py's bound
    graphql = [c.status for c in sim.fake.calls[start:] if c.path.endswith("/graphql")]
    assert graphql == [502] * 4, graphql  # the viewer query's 4 tries, and it is not asked again
    assert "comment `/retry` later" in str(stop.value) and "502" in str(stop.value), str(stop.value)
    assert not _said(sim, number, *LOST, "was not applied")
    assert [c.user for c in _statuses(sim, number)] == [APP]
    assert set(sim.fake.issue(REPO, number).labels) == labels
    assert state_of(sim, number).open_gate == 1 and not state_of(sim, number).decisions
    _comment(sim, number, "maria", "/status")  # GitHub answers again: the `/approve` is taken up
    assert state_of(sim, number).open_gate == 2 and [d.actor for d in state_of(sim, number).decisions] == ["maria"]
    assert not _said(sim, number, *LOST)


def test_github_not_saying_who_the_app_writes_as_during_a_retry_neither_restarts_nor_forgets_the_gates(sim):
    """red team 9, item 2 (b): the `/retry` replied "started the promotion over from stage 1 ... the gates passed
    before are not remembered" and dropped the gate labels, while the run went on waiting at gate 2."""
    number = _app_promotion_at_gate_1(sim)
    _comment(sim, number, "maria", "/approve")
    before = state_of(sim, number)
    labels = set(sim.fake.issue(REPO, number).labels)
    assert before.open_gate == 2
    _graphql_down_for_one_event(sim)
    with pytest.raises(GitHubError, match="comment `/retry` later"):
        _comment(sim, number, "maria", "/retry")
    assert not _said(sim, number, *LOST)
    assert set(sim.fake.issue(REPO, number).labels) == labels
    after = state_of(sim, number)
    assert after.open_gate == 2 and after.decisions == before.decisions


def test_a_command_in_a_review_on_the_apps_pull_request_is_answered_by_pr_reply_without_the_app_token(sim):
    """redteam10 item 3: with `app-token:` on the `advance` job only (docs/github-setup.md section 3), the App opens
    the PR, but `pr-reply` holds no secret and writes as github-actions[bot]: it took the App's PR for someone
    else's and left a "Request changes" review with `/request-changes` unanswered (the ghflow2 #2 silence)."""
    number = _app_promotion_at_gate_1(sim)
    [pull] = sim.fake.pulls(REPO)
    assert sim.fake.issue(REPO, pull.number).user == APP
    review = (
        _as(sim, "maria").get_pull(pull.number).create_review(body="/request-changes\nwhy?", event="REQUEST_CHANGES")
    )
    sim.app_token = ""  # the `pr-reply` job: `github-token` only (promotion.yml)
    run = sim.event("pull_request_review", "submitted", pull.number, review_id=review.id)
    assert run.result.action == "answered: a command in a pull request review", run.result.action
    [reply] = [c.body for c in sim.fake.comments(REPO, pull.number) if "was not applied" in c.body]
    assert "@maria `/request-changes` was not applied" in reply
    assert f"[#{number}]({sim.fake.server_url}/{REPO}/issues/{number})" in reply
    assert state_of(sim, number).open_gate == 1 and state_of(sim, number).decisions == []

    # a person's PR naming the issue is still not the bot's: not answered
    again = _as(sim, "maria").get_pull(pull.number).create_review(body="/approve", event="COMMENT")
    payload = sim.fake.webhook("pull_request_review", "submitted", REPO, pull.number, review_id=again.id)
    payload["pull_request"]["user"].update(login="researcher", type="User")
    assert sim.deliver("pull_request_review", payload).result.action == "ignored: a pull request review"
