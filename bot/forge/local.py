"""The local forge: a git repository for the fork, markdown files for the issue and the PR.

Commits are made with git plumbing through a private index (``read-tree``,
``update-index``, ``write-tree``, ``commit-tree``) and the branch moves with
a compare-and-swap ``update-ref``. The fork's working tree and index are never
touched, and a killed run leaves the branch at its last complete commit:
nothing half-written ever lands on it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from bot.forge.base import PullRequestRecord, ReviewComment
from bot.model import RequestError

_BOT_ENV = {
    "GIT_AUTHOR_NAME": "promotion-bot",
    "GIT_AUTHOR_EMAIL": "promotion-bot@users.noreply.local",
    "GIT_COMMITTER_NAME": "promotion-bot",
    "GIT_COMMITTER_EMAIL": "promotion-bot@users.noreply.local",
}


class ForgeError(RequestError):
    """The fork or work directory cannot be used as given."""


class LocalForge:
    def __init__(self, fork_dir: Path, work_dir: Path, *, seed_dir: Path | None = None, base_branch: str = "main"):
        self.fork = Path(fork_dir).resolve()
        self.work = Path(work_dir).resolve()
        self.base_branch = base_branch
        self._ensure_fork(seed_dir)
        self.work.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ git
    def _git(self, *args: str, input: bytes | None = None, env: dict | None = None, check: bool = True) -> str:
        full_env = {**os.environ, **_BOT_ENV, **(env or {})}
        proc = subprocess.run(
            ["git", "-C", str(self.fork), *args], input=input, capture_output=True, env=full_env, check=False
        )
        if check and proc.returncode != 0:
            raise ForgeError(f"git {' '.join(args[:2])} failed in {self.fork}: {proc.stderr.decode().strip()}")
        return proc.stdout.decode()

    def _ensure_fork(self, seed_dir: Path | None) -> None:
        if self.fork.exists() and not (self.fork / ".git").exists() and any(self.fork.iterdir()):
            raise ForgeError(
                f"--fork {self.fork}: exists but is not a git repository; pass a clone of the fork or a new path"
            )
        if not (self.fork / ".git").exists():
            self.fork.mkdir(parents=True, exist_ok=True)
            self._git("init", "-q", "-b", self.base_branch)
            if seed_dir is not None:
                shutil.copytree(seed_dir, self.fork, dirs_exist_ok=True)
            else:
                (self.fork / "README.md").write_text("# llm-d-router fork (local stand-in)\n")
            self._git("add", "-A")
            self._git("commit", "-q", "-m", "llm-d-router v0.10.0 API mirror (local stand-in for the fork)")
        elif not self._rev(self.base_branch):
            raise ForgeError(
                f"--fork {self.fork}: has no branch {self.base_branch!r}; set fork.base_branch in the request"
            )

    def _rev(self, ref: str) -> str | None:
        out = self._git("rev-parse", "--verify", "-q", f"refs/heads/{ref}", check=False).strip()
        return out or None

    # ----------------------------------------------------------------- fork
    def ensure_branch(self, branch: str, base: str) -> str:
        head = self._rev(branch)
        if head:
            return head
        base_sha = self._rev(base)
        if not base_sha:
            raise ForgeError(f"--fork {self.fork}: base branch {base!r} does not exist")
        self._git("update-ref", f"refs/heads/{branch}", base_sha, "")
        return base_sha

    def commit_files(
        self, branch: str, files: dict[str, bytes], *, message: str, remove: tuple[str, ...] = ()
    ) -> str | None:
        parent = self._rev(branch)
        if parent is None:
            raise ForgeError(f"branch {branch} does not exist; call ensure_branch first")
        for path in [*files, *remove]:
            _check_path(path)
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self._git("read-tree", parent, env=env)
            for path in sorted(remove):
                if path not in files:
                    self._git("update-index", "--force-remove", path, env=env)
            for path in sorted(files):
                blob = self._git("hash-object", "-w", "--stdin", input=files[path]).strip()
                self._git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self._git("write-tree", env=env).strip()
        if tree == self._git("rev-parse", f"{parent}^{{tree}}").strip():
            return None
        commit = self._git("commit-tree", tree, "-p", parent, "-F", "-", input=message.encode()).strip()
        self._git("update-ref", f"refs/heads/{branch}", commit, parent)  # fails if the branch moved meanwhile
        return commit

    def read_file(self, branch: str, path: str) -> bytes | None:
        proc = subprocess.run(
            ["git", "-C", str(self.fork), "show", f"refs/heads/{branch}:{path}"], capture_output=True, check=False
        )
        return proc.stdout if proc.returncode == 0 else None

    def list_files(self, branch: str, prefix: str = "") -> list[str]:
        if not self._rev(branch):
            return []
        out = self._git("ls-tree", "-r", "--name-only", f"refs/heads/{branch}", "--", prefix or ".")
        return sorted(line for line in out.splitlines() if line)

    def find_commit(self, branch: str, trailer: str) -> str | None:
        if not self._rev(branch):
            return None
        out = self._git("log", "--format=%H", "-F", f"--grep={trailer}", f"refs/heads/{branch}", "-n", "1")
        return out.strip() or None

    def commits(self, branch: str, base: str) -> list[tuple[str, str]]:
        if not self._rev(branch):
            return []
        out = self._git("log", "--reverse", "--format=%H %s", f"refs/heads/{base}..refs/heads/{branch}")
        return [tuple(line.split(" ", 1)) for line in out.splitlines() if line]  # type: ignore[misc]

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
    def open_or_update_pr(self, branch: str, base: str, title: str, body: str) -> PullRequestRecord:
        record = self._load(self.work / "pr" / "pr.json", {})
        record.update({"number": 1, "branch": branch, "base": base, "title": title, "body": body})
        record.setdefault("review_comments", [])
        self._save(self.work / "pr" / "pr.json", record)
        self._render_pr(record)
        return PullRequestRecord(number=1, url=str(self.work / "pr" / "pull-request.md"), title=title)

    def set_review_comments(self, pr: PullRequestRecord, marker: str, comments: list[ReviewComment]) -> None:
        record = self._load(self.work / "pr" / "pr.json", {})
        kept = [c for c in record.get("review_comments", []) if c.get("marker") != marker]
        kept += [{"marker": marker, "path": c.path, "line": c.line, "body": c.body} for c in comments]
        record["review_comments"] = kept
        self._save(self.work / "pr" / "pr.json", record)
        self._render_pr(record)

    def _render_pr(self, record: dict) -> None:
        parts = [
            f"# PR #{record['number']}: {record['title']}\n\n",
            f"`{record['branch']}` → `{record['base']}` in `{self.fork}`\n\n",
            record["body"].rstrip() + "\n",
        ]
        if record.get("review_comments"):
            parts.append("\n---\n\n## Review comments\n")
            for c in sorted(record["review_comments"], key=lambda c: (c["path"], c["line"])):
                parts.append(f"\n**`{c['path']}` line {c['line']}**\n\n{c['body']}\n")
        _write_atomic(self.work / "pr" / "pull-request.md", "".join(parts))

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


_SAFE_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9_.][A-Za-z0-9_.,/ -]*$")


def _check_path(path: str) -> None:
    """Stages write only plain relative paths: no '..', no absolute paths, nothing under .git or .github."""
    if not _SAFE_PATH.match(path) or path.startswith((".git/", ".github/")) or path == ".git":
        raise ForgeError(f"refusing to write {path!r} on the promotion branch: not a plain relative path")


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
