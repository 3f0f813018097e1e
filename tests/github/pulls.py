"""Pull requests and reviews in the fake GitHub: GitHub's rules, computed from the real git repository.

A pull request's diff is the three-dot diff of its base and head branches as they are in the bare repository
*now* (so a push over smart HTTP changes what `files` and review anchors see, as on GitHub). The review rules
are the ones bots trip on: a review is created whole or not at all, an inline comment must sit on a line of
the diff (RIGHT: added or context lines; LEFT: removed or context lines), and an author cannot approve or
request changes on their own pull request.
"""

from __future__ import annotations

from typing import Any

from tests.github import gitrepo
from tests.github.state import ApiError, Issue, Pull, Repo, Review, ReviewComment, State, not_found, unprocessable

REVIEW_DOC = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
REVIEW_STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", None: "PENDING"}


def to_sentence(parts: list[str]) -> str:
    """Rails' Array#to_sentence, which is how GitHub joins the errors of one review thread."""
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return ", ".join(parts[:-1]) + f", and {parts[-1]}"


def parse_head(repo: Repo, head: str) -> str:
    """The branch named by `head` ("branch" or "owner:branch"); cross-repository heads are not modelled."""
    owner, sep, branch = head.rpartition(":")
    if sep and owner.lower() != repo.owner.lower():
        raise unprocessable(
            {"resource": "PullRequest", "field": "head", "code": "invalid"},
            message=f"Validation Failed: the fake GitHub models same-repository pull requests only (head {head!r})",
        )
    return branch


def pull(repo: Repo, number: int) -> tuple[Issue, Pull]:
    if number not in repo.pulls:
        raise not_found()
    return repo.issues[number], repo.pulls[number]


def head_sha(repo: Repo, pr: Pull) -> str:
    return gitrepo.resolve(repo.git_dir, f"refs/heads/{pr.head}") or gitrepo.ZERO_SHA


def base_sha(repo: Repo, pr: Pull) -> str:
    return gitrepo.resolve(repo.git_dir, f"refs/heads/{pr.base}") or gitrepo.ZERO_SHA


def files(repo: Repo, pr: Pull, commit: str | None = None) -> list[gitrepo.FileDiff]:
    head = commit or head_sha(repo, pr)
    if head == gitrepo.ZERO_SHA:
        return []
    return gitrepo.pull_diff(repo.git_dir, base_sha(repo, pr), head)


def create_pull(state: State, repo: Repo, actor: str, data: dict[str, Any]) -> tuple[Issue, Pull]:
    title, head_arg, base = data.get("title"), data.get("head"), data.get("base")
    if not head_arg or not base or not (title or data.get("issue")):
        missing = [name for name in ("title", "head", "base") if not data.get(name)]
        raise unprocessable(
            *({"resource": "PullRequest", "code": "missing_field", "field": name} for name in missing),
            message="Validation Failed",
        )
    if data.get("issue") is not None:
        raise unprocessable(message="the fake GitHub does not convert issues to pull requests (use title)")
    state.check_create_body(data.get("body"), "PullRequest")
    branch = parse_head(repo, head_arg)
    for field_name, name in (("base", base), ("head", branch)):
        if not gitrepo.branch_exists(repo.git_dir, name):
            raise unprocessable(
                {"resource": "PullRequest", "field": field_name, "code": "invalid"}, message="Validation Failed"
            )
    for number, existing in repo.pulls.items():
        if existing.head == branch and existing.base == base and repo.issues[number].state == "open":
            raise unprocessable(
                {
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": f"A pull request already exists for {repo.owner}:{branch}.",
                },
                message="Validation Failed",
            )
    head = gitrepo.resolve(repo.git_dir, f"refs/heads/{branch}")
    start = gitrepo.merge_base(repo.git_dir, base, branch) or base
    if head is None or gitrepo.commit_count(repo.git_dir, start, head) == 0:
        raise unprocessable(
            {"resource": "PullRequest", "code": "custom", "message": f"No commits between {base} and {branch}"},
            message="Validation Failed",
        )
    issue = state.create_issue(repo, actor, str(title), data.get("body"), [])
    issue.is_pull = True
    pr = Pull(issue.number, state.next_id(), branch, base, bool(data.get("draft", False)))
    pr.maintainer_can_modify = bool(data.get("maintainer_can_modify", False))
    repo.pulls[issue.number] = pr
    return issue, pr


def update_pull(state: State, repo: Repo, issue: Issue, pr: Pull, actor: str, data: dict[str, Any]) -> None:
    if "base" in data and data["base"] != pr.base:
        if not gitrepo.branch_exists(repo.git_dir, data["base"]):
            raise unprocessable(
                {"resource": "PullRequest", "field": "base", "code": "invalid"}, message="Validation Failed"
            )
        pr.base = data["base"]
    if "maintainer_can_modify" in data:
        pr.maintainer_can_modify = bool(data["maintainer_can_modify"])
    changes = {key: data[key] for key in ("title", "body", "state") if key in data}
    state.update_issue(repo, issue, actor, changes)


def mark_ready(state: State, repo: Repo, issue: Issue, pr: Pull, actor: str) -> None:
    state.may_edit(repo, issue.user, actor)
    if pr.draft:
        pr.draft = False
        state.event(issue, "ready_for_review", actor)


def _anchor_errors(diffs: dict[str, gitrepo.FileDiff], comment: dict[str, Any]) -> tuple[list[str], Any]:
    """The errors GitHub gives one inline comment, and (diff, line) where it lands when there are none."""
    diff = diffs.get(comment["path"])
    if diff is None:
        return ["Path could not be resolved"], None
    if "position" in comment and "line" not in comment:
        by_position = {dl.position: dl for dl in diff.lines if dl.kind in (" ", "+", "-")}
        landed = by_position.get(comment["position"])
        if landed is None:
            return ["Pull request review thread position is invalid"], None
        return [], landed
    if "line" not in comment:
        return ["Pull request review thread line must be part of the diff"], None
    side = comment.get("side", "RIGHT")
    anchors = diff.anchorable(side)
    landed = anchors.get(comment["line"])
    errors = []
    if landed is None:
        errors += [
            "Pull request review thread line must be part of the diff",
            "Pull request review thread diff hunk can't be blank",
        ]
    if comment.get("start_line") is not None:
        start_anchors = diff.anchorable(comment.get("start_side", side))
        start = start_anchors.get(comment["start_line"])
        if comment["start_line"] >= comment["line"] and comment.get("start_side", side) == side:
            errors.append("Pull request review thread start line must precede the end line.")
        elif start is None or landed is None or start.hunk != landed.hunk:
            errors.append("Pull request review thread start line must be part of the same hunk as the line.")
    return errors, landed


def create_review(
    state: State, repo: Repo, issue: Issue, pr: Pull, actor: str, data: dict[str, Any]
) -> tuple[Review, list[ReviewComment]]:
    event = data.get("event")
    body = data.get("body") or ""
    comments = data.get("comments") or []
    if event in ("APPROVE", "REQUEST_CHANGES") and actor == issue.user:
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise ApiError(422, "Unprocessable Entity", [f"Can not {verb} your own pull request"], REVIEW_DOC)
    if event == "REQUEST_CHANGES" and not body.strip():
        raise ApiError(422, "Unprocessable Entity", ["Body can't be blank when requesting changes"], REVIEW_DOC)
    if event == "COMMENT" and not body.strip() and not comments:
        raise ApiError(422, "Unprocessable Entity", ["Body can't be blank"], REVIEW_DOC)
    if event is None and any(r.user == actor and r.state == "PENDING" for r in _reviews_of(repo, pr)):
        raise ApiError(
            422, "Unprocessable Entity", ["User can only have one pending review per pull request"], REVIEW_DOC
        )
    state.check_create_body(body, "PullRequestReview")
    for comment in comments:
        state.check_create_body(comment.get("body"), "PullRequestReviewComment")
    commit = head_sha(repo, pr)
    if data.get("commit_id"):
        commit = gitrepo.resolve(repo.git_dir, data["commit_id"]) or ""
        if not commit:
            raise ApiError(422, "Unprocessable Entity", ["Commit id could not be resolved"], REVIEW_DOC)
    diffs = {diff.filename: diff for diff in files(repo, pr, commit)}
    errors: list[str] = []
    placed = []
    for comment in comments:
        found, landed = _anchor_errors(diffs, comment)
        errors += [error for error in found if error not in errors]
        placed.append(landed)
    if errors:
        # All or nothing: one bad anchor and GitHub creates neither the review nor any of its comments.
        raise ApiError(422, "Unprocessable Entity", [to_sentence(errors)], REVIEW_DOC)
    now = state.now()
    review = Review(
        state.next_id(), pr.number, actor, body, REVIEW_STATES[event], commit, None if event is None else now
    )
    repo.reviews[review.id] = review
    created = []
    for comment, landed in zip(comments, placed, strict=True):
        diff = diffs[comment["path"]]
        side = comment.get("side", "RIGHT")
        line = comment.get("line") or (landed.new if landed.new is not None else landed.old)
        if "line" not in comment and landed.kind == "-":
            side = "LEFT"
        start_line = comment.get("start_line")
        item = ReviewComment(
            state.next_id(),
            review.id,
            pr.number,
            actor,
            comment["body"],
            comment["path"],
            line,
            side,
            start_line,
            comment.get("start_side", side) if start_line is not None else None,
            landed.position,
            diff.hunk_text(landed),
            commit,
            now,
            now,
        )
        repo.review_comments[item.id] = item
        created.append(item)
    issue.updated_at = now
    return review, created


def _reviews_of(repo: Repo, pr: Pull) -> list[Review]:
    return [review for review in repo.reviews.values() if review.pull_number == pr.number]


def reviews_of(repo: Repo, pr: Pull, viewer: str) -> list[Review]:
    """Reviews as the viewer sees them: others' pending reviews are invisible."""
    return [r for r in _reviews_of(repo, pr) if r.state != "PENDING" or r.user == viewer]


def review(repo: Repo, pr: Pull, review_id: int, viewer: str) -> Review:
    found = repo.reviews.get(review_id)
    if found is None or found.pull_number != pr.number or (found.state == "PENDING" and found.user != viewer):
        raise not_found()
    return found


def review_comments_of(repo: Repo, pr: Pull, viewer: str) -> list[ReviewComment]:
    visible = {r.id for r in reviews_of(repo, pr, viewer)}
    return [c for c in repo.review_comments.values() if c.pull_number == pr.number and c.review_id in visible]


def review_comment(repo: Repo, comment_id: int, viewer: str) -> ReviewComment:
    found = repo.review_comments.get(comment_id)
    if found is None:
        raise not_found()
    owner_review = repo.reviews.get(found.review_id)
    if owner_review is not None and owner_review.state == "PENDING" and owner_review.user != viewer:
        raise not_found()
    return found
