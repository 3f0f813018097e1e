"""The REST client against GitHub's failure modes, on the fake: no duplicate writes, limits waited out."""

from __future__ import annotations

import pytest

from bot.forge.state_file import StateError
from bot.github.client import GitHub, GitHubError
from bot.github.state import GitHubStateStore, status_body
from bot.model import PipelineState

REPO = "acme/bot-home"


@pytest.fixture
def gh(fake_github):
    fake_github.add_repo(REPO)
    fake_github.add_user("researcher")
    number = fake_github.create_issue(REPO, "[promotion] x", "body", "researcher")
    sleeps: list[float] = []
    client = GitHub(fake_github.bot_token, REPO, api_url=fake_github.api_url, throttle=False, sleep=sleeps.append)
    return fake_github, client, number, sleeps


def test_a_502_after_the_write_still_yields_exactly_one_comment(gh):
    fake, client, number, _ = gh
    fake.fail("POST", f"/repos/{REPO}/issues/{number}/comments", status=502, after_write=True)
    client.upsert_comment(number, "promotion-bot:status", "hello")
    bodies = [c.body for c in fake.comments(REPO, number)]
    assert bodies == ["<!-- promotion-bot:status -->\nhello"]


def test_a_502_before_the_write_is_retried_once_and_lands_once(gh):
    fake, client, number, sleeps = gh
    fake.fail("POST", f"/repos/{REPO}/issues/{number}/comments", status=502, after_write=False)
    client.upsert_comment(number, "promotion-bot:status", "hello")
    assert len(fake.comments(REPO, number)) == 1 and sleeps == [1.0]


def test_a_secondary_rate_limit_is_waited_out(gh):
    fake, client, number, sleeps = gh
    fake.rate_limit("secondary", retry_after=7, method="POST", path=f"/repos/{REPO}/issues/{number}/comments")
    client.upsert_comment(number, "promotion-bot:status", "hello")
    assert 7.0 in sleeps and len(fake.comments(REPO, number)) == 1


def test_a_primary_rate_limit_waits_until_the_reset(gh):
    fake, client, number, sleeps = gh
    fake.rate_limit("primary", reset_in=30, status=429, method="GET")
    assert client.issue(number).title == "[promotion] x"
    assert sleeps and 1 <= sleeps[0] <= 40


def test_a_wait_longer_than_the_cap_stops_with_a_message(gh):
    fake, client, number, _ = gh
    fake.rate_limit("secondary", retry_after=3600, method="GET")
    with pytest.raises(GitHubError, match="rate limited by GitHub for 3600s"):
        client.issue(number)


def test_a_persons_comment_with_the_bots_marker_is_not_the_bots(gh, fake_github):
    fake, client, number, _ = gh
    from github import Auth, Github

    person = Github(auth=Auth.Token(fake.token_for("researcher")), base_url=fake.api_url, retry=None)
    person.get_repo(REPO).get_issue(number).create_comment("<!-- promotion-bot:status -->\nforged")
    assert client.bot_comment(number, "promotion-bot:status") is None
    client.upsert_comment(number, "promotion-bot:status", "real")
    assert [c.body.splitlines()[-1] for c in fake.comments(REPO, number)] == ["forged", "real"]


def test_state_round_trips_through_the_status_comment_and_never_outgrows_it(gh):
    fake, client, number, _ = gh
    store = GitHubStateStore(client, number)
    assert store.load() is None
    state = PipelineState(request_id=str(number), request_fingerprint="f", branch="promotion/1-x")
    store.save(state, "## status")
    assert GitHubStateStore(GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False), number).load() == state
    # GitHub answers 200 to an over-long update and keeps the old body: the store never writes one.
    huge = "x" * 70_000
    with pytest.raises(StateError, match="does not fit in a GitHub comment"):
        status_body(state, huge)


def test_errors_name_the_call_and_githubs_answer(gh):
    _fake, client, _number, _ = gh
    with pytest.raises(GitHubError, match=r"GET issue 999: GitHub answered 404"):
        client.issue(999)
