"""The bare git repository behind each fake GitHub repository: seeding, reading, and PR diffs.

Pull-request files, review anchors and repository contents are computed from real git objects, so what the
bot pushed over smart HTTP is exactly what the fake's REST answers describe (no second source of truth).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# Fixed identity and dates keep seeded commits byte-identical from run to run.
SEED_ENV = {
    "GIT_AUTHOR_NAME": "Fake GitHub",
    "GIT_AUTHOR_EMAIL": "fake-github@example.invalid",
    "GIT_COMMITTER_NAME": "Fake GitHub",
    "GIT_COMMITTER_EMAIL": "fake-github@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}
ZERO_SHA = "0" * 40


class GitError(RuntimeError):
    pass


def git(git_dir: Path, *args: str, input_bytes: bytes | None = None, env: dict | None = None) -> bytes:
    full_env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE")}
    full_env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", **(env or {})})
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], input=input_bytes, capture_output=True, env=full_env, check=False
    )
    if proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def init_bare(git_dir: Path, default_branch: str) -> None:
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "init", "--quiet", "--bare", f"--initial-branch={default_branch}", str(git_dir)],
        check=True,
        capture_output=True,
    )
    git(git_dir, "config", "http.receivepack", "true")
    git(git_dir, "config", "receive.advertisePushOptions", "false")


def commit_tree_from_dir(git_dir: Path, seed_dir: Path, branch: str, message: str) -> str:
    """Commit the files of `seed_dir` (honouring its .gitignore, skipping any .git) as `branch`."""
    index = git_dir / f"seed-index-{os.getpid()}"
    env = {**SEED_ENV, "GIT_INDEX_FILE": str(index)}
    try:
        git(git_dir, "--work-tree", str(seed_dir), "add", "--all", "--force", ".", env=env)
        tree = git(git_dir, "write-tree", env=env).decode().strip()
    finally:
        index.unlink(missing_ok=True)
    return commit(git_dir, branch, tree, message)


def commit(git_dir: Path, branch: str, tree: str, message: str, env: dict | None = None) -> str:
    parent = resolve(git_dir, f"refs/heads/{branch}")
    args = ["commit-tree", tree, "-m", message]
    if parent:
        args += ["-p", parent]
    sha = git(git_dir, *args, env={**SEED_ENV, **(env or {})}).decode().strip()
    git(git_dir, "update-ref", f"refs/heads/{branch}", sha, parent or ZERO_SHA)
    return sha


def commit_files(git_dir: Path, branch: str, files: dict[str, bytes | str | None], message: str) -> str:
    """A commit on `branch` that writes (or, for None, deletes) `files`: someone else pushing."""
    index = git_dir / f"files-index-{os.getpid()}"
    env = {**SEED_ENV, "GIT_INDEX_FILE": str(index)}
    try:
        parent = resolve(git_dir, f"refs/heads/{branch}")
        if parent:
            git(git_dir, "read-tree", parent, env=env)
        for path, content in files.items():
            if content is None:
                git(git_dir, "update-index", "--force-remove", path, env=env)
                continue
            data = content.encode() if isinstance(content, str) else content
            blob = git(git_dir, "hash-object", "-w", "--stdin", input_bytes=data).decode().strip()
            git(git_dir, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(git_dir, "write-tree", env=env).decode().strip()
    finally:
        index.unlink(missing_ok=True)
    return commit(git_dir, branch, tree, message)


def resolve(git_dir: Path, ref: str) -> str | None:
    """The commit a ref, branch name, tag or sha names, or None."""
    for candidate in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}"):
        proc = subprocess.run(
            ["git", "--git-dir", str(git_dir), "rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode == 0:
            return proc.stdout.strip()
    return None


def branch_exists(git_dir: Path, branch: str) -> bool:
    return resolve(git_dir, f"refs/heads/{branch}") is not None


def merge_base(git_dir: Path, a: str, b: str) -> str | None:
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "merge-base", a, b], capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() or None


def commit_count(git_dir: Path, base: str, head: str) -> int:
    return int(git(git_dir, "rev-list", "--count", f"{base}..{head}").decode().strip())


@dataclass
class Entry:
    """A tree entry at a ref: a file (with its bytes) or a directory (with its children's names)."""

    path: str
    kind: str  # "file" | "dir"
    sha: str
    size: int = 0
    data: bytes = b""
    children: list[Entry] = field(default_factory=list)


def read_path(git_dir: Path, ref: str, path: str) -> Entry | None:
    sha = resolve(git_dir, ref)
    if sha is None:
        return None
    path = path.strip("/")
    spec = f"{sha}:{path}"
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-t", spec], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        return None
    kind = proc.stdout.strip()
    object_sha = git(git_dir, "rev-parse", spec).decode().strip()
    if kind == "blob":
        data = git(git_dir, "cat-file", "blob", object_sha)
        return Entry(path, "file", object_sha, len(data), data)
    if kind != "tree":
        return None
    children = []
    listing = git(git_dir, "ls-tree", "-z", "--long", object_sha).decode()
    for record in filter(None, listing.split("\0")):
        meta, name = record.split("\t", 1)
        _mode, child_kind, child_sha, size = meta.split()
        child_path = f"{path}/{name}" if path else name
        children.append(
            Entry(child_path, "file" if child_kind == "blob" else "dir", child_sha, 0 if size == "-" else int(size))
        )
    return Entry(path, "dir", object_sha, 0, b"", children)


# --- pull-request diffs -------------------------------------------------------------------------
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class DiffLine:
    position: int  # GitHub's position: 1 is the line below the file's first @@ header
    kind: str  # "@", " ", "+", "-", "\\"
    old: int | None
    new: int | None
    hunk: int  # index of the hunk this line belongs to


@dataclass
class FileDiff:
    filename: str
    status: str  # added | removed | modified | renamed
    previous_filename: str | None
    additions: int
    deletions: int
    sha: str  # blob sha on the head side (base side for removed files)
    patch: str | None  # the hunks as GitHub shows them, None for binary files
    lines: list[DiffLine] = field(default_factory=list)

    def anchorable(self, side: str) -> dict[int, DiffLine]:
        """File line -> diff line for the lines a review comment may anchor to on `side`."""
        if side == "LEFT":
            return {dl.old: dl for dl in self.lines if dl.kind in (" ", "-") and dl.old is not None}
        return {dl.new: dl for dl in self.lines if dl.kind in (" ", "+") and dl.new is not None}

    def hunk_text(self, upto: DiffLine) -> str:
        """The diff hunk up to and including `upto`, as GitHub puts in a review comment's `diff_hunk`."""
        assert self.patch is not None
        rows = self.patch.split("\n")
        start = max(dl.position for dl in self.lines if dl.kind == "@" and dl.hunk == upto.hunk)
        return "\n".join(rows[start - 1 : upto.position])


STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "T": "modified", "C": "added"}


def pull_diff(git_dir: Path, base: str, head: str) -> list[FileDiff]:
    """The files of the three-dot diff base...head, as `GET /pulls/{n}/files` reports them.

    Between two commits (full shas, as the fake always passes) the diff never changes, and the fake renders a pull
    request's counts on every read of it: the diff of each pair is computed once (a PR's dozens of `git diff` calls
    were a sixth of a GitHub flow test's time)."""
    if _SHA.fullmatch(base) and _SHA.fullmatch(head):
        return list(_commit_diff(str(git_dir), base, head))
    return _pull_diff(git_dir, base, head)


_SHA = re.compile(r"[0-9a-f]{40}")


@functools.lru_cache(maxsize=256)
def _commit_diff(git_dir: str, base: str, head: str) -> tuple[FileDiff, ...]:
    return tuple(_pull_diff(Path(git_dir), base, head))


def _pull_diff(git_dir: Path, base: str, head: str) -> list[FileDiff]:
    """One `git diff` for every file, split at its ``diff --git`` headers (git lists the files in the order
    ``--name-status`` does), and the blob shas from the two trees: four git calls however many files changed."""
    start = merge_base(git_dir, base, head) or base
    names = git(git_dir, "diff", "--name-status", "-z", "-M", start, head).decode().split("\0")
    raw = git(git_dir, "diff", "--no-color", "--no-ext-diff", "-M", "-U3", start, head).decode("utf-8", "replace")
    sections = re.split(r"(?m)^(?=diff --git )", raw)[1:]
    blobs = {side: _blobs(git_dir, ref) for side, ref in (("base", start), ("head", head))}
    files: list[FileDiff] = []
    index = 0
    while index < len(names) and names[index]:
        code = names[index][0]
        if code in "RC":
            old, new = names[index + 1], names[index + 2]
            index += 3
        else:
            old = new = names[index + 1]
            index += 2
        text = sections[len(files)] if len(files) < len(sections) else ""
        files.append(_file_diff(text, code, old, new, blobs))
    return files


def _blobs(git_dir: Path, ref: str) -> dict[str, str]:
    """path -> blob sha of every file in ``ref``'s tree."""
    listing = git(git_dir, "ls-tree", "-r", "-z", ref).decode("utf-8", "replace")
    return {rec.split("\t", 1)[1]: rec.split()[2] for rec in listing.split("\0") if "\t" in rec}


def _file_diff(text: str, code: str, old: str, new: str, blobs: dict[str, dict[str, str]]) -> FileDiff:
    binary = "\nGIT binary patch" in text or re.search(r"^Binary files .* differ$", text, re.MULTILINE)
    lines: list[DiffLine] = []
    patch_rows: list[str] = []
    additions = deletions = 0
    rows = text.rstrip("\n").split("\n")
    first = next((i for i, row in enumerate(rows) if row.startswith("@@ ")), None)
    if not binary and first is not None:
        old_no = new_no = 0
        hunk = -1
        for row in rows[first:]:
            patch_rows.append(row)
            position = len(patch_rows)
            header = HUNK_HEADER.match(row)
            if header:
                hunk += 1
                old_no, new_no = int(header.group(1)), int(header.group(3))
                lines.append(DiffLine(position, "@", None, None, hunk))
            elif row.startswith("+"):
                lines.append(DiffLine(position, "+", None, new_no, hunk))
                new_no += 1
                additions += 1
            elif row.startswith("-"):
                lines.append(DiffLine(position, "-", old_no, None, hunk))
                old_no += 1
                deletions += 1
            elif row.startswith("\\"):
                lines.append(DiffLine(position, "\\", None, None, hunk))
            else:
                lines.append(DiffLine(position, " ", old_no, new_no, hunk))
                old_no += 1
                new_no += 1
    status = STATUS.get(code, "modified")
    sha = blobs["base"][old] if status == "removed" else blobs["head"][new]
    return FileDiff(
        new,
        status,
        old if status == "renamed" else None,
        additions,
        deletions,
        sha,
        "\n".join(patch_rows) if patch_rows else None,
        lines,
    )
