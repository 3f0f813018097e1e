"""What the GitHub client returns: plain frozen records, and their conversion from PyGithub objects and JSON.

Apart from ``client`` so that the records the handlers, the forge and the fakes share are readable
on their own, and the client keeps to calls and how it survives GitHub.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    login: str
    type: str
    url: str = ""
    updated_at: datetime | None = None  # by GitHub's clock: for the status comment, when the state was last saved
    created_at: datetime | None = None  # by GitHub's clock: when a person wrote it (a late-answered command's age)
    node_id: str = ""  # GraphQL's id: who edited it last is asked there (REST never says)


@dataclass(frozen=True)
class Editor:
    """Who changed a comment's body last, as GraphQL's ``IssueComment.editor`` says, spelt as REST spells logins
    (an app's ends in "[bot]"); ``updated_at`` is GraphQL's, to tell whether it is the version REST showed."""

    login: str
    updated_at: datetime | None = None


@dataclass(frozen=True)
class LabelEvent:
    """One time a label was added to or taken off an issue (the issue events API): by whom, when, which event."""

    id: int
    event: str  # labeled | unlabeled
    login: str
    type: str  # the actor's user type: User, Bot
    at: datetime | None
    label: str = ""  # the label's name


@dataclass(frozen=True)
class IssueInfo:
    number: int
    title: str
    body: str
    author: str
    labels: frozenset[str]
    state: str
    is_pull_request: bool = False
    updated_at: datetime | None = None  # by GitHub's clock: the last change to the issue (labels, comments, body)


@dataclass(frozen=True)
class PullInfo:
    number: int
    node_id: str
    url: str
    draft: bool
    title: str
    body: str
    head: str
    base: str
    state: str = "open"  # "closed" once a rejected promotion closed it


@dataclass(frozen=True)
class ReviewInfo:
    id: int
    body: str
    login: str
    commit: str = ""


@dataclass(frozen=True)
class ReviewCommentInfo:
    id: int
    body: str
    login: str
    path: str
    line: int | None
    node_id: str = ""


@dataclass(frozen=True)
class WorkflowRun:
    """The run a workflow dispatch started, as GitHub names it when asked (``return_run_details``)."""

    id: int
    html_url: str


def run_from_json(data: Any) -> WorkflowRun | None:
    """The run a dispatch answer names; None for 204 (GitHub before run details, or an older GHES)."""
    if not isinstance(data, dict) or not isinstance(data.get("workflow_run_id"), int):
        return None
    return WorkflowRun(data["workflow_run_id"], str(data.get("html_url") or ""))


@dataclass(frozen=True)
class RunProgress:
    """Where a workflow run is (``GET /actions/runs/{id}``): ``status`` queued, in_progress, completed, ...;
    ``conclusion`` once completed (success, failure, cancelled, ...), else None."""

    status: str
    conclusion: str | None

    @property
    def over(self) -> bool:
        return self.status == "completed"


def progress_from_json(data: Any) -> RunProgress:
    data = data if isinstance(data, dict) else {}
    conclusion = data.get("conclusion")
    return RunProgress(str(data.get("status") or ""), str(conclusion) if conclusion else None)


def comment_record(c) -> Comment:
    user = c.user
    return Comment(
        id=c.id,
        body=c.body or "",
        login=user.login if user else "",
        type=user.type if user else "",
        url=c.html_url or "",
        updated_at=c.updated_at,
        created_at=c.created_at,
        node_id=c.node_id or "",
    )


def comment_from_json(data: dict) -> Comment:
    user = data.get("user") or {}
    return Comment(
        id=int(data["id"]),
        body=data.get("body") or "",
        login=user.get("login", ""),
        type=user.get("type", ""),
        url=data.get("html_url") or "",
        updated_at=stamp(data.get("updated_at")),
        created_at=stamp(data.get("created_at")),
        node_id=str(data.get("node_id") or ""),
    )


def editor_from_json(data: Any) -> Editor | None:
    """The editor a ``node(id:) { ... on IssueComment { editor { __typename login } updatedAt } }`` answer names;
    None when the comment was never edited, a login of "" when an account since deleted edited it (GitHub keeps
    ``lastEditedAt`` and drops the editor). GraphQL spells an app's login without REST's "[bot]" suffix."""
    node = (data or {}).get("data", {}).get("node") if isinstance(data, dict) else None
    if not isinstance(node, dict):
        errors = data.get("errors") if isinstance(data, dict) else None
        raise ValueError(str(errors[0].get("message")) if errors else "no comment in the answer")
    editor = node.get("editor")
    if not isinstance(editor, dict):
        return Editor("", stamp(node.get("updatedAt"))) if node.get("lastEditedAt") else None
    login = str(editor.get("login") or "")
    if editor.get("__typename") == "Bot" and not login.endswith("[bot]"):
        login = f"{login}[bot]"
    return Editor(login, stamp(node.get("updatedAt")))


def stamp(value: Any) -> datetime | None:
    """A GitHub timestamp ("2026-01-01T00:00:00Z") as an aware datetime; None when absent or unreadable."""
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def issue_record(raw, *, listed: bool = False) -> IssueInfo:
    """``listed``: ``raw`` is an entry of a listing, which carries ``pull_request`` only for a pull request; reading
    the missing key would make PyGithub fetch each issue again (a call per open promotion), so the URL says it."""
    return IssueInfo(
        number=raw.number,
        title=raw.title or "",
        body=raw.body or "",
        author=raw.user.login if raw.user else "",
        labels=frozenset(label.name for label in raw.labels),
        state=raw.state or "open",
        is_pull_request="/pull/" in (raw.html_url or "") if listed else raw.pull_request is not None,
        updated_at=raw.updated_at,
    )


def label_event_record(e) -> LabelEvent:
    actor = e.actor
    return LabelEvent(
        e.id,
        e.event,
        actor.login if actor else "",
        (actor.type if actor else "") or "User",
        e.created_at,
        e.label.name if e.label else "",
    )


def pull_record(p) -> PullInfo:
    return PullInfo(
        number=p.number,
        node_id=p.node_id,
        url=p.html_url,
        draft=bool(p.draft),
        title=p.title or "",
        body=p.body or "",
        head=p.head.ref,
        base=p.base.ref,
        state=p.state or "open",
    )
