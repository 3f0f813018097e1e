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


def _verbose_state(number: int) -> PipelineState:
    """A promotion after three gates whose Claude reviewer was thorough: 12 findings of ~70 words from each of
    its perspectives (the state of a real run like this was 176 kB of JSON, 68 kB in the comment)."""
    import random
    import re
    from datetime import UTC, datetime

    from bot import PROJECT_ROOT
    from bot.model import AuditEntry, Finding, ReviewRound, Severity

    words = re.findall(r"[A-Za-z][a-z]{2,}", (PROJECT_ROOT / "README.md").read_text())
    rng = random.Random(5)

    def prose(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n)) + "."

    reviews = {}
    for gate in (1, 2, 3):
        checklist = [
            Finding(severity=Severity.SUGGESTION, check=f"G{gate}.det-{i}", message=prose(20), file="a.md", line=i)
            for i in range(1, 8)
        ]
        model = [
            Finding(
                severity=Severity.IMPORTANT if (item, n) == (2, 0) and gate == 3 else Severity.SUGGESTION,
                check=f"G{gate}.{item}",
                message=prose(70),
                fix=prose(25),
                by="claude-sonnet-4-6",
            )
            for item in range(1, 7)
            for n in range(12)
        ]
        reviews[gate] = [
            ReviewRound(gate=gate, round=r, reviewer="checklist + claude", findings=checklist + model)
            for r in ((1, 2) if gate == 3 else (1,))
        ]
    at = datetime(2026, 1, 1, tzinfo=UTC)
    return PipelineState(
        request_id=str(number),
        request_fingerprint="f",
        branch="promotion/1-x",
        status="awaiting-decision",
        next_stage=None,
        open_gate=3,
        review_round=2,
        reviews=reviews,
        audit=[AuditEntry(at=at, actor="bot", event=f"event {i}", detail=prose(10)) for i in range(80)],
    )


def test_a_thorough_reviewers_findings_fit_in_the_status_comment_at_githubs_limit(gh):
    from bot.github.state import MAX_COMMENT_CHARS, encode_state

    fake, client, number, _ = gh
    state = _verbose_state(number)
    assert len(encode_state(state)) > MAX_COMMENT_CHARS  # the whole state cannot be the comment
    store = GitHubStateStore(client, number)
    store.save(state, "## status\n\n" + "checklist line\n" * 300)  # the fake refuses over 65,536 like GitHub
    (comment,) = fake.comments(REPO, number)
    assert len(comment.body) <= MAX_COMMENT_CHARS
    kept = store.load()
    # every open round, every finding and every count stay; the checklist's findings word for word
    assert {g: [r.round for r in rs] for g, rs in kept.reviews.items()} == {1: [1], 2: [1], 3: [1, 2]}
    for gate, rounds in kept.reviews.items():
        for was, now in zip(state.reviews[gate][-len(rounds) :], rounds, strict=True):
            assert now.tally() == was.tally()
            assert [f.key() for f in now.findings] == [f.key() for f in was.findings]
            assert [f for f in now.findings if f.by is None] == [f for f in was.findings if f.by is None]
            assert all(f.message for f in now.findings)
    (blocking,) = kept.reviews[3][-1].blocking
    assert blocking.fix  # the author's fix round still gets a suggested fix
