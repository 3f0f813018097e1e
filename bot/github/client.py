"""The one place that speaks GitHub's REST API (through PyGithub), and how it survives GitHub.

PyGithub's own retry is off: its default retries POSTs on 5xx, which is how
bots post the same comment twice. Instead every call goes through ``_call``:
rate limits (403/429 with ``retry-after`` or ``x-ratelimit-reset``) are waited
out, reads are retried on 5xx and dropped connections, and a write that fails
that way is first *recovered* (read back: did it land?) and only repeated if it
did not. Bot comments, reviews and issues carry hidden markers, so "did it
land" is always answerable, and every write is an upsert.

The methods are the narrow set the forge, the state store and the event
handlers need; each returns plain dataclasses, so fakes in tests stay small.
Workflow dispatch and runs (a write no marker can find again) are in
``bot.github.runs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bot.github import answers
from bot.github.errors import GitHubError
from bot.github.records import (
    Comment,
    Editor,
    IssueInfo,
    LabelEvent,
    PullInfo,
    ReviewCommentInfo,
    ReviewInfo,
    comment_from_json,
    comment_record,
    editor_from_json,
    issue_record,
    label_event_record,
    pull_record,
)
from bot.github.runs import Actions

T = TypeVar("T")

#: Longest single wait for a rate limit, and the most the bot waits in one event, in seconds.
MAX_WAIT = 900.0
READ_RETRIES = 3


@dataclass
class CallLog:
    """Every REST call this client made, for the job summary and perf/github_calls.py."""

    calls: list[str] = field(default_factory=list)
    waited: float = 0.0


#: GraphQL's question "who am I": it answers an installation token too (``GitHub.writer``).
VIEWER = {"query": "query Viewer { viewer { login } }"}


def marker_line(marker: str) -> str:
    return f"<!-- {marker} -->"


def carries(body: str | None, marker: str) -> bool:
    """A bot body starts with its marker; a marker elsewhere (quoted by a person) does not count."""
    return (body or "").startswith(marker_line(marker))


class GitHub(Actions):
    def __init__(
        self,
        token: str,
        repository: str,
        *,
        api_url: str = "https://api.github.com",
        bot_logins: tuple[str, ...] = ("github-actions[bot]",),
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        throttle: bool = True,
    ):
        from github import Auth, Github

        if not token:
            raise GitHubError("no GitHub token: set GITHUB_TOKEN (the workflow passes it to the action)")
        self.repository = repository
        self.bot_logins = tuple(login.lower() for login in bot_logins)
        self.sleep = sleep
        self.clock = clock
        self.log = CallLog()
        self.gh = Github(
            auth=Auth.Token(token),
            base_url=api_url.rstrip("/"),
            retry=None,
            lazy=True,
            per_page=100,
            timeout=30,
            seconds_between_requests=0.25 if throttle else None,
            seconds_between_writes=1.0 if throttle else None,
        )
        self._repos: dict[str, Any] = {}
        self._comments: dict[int, list[Comment]] = {}
        #: (comment id, updated_at) -> who edited that version last: asked once per run, or known as written here
        self._editors: dict[tuple[int, Any], Editor | None] = {}
        #: the login this client's token writes as, once known (``is_mine``); None: not asked yet
        self._writer: str | None = None
        #: why GitHub did not say who the token writes as, once its answer failed in this run (not asked again)
        self._writer_unknown = ""
        #: the workflow runs this client asked GitHub to cancel (``Actions.cancel_run``); a dispatch skips them
        self.cancelled_runs: set[int] = set()
        #: login -> role on the repository, asked once per run (the handlers and ``bot.github.vouch`` both ask)
        self._roles: dict[str, str] = {}
        #: (issue, gate, decision, actor, time, via) of the gate decisions GitHub's record was found to show, or this
        #: run made, in this run: a later load of the state does not ask again (``GitHubStateStore.load``)
        self.vouched: set[tuple] = set()

    # ------------------------------------------------------------ plumbing
    def repo(self, full_name: str | None = None):
        name = full_name or self.repository
        if name not in self._repos:
            self._repos[name] = self.gh.get_repo(name)  # lazy: no request
        return self._repos[name]

    def _call(
        self, what: str, fn: Callable[[], T], *, write: bool = False, recover: Callable[[], T | None] | None = None
    ) -> T:
        from github import GithubException
        from requests import RequestException

        attempt = 0
        while True:
            self.log.calls.append(what)
            try:
                return fn()
            except GithubException as exc:
                status = exc.status
                headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
                if answers.is_rate_limit(status, headers, exc.data):
                    self._wait(what, answers.rate_limit_wait(headers, self.clock(), attempt))
                    attempt += 1
                    continue
                if status is not None and status < 500:
                    raise GitHubError(
                        f"{what}: GitHub answered {status}: {answers.message(exc.data)}", status
                    ) from None
                failure = f"GitHub answered {status}"
            except RequestException as exc:
                failure = f"the connection failed ({type(exc).__name__})"
            if write and recover is not None:
                landed = recover()
                if landed is not None:
                    return landed
            if attempt >= READ_RETRIES:
                raise GitHubError(f"{what}: {failure} {attempt + 1} times; GitHub may be down, retry later") from None
            self.sleep(2.0**attempt)
            attempt += 1

    def _wait(self, what: str, seconds: float) -> None:
        if seconds > MAX_WAIT or self.log.waited + seconds > MAX_WAIT:
            raise GitHubError(
                f"{what}: rate limited by GitHub for {seconds:.0f}s more; the bot stops here and the next event "
                "continues (or comment /retry later)",
                403,
            )
        self.log.waited += seconds
        self.sleep(seconds)

    # ------------------------------------------------------------ identity
    def is_mine(self, login: str) -> bool:
        """``login`` is one of ``bot_logins`` or the bot account this client's token writes as (an App token
        writes as ``<app>[bot]``), so an App token with ``bot_logins`` at its default knows its own comments.
        Only a ``[bot]`` account is asked about: a person is never the bot unless listed (a maintainer's own
        token as the write token would otherwise turn their commands into the bot's comments)."""
        low = (login or "").lower()
        return low in self.bot_logins or (low.endswith("[bot]") and low == self.writer())

    def writer(self) -> str:
        """Who this client's token writes as: GraphQL's ``viewer`` (REST's ``GET /user`` refuses installation
        tokens), asked once per run, not after a comment it wrote named it; "": GitHub answered without a login
        (``bot_logins`` count).

        A failed answer (a 5xx, a dropped connection, after the retries) is not taken for "another account": the
        bot's own status comment would then read as missing, a decision be refused with advice to change a token
        nobody changed, and a `/retry` claim to start over. It stops the event instead (GitHubError, said again
        without asking again), as ``last_editor`` does: a later event finds the state and takes up this one's."""
        if self._writer is None:
            if self._writer_unknown:
                raise GitHubError(self._writer_unknown)

            def ask() -> str:
                _, data = self.gh.requester.requestJsonAndCheck("POST", self.gh.requester.graphql_url, input=VIEWER)
                viewer = ((data or {}).get("data") or {}).get("viewer") if isinstance(data, dict) else None
                return str((viewer or {}).get("login") or "").lower()

            try:
                self._writer = self._call("POST graphql viewer", ask)
            except GitHubError as exc:
                self._writer_unknown = (
                    f"GitHub did not say which account the bot's token writes as ({exc}), so the bot cannot tell "
                    "its own status comment from another account's; it stops here rather than take the state for "
                    "lost: comment `/retry` later"
                )
                raise GitHubError(self._writer_unknown, exc.status) from None
        return self._writer

    # --------------------------------------------------------------- issue
    def issue(self, number: int) -> IssueInfo:
        return self._call(f"GET issue {number}", lambda: issue_record(self.repo().get_issue(number)))

    def open_issues(self, label: str) -> list[IssueInfo]:
        """The repository's open issues carrying ``label``, newest 100 (one call: a page is 100; pull requests
        too, as GitHub lists them here): what the other promotions under way are, as their bodies and labels say."""

        def read() -> list[IssueInfo]:
            listing = self.repo().get_issues(state="open", labels=[label]).get_page(0)
            return [issue_record(raw, listed=True) for raw in listing]

        return self._call(f"GET open issues labelled {label}", read)

    def comments(self, number: int, *, refresh: bool = False) -> list[Comment]:
        """Comments on the issue, read once per event and kept in step with our own writes."""
        if refresh or number not in self._comments:

            def read() -> list[Comment]:
                return [comment_record(c) for c in self.repo().get_issue(number).get_comments()]

            self._comments[number] = self._call(f"GET comments of {number}", read)
        return self._comments[number]

    def bot_comment(self, number: int, marker: str) -> Comment | None:
        """The bot's own comment carrying ``marker`` (a person's comment with the same text never counts)."""
        for c in self.comments(number):
            if carries(c.body, marker) and self.is_mine(c.login):
                return c
        return None

    def upsert_comment(self, number: int, marker: str, body: str) -> Comment:
        """Create or update the one bot comment with ``marker``; the body GitHub kept is returned."""
        full = f"{marker_line(marker)}\n{body}"
        existing = self.bot_comment(number, marker)
        if existing is not None:
            if existing.body == full:
                return existing
            return self._edit_comment(number, existing.id, full)

        def create() -> Comment:
            return comment_record(self.repo().get_issue(number).create_comment(full))

        def recover() -> Comment | None:
            self.comments(number, refresh=True)
            landed = self.bot_comment(number, marker)
            if landed is not None and landed.body != full:
                return self._edit_comment(number, landed.id, full)
            return landed

        created = self._call(f"POST comment on {number}", create, write=True, recover=recover)
        if not self._writer:  # GitHub named who this token writes as
            self._writer, self._writer_unknown = created.login.lower(), ""
        cached = self._comments.setdefault(number, [])
        if all(c.id != created.id for c in cached):
            cached.append(created)
        return created

    def _edit_comment(self, number: int, comment_id: int, body: str) -> Comment:
        def edit() -> Comment:
            _, data = self.gh.requester.requestJsonAndCheck(
                "PATCH", self._comment_url(comment_id), input={"body": body}
            )
            return comment_from_json(data)

        def recover() -> Comment | None:
            c = self.get_comment(number, comment_id)
            return c if c.body == body else None

        updated = self._call(f"PATCH comment {comment_id}", edit, write=True, recover=recover)
        self._editors[(updated.id, updated.updated_at)] = Editor(updated.login, updated.updated_at)  # ours: the bot's
        cached = self._comments.get(number, [])
        self._comments[number] = [updated if c.id == comment_id else c for c in cached]
        return updated

    def last_editor(self, comment: Comment, *, ask: bool = False) -> Editor | None:
        """Who edited ``comment`` last (None: nobody since it was written); REST does not say, GraphQL does.

        No call when this client wrote that version itself, nor, unless ``ask``, when REST shows it unedited
        (``updated_at`` equal to ``created_at``: whole seconds, blind to an edit in the second it was written, so
        a person's command asks, ``bot.events.edits``); one GraphQL query otherwise, kept for the run."""
        if not ask and comment.updated_at is not None and comment.created_at is not None:
            if comment.updated_at <= comment.created_at:
                return None
        key = (comment.id, comment.updated_at)
        if key not in self._editors:

            def ask() -> Editor | None:
                requester = self.gh.requester
                _, data = requester.requestJsonAndCheck(
                    "POST",
                    requester.graphql_url,
                    input={
                        "query": "query CommentEditor($id: ID!) { node(id: $id) { ... on IssueComment { "
                        "editor { __typename login } lastEditedAt updatedAt } } }",
                        "variables": {"id": comment.node_id},
                    },
                )
                try:
                    return editor_from_json(data)
                except ValueError as exc:
                    raise GitHubError(
                        f"GitHub did not say who edited comment {comment.id} last ({exc}); the bot acts only on "
                        "text whose writer it knows, so it stops here: comment `/retry` later"
                    ) from None

            self._editors[key] = self._call(f"POST graphql editor of comment {comment.id}", ask)
        return self._editors[key]

    def get_comment(self, number: int, comment_id: int) -> Comment:
        def get() -> Comment:
            _, data = self.gh.requester.requestJsonAndCheck("GET", self._comment_url(comment_id))
            return comment_from_json(data)

        return self._call(f"GET comment {comment_id}", get)

    def _comment_url(self, comment_id: int) -> str:
        return f"{self.repo().url}/issues/comments/{comment_id}"

    def add_labels(self, number: int, labels: list[str]) -> None:
        if labels:
            self._call(f"POST labels on {number}", lambda: self.repo().get_issue(number).add_to_labels(*labels))

    def remove_label(self, number: int, label: str) -> None:
        from github import GithubException

        def remove() -> None:
            try:
                self.repo().get_issue(number).remove_from_labels(label)
            except GithubException as exc:
                if exc.status != 404:  # already gone: what we wanted
                    raise

        self._call(f"DELETE label {label} on {number}", remove)

    def ensure_labels(self, wanted: dict[str, tuple[str, str]]) -> None:
        """Create the repository labels (name -> (color, description)) that do not exist yet."""
        existing = self.label_names()
        for name, (color, description) in sorted(wanted.items()):
            if name not in existing:
                self._call(
                    f"POST label {name}",
                    lambda n=name, c=color, d=description: self.repo().create_label(n, c, d),
                    write=True,
                    recover=lambda n=name: n if n in {x.name for x in self.repo().get_labels()} else None,
                )

    def role(self, login: str) -> str:
        """The person's role on the repository (role_name: admin, maintain, write, triage, read), or none."""
        from github import GithubException

        def get() -> str:
            try:
                return self.repo().get_collaborator_role_name(login) or "none"
            except GithubException as exc:
                if exc.status == 404:  # not a collaborator
                    return "none"
                raise

        if login.lower() not in self._roles:
            self._roles[login.lower()] = self._call(f"GET permission of {login}", get)
        return self._roles[login.lower()]

    # -------------------------------------------------------- pull requests
    def find_pull(self, head: str) -> PullInfo | None:
        owner = self.repository.split("/")[0]

        def find() -> PullInfo | None:
            pulls = self.repo().get_pulls(state="all", head=f"{owner}:{head}")
            for p in pulls:
                return pull_record(p)
            return None

        return self._call(f"GET pulls for {head}", find)

    def create_pull(self, head: str, base: str, title: str, body: str) -> PullInfo:
        return self._call(
            f"POST pull for {head}",
            lambda: pull_record(self.repo().create_pull(base=base, head=head, title=title, body=body, draft=True)),
            write=True,
            recover=lambda: self.find_pull(head),
        )

    def update_pull(self, number: int, title: str, body: str) -> None:
        self._call(f"PATCH pull {number}", lambda: self.repo().get_pull(number).edit(title=title, body=body))

    def close_pull(self, number: int) -> None:
        self._call(f"PATCH pull {number} closed", lambda: self.repo().get_pull(number).edit(state="closed"))

    def reopen_issue(self, number: int) -> None:
        self._call(f"PATCH issue {number} open", lambda: self.repo().get_issue(number).edit(state="open"))

    def reopen_pull(self, number: int) -> None:
        self._call(f"PATCH pull {number} open", lambda: self.repo().get_pull(number).edit(state="open"))

    def closed_by(self, number: int) -> tuple[str, str]:
        """Who closed issue or PR ``number`` and when (GitHub's ISO time); ("", "") when GitHub does not say."""

        def get() -> tuple[str, str]:
            raw = self.repo().get_issue(number)
            user, at = raw.closed_by, raw.closed_at
            return (user.login if user else ""), (at.isoformat() if at else "")

        return self._call(f"GET issue {number} (closed by)", get)

    def label_event(self, number: int, label: str) -> LabelEvent | None:
        """The last time ``label`` was added to or taken off issue ``number``, None when GitHub lists neither."""
        mine = [e for e in self.label_events(number) if e.label == label]
        return mine[-1] if mine else None

    def label_events(self, number: int) -> list[LabelEvent]:
        """Every time a label was added to or taken off issue ``number``, oldest first (one call, never kept)."""

        def get() -> list[LabelEvent]:
            events = self.repo().get_issue(number).get_events()  # `label` only on these two kinds
            return [label_event_record(e) for e in events if e.event in ("labeled", "unlabeled") and e.label]

        return self._call(f"GET events of {number}", get)

    def mark_ready(self, pull: PullInfo) -> None:
        if not pull.draft:
            return

        def ready() -> None:
            self.gh.requester.graphql_named_mutation(
                mutation_name="markPullRequestReadyForReview",
                mutation_input={"pullRequestId": pull.node_id},
                output_schema="pullRequest { isDraft }",
            )

        self._call(f"POST graphql ready {pull.number}", ready)

    def reviews(self, number: int) -> list[ReviewInfo]:
        def read() -> list[ReviewInfo]:
            return [
                ReviewInfo(r.id, r.body or "", r.user.login if r.user else "", r.commit_id or "")
                for r in self.repo().get_pull(number).get_reviews()
            ]

        return self._call(f"GET reviews of {number}", read)

    def review_comments(self, number: int) -> list[ReviewCommentInfo]:
        def read() -> list[ReviewCommentInfo]:
            return [
                ReviewCommentInfo(c.id, c.body or "", c.user.login if c.user else "", c.path, c.line, c.node_id)
                for c in self.repo().get_pull(number).get_review_comments()
            ]

        return self._call(f"GET review comments of {number}", read)

    def delete_review_comments(self, node_ids: list[str]) -> None:
        """Delete review comments in one GraphQL request per 50 (REST takes a call each); gone already is fine."""
        for start in range(0, len(node_ids), 50):
            chunk = node_ids[start : start + 50]

            def delete(chunk: list[str] = chunk) -> None:
                declared = ", ".join(f"$id{i}: ID!" for i in range(len(chunk)))
                fields = " ".join(
                    f"c{i}: deletePullRequestReviewComment(input: {{id: $id{i}}}) {{ clientMutationId }}"
                    for i in range(len(chunk))
                )
                requester = self.gh.requester
                _, data = requester.requestJsonAndCheck(
                    "POST",
                    requester.graphql_url,
                    input={
                        "query": f"mutation DeleteReviewComments({declared}) {{ {fields} }}",
                        "variables": {f"id{i}": node for i, node in enumerate(chunk)},
                    },
                )
                refused = [e for e in (data or {}).get("errors") or [] if e.get("type") != "NOT_FOUND"]
                if any(e.get("type") == "RATE_LIMITED" for e in refused):
                    raise GitHubError(
                        "GitHub's GraphQL rate limit stopped deleting the bot's earlier review comments; "
                        "re-run the job later (`/status` or the Actions re-run): the deletion picks up where it stopped"
                    )
                if refused:
                    raise GitHubError(
                        f"GitHub refused to delete the bot's earlier review comments: {refused[0].get('message')}; "
                        "check that the token may write pull requests"
                    )

            self._call(f"POST graphql delete {len(chunk)} review comment(s)", delete)

    def update_review(self, number: int, review_id: int, body: str) -> None:
        def update() -> None:
            self.gh.requester.requestJsonAndCheck(
                "PUT", f"{self.repo().url}/pulls/{number}/reviews/{review_id}", input={"body": body}
            )

        self._call(f"PUT review {review_id}", update)

    def create_review(self, number: int, commit: str, body: str, comments: list[dict[str, Any]], marker: str) -> None:
        def create() -> None:
            pull = self.repo().get_pull(number)
            pull.create_review(commit=self.repo().get_commit(commit), body=body, event="COMMENT", comments=comments)

        def recover() -> bool | None:
            landed = any(carries(r.body, marker) and self.is_mine(r.login) for r in self.reviews(number))
            return True if landed else None

        self._call(f"POST review on {number}", create, write=True, recover=recover)

    # ------------------------------------------------------------- setup
    def repository_info(self) -> dict[str, Any]:
        def get() -> dict[str, Any]:
            _, data = self.gh.requester.requestJsonAndCheck("GET", self.repo().url)
            return data

        return self._call(f"GET repo {self.repository}", get)

    def file_text(self, path: str, ref: str) -> str | None:
        from github import GithubException

        def get() -> str | None:
            try:
                content = self.repo().get_contents(path, ref=ref)
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            return None if isinstance(content, list) else content.decoded_content.decode("utf-8", "replace")

        return self._call(f"GET contents {path}", get)

    def label_names(self) -> set[str]:
        return self._call("GET labels", lambda: {x.name for x in self.repo().get_labels()})

    # ------------------------------------------------------ other repositories
    def file_at(self, repository: str, sha: str, path: str, *, limit: int = 1_000_000) -> str:
        """A text file at an exact commit (the evolved program an issue references)."""

        def get() -> str:
            content = self.repo(repository).get_contents(path, ref=sha)
            if isinstance(content, list):
                raise GitHubError(f"{repository}@{sha}:{path} is a directory; reference the file itself")
            if content.size and content.size > limit:
                raise GitHubError(f"{repository}@{sha}:{path} is {content.size:,} bytes; the limit is {limit:,}")
            return content.decoded_content.decode("utf-8")

        return self._call(f"GET contents {repository}:{path}", get)

    def find_issue(self, repository: str, marker: str, label: str) -> IssueInfo | None:
        def find() -> IssueInfo | None:
            for raw in self.repo(repository).get_issues(state="all", labels=[label]):
                if carries(raw.body, marker) and self.is_mine(raw.user.login if raw.user else ""):
                    return issue_record(raw)
            return None

        return self._call(f"GET issues of {repository}", find)

    def upsert_issue(self, repository: str, marker: str, title: str, body: str, label: str) -> str:
        """Create or update the bot's issue with ``marker`` in another repository; returns its URL."""
        full = f"{marker_line(marker)}\n{body}"
        existing = self.find_issue(repository, marker, label)
        if existing is not None:
            if existing.body != full or existing.title != title:
                self._call(
                    f"PATCH issue {repository}#{existing.number}",
                    lambda: self.repo(repository).get_issue(existing.number).edit(title=title, body=full),
                )
            return self._issue_url(repository, existing.number)

        def create() -> IssueInfo:
            return issue_record(self.repo(repository).create_issue(title=title, body=full, labels=[label]))

        created = self._call(
            f"POST issue in {repository}",
            create,
            write=True,
            recover=lambda: self.find_issue(repository, marker, label),
        )
        return self._issue_url(repository, created.number)

    def _issue_url(self, repository: str, number: int) -> str:
        api = self.gh.requester.base_url
        host = api.split("/api/")[0] if "/api/" in api else "https://github.com"
        return f"{host}/{repository}/issues/{number}"
