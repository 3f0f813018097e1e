"""The local forge: a git repository for the fork, markdown files for the issue and the PR.

The fork is a git repository written with the shared plumbing of
``bot.forge.git`` (atomic commits, compare-and-swap branch moves, the working
tree never touched); the issue thread and the PR are markdown files in the
work directory, each bot comment found again by its hidden marker.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

from bot.escape import md
from bot.forge.base import PullRequestRecord, ReviewComment
from bot.forge.diff import split_anchored
from bot.forge.git import ForgeError, GitBranches, GitRepo

__all__ = ["ForgeError", "LocalForge"]


class LocalForge(GitBranches):
    """``own``: the fork is the bot's (the default ``WORK/fork``), not one the person gave with ``--fork``; only
    then is a half-made fork (no commit at all: its seeding was cut short by an older version) made again."""

    def __init__(
        self,
        fork_dir: Path,
        work_dir: Path,
        *,
        seed_dir: Path | None = None,
        base_branch: str = "main",
        own: bool = False,
    ):
        self.fork = Path(fork_dir).resolve()
        self.work = Path(work_dir).resolve()
        self.base_branch = base_branch
        self.repo = GitRepo(self.fork)
        self._ensure_fork(seed_dir, own)
        self.work.mkdir(parents=True, exist_ok=True)

    def _ensure_fork(self, seed_dir: Path | None, own: bool) -> None:
        if self.fork.exists() and not self.fork.is_dir():
            raise ForgeError(
                f"--fork {self.fork}: is a file, not a directory; pass a clone of the fork or a new directory path"
            )
        if self.fork.exists() and not (self.fork / ".git").exists() and any(self.fork.iterdir()):
            raise ForgeError(
                f"--fork {self.fork}: exists but is not a git repository; pass a clone of the fork or a new path"
            )
        if (self.fork / ".git").exists():
            if self.repo.rev(self.base_branch):
                return
            if not self._unborn():
                raise ForgeError(
                    f"--fork {self.fork}: has no branch {self.base_branch!r}; set fork.base_branch in the request"
                )
            if not own:
                raise ForgeError(
                    f"--fork {self.fork}: is a git repository without a commit; pass a clone of the fork, or a new "
                    "path (the run creates the fork there)"
                )
            shutil.rmtree(self.fork)  # the bot's own half-made fork (a full disk cut its seeding short): made again
        self._seed(seed_dir)

    def _unborn(self) -> bool:
        """No commit on any branch: a repository only ``git init`` (and perhaps ``git add``) went through."""
        return not self.repo.git("for-each-ref", "--count=1", "refs/").strip() and not self.repo.rev("HEAD")

    def _seed(self, seed_dir: Path | None) -> None:
        """Create the fork with its first commit, built next to it and renamed into place only once that commit
        exists: a full disk or a Ctrl-C part-way leaves no half-made fork for every later command to refuse."""
        self.fork.parent.mkdir(parents=True, exist_ok=True)
        build = self.fork.with_name(f".{self.fork.name}.seeding-{os.getpid()}")
        shutil.rmtree(build, ignore_errors=True)  # one a killed command with this pid left
        try:
            build.mkdir()
            repo = GitRepo(build)
            repo.git("init", "-q", "--template=", "-b", self.base_branch)  # no sample hooks: the fork needs none
            if seed_dir is not None:
                shutil.copytree(seed_dir, build, dirs_exist_ok=True)
            else:
                (build / "README.md").write_text("# llm-d-router fork (local stand-in)\n")
            repo.git("add", "-A")
            repo.git("commit", "-q", "-m", "llm-d-router v0.10.0 API mirror (local stand-in for the fork)")
            build.rename(self.fork)  # onto a missing path or an empty directory (rename(2) replaces one)
        except BaseException as exc:
            shutil.rmtree(build, ignore_errors=True)
            full = _no_room(exc)
            if full is not None:  # named as the fork, not the temporary directory that is gone now
                raise OSError(full, os.strerror(full), str(self.fork)) from None
            raise

    # ---------------------------------------------------------- issue thread
    @property
    def _comments_file(self) -> Path:
        return self.work / "issue" / "comments.json"

    def upsert_comment(self, marker: str, body: str) -> None:
        comments = self._load(self._comments_file, [])
        tagged = f"<!-- {marker} -->\n{body}"
        for c in comments:
            if c["marker"] == marker:
                c["body"] = tagged
                break
        else:
            comments.append({"marker": marker, "body": tagged})
        self._save(self._comments_file, comments)
        thread = ["# Promotion issue thread (local forge)\n"]
        for i, c in enumerate(comments, 1):
            thread.append(f"\n---\n\n### Comment {i} · promotion-bot\n\n{c['body']}\n")
        _write_atomic(self.work / "issue" / "thread.md", "".join(thread))

    # ---------------------------------------------------------- pull request
    @property
    def _pr_file(self) -> Path:
        return self.work / "pr" / "pr.json"

    def pull_request(self, branch: str) -> PullRequestRecord | None:
        record = self._load(self._pr_file, {})
        if record.get("branch") != branch:
            return None
        return PullRequestRecord(number=1, url=str(self.work / "pr" / "pull-request.md"), title=record["title"])

    def open_or_update_pr(self, branch: str, base: str, title: str, body: str) -> PullRequestRecord:
        record = self._load(self._pr_file, {})
        record.setdefault("draft", True)
        record.update({"number": 1, "branch": branch, "base": base, "title": title, "body": body})
        record.setdefault("review_comments", [])
        self._save(self._pr_file, record)
        self._render_pr(record)
        return PullRequestRecord(number=1, url=str(self.work / "pr" / "pull-request.md"), title=title)

    def mark_ready(self, pr: PullRequestRecord) -> None:
        record = self._load(self._pr_file, {})
        if record.get("draft", True):
            record["draft"] = False
            self._save(self._pr_file, record)
            self._render_pr(record)

    def close_pr(self, pr: PullRequestRecord) -> None:
        record = self._load(self._pr_file, {})
        if record.get("state", "open") != "closed":
            record["state"] = "closed"
            self._save(self._pr_file, record)
            self._render_pr(record)

    def reopen_pr(self, pr: PullRequestRecord) -> None:
        record = self._load(self._pr_file, {})
        if record.get("state", "open") == "closed":
            record["state"] = "open"
            self._save(self._pr_file, record)
            self._render_pr(record)

    def set_review_comments(
        self, pr: PullRequestRecord, marker: str, comments: list[ReviewComment], *, body: str = ""
    ) -> None:
        record = self._load(self._pr_file, {})
        anchors = self.repo.changed_lines(record.get("base", self.base_branch), record.get("branch", ""))
        inside, outside = split_anchored(comments, anchors)
        kept = [c for c in record.get("review_comments", []) if c.get("marker") != marker]
        kept += [{"marker": marker, "path": c.path, "line": c.line, "body": c.body} for c in inside]
        record["review_comments"] = kept
        reviews = {k: v for k, v in record.get("reviews", {}).items() if k != marker}
        extra = "".join(f"\n- `{c.path}:{c.line}` (not in the diff): {c.body}" for c in outside)
        if body or extra:
            reviews[marker] = body + extra
        record["reviews"] = reviews
        self._save(self._pr_file, record)
        self._render_pr(record)

    def edit_review_summary(self, pr: PullRequestRecord, marker: str, summary: str) -> None:
        record = self._load(self._pr_file, {})
        text = record.get("reviews", {}).get(marker)
        if text is None:
            return
        record["reviews"][marker] = "\n".join([summary, *text.split("\n")[1:]])
        self._save(self._pr_file, record)
        self._render_pr(record)

    def _render_pr(self, record: dict) -> None:
        if record.get("state", "open") == "closed":
            shown = " (closed, not merged)"
        else:
            shown = " (draft)" if record.get("draft", True) else ""
        parts = [
            f"# PR #{record['number']}{shown}: {md(record['title'])}\n\n",  # a PR title is plain text
            f"`{record['branch']}` → `{record['base']}` on the fork (local forge)\n\n",
            record["body"].rstrip() + "\n",
        ]
        for marker, text in sorted(record.get("reviews", {}).items()):
            parts.append(f"\n---\n\n## Review ({marker})\n\n{text.strip()}\n")
        if record.get("review_comments"):
            parts.append("\n---\n\n## Review comments\n")
            for c in sorted(record["review_comments"], key=lambda c: (c["path"], c["line"])):
                parts.append(f"\n**`{c['path']}` line {c['line']}**\n\n{c['body']}\n")
        _write_atomic(self.work / "pr" / "pull-request.md", "".join(parts))

    def blob_url(self, commit: str, path: str) -> str:
        """Git's own name for the file in that commit (``git -C <fork> show <commit>:<path>`` opens it): the
        local forge has no web address, and the fork's directory must not appear in anything posted."""
        return f"{commit}:{path}"

    # ------------------------------------------------------------ feedback
    def file_feedback(self, marker: str, title: str, body: str) -> str:
        """A markdown file standing in for the feedback issue; its work-relative path is the link."""
        rel = f"feedback/{marker.rsplit(':', 1)[-1]}.md"
        _write_atomic(self.work / rel, f"<!-- {marker} -->\n# {title}\n\n{body}")
        return rel

    def locations(self) -> dict[str, str]:
        return {
            "fork": str(self.fork),
            "issue thread": str(self.work / "issue" / "thread.md"),
            "pull request": str(self.work / "pr" / "pull-request.md"),
        }

    # ------------------------------------------------------------- storage
    @staticmethod
    def _load(path: Path, default):
        return json.loads(path.read_text()) if path.exists() else default

    @staticmethod
    def _save(path: Path, data) -> None:
        _write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


#: What git and the file system say when there is no room to write (the errno each stands for).
_NO_ROOM = {
    "No space left on device": errno.ENOSPC,
    "File too large": errno.EFBIG,
    "killed by SIGXFSZ": errno.EFBIG,  # git is not Python: a write past `ulimit -f` kills it
    "Disk quota exceeded": errno.EDQUOT,
}


def _no_room(exc: BaseException) -> int | None:
    """The errno of a seeding that ran out of room: a git failure (its stderr), a copy (``shutil.Error``, one
    entry per file), or a single write."""
    if isinstance(exc, shutil.Error | ForgeError):
        text = str(exc)
        return next((code for words, code in _NO_ROOM.items() if words in text), None)
    if isinstance(exc, OSError) and exc.errno in _NO_ROOM.values():
        return exc.errno
    return None


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
