"""GitHub-shaped JSON for the fake's objects (every answer is validated against GitHub's response schemas).

The repository object starts from GitHub's own documented example and has its identity and URLs replaced;
the others are built field by field after GitHub's documented responses. URLs point at the fake: the API at
``api`` (GitHub's api.github.com) and web pages and git at ``web`` (GitHub's github.com).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from tests.github import gitrepo
from tests.github.contract import Contract
from tests.github.state import (
    Comment,
    Dispatch,
    Issue,
    IssueEvent,
    Label,
    Pull,
    Repo,
    Review,
    ReviewComment,
    State,
    User,
    node_id,
)


def stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def reactions(url: str) -> dict[str, Any]:
    keys = ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")
    return {"url": url, "total_count": 0, **dict.fromkeys(keys, 0)}


@dataclass
class Renderer:
    api: str
    web: str
    state: State
    contract: Contract

    # --- people and repositories ----------------------------------------------------------------
    def user(self, login: str) -> dict[str, Any]:
        user = self.state.users.get(login) or User(login, 0, "User", "none")
        api_user = f"{self.api}/users/{quote(login)}"
        html = f"{self.web}/apps/{login.removesuffix('[bot]')}" if user.type == "Bot" else f"{self.web}/{login}"
        return {
            "login": login,
            "id": user.id,
            "node_id": user.node_id,
            "avatar_url": f"{self.web}/avatars/u/{user.id}?v=4",
            "gravatar_id": "",
            "url": api_user,
            "html_url": html,
            "followers_url": f"{api_user}/followers",
            "following_url": f"{api_user}/following{{/other_user}}",
            "gists_url": f"{api_user}/gists{{/gist_id}}",
            "starred_url": f"{api_user}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api_user}/subscriptions",
            "organizations_url": f"{api_user}/orgs",
            "repos_url": f"{api_user}/repos",
            "events_url": f"{api_user}/events{{/privacy}}",
            "received_events_url": f"{api_user}/received_events",
            "type": user.type,
            "site_admin": False,
            "user_view_type": "public",
        }

    def association(self, repo: Repo, login: str) -> str:
        if login == repo.owner:
            return "OWNER"
        user = self.state.users.get(login)
        if user is None or user.type == "Bot":
            return "NONE"
        role = self.state.role(repo, login)
        return "COLLABORATOR" if role in ("triage", "write", "maintain", "admin") else "NONE"

    def repo(self, repo: Repo, viewer: str) -> dict[str, Any]:
        example = self.contract.example("full-repository-default-response")
        full, api_repo = repo.full_name, f"{self.api}/repos/{repo.full_name}"
        host = self.web.split("://", 1)[1]
        replacements = [
            ("https://api.github.com/repos/octocat/Hello-World", api_repo),
            ("https://github.com/octocat/Hello-World", f"{self.web}/{full}"),
            ("git:github.com/octocat/Hello-World", f"git://{host}/{full}"),
            ("git@github.com:octocat/Hello-World", f"git@{host}:{full}"),
            ("https://svn.github.com/octocat/Hello-World", f"{self.web}/{full}"),
            ("https://api.github.com", self.api),
            ("https://github.com", self.web),
        ]

        def rewrite(node: Any) -> Any:
            if isinstance(node, dict):
                return {key: rewrite(value) for key, value in node.items()}
            if isinstance(node, list):
                return [rewrite(value) for value in node]
            if isinstance(node, str):
                for old, new in replacements:
                    if node.startswith(old):
                        return new + node[len(old) :]
            return node

        out = rewrite(example)
        for key in ("template_repository", "parent", "source", "organization", "security_and_analysis"):
            out.pop(key, None)
        role = self.state.role(repo, viewer)
        order = ("none", "read", "triage", "write", "maintain", "admin")
        level = order.index(role if repo.private or role != "none" else "read")
        owner = self.user(repo.owner)
        open_count = sum(1 for i in repo.issues.values() if i.state == "open")
        out.update(
            {
                "id": repo.id,
                "node_id": node_id("Repository", repo.id),
                "name": repo.name,
                "full_name": full,
                "owner": owner,
                "private": repo.private,
                "visibility": "private" if repo.private else "public",
                "description": None,
                "fork": False,
                "homepage": None,
                "language": None,
                "license": None,
                "topics": [],
                "default_branch": repo.default_branch,
                "clone_url": f"{self.web}/{full}.git",
                "forks_count": 0,
                "forks": 0,
                "stargazers_count": 0,
                "watchers_count": 0,
                "watchers": 0,
                "subscribers_count": 0,
                "network_count": 0,
                "size": 0,
                "open_issues_count": open_count,
                "open_issues": open_count,
                "has_issues": True,
                "archived": False,
                "disabled": False,
                "pushed_at": stamp(repo.created_at),
                "created_at": stamp(repo.created_at),
                "updated_at": stamp(repo.created_at),
                "permissions": {
                    "admin": level >= 5,
                    "maintain": level >= 4,
                    "push": level >= 3,
                    "triage": level >= 2,
                    "pull": level >= 1,
                },
            }
        )
        if self.state.users[repo.owner].type == "Organization":
            out["organization"] = owner
        return out

    # --- issues, comments, labels ---------------------------------------------------------------
    def label(self, repo: Repo, label: Label) -> dict[str, Any]:
        return {
            "id": label.id,
            "node_id": node_id("Label", label.id),
            "url": f"{self.api}/repos/{repo.full_name}/labels/{quote(label.name)}",
            "name": label.name,
            "description": label.description,
            "color": label.color,
            "default": label.default,
            # Newer than the pinned description, required by githubkit's models (GitHub sends them).
            "archived_at": None,
            "archived_by": None,
        }

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        api_issue = f"{self.api}/repos/{repo.full_name}/issues/{issue.number}"
        kind = "pull" if issue.is_pull else "issues"
        comments = sum(1 for c in repo.comments.values() if c.issue_number == issue.number)
        out: dict[str, Any] = {
            "id": issue.id,
            "node_id": node_id("Issue", issue.id),
            "url": api_issue,
            "repository_url": f"{self.api}/repos/{repo.full_name}",
            "labels_url": f"{api_issue}/labels{{/name}}",
            "comments_url": f"{api_issue}/comments",
            "events_url": f"{api_issue}/events",
            "html_url": f"{self.web}/{repo.full_name}/{kind}/{issue.number}",
            "number": issue.number,
            "state": issue.state,
            "state_reason": issue.state_reason,
            "title": issue.title,
            "body": issue.body,
            "user": self.user(issue.user),
            "labels": [self.label(repo, self.state.label(repo, name)) for name in issue.labels],
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "locked": issue.locked,
            "active_lock_reason": None,
            "comments": comments,
            "created_at": stamp(issue.created_at),
            "updated_at": stamp(issue.updated_at),
            "closed_at": stamp(issue.closed_at),
            "closed_by": self.user(issue.closed_by) if issue.closed_by else None,
            "author_association": self.association(repo, issue.user),
            "reactions": reactions(f"{api_issue}/reactions"),
            "timeline_url": f"{api_issue}/timeline",
            "performed_via_github_app": None,
        }
        if issue.is_pull:
            pull_url = f"{self.web}/{repo.full_name}/pull/{issue.number}"
            out["pull_request"] = {
                "url": f"{self.api}/repos/{repo.full_name}/pulls/{issue.number}",
                "html_url": pull_url,
                "diff_url": f"{pull_url}.diff",
                "patch_url": f"{pull_url}.patch",
                "merged_at": None,
            }
            out["draft"] = repo.pulls[issue.number].draft
        return out

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        issue = repo.issues[comment.issue_number]
        kind = "pull" if issue.is_pull else "issues"
        api_comment = f"{self.api}/repos/{repo.full_name}/issues/comments/{comment.id}"
        return {
            "id": comment.id,
            "node_id": node_id("IssueComment", comment.id),
            "url": api_comment,
            "html_url": f"{self.web}/{repo.full_name}/{kind}/{issue.number}#issuecomment-{comment.id}",
            "body": comment.body,
            "user": self.user(comment.user),
            "created_at": stamp(comment.created_at),
            "updated_at": stamp(comment.updated_at),
            "issue_url": f"{self.api}/repos/{repo.full_name}/issues/{issue.number}",
            "author_association": self.association(repo, comment.user),
            "performed_via_github_app": None,
            "reactions": reactions(f"{api_comment}/reactions"),
        }

    def event(self, repo: Repo, issue: Issue, event: IssueEvent) -> dict[str, Any]:
        out = {
            "id": event.id,
            "node_id": node_id("LabeledEvent" if event.event == "labeled" else "IssueEvent", event.id),
            "url": f"{self.api}/repos/{repo.full_name}/issues/events/{event.id}",
            "actor": self.user(event.actor),
            "event": event.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": stamp(event.created_at),
            "performed_via_github_app": None,
        }
        if event.label is not None:
            out["label"] = {"name": event.label, "color": event.color or "ededed"}
        return out

    def permission(self, repo: Repo, login: str) -> dict[str, Any]:
        from tests.github.state import LEGACY_PERMISSION, ROLES

        role = self.state.role(repo, login)
        level = ROLES.index(role)
        collaborator = self.user(login) | {
            "permissions": {
                "admin": level >= 5,
                "maintain": level >= 4,
                "push": level >= 3,
                "triage": level >= 2,
                "pull": level >= 1,
            },
            "role_name": role,
        }
        return {"permission": LEGACY_PERMISSION[role], "role_name": role, "user": collaborator}

    # --- pull requests and reviews --------------------------------------------------------------
    def pull(self, repo: Repo, issue: Issue, pr: Pull, viewer: str, *, simple: bool = False) -> dict[str, Any]:
        from tests.github import pulls

        api_repo = f"{self.api}/repos/{repo.full_name}"
        api_pull = f"{api_repo}/pulls/{pr.number}"
        html = f"{self.web}/{repo.full_name}/pull/{pr.number}"
        head, base = pulls.head_sha(repo, pr), pulls.base_sha(repo, pr)
        repo_json = self.repo(repo, viewer)
        base_issue = self.issue(repo, issue)
        links = {
            "self": api_pull,
            "html": html,
            "issue": f"{api_repo}/issues/{pr.number}",
            "comments": f"{api_repo}/issues/{pr.number}/comments",
            "review_comments": f"{api_pull}/comments",
            "review_comment": f"{api_repo}/pulls/comments{{/number}}",
            "commits": f"{api_pull}/commits",
            "statuses": f"{api_repo}/statuses/{head}",
        }
        out: dict[str, Any] = {
            "url": api_pull,
            "id": pr.id,
            "node_id": node_id("PullRequest", pr.id),
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "issue_url": links["issue"],
            "commits_url": links["commits"],
            "review_comments_url": links["review_comments"],
            "review_comment_url": links["review_comment"],
            "comments_url": links["comments"],
            "statuses_url": links["statuses"],
            "number": pr.number,
            "state": issue.state,
            "locked": issue.locked,
            "title": issue.title,
            "user": self.user(issue.user),
            "body": issue.body,
            "labels": base_issue["labels"],
            "milestone": None,
            "active_lock_reason": None,
            "created_at": base_issue["created_at"],
            "updated_at": base_issue["updated_at"],
            "closed_at": base_issue["closed_at"],
            "merged_at": None,
            "merge_commit_sha": None,
            "assignee": None,
            "assignees": [],
            "requested_reviewers": [],
            "requested_teams": [],
            "head": {"label": f"{repo.owner}:{pr.head}", "ref": pr.head, "sha": head, "user": repo_json["owner"]},
            "base": {"label": f"{repo.owner}:{pr.base}", "ref": pr.base, "sha": base, "user": repo_json["owner"]},
            "_links": {key: {"href": value} for key, value in links.items()},
            "author_association": self.association(repo, issue.user),
            "auto_merge": None,
            "draft": pr.draft,
        }
        out["head"]["repo"] = repo_json
        out["base"]["repo"] = repo_json
        if simple:
            return out
        diffs = pulls.files(repo, pr)
        out.update(
            {
                "merged": False,
                "mergeable": True,
                "rebaseable": True,
                "mergeable_state": "draft" if pr.draft else "clean",
                "merged_by": None,
                "comments": base_issue["comments"],
                "review_comments": sum(1 for c in repo.review_comments.values() if c.pull_number == pr.number),
                "maintainer_can_modify": pr.maintainer_can_modify,
                "commits": gitrepo.commit_count(
                    repo.git_dir, gitrepo.merge_base(repo.git_dir, base, head) or base, head
                )
                if head != gitrepo.ZERO_SHA
                else 0,
                "additions": sum(d.additions for d in diffs),
                "deletions": sum(d.deletions for d in diffs),
                "changed_files": len(diffs),
            }
        )
        return out

    def diff_entry(self, repo: Repo, head: str, diff: gitrepo.FileDiff) -> dict[str, Any]:
        out = {
            "sha": diff.sha,
            "filename": diff.filename,
            "status": diff.status,
            "additions": diff.additions,
            "deletions": diff.deletions,
            "changes": diff.additions + diff.deletions,
            "blob_url": f"{self.web}/{repo.full_name}/blob/{head}/{quote(diff.filename)}",
            "raw_url": f"{self.web}/{repo.full_name}/raw/{head}/{quote(diff.filename)}",
            "contents_url": f"{self.api}/repos/{repo.full_name}/contents/{quote(diff.filename)}?ref={head}",
        }
        if diff.patch is not None:
            out["patch"] = diff.patch
        if diff.previous_filename is not None:
            out["previous_filename"] = diff.previous_filename
        return out

    def review(self, repo: Repo, review: Review) -> dict[str, Any]:
        html = f"{self.web}/{repo.full_name}/pull/{review.pull_number}#pullrequestreview-{review.id}"
        api_pull = f"{self.api}/repos/{repo.full_name}/pulls/{review.pull_number}"
        out = {
            "id": review.id,
            "node_id": node_id("PullRequestReview", review.id),
            "user": self.user(review.user),
            "body": review.body,
            "state": review.state,
            "html_url": html,
            "pull_request_url": api_pull,
            "_links": {"html": {"href": html}, "pull_request": {"href": api_pull}},
            "commit_id": review.commit_id,
            "author_association": self.association(repo, review.user),
        }
        if review.submitted_at is not None:
            out["submitted_at"] = stamp(review.submitted_at)
        return out

    def review_comment(self, repo: Repo, item: ReviewComment) -> dict[str, Any]:
        api_url = f"{self.api}/repos/{repo.full_name}/pulls/comments/{item.id}"
        html = f"{self.web}/{repo.full_name}/pull/{item.pull_number}#discussion_r{item.id}"
        api_pull = f"{self.api}/repos/{repo.full_name}/pulls/{item.pull_number}"
        return {
            "url": api_url,
            "pull_request_review_id": item.review_id,
            "id": item.id,
            "node_id": node_id("PullRequestReviewComment", item.id),
            "diff_hunk": item.diff_hunk,
            "path": item.path,
            "position": item.position,
            "original_position": item.position,
            "commit_id": item.commit_id,
            "original_commit_id": item.commit_id,
            "user": self.user(item.user),
            "body": item.body,
            "created_at": stamp(item.created_at),
            "updated_at": stamp(item.updated_at),
            "html_url": html,
            "pull_request_url": api_pull,
            "author_association": self.association(repo, item.user),
            "_links": {"self": {"href": api_url}, "html": {"href": html}, "pull_request": {"href": api_pull}},
            "start_line": item.start_line,
            "original_start_line": item.start_line,
            "start_side": item.start_side,
            "line": item.line,
            "original_line": item.line,
            "side": item.side,
            "subject_type": "line",
            "reactions": reactions(f"{api_url}/reactions"),
        }

    # --- actions and contents -------------------------------------------------------------------
    def workflow(self, repo: Repo, workflow_id: int, path: str, name: str) -> dict[str, Any]:
        return {
            "id": workflow_id,
            "node_id": node_id("Workflow", workflow_id),
            "name": name,
            "path": path,
            "state": repo.workflow_states.get(path, "active"),
            "created_at": stamp(repo.created_at),
            "updated_at": stamp(repo.created_at),
            "url": f"{self.api}/repos/{repo.full_name}/actions/workflows/{workflow_id}",
            "html_url": f"{self.web}/{repo.full_name}/blob/{repo.default_branch}/{path}",
            "badge_url": f"{self.web}/{repo.full_name}/workflows/{quote(name)}/badge.svg",
        }

    def workflow_run(self, repo: Repo, record: Dispatch) -> dict[str, Any]:
        """A run the fake started (one per dispatch), from GitHub's documented example with its identity, the
        dispatch's ref and workflow, and its status and conclusion as the test or a cancel left them."""
        out = self.contract.example("workflow-run")
        api_run = f"{self.api}/repos/{repo.full_name}/actions/runs/{record.run_id}"
        workflow_id = repo.workflow_ids.get(record.workflow, 0)
        out.update(
            {
                "id": record.run_id,
                "node_id": node_id("WorkflowRun", record.run_id),
                "name": record.workflow.rsplit("/", 1)[-1],
                "display_title": record.title or record.workflow.rsplit("/", 1)[-1],
                "path": record.workflow,
                "head_branch": record.ref,
                "event": "workflow_dispatch",
                "status": record.status,
                "conclusion": record.conclusion,
                "workflow_id": workflow_id,
                "url": api_run,
                "html_url": f"{self.web}/{repo.full_name}/actions/runs/{record.run_id}",
                "created_at": stamp(record.at),
                "updated_at": stamp(record.at),
                "run_started_at": stamp(record.at),
                "actor": self.user(record.actor),
                "triggering_actor": self.user(record.actor),
                "jobs_url": f"{api_run}/jobs",
                "logs_url": f"{api_run}/logs",
                "artifacts_url": f"{api_run}/artifacts",
                "cancel_url": f"{api_run}/cancel",
                "rerun_url": f"{api_run}/rerun",
                "workflow_url": f"{self.api}/repos/{repo.full_name}/actions/workflows/{workflow_id}",
            }
        )
        return out

    def content(self, repo: Repo, ref: str, entry: gitrepo.Entry, *, with_data: bool) -> dict[str, Any]:
        api_url = f"{self.api}/repos/{repo.full_name}/contents/{quote(entry.path)}?ref={quote(ref)}"
        git_url = f"{self.api}/repos/{repo.full_name}/git/{'blobs' if entry.kind == 'file' else 'trees'}/{entry.sha}"
        html = f"{self.web}/{repo.full_name}/{'blob' if entry.kind == 'file' else 'tree'}/{ref}/{quote(entry.path)}"
        out: dict[str, Any] = {
            "type": entry.kind,
            "size": entry.size,
            "name": entry.path.rsplit("/", 1)[-1],
            "path": entry.path,
            "sha": entry.sha,
            "url": api_url,
            "git_url": git_url,
            "html_url": html,
            "download_url": f"{self.web}/{repo.full_name}/raw/{ref}/{quote(entry.path)}"
            if entry.kind == "file"
            else None,
            "_links": {"self": api_url, "git": git_url, "html": html},
        }
        if with_data:
            encoded = base64.b64encode(entry.data).decode()
            out["content"] = "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
            out["encoding"] = "base64"
        return out
