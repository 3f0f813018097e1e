"""The fake GitHub's git over smart HTTP, pull requests and reviews, with real git and the real clients."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

from bot import PROJECT_ROOT
from tests.github.fake_github import FakeGitHub
from tests.github.test_fake_github import githubkit, pygithub

REPO = "org/fork"
BRANCH = "promotion/1-weighted"
ORIGINAL = "package pkg\n\n" + "".join(f"func F{i}() int {{ return {i} }}\n" for i in range(1, 21))


def git(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=Bot", "-c", "user.email=bot@example.invalid"]
    return subprocess.run(
        ["git", "-C", str(work), *identity, *args], capture_output=True, text=True, env=env, check=check
    )


@pytest.fixture
def fake(fake_github: FakeGitHub, tmp_path: Path) -> FakeGitHub:
    seed = tmp_path / "seed"
    (seed / "pkg").mkdir(parents=True)
    (seed / "pkg" / "a.go").write_text(ORIGINAL)
    (seed / "pkg" / "old.go").write_text("package pkg\n\nconst Old = 1\n")
    fake_github.add_user("maintainer", role="maintain")
    fake_github.add_user("reader", role="read")
    fake_github.add_repo(REPO, seed_dir=seed)
    return fake_github


def clone(fake: FakeGitHub, tmp_path: Path, login: str = FakeGitHub.BOT) -> Path:
    work = tmp_path / f"clone-{login.replace('[', '').replace(']', '')}"
    subprocess.run(
        ["git", *fake.git_auth_args(login), "clone", "-q", f"{fake.server_url}/{REPO}.git", str(work)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    return work


def push_branch(fake: FakeGitHub, tmp_path: Path) -> Path:
    """A promotion branch: F3 changed, F12 changed (two hunks), one file added, one removed."""
    work = clone(fake, tmp_path)
    lines = ORIGINAL.splitlines(keepends=True)
    lines[4] = "func F3() int { return 33 }\n"
    lines[13] = "func F12() int { return 1212 }\n"
    (work / "pkg" / "a.go").write_text("".join(lines))
    (work / "pkg" / "plugin.go").write_text("package pkg\n\n// Plugin scores.\nfunc Plugin() int { return 7 }\n")
    (work / "pkg" / "old.go").unlink()
    git(work, "checkout", "-q", "-b", BRANCH)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "translate")
    git(work, *fake.git_auth_args(), "push", "-q", "origin", BRANCH)
    return work


def test_git_fetch_and_push_over_smart_http_with_a_token(fake, tmp_path):
    work = push_branch(fake, tmp_path)
    head = git(work, "rev-parse", "HEAD").stdout.strip()
    assert fake.branch_sha(REPO, BRANCH) == head
    assert fake.pushes[-1].updates == {f"refs/heads/{BRANCH}": (None, head)}
    assert fake.pushes[-1].login == FakeGitHub.BOT
    bearer = ["-c", f"http.extraHeader=Authorization: Bearer {fake.token_for('maintainer')}"]
    git(work, *bearer, "fetch", "-q", "origin")
    assert fake.count_calls(kind="git", login="maintainer") >= 1


def test_git_refuses_the_unauthenticated_and_pushes_without_write(fake, tmp_path):
    anonymous = subprocess.run(
        ["git", "ls-remote", f"{fake.server_url}/{REPO}.git"],
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"},
        check=False,
    )
    assert anonymous.returncode != 0
    work = clone(fake, tmp_path, "reader")  # a reader can fetch
    git(work, "commit", "-q", "--allow-empty", "-m", "x")
    refused = git(work, *fake.git_auth_args("reader"), "push", "origin", "HEAD:refs/heads/x", check=False)
    assert refused.returncode != 0 and "denied" in refused.stderr
    assert fake.branch_sha(REPO, "x") is None


def test_a_stale_compare_and_swap_push_is_refused(fake, tmp_path):
    work = push_branch(fake, tmp_path)
    ours = git(work, "rev-parse", "HEAD").stdout.strip()
    theirs = fake.git_commit(REPO, BRANCH, {"pkg/other.go": "package pkg\n"}, "another run")  # the ref moved
    (work / "pkg" / "plugin.go").write_text("package pkg\n\nfunc Plugin() int { return 8 }\n")
    git(work, "commit", "-q", "-am", "stage 3")
    auth = fake.git_auth_args()
    stale = git(work, *auth, "push", f"--force-with-lease=refs/heads/{BRANCH}:{ours}", "origin", BRANCH, check=False)
    assert stale.returncode != 0 and "stale info" in stale.stderr
    assert fake.branch_sha(REPO, BRANCH) == theirs
    git(work, *auth, "fetch", "-q", "origin")
    git(work, "rebase", "-q", f"origin/{BRANCH}")
    mine = git(work, "rev-parse", "HEAD").stdout.strip()
    git(work, *auth, "push", "-q", f"--force-with-lease=refs/heads/{BRANCH}:{theirs}", "origin", BRANCH)
    assert fake.branch_sha(REPO, BRANCH) == mine


def test_pull_request_lifecycle_draft_files_list_update_and_ready(fake, tmp_path):
    from github import GithubException

    push_branch(fake, tmp_path)
    repo = pygithub(fake, FakeGitHub.BOT).get_repo(REPO)
    pr = repo.create_pull(title="Promote weighted-adaptive", body="Refs #1", head=BRANCH, base="main", draft=True)
    assert (pr.draft, pr.state, pr.user.login, pr.head.ref, pr.base.ref) == (
        True,
        "open",
        FakeGitHub.BOT,
        BRANCH,
        "main",
    )
    assert pr.changed_files == 3 and pr.html_url == f"{fake.server_url}/{REPO}/pull/{pr.number}"
    files = {f.filename: f for f in pr.get_files()}
    assert {name: f.status for name, f in files.items()} == {
        "pkg/a.go": "modified",
        "pkg/old.go": "removed",
        "pkg/plugin.go": "added",
    }
    assert files["pkg/a.go"].patch.count("@@ -") == 2 and "+func F3() int { return 33 }" in files["pkg/a.go"].patch
    with pytest.raises(GithubException) as duplicate:
        repo.create_pull(title="again", body="", head=BRANCH, base="main")
    assert duplicate.value.status == 422
    assert "already exists" in duplicate.value.data["errors"][0]["message"]
    client = githubkit(fake, FakeGitHub.BOT)
    listed = client.rest.pulls.list("org", "fork", head=f"org:{BRANCH}", base="main", state="open").parsed_data
    assert [p.number for p in listed] == [pr.number]
    assert client.rest.pulls.list("org", "fork", head="someone:else").parsed_data == []
    pr.edit(title="Promote weighted-adaptive (stage 3)", body="Refs #1\n\nupdated")
    assert fake.issue(REPO, pr.number).title == "Promote weighted-adaptive (stage 3)"
    undraft = httpx.patch(
        f"{fake.base_url}/repos/{REPO}/pulls/{pr.number}",
        headers={"Authorization": f"token {fake.bot_token}"},
        json={"draft": False},
    )
    assert undraft.status_code == 422 and fake.pull(REPO, pr.number).draft
    assert any("'draft' is not declared" in v for v in fake.take_violations())
    pr.mark_ready_for_review()  # PyGithub's GraphQL mutation
    assert not fake.pull(REPO, pr.number).draft
    assert client.rest.pulls.get("org", "fork", pr.number).parsed_data.draft is False
    assert [e.event for e in fake.issue(REPO, pr.number).events][-1] == "ready_for_review"


def test_a_pull_request_needs_commits_and_existing_branches(fake):
    from github import GithubException

    repo = pygithub(fake, FakeGitHub.BOT).get_repo(REPO)
    with pytest.raises(GithubException) as missing:
        repo.create_pull(title="t", body="", head="nope", base="main")
    assert missing.value.status == 422 and missing.value.data["errors"][0]["field"] == "head"
    sha = fake.branch_sha(REPO, "main")
    subprocess.run(["git", "--git-dir", str(fake.git_dir(REPO)), "branch", "same", sha], check=True)
    with pytest.raises(GithubException) as same:
        repo.create_pull(title="t", body="", head="same", base="main")
    assert "No commits between main and same" in same.value.data["errors"][0]["message"]


def test_a_review_with_an_anchor_off_the_diff_is_rejected_whole(fake, tmp_path):
    from github import GithubException

    push_branch(fake, tmp_path)
    pr = pygithub(fake, FakeGitHub.BOT).get_repo(REPO).create_pull(title="t", body="b", head=BRANCH, base="main")
    good = {"path": "pkg/plugin.go", "line": 3, "side": "RIGHT", "body": "freshness?"}
    for bad, message in [
        ({"path": "pkg/a.go", "line": 10, "body": "between the hunks"}, "line must be part of the diff"),
        ({"path": "pkg/a.go", "line": 5, "side": "RIGHT", "body": "fine"}, None),
        ({"path": "go.mod", "line": 1, "body": "not in the PR"}, "Path could not be resolved"),
        ({"path": "pkg/a.go", "start_line": 4, "line": 15, "body": "across hunks"}, "same hunk"),
        ({"path": "pkg/a.go", "start_line": 6, "line": 6, "body": "empty range"}, "must precede the end line"),
    ]:
        if message is None:  # a valid companion: the review must still fail because of the other one
            continue
        with pytest.raises(GithubException) as refused:
            pr.create_review(body="gate 1 review", event="COMMENT", comments=[good, bad])
        assert refused.value.status == 422 and message in refused.value.data["errors"][0], bad
        assert fake.reviews(REPO, pr.number) == [] and fake.review_comments(REPO, pr.number) == []
    review = pr.create_review(
        body="gate 1 review",
        event="COMMENT",
        comments=[
            good,
            {"path": "pkg/a.go", "line": 5, "side": "LEFT", "body": "old F3"},
            {"path": "pkg/a.go", "start_line": 3, "line": 5, "body": "range"},
            {"path": "pkg/old.go", "line": 3, "side": "LEFT", "body": "why removed?"},
        ],
    )
    assert review.state == "COMMENTED"
    stored = fake.review_comments(REPO, pr.number)
    assert [(c.path, c.line, c.side, c.start_line) for c in stored] == [
        ("pkg/plugin.go", 3, "RIGHT", None),
        ("pkg/a.go", 5, "LEFT", None),
        ("pkg/a.go", 5, "RIGHT", 3),
        ("pkg/old.go", 3, "LEFT", None),
    ]
    listed = list(pr.get_review_comments())
    assert listed[0].diff_hunk.startswith("@@ -0,0 +1,4 @@") and listed[0].diff_hunk.endswith("+// Plugin scores.")


def test_the_author_cannot_approve_or_request_changes_on_its_own_pull_request(fake, tmp_path):
    from github import GithubException

    push_branch(fake, tmp_path)
    pr = pygithub(fake, FakeGitHub.BOT).get_repo(REPO).create_pull(title="t", body="b", head=BRANCH, base="main")
    for event, message in [
        ("APPROVE", "Can not approve your own pull request"),
        ("REQUEST_CHANGES", "Can not request changes on your own pull request"),
    ]:
        with pytest.raises(GithubException) as refused:
            pr.create_review(body="verdict", event=event)
        assert refused.value.status == 422 and refused.value.data["errors"] == [message]
    pr.create_review(body="findings", event="COMMENT")
    maintainer_pr = pygithub(fake, "maintainer").get_repo(REPO).get_pull(pr.number)
    maintainer_pr.create_review(body="lgtm", event="APPROVE")
    assert [r.state for r in fake.reviews(REPO, pr.number)] == ["COMMENTED", "APPROVED"]


def test_reviews_and_review_comments_are_listed_updated_and_deleted(fake, tmp_path):
    push_branch(fake, tmp_path)
    client = githubkit(fake, FakeGitHub.BOT)
    pr = client.rest.pulls.create("org", "fork", data={"title": "t", "head": BRANCH, "base": "main"}).parsed_data
    comment = {"path": "pkg/plugin.go", "line": 4, "body": "round 1"}
    review = client.rest.pulls.create_review(
        "org", "fork", pr.number, data={"body": "<!-- gate-1 -->", "event": "COMMENT", "comments": [comment]}
    ).parsed_data
    updated = client.rest.pulls.update_review("org", "fork", pr.number, review.id, data={"body": "<!-- gate-1 --> v2"})
    assert updated.parsed_data.body == "<!-- gate-1 --> v2"
    assert [r.body for r in client.rest.pulls.list_reviews("org", "fork", pr.number).parsed_data] == [
        "<!-- gate-1 --> v2"
    ]
    (item,) = client.rest.pulls.list_review_comments("org", "fork", pr.number).parsed_data
    assert (item.path, item.line, item.side, item.pull_request_review_id) == ("pkg/plugin.go", 4, "RIGHT", review.id)
    client.rest.pulls.update_review_comment("org", "fork", item.id, data={"body": "round 2"})
    assert client.rest.pulls.get_review_comment("org", "fork", item.id).parsed_data.body == "round 2"
    client.rest.pulls.delete_review_comment("org", "fork", item.id)
    assert fake.review_comments(REPO, pr.number) == []
    assert client.rest.pulls.get_review("org", "fork", pr.number, review.id).parsed_data.state == "COMMENTED"


def test_a_pending_review_is_private_to_its_author_and_unique(fake, tmp_path):
    from github import GithubException

    push_branch(fake, tmp_path)
    pr = pygithub(fake, "maintainer").get_repo(REPO).create_pull(title="t", body="b", head=BRANCH, base="main")
    pr.create_review(comments=[{"path": "pkg/plugin.go", "line": 1, "body": "probe"}])  # no event: PENDING
    with pytest.raises(GithubException) as second:
        pr.create_review(comments=[{"path": "pkg/plugin.go", "line": 2, "body": "probe"}])
    assert "one pending review" in second.value.data["errors"][0]
    assert [r.state for r in pr.get_reviews()] == ["PENDING"]
    assert list(pygithub(fake, FakeGitHub.BOT).get_repo(REPO).get_pull(pr.number).get_reviews()) == []


def test_a_new_push_changes_the_files_a_pull_request_reports(fake, tmp_path):
    work = push_branch(fake, tmp_path)
    client = githubkit(fake, FakeGitHub.BOT)
    pr = client.rest.pulls.create("org", "fork", data={"title": "t", "head": BRANCH, "base": "main"}).parsed_data
    (work / "pkg" / "tests_test.go").write_text("package pkg\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "stage 4")
    git(work, *fake.git_auth_args(), "push", "-q", "origin", BRANCH)
    names = [f.filename for f in client.rest.pulls.list_files("org", "fork", pr.number).parsed_data]
    assert "pkg/tests_test.go" in names
    assert client.rest.pulls.get("org", "fork", pr.number).parsed_data.head.sha == fake.branch_sha(REPO, BRANCH)


def test_a_repository_seeded_from_the_llm_d_router_mirror_serves_contents_and_clones(fake_github, tmp_path):
    fake_github.add_repo("llm-d/llm-d-router", seed_dir=PROJECT_ROOT / "gomirror" / "llm-d-router")
    repo = pygithub(fake_github, FakeGitHub.BOT).get_repo("llm-d/llm-d-router")
    go_mod = repo.get_contents("go.mod", ref="main")
    assert go_mod.decoded_content == (PROJECT_ROOT / "gomirror" / "llm-d-router" / "go.mod").read_bytes()
    top = {entry.path for entry in repo.get_contents("")}
    assert "go.mod" in top
    work = tmp_path / "router"
    subprocess.run(
        [
            "git",
            *fake_github.git_auth_args(),
            "clone",
            "-q",
            f"{fake_github.server_url}/llm-d/llm-d-router.git",
            str(work),
        ],
        check=True,
        capture_output=True,
    )
    assert (work / "go.mod").read_bytes() == go_mod.decoded_content


def test_the_bot_deletes_many_review_comments_in_one_graphql_call(fake, tmp_path):
    """A new review round replaces the last one's inline comments: one request, however many there were."""
    from bot.github.client import GitHub

    push_branch(fake, tmp_path)
    pr = pygithub(fake, FakeGitHub.BOT).get_repo(REPO).create_pull(title="t", body="b", head=BRANCH, base="main")
    lines = [1, 2, 3, 4]
    pr.create_review(
        body="<!-- gate-1 -->",
        event="COMMENT",
        comments=[{"path": "pkg/plugin.go", "line": n, "body": f"finding {n}"} for n in lines],
    )
    client = GitHub(fake.bot_token, REPO, api_url=fake.api_url, throttle=False)
    ours = client.review_comments(pr.number)
    assert len(ours) == len(lines) and all(c.node_id for c in ours)
    before = fake.count_calls()
    gone = ours[0].node_id
    client.delete_review_comments([c.node_id for c in ours[:2]])
    client.delete_review_comments([gone, *(c.node_id for c in ours[2:])])  # one already gone: not an error
    assert fake.count_calls() - before == 2 and fake.review_comments(REPO, pr.number) == []
    assert fake.take_violations() == []
