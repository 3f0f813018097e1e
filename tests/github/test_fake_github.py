"""The fake GitHub itself, driven by the real PyGithub and githubkit clients over HTTP on 127.0.0.1."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.github.fake_github import FakeGitHub

REPO = "org/fork"


def pygithub(fake: FakeGitHub, login: str):
    return fake.pygithub(login)


def githubkit(fake: FakeGitHub, login: str, **config):
    from githubkit import GitHub

    return GitHub(fake.token_for(login), base_url=f"{fake.base_url}/", **config)


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_user("alice", role="write")
    fake_github.add_user("trinity", role="triage")
    fake_github.add_user("reader", role="read")
    fake_github.add_repo(REPO)
    return fake_github


def test_pygithub_creates_and_edits_a_comment(fake):
    number = fake.create_issue(REPO, "Promote weighted-adaptive", "the request", "alice")
    issue = pygithub(fake, "alice").get_repo(REPO).get_issue(number)
    comment = issue.create_comment("<!-- promotion-bot:status -->\nstage 1")
    comment.edit("<!-- promotion-bot:status -->\nstage 2")
    stored = fake.comments(REPO, number)
    assert [c.body for c in stored] == ["<!-- promotion-bot:status -->\nstage 2"]
    assert stored[0].user == "alice"
    assert comment.user.login == "alice"
    assert comment.html_url == f"{fake.server_url}/{REPO}/issues/{number}#issuecomment-{stored[0].id}"
    assert [c.body for c in issue.get_comments()] == ["<!-- promotion-bot:status -->\nstage 2"]
    ops = [c.operation for c in fake.calls]
    assert ops == ["repos/get", "issues/get", "issues/create-comment", "issues/update-comment", "issues/list-comments"]


def test_githubkit_lists_labels_and_parses_them(fake):
    number = fake.create_issue(REPO, "t", None, "alice", labels=("promotion", "stage-1-analyze"))
    client = githubkit(fake, "alice")
    labels = client.rest.issues.list_labels_for_repo("org", "fork").parsed_data
    assert [label.name for label in labels] == ["promotion", "stage-1-analyze"]
    on_issue = client.rest.issues.list_labels_on_issue("org", "fork", number).parsed_data
    assert [label.name for label in on_issue] == ["promotion", "stage-1-analyze"]
    assert fake.calls[-1].api_version == "2026-03-10"


def test_an_undeclared_body_field_is_a_violation_and_a_422(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    response = httpx.post(
        f"{fake.base_url}/repos/{REPO}/issues/{number}/comments",
        headers={"Authorization": f"Bearer {fake.token_for('alice')}"},
        json={"body": "hi", "sticky": True},
    )
    assert response.status_code == 422
    assert "field 'sticky' is not declared" in response.json()["message"]
    assert fake.comments(REPO, number) == []
    taken = fake.take_violations()
    assert len(taken) == 1 and "issues/create-comment" in taken[0] and "'sticky'" in taken[0]


def test_unknown_paths_methods_and_query_parameters_are_violations(fake):
    headers = {"Authorization": f"token {fake.token_for('alice')}"}
    assert httpx.get(f"{fake.base_url}/repos/{REPO}/no-such-thing", headers=headers).status_code == 404
    assert httpx.delete(f"{fake.base_url}/repos/{REPO}/labels", headers=headers).status_code == 404
    assert httpx.get(f"{fake.base_url}/repos/{REPO}/labels?color=red", headers=headers).status_code == 422
    assert httpx.get(f"{fake.base_url}/repos/{REPO}/issues?per_page=lots", headers=headers).status_code == 422
    taken = fake.take_violations()
    assert any("no such path" in v for v in taken)
    assert any("method not allowed" in v for v in taken)
    assert any("undeclared query parameter 'color'" in v for v in taken)
    assert any("per_page='lots'" in v for v in taken)


def test_a_body_failing_the_schema_is_a_violation(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    response = httpx.patch(
        f"{fake.base_url}/repos/{REPO}/issues/{number}",
        headers={"Authorization": f"token {fake.token_for('alice')}"},
        json={"state": "merged"},
    )
    assert response.status_code == 422
    assert fake.issue(REPO, number).state == "open"
    assert any("'merged' is not one of" in v for v in fake.take_violations())


def test_tokens_map_to_users_and_anything_else_is_401(fake):
    url = f"{fake.base_url}/repos/{REPO}"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "token ghp_nobody"}).json()["message"] == "Bad credentials"
    me = pygithub(fake, "alice").get_user()
    assert (me.login, me.type) == ("alice", "User")
    bot_client = githubkit(fake, FakeGitHub.BOT)
    bot = bot_client.rest.repos.get("org", "fork").parsed_data
    assert bot.permissions.push and not bot.permissions.admin
    assert [c.login for c in fake.calls[-2:]] == ["alice", "github-actions[bot]"]


@pytest.mark.parametrize(
    ("role", "permission"),
    [
        ("admin", "admin"),
        ("maintain", "write"),
        ("write", "write"),
        ("triage", "read"),
        ("read", "read"),
        ("none", "none"),
    ],
)
def test_collaborator_permission_reports_the_legacy_permission_and_the_role(fake, role, permission):
    fake.add_user("carol", role=role)
    client = githubkit(fake, "alice")
    answer = client.rest.repos.get_collaborator_permission_level("org", "fork", "carol")
    assert (answer.parsed_data.permission, answer.parsed_data.role_name) == (permission, role)
    assert pygithub(fake, "alice").get_repo(REPO).get_collaborator_permission("carol") == permission


def test_a_role_can_be_set_per_repository(fake):
    fake.add_repo("org/other")
    fake.set_role("org/other", "trinity", "maintain")
    client = githubkit(fake, "alice")
    assert client.rest.repos.get_collaborator_permission_level("org", "other", "trinity").parsed_data.role_name == (
        "maintain"
    )
    assert client.rest.repos.get_collaborator_permission_level("org", "fork", "trinity").parsed_data.role_name == (
        "triage"
    )


def test_adding_a_missing_label_creates_it_and_labels_record_who_added_them(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    issue = pygithub(fake, "trinity").get_repo(REPO).get_issue(number)
    issue.add_to_labels("gate-2-approved")
    assert "gate-2-approved" in fake.labels(REPO)
    issue.remove_from_labels("gate-2-approved")
    issue.set_labels("promotion", "stage-3-hypothesize")
    assert fake.issue(REPO, number).labels == ["promotion", "stage-3-hypothesize"]
    events = [(e.event, e.label, e.actor) for e in fake.issue(REPO, number).events]
    assert events == [
        ("labeled", "gate-2-approved", "trinity"),
        ("unlabeled", "gate-2-approved", "trinity"),
        ("labeled", "promotion", "trinity"),
        ("labeled", "stage-3-hypothesize", "trinity"),
    ]
    client = githubkit(fake, "alice")
    listed = client.rest.issues.list_events("org", "fork", number).parsed_data
    assert [(e.event, e.actor.login) for e in listed][:2] == [("labeled", "trinity"), ("unlabeled", "trinity")]


def test_a_reader_cannot_label_and_a_label_that_exists_cannot_be_created_twice(fake):
    from github import GithubException

    number = fake.create_issue(REPO, "t", None, "alice")
    with pytest.raises(GithubException) as refused:
        pygithub(fake, "reader").get_repo(REPO).get_issue(number).add_to_labels("gate-1-approved")
    assert refused.value.status == 403
    repo = pygithub(fake, "alice").get_repo(REPO)
    repo.create_label("promotion", "0e8a16", "A promotion")
    with pytest.raises(GithubException) as twice:
        repo.create_label("Promotion", "0e8a16")
    assert twice.value.status == 422 and twice.value.data["errors"][0]["code"] == "already_exists"
    assert repo.get_label("promotion").description == "A promotion"


def test_bodies_over_the_create_limit_are_refused_and_over_limit_updates_keep_the_old_body(fake):
    from github import GithubException

    number = fake.create_issue(REPO, "t", None, "alice")
    issue = pygithub(fake, "alice").get_repo(REPO).get_issue(number)
    with pytest.raises(GithubException) as refused:
        issue.create_comment("x" * 65_537)
    assert refused.value.status == 422
    assert refused.value.data["errors"][0]["message"] == "Body is too long (maximum is 65536 characters)"
    comment = issue.create_comment("x" * 65_536)
    comment.edit("é" * 131_073)  # 262,146 UTF-8 bytes
    assert comment.body == "x" * 65_536  # answered 200 with the old body, as GitHub does
    assert fake.comments(REPO, number)[0].body == "x" * 65_536
    comment.edit("y" * 200_000)
    assert fake.comments(REPO, number)[0].body == "y" * 200_000
    issue.edit(body="z" * 262_145)
    assert fake.issue(REPO, number).body is None


def test_a_502_after_the_write_leaves_the_comment_created(fake):
    from github import GithubException

    number = fake.create_issue(REPO, "t", None, "alice")
    issue = pygithub(fake, "alice").get_repo(REPO).get_issue(number)
    fake.fail("POST", f"/repos/{REPO}/issues/*/comments", status=502, after_write=True)
    with pytest.raises(GithubException) as lost:
        issue.create_comment("status")
    assert lost.value.status == 502
    assert [c.body for c in fake.comments(REPO, number)] == ["status"]
    issue.create_comment("status")  # a naive retry duplicates it: the bot must upsert by marker instead
    assert len(fake.comments(REPO, number)) == 2


def test_a_502_before_the_write_changes_nothing_and_is_consumed(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    fake.fail("POST", "/repos/*/comments", status=502, times=2)
    client = githubkit(fake, "alice", auto_retry=False)
    from githubkit.exception import RequestFailed

    for _ in range(2):
        with pytest.raises(RequestFailed):
            client.rest.issues.create_comment("org", "fork", number, data={"body": "hi"})
    assert fake.comments(REPO, number) == []
    client.rest.issues.create_comment("org", "fork", number, data={"body": "hi"})
    assert [c.body for c in fake.comments(REPO, number)] == ["hi"]
    assert [c.status for c in fake.calls] == [502, 502, 201]


def test_a_secondary_rate_limit_is_waited_out_by_a_retrying_client(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    fake.rate_limit("secondary", retry_after=1, method="POST")
    client = githubkit(fake, "alice")  # githubkit's default retry honours retry-after once
    client.rest.issues.create_comment("org", "fork", number, data={"body": "after the wait"})
    statuses = [(c.status, c.operation) for c in fake.calls]
    assert statuses == [(403, None), (201, "issues/create-comment")]
    assert [c.body for c in fake.comments(REPO, number)] == ["after the wait"]


def test_rate_limit_answers_carry_githubs_headers(fake):
    fake.rate_limit("secondary", retry_after=7)
    fake.rate_limit("primary", reset_in=30, status=429)
    headers = {"Authorization": f"token {fake.token_for('alice')}"}
    secondary = httpx.get(f"{fake.base_url}/repos/{REPO}", headers=headers)
    assert secondary.status_code == 403 and secondary.headers["retry-after"] == "7"
    assert "secondary rate limit" in secondary.json()["message"]
    primary = httpx.get(f"{fake.base_url}/repos/{REPO}", headers=headers)
    assert primary.status_code == 429 and primary.headers["x-ratelimit-remaining"] == "0"
    assert 0 < int(primary.headers["x-ratelimit-reset"]) - __import__("time").time() <= 31
    ok = httpx.get(f"{fake.base_url}/repos/{REPO}", headers=headers)
    assert ok.status_code == 200
    assert (ok.headers["x-ratelimit-limit"], ok.headers["x-ratelimit-used"]) == ("5000", "3")


def test_lists_paginate_with_link_headers(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    for index in range(75):
        fake.state.create_comment(fake.state.repos[REPO], fake.issue(REPO, number), "alice", f"c{index}")
    headers = {"Authorization": f"token {fake.token_for('alice')}"}
    first = httpx.get(f"{fake.base_url}/repos/{REPO}/issues/{number}/comments?per_page=30", headers=headers)
    assert len(first.json()) == 30
    assert first.links["next"]["url"].endswith("per_page=30&page=2")
    assert first.links["last"]["url"].endswith("per_page=30&page=3")
    last = httpx.get(first.links["last"]["url"], headers=headers)
    assert len(last.json()) == 15 and "next" not in last.links and "prev" in last.links
    bodies = [c.body for c in pygithub(fake, "alice").get_repo(REPO).get_issue(number).get_comments()]
    assert bodies == [f"c{i}" for i in range(75)]
    client = githubkit(fake, "alice")
    paged = client.rest.paginate(
        client.rest.issues.list_comments, owner="org", repo="fork", issue_number=number, per_page=50
    )
    assert len(list(paged)) == 75


def test_issues_list_filters_by_label_state_and_creator(fake):
    a = fake.create_issue(REPO, "a", None, "alice", labels=("promotion",))
    fake.create_issue(REPO, "b", None, "trinity", labels=("promotion", "needs-info"))
    fake.create_issue(REPO, "c", None, "alice")
    client = githubkit(fake, "alice")
    client.rest.issues.update("org", "fork", a, data={"state": "closed"})
    numbers = lambda **q: [i.number for i in client.rest.issues.list_for_repo("org", "fork", **q).parsed_data]  # noqa: E731
    assert numbers() == [3, 2]
    assert numbers(labels="promotion", state="all") == [2, 1]
    assert numbers(labels="promotion,needs-info") == [2]
    assert numbers(creator="alice", state="all") == [3, 1]
    assert numbers(state="closed") == [1]
    assert fake.issue(REPO, a).closed_by == "alice"


def test_the_fakes_answers_match_githubs_response_schemas(fake):
    """Every answer above was validated; this one checks the check itself catches a broken shape."""
    operation = fake.contract.by_id["issues/get"]
    assert fake.contract.check_response(operation, 200, {"id": 1})
    number = fake.create_issue(REPO, "t", "b", "alice")
    good = httpx.get(
        f"{fake.base_url}/repos/{REPO}/issues/{number}", headers={"Authorization": f"token {fake.token_for('alice')}"}
    ).json()
    assert fake.contract.check_response(operation, 200, good) == []
    assert json.loads(json.dumps(good))["user"]["login"] == "alice"


def test_the_github_token_budget_of_1000_requests_is_enforced(fake):
    headers = {"Authorization": f"token {fake.bot_token}"}
    first = httpx.get(f"{fake.base_url}/repos/{REPO}", headers=headers)
    assert (first.headers["x-ratelimit-limit"], first.headers["x-ratelimit-remaining"]) == ("1000", "999")
    fake.rate_used[FakeGitHub.BOT] = 1000  # as if the job had spent its hour's budget
    spent = httpx.get(f"{fake.base_url}/repos/{REPO}", headers=headers)
    assert spent.status_code == 403 and spent.headers["x-ratelimit-remaining"] == "0"
    assert spent.json()["message"].startswith("API rate limit exceeded")
    alice = httpx.get(f"{fake.base_url}/repos/{REPO}", headers={"Authorization": f"token {fake.token_for('alice')}"})
    assert alice.status_code == 200 and alice.headers["x-ratelimit-limit"] == "5000"


def test_the_fixture_fails_a_test_whose_requests_violate_the_description(tmp_path):
    from tests.github.fake_github import running_fake

    with pytest.raises(AssertionError, match="'sticky' is not declared"), running_fake(tmp_path / "fake") as fake:
        fake.add_user("alice", role="write")
        fake.add_repo(REPO)
        number = fake.create_issue(REPO, "t", None, "alice")
        response = httpx.post(
            f"{fake.base_url}/repos/{REPO}/issues/{number}/comments",
            headers={"Authorization": f"token {fake.token_for('alice')}"},
            json={"body": "x", "sticky": True},
        )
        assert response.status_code == 422
    with running_fake(tmp_path / "clean") as fake:  # and passes one whose requests are all GitHub's
        fake.add_repo(REPO)
        pygithub(fake, FakeGitHub.BOT).get_repo(REPO)
