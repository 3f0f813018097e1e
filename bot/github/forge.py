"""The GitHub forge: the fork's branch written with real git, the issue and the draft PR through REST.

Commits are made exactly as locally (``bot.forge.git``: plumbing commits in a
private clone) and pushed with a compare-and-swap on the remote ref
(``--force-with-lease=<ref>:<expected>``), so two runs can never interleave
commits and a branch someone else moved is never built on: the push is refused
and the stage fails with the reason. The token travels in an HTTP header set
through git's environment, never in a URL or a config file.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from urllib.parse import quote

from bot.forge import markers
from bot.forge.base import FeedbackNotFiled, PullRequestRecord, ReviewComment
from bot.forge.diff import split_anchored
from bot.forge.git import ForgeError, GitBranches, GitRepo
from bot.github.client import GitHub, GitHubError, PullInfo, carries, marker_line
from bot.github.labels import Label

FEEDBACK_LABEL = "promotion-feedback"
#: The most inline comments one review carries; the rest are listed in its body.
MAX_INLINE = 50
#: What an earlier round's review says once a newer one of the same gate replaces it: GitHub keeps a submitted
#: review (it cannot be deleted), so it points the reader at the live one instead of standing empty.
SUPERSEDED = "(superseded: a newer review of this gate, further down, replaces it; its inline comments are gone)"


class GitHubForge(GitBranches):
    def __init__(
        self,
        client: GitHub,
        *,
        issue: int,
        fork: str,
        server_url: str,
        token: str,
        clone_dir: Path,
        base_branch: str,
        branch: str,
        feedback_repository: str | None = None,
    ):
        self.client = client
        self.issue = issue
        self.fork = fork
        self.server_url = server_url.rstrip("/")
        self.remote = f"{self.server_url}/{fork}.git"
        self.token = token
        self.base_branch = base_branch
        self.branch = branch
        self.feedback_repository = feedback_repository
        self.repo = GitRepo(Path(clone_dir))
        self._pull: PullInfo | None = None
        self._pull_looked = False
        self._fetch()

    # ------------------------------------------------------------------ git
    def _auth_env(self) -> dict[str, str]:
        basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        return {
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "http.extraHeader",
            "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            "GIT_TERMINAL_PROMPT": "0",
        }

    def _remote_git(self, *args: str, check: bool = True) -> str:
        try:
            return self.repo.git(*args, env=self._auth_env(), check=check)
        except ForgeError as exc:
            raise ForgeError(str(exc).replace(self.token, "***")) from None

    def _fetch(self) -> None:
        """The base and the promotion branch as they are on GitHub now (the branch may not exist yet)."""
        self.repo.path.mkdir(parents=True, exist_ok=True)
        if not (self.repo.path / "HEAD").exists():
            self.repo.git("init", "-q", "--bare")
        self._remote_git(
            "fetch", "-q", "--no-tags", self.remote, f"+refs/heads/{self.base_branch}:refs/heads/{self.base_branch}"
        )
        ls = self._remote_git("ls-remote", "--heads", self.remote, f"refs/heads/{self.branch}")
        if ls.strip():
            self._remote_git(
                "fetch", "-q", "--no-tags", self.remote, f"+refs/heads/{self.branch}:refs/heads/{self.branch}"
            )
        else:
            self.repo.git("update-ref", "-d", f"refs/heads/{self.branch}", check=False)

    def _push(self, branch: str, new: str, expected: str | None) -> None:
        lease = f"--force-with-lease=refs/heads/{branch}:{expected or ''}"
        out = self._remote_git("push", "--porcelain", lease, self.remote, f"{new}:refs/heads/{branch}", check=False)
        if not any(line.startswith(("*", " ", "=")) and f"refs/heads/{branch}" in line for line in out.splitlines()):
            # Refused: someone else moved the branch since we fetched it. Put our ref back where GitHub has it.
            self._fetch()
            raise ForgeError(
                f"{self.fork}: branch {branch} moved on GitHub while the bot was writing it (expected "
                f"{(expected or 'no branch')[:12]}); the bot builds only on commits it wrote. Check the foreign "
                "commit, reset the branch to the bot's last commit, then comment `/retry`"
            )

    # ----------------------------------------------------------------- fork
    def ensure_branch(self, branch: str, base: str) -> str:
        head = self.repo.rev(branch)
        if head:
            return head
        sha = self.repo.ensure_branch(branch, base)
        self._push(branch, sha, None)
        return sha

    def commit_files(
        self, branch: str, files: dict[str, bytes], *, message: str, remove: tuple[str, ...] = ()
    ) -> str | None:
        parent = self.repo.rev(branch)
        commit = self.repo.commit_files(branch, files, message=message, remove=remove)
        if commit is not None:
            self._push(branch, commit, parent)
        return commit

    # ---------------------------------------------------------- issue thread
    def upsert_comment(self, marker: str, body: str) -> None:
        self.client.upsert_comment(self.issue, marker, body)

    # ---------------------------------------------------------- pull request
    def _find_pull(self) -> PullInfo | None:
        if not self._pull_looked:
            self._pull = self.client.find_pull(self.branch)
            self._pull_looked = True
        return self._pull

    def pull_request(self, branch: str) -> PullRequestRecord | None:
        pull = self._find_pull() if branch == self.branch else None
        return PullRequestRecord(pull.number, pull.url, pull.title) if pull else None

    def open_or_update_pr(self, branch: str, base: str, title: str, body: str) -> PullRequestRecord:
        pull = self._find_pull()
        if pull is None:
            pull = self.client.create_pull(branch, base, title, body)
            # the workflow starts on a PR comment only for a promotion's PR, to answer a command typed there
            self.client.add_labels(pull.number, [str(Label.PROMOTION)])
        elif pull.title != title or pull.body != body:
            self.client.update_pull(pull.number, title, body)
            pull = PullInfo(**{**pull.__dict__, "title": title, "body": body})
        self._pull, self._pull_looked = pull, True
        return PullRequestRecord(pull.number, pull.url, pull.title)

    def mark_ready(self, pr: PullRequestRecord) -> None:
        pull = self._find_pull()
        if pull is not None and pull.draft:
            self.client.mark_ready(pull)
            self._pull = PullInfo(**{**pull.__dict__, "draft": False})

    def close_pr(self, pr: PullRequestRecord) -> None:
        pull = self._find_pull()
        if pull is not None and pull.state != "closed":
            self.client.close_pull(pull.number)
            self._pull = PullInfo(**{**pull.__dict__, "state": "closed"})

    def reopen_pr(self, pr: PullRequestRecord) -> None:
        """Reopen the PR while the promotion goes on; a person's close is answered on the PR and on the issue.

        The bot closes the PR only when the promotion is cancelled or rejected (a retry then reopens it, and its
        reply says so). Anyone else's close does not stop the promotion (closing the issue or `/cancel` does), so
        a PR that came back without a word would look like the bot ignoring them. The notice is keyed by the
        close's time: a re-run of this step, or a run killed before the reopen, says it once per close. Who
        closed it costs one call, made only when the PR is found closed."""
        pull = self._find_pull()
        if pull is None or pull.state != "closed":
            return
        closer, at = self.client.closed_by(pull.number)
        if not self.client.is_mine(closer):
            self._say_reopened(pull.number, closer, at)
        self.client.reopen_pull(pull.number)
        self._pull = PullInfo(**{**pull.__dict__, "state": "open"})

    def _say_reopened(self, number: int, closer: str, at: str) -> None:
        who = f"@{closer}" if closer else "Someone"
        stop = f"close issue #{self.issue} or comment `/cancel` there"
        key = markers.pr_closed(number, at)
        self.client.upsert_comment(
            number,
            key,
            f"{who} closed this pull request while its promotion is under way, so the bot reopened it: the "
            f"promotion continues and this PR carries its work. Closing the PR does not stop it; to stop it, {stop}.",
        )
        self.client.upsert_comment(
            self.issue,
            key,
            f"{who} closed the promotion's pull request #{number}; the bot reopened it, as the promotion continues "
            "(closing the PR does not stop it). To stop the promotion, close this issue or comment `/cancel`.",
        )

    def set_review_comments(
        self, pr: PullRequestRecord, marker: str, comments: list[ReviewComment], *, body: str = ""
    ) -> None:
        """One COMMENT review per gate round (it works under the bot's own identity), replacing the last one."""
        number = int(pr.number)
        anchors = self.repo.changed_lines(self.base_branch, self.branch)
        inside, outside = split_anchored(comments, anchors)
        inside, overflow = inside[:MAX_INLINE], inside[MAX_INLINE:]
        text = body + "".join(f"\n- `{c.path}:{c.line}`: {c.body}" for c in [*outside, *overflow])
        full = f"{marker_line(marker)}\n{text}"
        # Replace, never pile up: the bot's earlier inline comments for this gate go, its earlier review is marked.
        mine = self.client.is_mine
        reviews = self.client.reviews(number)
        if any(r.body == full and mine(r.login) for r in reviews):
            return  # this very review is already there (a replayed event)
        head = self.repo.rev(self.branch)
        payload = [
            {"path": c.path, "line": c.line, "side": "RIGHT", "body": f"{marker_line(marker)}\n{c.body}"}
            for c in inside
        ]
        old_comments = [
            old for old in self.client.review_comments(number) if carries(old.body, marker) and mine(old.login)
        ]
        live = [r for r in reviews if carries(r.body, marker) and mine(r.login)]
        if len(live) == 1 and live[0].commit == head and _same_comments(old_comments, payload):
            # The same round said again with another summary (its review went unconverged once the author's
            # rerun changed nothing): edit it in place. A submitted review cannot be deleted, so a new one
            # would leave an empty "(superseded)" entry in the PR's timeline.
            self.client.update_review(number, live[0].id, full)
            return
        self.client.delete_review_comments([old.node_id for old in old_comments])
        for review in live:
            self.client.update_review(number, review.id, f"{marker_line(marker + ':superseded')}\n{SUPERSEDED}")
        self.client.create_review(number, head or "", full, payload, marker)

    def edit_review_summary(self, pr: PullRequestRecord, marker: str, summary: str) -> None:
        """The live review's body edited in place (PUT .../reviews/{id}, which keeps its inline comments): two calls,
        none more when it already says this (a replayed event)."""
        number = int(pr.number)
        mine = self.client.is_mine
        live = [r for r in self.client.reviews(number) if carries(r.body, marker) and mine(r.login)]
        if not live:
            return
        lines = live[-1].body.split("\n")
        body = "\n".join([lines[0], summary, *lines[2:]])  # lines[0] is the marker
        if body != live[-1].body:
            self.client.update_review(number, live[-1].id, body)

    def blob_url(self, commit: str, path: str) -> str:
        """``<server>/<fork>/blob/<sha>/<path>``: GitHub's permalink form, pinned to the commit."""
        return f"{self.server_url}/{self.fork}/blob/{commit}/{quote(path)}"

    # ------------------------------------------------------------ feedback
    def file_feedback(self, marker: str, title: str, body: str) -> str:
        if not self.feedback_repository:
            return ""
        try:
            return self.client.upsert_issue(self.feedback_repository, marker, title, body, FEEDBACK_LABEL)
        except GitHubError as exc:
            raise FeedbackNotFiled(
                self.feedback_repository, str(exc), feedback_fix(self.feedback_repository, self.fork, exc.status)
            ) from None

    def locations(self) -> dict[str, str]:
        out = {"fork": self.fork, "branch": self.branch}
        if self._pull is not None:
            out["pull request"] = self._pull.url
        return out


def feedback_fix(repository: str, fork: str, status: int | None) -> str:
    """What lets the next feedback issues be filed in ``repository`` after GitHub refused one with ``status``
    ("" when nothing needs changing: GitHub was down). An App's installation token reaches one owner, so under
    another owner than ``fork`` no token can file them and still write the fork: they stay filed by hand."""
    if status not in (401, 403, 404):
        return ""
    blis_owner = repository.split("/")[0]
    if blis_owner.lower() != fork.split("/")[0].lower():
        return (
            f"no single token can file them for the next promotions either: {repository} has another owner than "
            f"{fork}, and a GitHub App's installation token reaches one owner's repositories (one for {blis_owner} "
            "would break the bot's every write to this fork); the next promotions keep their feedback issues in "
            f"their branch the same way, unless the fork moves under {blis_owner} (docs/github-setup.md, section 3)"
        )
    return (
        "the job's GITHUB_TOKEN writes only this repository: for the next promotions, give the `advance` job of "
        f".github/workflows/promotion.yml an `app-token:` of a GitHub App installed on {blis_owner} "
        "(it owns both repositories) with Issues: write (docs/github-setup.md, section 3)"
    )


def _same_comments(old, payload: list[dict]) -> bool:
    """The bot's inline comments on the PR are the ones it would post now (same file, line and text)."""
    return sorted((c.path, c.line, c.body) for c in old) == sorted((p["path"], p["line"], p["body"]) for p in payload)


def default_clone_dir(fork: str) -> Path:
    """A private clone per fork under the runner's temp directory (or the system temp dir elsewhere)."""
    base = Path(os.environ.get("RUNNER_TEMP") or os.environ.get("TMPDIR") or "/tmp")
    return base / "promotion-bot" / fork.replace("/", "__")
