"""What the fake GitHub remembers, and GitHub's rules for changing it (no HTTP here).

Every rule the bot must cope with lives in this module, each where the object it guards changes:
bodies over 65,536 characters refused on create, over 262,144 UTF-8 bytes silently kept on update;
labels created when added; a review whose inline comment is not on a line of the diff refused whole;
the author of a pull request unable to approve or request changes on it; roles checked per repository.
"""

from __future__ import annotations

import base64
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.github import gitrepo

CREATE_BODY_MAX_CHARS = 65_536
UPDATE_BODY_MAX_BYTES = 262_144
ROLES = ("none", "read", "triage", "write", "maintain", "admin")
# What `GET .../collaborators/{u}/permission` answers in `permission` for each role (role_name is the role).
LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
BOT_LOGIN = "github-actions[bot]"
BOT_ID = 41898282  # the real id of github-actions[bot]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class ApiError(Exception):
    """A GitHub error answer: status, message and optional `errors` list, shaped as GitHub's."""

    def __init__(self, status: int, message: str, errors: list | None = None, doc: str = ""):
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.doc = doc or "https://docs.github.com/rest"

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": self.message, "documentation_url": self.doc, "status": str(self.status)}
        if self.errors is not None:
            out["errors"] = self.errors
        return out


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def unprocessable(*errors: Any, message: str = "Unprocessable Entity") -> ApiError:
    return ApiError(422, message, list(errors))


def node_id(kind: str, number: int) -> str:
    """GitHub's legacy global node id: base64 of "<len>:<Type><id>" (e.g. MDU6SXNzdWUx for Issue 1)."""
    return base64.b64encode(f"{len(kind):02d}:{kind}{number}".encode()).decode()


def parse_node_id(value: str) -> tuple[str, int] | None:
    try:
        text = base64.b64decode(value.encode(), validate=True).decode()
        size, rest = text.split(":", 1)
        kind, number = rest[: int(size)], rest[int(size) :]
        return kind, int(number)
    except (ValueError, UnicodeDecodeError):
        return None


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # User | Bot | Organization
    role: str = "read"  # default role on every repository unless set per repository

    @property
    def node_id(self) -> str:
        return node_id("Bot" if self.type == "Bot" else "User", self.id)


@dataclass
class Label:
    id: int
    name: str
    color: str = "ededed"
    description: str | None = None
    default: bool = False


@dataclass
class IssueEvent:
    id: int
    event: str  # labeled | unlabeled | closed | reopened | renamed | ready_for_review
    actor: str
    created_at: datetime
    label: str | None = None
    color: str | None = None


@dataclass
class Issue:
    number: int
    id: int
    title: str
    body: str | None
    user: str
    created_at: datetime
    updated_at: datetime
    labels: list[str] = field(default_factory=list)
    state: str = "open"
    state_reason: str | None = None
    closed_at: datetime | None = None
    closed_by: str | None = None
    locked: bool = False
    is_pull: bool = False
    events: list[IssueEvent] = field(default_factory=list)


@dataclass
class Comment:
    id: int
    issue_number: int
    user: str
    body: str
    created_at: datetime
    updated_at: datetime
    editor: str | None = None  # who changed the body last (GraphQL's `IssueComment.editor`); None: never edited
    last_edited_at: datetime | None = None


@dataclass
class Pull:
    number: int
    id: int
    head: str
    base: str
    draft: bool
    maintainer_can_modify: bool = False


@dataclass
class Review:
    id: int
    pull_number: int
    user: str
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | PENDING
    commit_id: str
    submitted_at: datetime | None


@dataclass
class ReviewComment:
    id: int
    review_id: int
    pull_number: int
    user: str
    body: str
    path: str
    line: int
    side: str
    start_line: int | None
    start_side: str | None
    position: int
    diff_hunk: str
    commit_id: str
    created_at: datetime
    updated_at: datetime


@dataclass
class Dispatch:
    repo: str
    workflow: str  # the workflow file's path
    ref: str
    inputs: dict[str, Any]
    actor: str
    at: datetime
    run_id: int = 0  # the workflow run the dispatch started (what `return_run_details` names)
    status: str = "queued"  # queued -> completed (the test finishes it, or a cancel does)
    conclusion: str | None = None  # once completed: success, failure or cancelled
    title: str = ""  # the run's display_title: the workflow's run-name with the inputs, else its name


@dataclass
class Repo:
    full_name: str
    id: int
    git_dir: Path
    default_branch: str
    private: bool
    created_at: datetime
    labels: dict[str, Label] = field(default_factory=dict)  # lower-cased name -> label
    issues: dict[int, Issue] = field(default_factory=dict)
    pulls: dict[int, Pull] = field(default_factory=dict)
    comments: dict[int, Comment] = field(default_factory=dict)
    reviews: dict[int, Review] = field(default_factory=dict)
    review_comments: dict[int, ReviewComment] = field(default_factory=dict)
    dispatches: list[Dispatch] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)
    workflow_ids: dict[str, int] = field(default_factory=dict)  # workflow file path -> id
    workflow_states: dict[str, str] = field(default_factory=dict)  # workflow file path -> state (default active)
    next_number: int = 1

    @property
    def owner(self) -> str:
        return self.full_name.split("/")[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/")[1]


class State:
    """All repositories, users and tokens of one fake GitHub; callers hold `lock` around changes."""

    def __init__(self, root: Path):
        self.root = root
        self.lock = threading.RLock()
        self.users: dict[str, User] = {}
        self.tokens: dict[str, str] = {}
        self.repos: dict[str, Repo] = {}
        self._ids = itertools.count(1001)
        self._ticks = itertools.count(0)
        # Called as listener(event, action, repo, number, actor, extra) after each change GitHub would
        # deliver as a webhook (the FakeGitHub turns them into deliveries).
        self.listeners: list[Callable[..., None]] = []
        # False plays an older GitHub Enterprise Server: a dispatch answers 204 even when asked for run details.
        self.dispatch_run_details = True
        self.add_user(BOT_LOGIN, role="write", type="Bot", user_id=BOT_ID)

    def emit(self, event: str, action: str | None, repo: Repo, number: int | None, actor: str, **extra: Any) -> None:
        for listener in self.listeners:
            listener(event, action, repo, number, actor, extra)

    # --- identities -----------------------------------------------------------------------------
    def next_id(self) -> int:
        return next(self._ids)

    def now(self) -> datetime:
        """A deterministic clock: each change happens one second after the previous one."""
        return EPOCH + timedelta(seconds=next(self._ticks))

    def add_user(self, login: str, *, role: str = "read", type: str = "User", user_id: int | None = None) -> User:
        if role not in ROLES:
            raise ValueError(f"role {role!r} is not one of {ROLES}")
        if type not in ("User", "Bot", "Organization"):
            raise ValueError(f"user type {type!r} is not User, Bot or Organization")
        user = self.users.get(login)
        if user is None:
            user = User(login, user_id or self.next_id(), type, role)
            self.users[login] = user
        else:
            user.type, user.role = type, role
        return user

    def token_for(self, login: str) -> str:
        if login not in self.users:
            raise KeyError(f"no user {login!r}: add_user it first")
        prefix = "ghs" if self.users[login].type == "Bot" else "ghp"
        token = f"{prefix}_fake{self.users[login].id}"
        self.tokens[token] = login
        return token

    def role(self, repo: Repo, login: str) -> str:
        if login in repo.roles:
            return repo.roles[login]
        if login == repo.owner and self.users.get(login, User(login, 0)).type == "User":
            return "admin"
        user = self.users.get(login)
        return user.role if user else "none"

    def require(self, repo: Repo, login: str, needed: str) -> None:
        """GitHub's answer when `login` lacks `needed` on `repo` (private repositories hide themselves)."""
        role = self.role(repo, login)
        if repo.private and role == "none":
            raise not_found()
        effective = role if repo.private or ROLES.index(role) >= ROLES.index("read") else "read"
        if ROLES.index(effective) < ROLES.index(needed):
            kind = "integration" if self.users[login].type == "Bot" else "personal access token"
            raise ApiError(403, f"Resource not accessible by {kind}")

    # --- repositories ---------------------------------------------------------------------------
    def add_repo(self, full_name: str, *, seed_dir: Path | None, default_branch: str, private: bool) -> Repo:
        owner, _, name = full_name.partition("/")
        if not owner or not name or "/" in name:
            raise ValueError(f"repository name {full_name!r} is not OWNER/NAME")
        if full_name in self.repos:
            raise ValueError(f"repository {full_name} exists already")
        if owner not in self.users:
            self.add_user(owner, role="none", type="Organization")
        git_dir = self.root / "git" / owner / f"{name}.git"
        gitrepo.init_bare(git_dir, default_branch)
        if seed_dir is not None:
            gitrepo.commit_tree_from_dir(git_dir, Path(seed_dir), default_branch, f"Seed {full_name}")
        else:
            gitrepo.commit_files(git_dir, default_branch, {"README.md": f"# {name}\n"}, "Initial commit")
        repo = Repo(full_name, self.next_id(), git_dir, default_branch, private, self.now())
        self.repos[full_name] = repo
        return repo

    def repo(self, owner: str, name: str) -> Repo:
        repo = self.repos.get(f"{owner}/{name}")
        if repo is None:
            # GitHub matches owner and name case-insensitively.
            wanted = f"{owner}/{name}".lower()
            repo = next((r for key, r in self.repos.items() if key.lower() == wanted), None)
        if repo is None:
            raise not_found()
        return repo

    # --- bodies ---------------------------------------------------------------------------------
    @staticmethod
    def check_create_body(body: str | None, resource: str) -> None:
        if body is not None and len(body) > CREATE_BODY_MAX_CHARS:
            raise unprocessable(
                {
                    "resource": resource,
                    "code": "custom",
                    "field": "body",
                    "message": f"Body is too long (maximum is {CREATE_BODY_MAX_CHARS} characters)",
                },
                message="Validation Failed",
            )

    @staticmethod
    def body_update_kept(body: str | None) -> bool:
        """GitHub's observed behaviour: an over-limit body update answers 200 and keeps the old body."""
        return body is not None and len(body.encode("utf-8")) > UPDATE_BODY_MAX_BYTES

    # --- labels ---------------------------------------------------------------------------------
    def label(self, repo: Repo, name: str, *, create: bool = False) -> Label:
        found = repo.labels.get(name.lower())
        if found is None:
            if not create:
                raise not_found()
            found = Label(self.next_id(), name)
            repo.labels[name.lower()] = found
        return found

    def create_label(self, repo: Repo, name: str, color: str | None, description: str | None) -> Label:
        if name.lower() in repo.labels:
            raise unprocessable(
                {"resource": "Label", "code": "already_exists", "field": "name"}, message="Validation Failed"
            )
        label = Label(self.next_id(), name, (color or "ededed").lstrip("#").lower(), description)
        repo.labels[name.lower()] = label
        return label

    def add_labels(self, repo: Repo, issue: Issue, names: list[str], actor: str, *, emit: bool = True) -> list[str]:
        added = []
        for name in names:
            label = self.label(repo, name, create=True)
            if label.name not in issue.labels:
                issue.labels.append(label.name)
                added.append(label.name)
                self.event(issue, "labeled", actor, label)
        issue.updated_at = self.now()
        if emit and not issue.is_pull:
            for name in added:
                self.emit("issues", "labeled", repo, issue.number, actor, label=name)
        return added

    def remove_label(self, repo: Repo, issue: Issue, name: str, actor: str) -> None:
        label = repo.labels.get(name.lower())
        if label is None or label.name not in issue.labels:
            raise ApiError(404, "Label does not exist")
        issue.labels.remove(label.name)
        self.event(issue, "unlabeled", actor, label)
        issue.updated_at = self.now()

    def set_labels(self, repo: Repo, issue: Issue, names: list[str], actor: str) -> None:
        wanted = [self.label(repo, name, create=True).name for name in names]
        for name in list(issue.labels):
            if name not in wanted:
                self.remove_label(repo, issue, name, actor)
        self.add_labels(repo, issue, wanted, actor)

    def event(self, issue: Issue, kind: str, actor: str, label: Label | None = None) -> None:
        issue.events.append(
            IssueEvent(
                self.next_id(),
                kind,
                actor,
                self.now(),
                label.name if label else None,
                label.color if label else None,
            )
        )

    # --- issues and comments --------------------------------------------------------------------
    def issue(self, repo: Repo, number: int) -> Issue:
        issue = repo.issues.get(number)
        if issue is None:
            raise not_found()
        return issue

    def create_issue(self, repo: Repo, actor: str, title: str, body: str | None, labels: list[str]) -> Issue:
        self.check_create_body(body, "Issue")
        if not title.strip():
            raise unprocessable(
                {"resource": "Issue", "code": "missing_field", "field": "title"}, message="Validation Failed"
            )
        now = self.now()
        issue = Issue(repo.next_number, self.next_id(), title, body, actor, now, now)
        repo.issues[issue.number] = issue
        repo.next_number += 1
        added = self.add_labels(repo, issue, labels, actor, emit=False) if labels else []
        self.emit("issues", "opened", repo, issue.number, actor)
        for name in added:
            self.emit("issues", "labeled", repo, issue.number, actor, label=name)
        return issue

    def update_issue(self, repo: Repo, issue: Issue, actor: str, changes: dict[str, Any]) -> None:
        edited: dict[str, Any] = {}
        if "title" in changes and changes["title"] is not None and changes["title"] != issue.title:
            edited["title"] = {"from": issue.title}
            issue.title = str(changes["title"])
            self.event(issue, "renamed", actor)
        if "body" in changes and not self.body_update_kept(changes["body"]) and changes["body"] != issue.body:
            edited["body"] = {"from": issue.body or ""}
            issue.body = changes["body"]
        if edited and not issue.is_pull:
            self.emit("issues", "edited", repo, issue.number, actor, changes=edited)
        if changes.get("state") in ("open", "closed") and changes["state"] != issue.state:
            issue.state = changes["state"]
            if issue.state == "closed":
                issue.closed_at, issue.closed_by = self.now(), actor
                issue.state_reason = changes.get("state_reason") or "completed"
                self.event(issue, "closed", actor)
            else:
                issue.closed_at = issue.closed_by = None
                issue.state_reason = "reopened"
                self.event(issue, "reopened", actor)
            if not issue.is_pull:
                self.emit("issues", issue.state if issue.state == "closed" else "reopened", repo, issue.number, actor)
        if "labels" in changes and changes["labels"] is not None:
            names = [x if isinstance(x, str) else x.get("name", "") for x in changes["labels"]]
            self.set_labels(repo, issue, names, actor)
        issue.updated_at = self.now()

    def create_comment(self, repo: Repo, issue: Issue, actor: str, body: str) -> Comment:
        self.check_create_body(body, "IssueComment")
        now = self.now()
        comment = Comment(self.next_id(), issue.number, actor, body, now, now)
        repo.comments[comment.id] = comment
        issue.updated_at = now
        self.emit("issue_comment", "created", repo, issue.number, actor, comment_id=comment.id)
        return comment

    def comment(self, repo: Repo, comment_id: int) -> Comment:
        comment = repo.comments.get(comment_id)
        if comment is None:
            raise not_found()
        return comment

    def update_comment(self, comment: Comment, body: str, actor: str) -> None:
        """Who saved the body is kept (GraphQL serves it as `editor`); an update GitHub silently kept the old
        body for leaves the last editor as it was."""
        comment.updated_at = self.now()
        if not self.body_update_kept(body):
            comment.body = body
            comment.editor, comment.last_edited_at = actor, comment.updated_at

    def may_edit(self, repo: Repo, author: str, actor: str) -> None:
        """Authors edit their own text; others need write (GitHub's rule for comments and bodies)."""
        if actor != author:
            self.require(repo, actor, "write")
