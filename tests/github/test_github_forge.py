"""The GitHub forge on the fake: compare-and-swap pushes, the draft PR, reviews anchored to the diff, feedback."""

from __future__ import annotations

import pytest

from bot.forge.base import ReviewComment
from bot.forge.git import ForgeError
from bot.github.client import GitHub
from bot.github.forge import SUPERSEDED, GitHubForge

REPO = "acme/fork"
BRANCH = "promotion/7-x"
CODE = "".join(f"// line {i}\n" for i in range(1, 31))


@pytest.fixture
def forge(fake_github, tmp_path):
    fake_github.add_repo(REPO)
    fake_github.add_repo("acme/blis")
    client = GitHub(fake_github.bot_token, REPO, api_url=fake_github.api_url, throttle=False)

    def make():
        return GitHubForge(
            client,
            issue=7,
            fork=REPO,
            server_url=fake_github.server_url,
            token=fake_github.bot_token,
            clone_dir=tmp_path / f"clone-{len(list(tmp_path.iterdir()))}",
            base_branch="main",
            branch=BRANCH,
            feedback_repository="acme/blis",
        )

    return fake_github, make


def test_commits_are_pushed_and_a_branch_moved_by_someone_else_is_never_built_on(forge):
    fake, make = forge
    f = make()
    f.ensure_branch(BRANCH, "main")
    first = f.commit_files(BRANCH, {"pkg/a.go": CODE.encode()}, message="stage 2")
    assert fake.branch_sha(REPO, BRANCH) == first
    assert f.commit_files(BRANCH, {"pkg/a.go": CODE.encode()}, message="again") is None  # nothing changed
    fake.git_commit(REPO, BRANCH, {"pkg/a.go": "someone else\n"}, "a foreign commit")
    foreign = fake.branch_sha(REPO, BRANCH)
    with pytest.raises(ForgeError, match="moved on GitHub while the bot was writing it"):
        f.commit_files(BRANCH, {"docs/x.md": b"x\n"}, message="stage 3")
    assert fake.branch_sha(REPO, BRANCH) == foreign  # nothing of ours landed on top
    assert make().read_file(BRANCH, "pkg/a.go") == b"someone else\n"


def test_a_review_keeps_inline_comments_on_the_diff_and_moves_the_rest_into_its_body(forge):
    fake, make = forge
    f = make()
    f.ensure_branch(BRANCH, "main")
    f.commit_files(BRANCH, {"pkg/a.go": CODE.encode()}, message="stage 2")
    pr = f.open_or_update_pr(BRANCH, "main", "Title", "Refs #7")
    assert fake.pull(REPO, int(pr.number)).draft
    marker = "promotion-bot:review-gate-1"
    f.set_review_comments(
        pr,
        marker,
        [ReviewComment("pkg/a.go", 12, "on the diff"), ReviewComment("README.md", 1, "not in the PR")],
        body="round 1",
    )
    [review] = fake.reviews(REPO, int(pr.number))
    assert review.state == "COMMENTED" and "`README.md:1`: not in the PR" in review.body
    assert [(c.path, c.line) for c in fake.review_comments(REPO, int(pr.number))] == [("pkg/a.go", 12)]

    # The next round replaces the bot's comments for this gate; the same review again adds nothing.
    f.set_review_comments(pr, marker, [ReviewComment("pkg/a.go", 14, "round 2")], body="round 2")
    f.set_review_comments(pr, marker, [ReviewComment("pkg/a.go", 14, "round 2")], body="round 2")
    assert [(c.line, c.body.splitlines()[-1]) for c in fake.review_comments(REPO, int(pr.number))] == [(14, "round 2")]
    bodies = [r.body.splitlines()[-1] for r in fake.reviews(REPO, int(pr.number))]
    assert bodies == [SUPERSEDED, "round 2"]

    f.mark_ready(pr)
    assert not fake.pull(REPO, int(pr.number)).draft


def test_feedback_issues_are_found_again_not_duplicated(forge):
    fake, make = forge
    f = make()
    url = f.file_feedback("promotion-bot:feedback:7:A1", "A1 refuted", "body 1")
    again = make().file_feedback("promotion-bot:feedback:7:A1", "A1 refuted", "body 2")
    assert url == again and url.endswith("/acme/blis/issues/1")
    [issue] = fake.state.repos["acme/blis"].issues.values()
    assert issue.body.endswith("body 2") and "promotion-feedback" in issue.labels


def test_a_feedback_issue_github_refuses_says_why_and_how_to_file_it(forge):
    """GITHUB_TOKEN's 403 in another repository (admin-findings 2): a FeedbackNotFiled with the fix, not a
    GitHubError that fails stage 6 after the three gates and the GPU run."""
    from bot.forge.base import FeedbackNotFiled

    fake, make = forge
    fake.fail("POST", "/repos/acme/blis/issues", status=403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(FeedbackNotFiled) as refused:
        make().file_feedback("promotion-bot:feedback:7:A1", "A1 refuted", "body 1")
    assert "GitHub answered 403: Resource not accessible by integration" in refused.value.why
    assert refused.value.repository == "acme/blis"
    assert "`app-token:` of a GitHub App installed on acme (it owns both repositories)" in refused.value.fix


def test_a_refused_feedback_issue_under_another_owner_is_not_fixed_with_an_app_token(fake_github, tmp_path):
    """verify2 item 4: the fix named an App installed on the feedback repository's owner, a token that cannot
    write the fork (an installation token reaches one owner): under two owners the issues are filed by hand."""
    from bot.forge.base import FeedbackNotFiled

    fake_github.add_repo(REPO)
    fake_github.add_repo("inference-sim/inference-sim")
    fake_github.fail("POST", "/repos/inference-sim/inference-sim/issues", status=403, body={"message": "nope"})
    forge = GitHubForge(
        GitHub(fake_github.bot_token, REPO, api_url=fake_github.api_url, throttle=False),
        issue=7,
        fork=REPO,
        server_url=fake_github.server_url,
        token=fake_github.bot_token,
        clone_dir=tmp_path / "clone",
        base_branch="main",
        branch=BRANCH,
        feedback_repository="inference-sim/inference-sim",
    )
    with pytest.raises(FeedbackNotFiled) as refused:
        forge.file_feedback("promotion-bot:feedback:7:A1", "A1 refuted", "body 1")
    fix = refused.value.fix
    assert "app-token" not in fix and "installed on" not in fix, fix
    assert "inference-sim/inference-sim has another owner than acme/fork" in fix
    assert "unless the fork moves under inference-sim" in fix
