"""The fake's REST endpoints: one handler per GitHub operationId, over `state`, `pulls` and `actions`.

Handlers receive a request that already passed the contract check (tests.github.contract) and answer with
GitHub's statuses and JSON. A query filter GitHub has but the fake does not model is reported as a violation
("not modelled") rather than silently ignored, so a test never passes on a filter that did nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.github import actions, gitrepo, pulls
from tests.github.render import Renderer, stamp
from tests.github.state import ApiError, Repo, State, not_found

MAX_PER_PAGE = 100


def _stamp(moment: Any) -> str:
    return stamp(moment) or ""


@dataclass
class Ctx:
    state: State
    render: Renderer
    actor: str
    params: dict[str, str]
    query: dict[str, list[str]]
    body: Any
    api_version: str | None
    path: str
    notes: list[str] = field(default_factory=list)  # "not modelled" reports, turned into violations

    def q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def repo(self, needed: str = "read") -> Repo:
        repo = self.state.repo(self.params["owner"], self.params["repo"])
        self.state.require(repo, self.actor, needed)
        return repo

    def number(self, name: str) -> int:
        return int(self.params[name])

    def data(self) -> dict[str, Any]:
        return self.body if isinstance(self.body, dict) else {}


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


HANDLERS: dict[str, Callable[[Ctx], Reply]] = {}
MODELLED_QUERY: dict[str, set[str]] = {}


def handles(operation_id: str, *query: str) -> Callable:
    def register(func: Callable[[Ctx], Reply]) -> Callable[[Ctx], Reply]:
        HANDLERS[operation_id] = func
        MODELLED_QUERY[operation_id] = {"per_page", "page", *query}
        return func

    return register


def paginate(ctx: Ctx, items: list[Any], wrap: Callable[[list[Any]], Any] | None = None) -> Reply:
    """One page of `items` with GitHub's `Link` header (first/prev/next/last, page-numbered)."""
    per_page = min(int(ctx.q("per_page", "30") or 30), MAX_PER_PAGE) or 30
    page = max(int(ctx.q("page", "1") or 1), 1)
    last = max((len(items) + per_page - 1) // per_page, 1)
    chunk = items[(page - 1) * per_page : page * per_page]

    def link(number: int) -> str:
        query = {k: v[-1] for k, v in ctx.query.items() if k != "page"}
        query["page"] = str(number)
        return f"{ctx.render.api}{ctx.path}?{urlencode(query)}"

    rels = []
    if page > 1:
        rels += [f'<{link(min(page - 1, last))}>; rel="prev"']
    if page < last:
        rels += [f'<{link(page + 1)}>; rel="next"', f'<{link(last)}>; rel="last"']
    if page > 1:
        rels += [f'<{link(1)}>; rel="first"']
    headers = {"Link": ", ".join(rels)} if rels else {}
    return Reply(200, wrap(chunk) if wrap else chunk, headers)


def descending(ctx: Ctx, default: str) -> bool:
    return (ctx.q("direction") or default) == "desc"


# --- repository and identity --------------------------------------------------------------------
@handles("repos/get")
def get_repo(ctx: Ctx) -> Reply:
    return Reply(200, ctx.render.repo(ctx.repo(), ctx.actor))


@handles("users/get-authenticated")
def get_authenticated(ctx: Ctx) -> Reply:
    user = ctx.state.users[ctx.actor]
    if user.type == "Bot":
        raise ApiError(403, "Resource not accessible by integration")
    profile = ctx.render.contract.example("private-user-response-with-public-and-private-profile-information")
    profile.update(ctx.render.user(ctx.actor))
    profile.update({"name": ctx.actor, "email": None, "company": None, "blog": "", "location": None, "bio": None})
    profile.update({"user_view_type": "private", "twitter_username": None})
    return Reply(200, profile)


@handles("repos/get-collaborator-permission-level")
def get_permission(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    username = ctx.params["username"]
    if username not in ctx.state.users or ctx.state.users[username].type == "Organization":
        raise ApiError(404, f"{username} is not a user")
    return Reply(200, ctx.render.permission(repo, username))


@handles("repos/get-content", "ref")
def get_content(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    ref = ctx.q("ref") or repo.default_branch
    entry = gitrepo.read_path(repo.git_dir, ref, ctx.params["path"])
    if entry is None:
        raise not_found()
    if entry.kind == "dir":
        return Reply(200, [ctx.render.content(repo, ref, child, with_data=False) for child in entry.children])
    return Reply(200, ctx.render.content(repo, ref, entry, with_data=True))


# --- issues -------------------------------------------------------------------------------------
@handles("issues/create")
def create_issue(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    data = ctx.data()
    for unmodelled in ("assignees", "milestone", "type", "assignee"):
        if data.get(unmodelled):
            ctx.notes.append(f"issues/create: the fake does not model {unmodelled!r}")
    labels = [x if isinstance(x, str) else x.get("name", "") for x in data.get("labels") or []]
    # GitHub silently drops the labels of a new issue unless the author has push access.
    if labels and ctx.state.role(repo, ctx.actor) not in ("write", "maintain", "admin"):
        labels = []
    issue = ctx.state.create_issue(repo, ctx.actor, str(data.get("title", "")), data.get("body"), labels)
    return Reply(201, ctx.render.issue(repo, issue))


@handles("issues/get")
def get_issue(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.issue(repo, ctx.state.issue(repo, ctx.number("issue_number"))))


@handles("issues/update")
def update_issue(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    data = ctx.data()
    if "title" in data or "body" in data:
        ctx.state.may_edit(repo, issue.user, ctx.actor)
    if "state" in data and ctx.actor != issue.user:
        ctx.state.require(repo, ctx.actor, "triage")
    if "labels" in data:
        ctx.state.require(repo, ctx.actor, "triage")
    for unmodelled in ("assignees", "milestone", "type", "assignee"):
        if data.get(unmodelled):
            ctx.notes.append(f"issues/update: the fake does not model {unmodelled!r}")
    ctx.state.update_issue(repo, issue, ctx.actor, data)
    return Reply(200, ctx.render.issue(repo, issue))


@handles("issues/list-for-repo", "state", "labels", "creator", "sort", "direction", "since")
def list_issues(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    for unmodelled in ("milestone", "assignee", "type", "mentioned", "issue_field_values"):
        if ctx.q(unmodelled):
            ctx.notes.append(f"issues/list-for-repo: the fake does not model the {unmodelled!r} filter")
    state = ctx.q("state", "open")
    wanted = {name.strip().lower() for name in (ctx.q("labels") or "").split(",") if name.strip()}
    creator = ctx.q("creator")
    since = ctx.q("since")
    items = [
        issue
        for issue in repo.issues.values()
        if (state == "all" or issue.state == state)
        and wanted <= {label.lower() for label in issue.labels}
        and (creator is None or issue.user.lower() == creator.lower())
        and (since is None or _stamp(issue.updated_at) >= since)
    ]
    sort = ctx.q("sort", "created")
    key = {
        "created": lambda i: (i.created_at, i.number),
        "updated": lambda i: (i.updated_at, i.number),
        "comments": lambda i: sum(1 for c in repo.comments.values() if c.issue_number == i.number),
    }[sort or "created"]
    items.sort(key=key, reverse=descending(ctx, "desc"))
    return paginate(ctx, [ctx.render.issue(repo, issue) for issue in items])


@handles("issues/list-comments", "since")
def list_comments(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    since = ctx.q("since")
    items = [
        c
        for c in sorted(repo.comments.values(), key=lambda c: c.id)
        if c.issue_number == issue.number and (since is None or _stamp(c.updated_at) >= since)
    ]
    return paginate(ctx, [ctx.render.comment(repo, c) for c in items])


@handles("issues/create-comment")
def create_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    comment = ctx.state.create_comment(repo, issue, ctx.actor, str(ctx.data().get("body", "")))
    return Reply(201, ctx.render.comment(repo, comment))


@handles("issues/get-comment")
def get_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.comment(repo, ctx.state.comment(repo, ctx.number("comment_id"))))


@handles("issues/update-comment")
def update_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    comment = ctx.state.comment(repo, ctx.number("comment_id"))
    ctx.state.may_edit(repo, comment.user, ctx.actor)
    ctx.state.update_comment(comment, str(ctx.data().get("body", "")), ctx.actor)
    return Reply(200, ctx.render.comment(repo, comment))


@handles("issues/delete-comment")
def delete_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    comment = ctx.state.comment(repo, ctx.number("comment_id"))
    ctx.state.may_edit(repo, comment.user, ctx.actor)
    del repo.comments[comment.id]
    return Reply(204)


@handles("issues/list-events")
def list_events(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    # Only the events GitHub's description can describe unambiguously are listed.
    events = [e for e in issue.events if e.event in ("labeled", "unlabeled")]
    return paginate(ctx, [ctx.render.event(repo, issue, e) for e in events])


# --- labels -------------------------------------------------------------------------------------
@handles("issues/list-labels-for-repo")
def list_repo_labels(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return paginate(ctx, [ctx.render.label(repo, label) for label in repo.labels.values()])


@handles("issues/create-label")
def create_label(ctx: Ctx) -> Reply:
    repo = ctx.repo("write")
    data = ctx.data()
    label = ctx.state.create_label(repo, str(data.get("name", "")), data.get("color"), data.get("description"))
    return Reply(201, ctx.render.label(repo, label))


@handles("issues/get-label")
def get_label(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.label(repo, ctx.state.label(repo, ctx.params["name"])))


def _issue_labels(ctx: Ctx, repo: Repo, number: int) -> list[dict[str, Any]]:
    issue = ctx.state.issue(repo, number)
    return [ctx.render.label(repo, ctx.state.label(repo, name)) for name in issue.labels]


def _label_names(body: Any) -> list[str]:
    labels = body.get("labels", []) if isinstance(body, dict) else []
    return [x if isinstance(x, str) else x.get("name", "") for x in labels]


@handles("issues/list-labels-on-issue")
def list_issue_labels(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return paginate(ctx, _issue_labels(ctx, repo, ctx.number("issue_number")))


@handles("issues/add-labels")
def add_labels(ctx: Ctx) -> Reply:
    repo = ctx.repo("triage")
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    ctx.state.add_labels(repo, issue, _label_names(ctx.body), ctx.actor)
    return Reply(200, _issue_labels(ctx, repo, issue.number))


@handles("issues/set-labels")
def set_labels(ctx: Ctx) -> Reply:
    repo = ctx.repo("triage")
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    ctx.state.set_labels(repo, issue, _label_names(ctx.body), ctx.actor)
    return Reply(200, _issue_labels(ctx, repo, issue.number))


@handles("issues/remove-label")
def remove_label(ctx: Ctx) -> Reply:
    repo = ctx.repo("triage")
    issue = ctx.state.issue(repo, ctx.number("issue_number"))
    ctx.state.remove_label(repo, issue, ctx.params["name"], ctx.actor)
    return Reply(200, _issue_labels(ctx, repo, issue.number))


# --- pull requests ------------------------------------------------------------------------------
@handles("pulls/create")
def create_pull(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, pr = pulls.create_pull(ctx.state, repo, ctx.actor, ctx.data())
    return Reply(201, ctx.render.pull(repo, issue, pr, ctx.actor))


@handles("pulls/list", "state", "head", "base", "sort", "direction")
def list_pulls(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    state, base, head = ctx.q("state", "open"), ctx.q("base"), ctx.q("head")
    head_branch = None
    if head is not None:
        owner, _, head_branch = head.rpartition(":")
        if owner and owner.lower() != repo.owner.lower():
            head_branch = "\0"  # another owner's branch: no pull request of this repository matches
    items = [
        (repo.issues[n], pr)
        for n, pr in repo.pulls.items()
        if (state == "all" or repo.issues[n].state == state)
        and (base is None or pr.base == base)
        and (head_branch is None or pr.head == head_branch)
    ]
    sort = ctx.q("sort", "created")
    if sort in ("popularity", "long-running"):
        ctx.notes.append(f"pulls/list: the fake does not model sort={sort}")
    field_name = "updated_at" if sort == "updated" else "created_at"
    items.sort(key=lambda pair: (getattr(pair[0], field_name), pair[0].number), reverse=descending(ctx, "desc"))
    return paginate(ctx, [ctx.render.pull(repo, issue, pr, ctx.actor, simple=True) for issue, pr in items])


@handles("pulls/get")
def get_pull(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, pr = pulls.pull(repo, ctx.number("pull_number"))
    return Reply(200, ctx.render.pull(repo, issue, pr, ctx.actor))


@handles("pulls/update")
def update_pull(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, pr = pulls.pull(repo, ctx.number("pull_number"))
    ctx.state.may_edit(repo, issue.user, ctx.actor)
    pulls.update_pull(ctx.state, repo, issue, pr, ctx.actor, ctx.data())
    return Reply(200, ctx.render.pull(repo, issue, pr, ctx.actor))


@handles("pulls/list-files")
def list_files(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, pr = pulls.pull(repo, ctx.number("pull_number"))
    head = pulls.head_sha(repo, pr)
    return paginate(ctx, [ctx.render.diff_entry(repo, head, diff) for diff in pulls.files(repo, pr)])


@handles("pulls/create-review")
def create_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    issue, pr = pulls.pull(repo, ctx.number("pull_number"))
    review, _ = pulls.create_review(ctx.state, repo, issue, pr, ctx.actor, ctx.data())
    return Reply(200, ctx.render.review(repo, review))


@handles("pulls/list-reviews")
def list_reviews(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, pr = pulls.pull(repo, ctx.number("pull_number"))
    return paginate(ctx, [ctx.render.review(repo, r) for r in pulls.reviews_of(repo, pr, ctx.actor)])


@handles("pulls/get-review")
def get_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, pr = pulls.pull(repo, ctx.number("pull_number"))
    return Reply(200, ctx.render.review(repo, pulls.review(repo, pr, ctx.number("review_id"), ctx.actor)))


@handles("pulls/update-review")
def update_review(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, pr = pulls.pull(repo, ctx.number("pull_number"))
    review = pulls.review(repo, pr, ctx.number("review_id"), ctx.actor)
    if review.user != ctx.actor:
        raise ApiError(403, "You can only update your own reviews")
    body = str(ctx.data().get("body", ""))
    if not ctx.state.body_update_kept(body):
        review.body = body
    return Reply(200, ctx.render.review(repo, review))


@handles("pulls/list-review-comments", "sort", "direction", "since")
def list_review_comments(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    _, pr = pulls.pull(repo, ctx.number("pull_number"))
    since = ctx.q("since")
    items = [c for c in pulls.review_comments_of(repo, pr, ctx.actor) if since is None or _stamp(c.updated_at) >= since]
    key = (lambda c: (c.updated_at, c.id)) if ctx.q("sort") == "updated" else (lambda c: (c.created_at, c.id))
    items.sort(key=key, reverse=descending(ctx, "asc"))
    return paginate(ctx, [ctx.render.review_comment(repo, c) for c in items])


@handles("pulls/get-review-comment")
def get_review_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.review_comment(repo, pulls.review_comment(repo, ctx.number("comment_id"), ctx.actor)))


@handles("pulls/update-review-comment")
def update_review_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    item = pulls.review_comment(repo, ctx.number("comment_id"), ctx.actor)
    ctx.state.may_edit(repo, item.user, ctx.actor)
    body = str(ctx.data().get("body", ""))
    if not ctx.state.body_update_kept(body):
        item.body = body
    item.updated_at = ctx.state.now()
    return Reply(200, ctx.render.review_comment(repo, item))


@handles("pulls/delete-review-comment")
def delete_review_comment(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    item = pulls.review_comment(repo, ctx.number("comment_id"), ctx.actor)
    ctx.state.may_edit(repo, item.user, ctx.actor)
    del repo.review_comments[item.id]
    return Reply(204)


# --- actions ------------------------------------------------------------------------------------
@handles("actions/list-repo-workflows")
def list_workflows(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    items = [ctx.render.workflow(repo, *found) for found in actions.workflows(ctx.state, repo)]
    return paginate(ctx, items, wrap=lambda chunk: {"total_count": len(items), "workflows": chunk})


@handles("actions/get-workflow")
def get_workflow(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.workflow(repo, *actions.find(ctx.state, repo, ctx.params["workflow_id"])))


@handles("actions/create-workflow-dispatch")
def create_dispatch(ctx: Ctx) -> Reply:
    repo = ctx.repo("write")
    data = ctx.data()
    record = actions.dispatch(ctx.state, repo, ctx.actor, ctx.params["workflow_id"], data)
    modern = (ctx.api_version or "2022-11-28") >= "2026-03-10"
    if modern or (data.get("return_run_details") and ctx.state.dispatch_run_details):
        run = f"{ctx.render.api}/repos/{repo.full_name}/actions/runs/{record.run_id}"
        return Reply(
            200,
            {
                "workflow_run_id": record.run_id,
                "run_url": run,
                "html_url": f"{ctx.render.web}/{repo.full_name}/actions/runs/{record.run_id}",
            },
        )
    return Reply(204)


@handles("actions/get-workflow-run")
def get_run(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    return Reply(200, ctx.render.workflow_run(repo, actions.run(repo, ctx.number("run_id"))))


@handles("actions/list-workflow-runs", "event")
def list_runs(ctx: Ctx) -> Reply:
    repo = ctx.repo()
    event = ctx.q("event")
    records = [
        r
        for r in actions.runs_of(ctx.state, repo, ctx.params["workflow_id"])
        if event in (None, "", "workflow_dispatch")
    ]
    items = [ctx.render.workflow_run(repo, record) for record in records]
    return paginate(ctx, items, wrap=lambda chunk: {"total_count": len(items), "workflow_runs": chunk})


@handles("actions/cancel-workflow-run")
def cancel_run(ctx: Ctx) -> Reply:
    repo = ctx.repo("write")
    actions.cancel(repo, ctx.number("run_id"))
    return Reply(202, {})
