"""The fake GitHub's workflow dispatches, GraphQL and webhook payloads built from GitHub's real examples."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.github import webhooks
from tests.github.fake_github import FakeGitHub
from tests.github.test_fake_github import githubkit, pygithub

REPO = "org/fork"
WORKFLOW = """\
name: Promotion
on:
  issues:
    types: [opened, edited, labeled]
  workflow_dispatch:
    inputs:
      issue:
        required: true
        type: string
      stage:
        type: choice
        options: [translate, hypothesize]
        default: translate
      dry_run:
        type: boolean
"""


@pytest.fixture
def fake(fake_github: FakeGitHub, tmp_path: Path) -> FakeGitHub:
    seed = tmp_path / "seed"
    (seed / ".github" / "workflows").mkdir(parents=True)
    (seed / ".github" / "workflows" / "promotion.yml").write_text(WORKFLOW)
    (seed / ".github" / "workflows" / "ci.yml").write_text("name: CI\non: [push]\njobs: {}\n")
    fake_github.add_user("alice", role="write")
    fake_github.add_user("trinity", role="triage")
    fake_github.add_repo(REPO, seed_dir=seed)
    return fake_github


def test_workflows_are_listed_from_the_default_branch(fake):
    client = githubkit(fake, FakeGitHub.BOT)
    listed = client.rest.actions.list_repo_workflows("org", "fork").parsed_data
    assert listed.total_count == 2
    assert sorted((w.name, w.path) for w in listed.workflows) == [
        ("CI", ".github/workflows/ci.yml"),
        ("Promotion", ".github/workflows/promotion.yml"),
    ]
    workflow = pygithub(fake, FakeGitHub.BOT).get_repo(REPO).get_workflow("promotion.yml")
    assert workflow.name == "Promotion"


def test_a_dispatch_is_checked_against_the_workflow_file_at_the_ref(fake):
    repo = pygithub(fake, FakeGitHub.BOT).get_repo(REPO)
    workflow = repo.get_workflow("promotion.yml")
    assert workflow.create_dispatch("main", {"issue": "7", "stage": "hypothesize"}) is True  # PyGithub: 204
    client = githubkit(fake, FakeGitHub.BOT)  # githubkit speaks API 2026-03-10: 200 with the run's ids
    answer = client.rest.actions.create_workflow_dispatch(
        "org", "fork", "promotion.yml", data={"ref": "main", "inputs": {"issue": "8", "dry_run": "true"}}
    )
    assert answer.status_code == 200 and answer.parsed_data.workflow_run_id > 0
    assert [(d.workflow, d.ref, d.inputs, d.actor) for d in fake.dispatches] == [
        (".github/workflows/promotion.yml", "main", {"issue": "7", "stage": "hypothesize"}, FakeGitHub.BOT),
        (".github/workflows/promotion.yml", "main", {"issue": "8", "dry_run": "true"}, FakeGitHub.BOT),
    ]
    headers = {"Authorization": f"token {fake.bot_token}"}
    url = f"{fake.base_url}/repos/{REPO}/actions/workflows"
    for workflow_id, body, message in [
        ("promotion.yml", {"ref": "main", "inputs": {"issue": "1", "gpu": "a100"}}, "Unexpected inputs provided"),
        ("promotion.yml", {"ref": "main", "inputs": {}}, "Required input 'issue' not provided"),
        ("promotion.yml", {"ref": "main", "inputs": {"issue": "1", "stage": "deploy"}}, "not in the list"),
        ("promotion.yml", {"ref": "no-such-branch", "inputs": {"issue": "1"}}, "No ref found for: no-such-branch"),
        ("ci.yml", {"ref": "main"}, "does not have 'workflow_dispatch' trigger"),
    ]:
        refused = httpx.post(f"{url}/{workflow_id}/dispatches", headers=headers, json=body)
        assert refused.status_code == 422 and message in refused.json()["message"], body
    assert httpx.post(f"{url}/nope.yml/dispatches", headers=headers, json={"ref": "main"}).status_code == 404
    trinity = httpx.post(
        f"{url}/promotion.yml/dispatches",
        headers={"Authorization": f"token {fake.token_for('trinity')}"},
        json={"ref": "main", "inputs": {"issue": "1"}},
    )
    assert trinity.status_code == 403
    assert len(fake.dispatches) == 2


def test_graphql_answers_only_what_the_bot_asks(fake):
    headers = {"Authorization": f"bearer {fake.bot_token}"}
    query = httpx.post(fake.graphql_url, headers=headers, json={"query": "{ rateLimit { remaining } }"})
    assert query.status_code == 200 and "Cannot query field 'rateLimit'" in query.json()["errors"][0]["message"]
    viewer = httpx.post(fake.graphql_url, headers=headers, json={"query": "{ viewer { login } }"})
    assert viewer.json() == {"data": {"viewer": {"login": "github-actions[bot]"}}}  # who the token writes as
    misspelt = httpx.post(
        fake.graphql_url,
        headers=headers,
        json={
            "query": 'mutation { markPullRequestReadyForReview(input: {pullRequestId: "x"}) { pullRequest { draft } } }'
        },
    )
    assert "Cannot query field 'draft'" in misspelt.json()["errors"][0]["message"]
    unknown = httpx.post(
        fake.graphql_url,
        headers=headers,
        json={
            "query": "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }",
            "variables": {"id": "MDExOlB1bGxSZXF1ZXN0OTk5"},
        },
    )
    assert unknown.json()["errors"][0]["type"] == "NOT_FOUND"
    taken = fake.take_violations()
    assert len(taken) == 2 and all(v.startswith("POST /graphql") for v in taken)


def test_graphql_names_who_edited_a_comment_last_and_the_client_asks_only_when_it_must(fake):
    """GraphQL's `IssueComment.editor` is the only place GitHub says who saved a comment last (the bot trusts its
    status comment only when that is the bot); an app's login comes without REST's "[bot]" suffix."""
    from bot.github.client import GitHub
    from bot.github.records import Editor

    number = fake.create_issue(REPO, "Promote", "the request", "alice")
    forged = "<!-- promotion-bot:status -->\nforged"
    client = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False)
    mine = client.upsert_comment(number, "promotion-bot:status", "state v1")
    calls = len(client.log.calls)
    assert client.last_editor(mine) is None and len(client.log.calls) == calls  # never edited: no call

    pygithub(fake, "alice").get_repo(REPO).get_issue(number).get_comment(mine.id).edit(forged)  # write may edit
    with pytest.raises(Exception, match="403"):
        pygithub(fake, "trinity").get_repo(REPO).get_issue(number).get_comment(mine.id).edit("triage may not")
    [seen] = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False).comments(number)
    assert seen.body == forged  # the triager's edit was refused
    fresh = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False)
    assert fresh.last_editor(seen) == Editor("alice", seen.updated_at)
    assert fresh.last_editor(seen) == Editor("alice", seen.updated_at) and len(fresh.log.calls) == 1  # kept

    saved = fresh.upsert_comment(number, "promotion-bot:status", "state v2")  # the bot's own save: no call
    assert saved.id == mine.id
    calls = len(fresh.log.calls)
    assert fresh.last_editor(saved) == Editor("github-actions[bot]", saved.updated_at)
    assert len(fresh.log.calls) == calls
    [again] = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False).comments(number)
    other = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False)
    assert other.last_editor(again) == Editor("github-actions[bot]", again.updated_at)  # GraphQL: Bot github-actions
    assert fake.take_violations() == []


@pytest.mark.parametrize(
    ("event", "action"),
    [
        ("issues", "opened"),
        ("issues", "edited"),
        ("issues", "labeled"),
        ("issues", "closed"),
        ("issue_comment", "created"),
        ("workflow_dispatch", None),
    ],
)
def test_payloads_come_from_githubs_examples_and_parse_with_githubkit(event, action):
    from githubkit.webhooks import parse_obj

    payload = webhooks.build(
        event,
        action,
        repository="llm-d/llm-d-router",
        number=12,
        title="Promote weighted-adaptive",
        body="### Policy kind\n\nrouting",
        labels=["promotion"],
        sender=("trinity", "User", 77),
        comment_id=555,
        comment_body="/approve",
        label="gate-1-approved" if action == "labeled" else None,
        inputs={"issue": "12", "stage": "translate"},
        ref="main",
        workflow=".github/workflows/promotion.yml",
    )
    assert webhooks.validate(event, action, payload) == []
    assert payload["repository"]["full_name"] == "llm-d/llm-d-router"
    assert payload["sender"]["login"] == "trinity" and payload["sender"]["id"] == 77
    parsed = parse_obj(event, payload)
    if event != "workflow_dispatch":
        assert parsed.issue.number == 12 and parsed.issue.title == "Promote weighted-adaptive"
        assert parsed.issue.url.endswith("/repos/llm-d/llm-d-router/issues/12")
        assert "promotion" in [label.name for label in parsed.issue.labels]
    if action == "labeled":
        assert parsed.label.name == "gate-1-approved"
    if action == "closed":
        assert (parsed.action, parsed.issue.state) == ("closed", "closed")
    if event == "issue_comment":
        assert (parsed.comment.id, parsed.comment.body) == (555, "/approve")
        assert parsed.comment.html_url.endswith("/issues/12#issuecomment-555")
    if event == "workflow_dispatch":
        assert (parsed.inputs.model_dump(), parsed.ref) == ({"issue": "12", "stage": "translate"}, "refs/heads/main")


def test_a_payload_that_breaks_githubs_shape_is_refused():
    with pytest.raises(ValueError, match="not GitHub's shape"):
        webhooks.build("issues", "opened", number=-0.5)  # type: ignore[arg-type]


def test_the_fake_builds_payloads_from_its_own_state(fake):
    number = fake.create_issue(REPO, "Promote X", "### Policy kind\n\nrouting", "alice", labels=("promotion",))
    comment = pygithub(fake, "trinity").get_repo(REPO).get_issue(number).create_comment("/approve")
    payload = fake.webhook("issue_comment", "created", REPO, number, sender="trinity", comment_id=comment.id)
    assert payload["issue"]["title"] == "Promote X" and payload["issue"]["user"]["login"] == "alice"
    assert payload["comment"]["body"] == "/approve" and payload["comment"]["user"]["login"] == "trinity"
    assert payload["repository"]["url"] == f"{fake.base_url}/repos/{REPO}"
    assert payload["sender"]["id"] == fake.state.users["trinity"].id
    labeled = fake.webhook("issues", "labeled", REPO, number, sender=FakeGitHub.BOT, label="gate-1-approved")
    assert labeled["sender"]["type"] == "Bot" and labeled["label"]["name"] == "gate-1-approved"
    dispatch = fake.webhook("workflow_dispatch", None, REPO, inputs={"issue": str(number)})
    assert dispatch["ref"] == "refs/heads/main" and dispatch["inputs"] == {"issue": str(number)}


def test_calls_are_counted_per_operation_and_identity(fake):
    number = fake.create_issue(REPO, "t", None, "alice")
    client = githubkit(fake, FakeGitHub.BOT)
    client.rest.issues.get("org", "fork", number)
    client.rest.issues.create_comment("org", "fork", number, data={"body": "status"})
    client.rest.issues.add_labels("org", "fork", number, data={"labels": ["promotion"]})
    assert fake.count_calls() == 3
    assert fake.count_calls(operation="issues/create-comment") == 1
    assert fake.count_calls(method="POST", login=FakeGitHub.BOT) == 2
    assert fake.count_calls(login="alice") == 0
    assert [(c.method, c.path, c.status) for c in fake.calls][1] == (
        "POST",
        f"/repos/{REPO}/issues/{number}/comments",
        201,
    )


def test_changes_are_delivered_as_github_would_and_github_token_changes_start_no_workflow(fake):
    number = fake.create_issue(REPO, "Promote X", "v1", "alice", labels=("promotion",))
    assert [(d.event, d.action, d.actor) for d in fake.take_deliveries()] == [
        ("issues", "opened", "alice"),
        ("issues", "labeled", "alice"),
    ]
    bot = githubkit(fake, FakeGitHub.BOT)
    bot.rest.issues.add_labels("org", "fork", number, data={"labels": ["stage-1-analyze"]})
    bot.rest.issues.create_comment("org", "fork", number, data={"body": "status"})
    bot.rest.actions.create_workflow_dispatch(
        "org", "fork", "promotion.yml", data={"ref": "main", "inputs": {"issue": str(number)}}
    )
    alice = githubkit(fake, "alice")
    alice.rest.issues.update("org", "fork", number, data={"body": "v2"})
    trinity = githubkit(fake, "trinity")
    trinity.rest.issues.add_labels("org", "fork", number, data={"labels": ["gate-1-approved"]})
    everything = [(d.event, d.action, d.actor, d.starts_workflows) for d in fake.deliveries[2:]]
    assert everything == [
        ("issues", "labeled", FakeGitHub.BOT, False),
        ("issue_comment", "created", FakeGitHub.BOT, False),
        ("workflow_dispatch", None, FakeGitHub.BOT, True),
        ("issues", "edited", "alice", True),
        ("issues", "labeled", "trinity", True),
    ]
    dispatch, edited, labeled = fake.take_deliveries()
    assert dispatch.payload["inputs"] == {"issue": str(number)}
    assert dispatch.payload["workflow"] == ".github/workflows/promotion.yml"
    assert edited.payload["changes"] == {"body": {"from": "v1"}} and edited.payload["issue"]["body"] == "v2"
    assert labeled.payload["label"]["name"] == "gate-1-approved"
    assert labeled.payload["sender"]["login"] == "trinity"
    assert {x["name"] for x in labeled.payload["issue"]["labels"]} == {
        "promotion",
        "stage-1-analyze",
        "gate-1-approved",
    }
    assert fake.take_deliveries() == []
