"""Git plumbing shared by both forges: atomic commits on a branch without a working tree.

Commits are made through a private index (``read-tree``, ``update-index``,
``write-tree``, ``commit-tree``) and the branch moves with a compare-and-swap
``update-ref``: the repository's working tree and index are never touched, a
killed run leaves the branch at its last complete commit, and two writers can
never interleave commits. The GitHub forge adds a compare-and-swap push.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from bot.model import RequestError

BOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "promotion-bot",
    "GIT_AUTHOR_EMAIL": "promotion-bot@users.noreply.local",
    "GIT_COMMITTER_NAME": "promotion-bot",
    "GIT_COMMITTER_EMAIL": "promotion-bot@users.noreply.local",
}


class ForgeError(RequestError):
    """The fork or work directory cannot be used as given."""


class GitNoRoom(OSError, ForgeError):
    """git could not write the fork's objects or index: a full disk, a quota or a file-size limit (``ulimit -f``).

    An ``OSError`` with the errno, so the CLI words it as any full disk (``bot.cli.stopped``: free space, then how
    to go on) rather than git's bare "unable to write"; a ``ForgeError`` too, so whoever catches the forge's
    refusals (the GitHub handlers) still does. ``str()`` is the ForgeError's sentence, git's words included."""

    def __init__(self, code: int, reason: str, path: Path, message: str):
        super().__init__(code, reason, str(path))
        self.message = message

    def __str__(self) -> str:
        return self.message


_SAFE_PATH = re.compile(r"^(?!/)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9_.][A-Za-z0-9_.,/ -]*$")


def path_problem(path: str) -> str | None:
    """Why the forges refuse to write ``path``, or None. Stages write only plain relative paths: letters, digits
    and ``_.,/ -``, no '..', no absolute paths, nothing under .git or .github. The Claude author's guard asks
    the same question, so a name the forge would refuse goes back to the author instead of stopping the step."""
    if not _SAFE_PATH.match(path) or path.startswith((".git/", ".github/")) or path == ".git":
        return "not a plain relative path (letters, digits and _.,/ - only; no '..', .git/ or .github/)"
    return None


def check_path(path: str) -> None:
    why = path_problem(path)
    if why:
        raise ForgeError(f"refusing to write {path!r} on the promotion branch: {why}")


def check_removal(path: str) -> None:
    """A removal names a file already on the branch (the benchmark's reports carry '+' and other characters a
    stage never writes): any relative path outside .git and .github, with no '..' and no control characters."""
    if (
        not path
        or path.startswith(("/", ".git/", ".github/"))
        or ".." in path.split("/")
        or any(ord(c) < 32 or c == "\x7f" for c in path)
    ):
        raise ForgeError(f"refusing to remove {path!r} from the promotion branch: not a plain relative path")


_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
#: What reads keep: a promotion's stages read the same few dozen files (hypotheses, translation.json) again
#: and again, at a head that moves between stages, and each read was a git process. A commit's tree and a
#: blob's content never change, so the blobs of each head (one ``ls-tree``) and their contents are kept.
_KEPT_TREES = 8
_KEPT_BLOB_BYTES = 1 << 20
_KEPT_BLOBS = 512


class GitRepo:
    def __init__(self, path: Path):
        self.path = Path(path)
        self._git_dir: Path | None = None
        self._trees: dict[str, dict[str, str]] = {}  # commit -> {path: blob}
        self._blobs: dict[str, bytes] = {}

    def git(self, *args: str, input: bytes | None = None, env: dict | None = None, check: bool = True) -> str:
        full_env = {**os.environ, **BOT_IDENTITY, **(env or {})}
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], input=input, capture_output=True, env=full_env, check=False
        )
        if check and proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip() or _signal_name(proc.returncode)
            message = f"git {' '.join(args[:2])} failed in {self.path}: {why}"
            code = no_room(why, proc.returncode)
            if code is not None:
                said = "File too large (killed by SIGXFSZ)" if proc.returncode == -signal.SIGXFSZ else _last_line(why)
                raise GitNoRoom(code, f"git {args[0]}: {said}", self.path, message)
            raise ForgeError(message)
        return proc.stdout.decode()

    def rev(self, ref: str) -> str | None:
        """The commit ``refs/heads/<ref>`` points at, or None. A loose ref is read as the file git keeps it in
        (what ``rev-parse`` would read, without a process); a packed or symbolic one asks git."""
        loose = self._loose_ref(ref)
        if loose is not None:
            return loose
        out = self.git("rev-parse", "--verify", "-q", f"refs/heads/{ref}", check=False).strip()
        return out or None

    def _loose_ref(self, ref: str) -> str | None:
        if ".." in ref.split("/") or ref.startswith("/"):
            return None
        if self._git_dir is None:
            out = self.git("rev-parse", "--absolute-git-dir", check=False).strip()
            if not out:
                return None
            self._git_dir = Path(out)
        try:
            text = (self._git_dir / "refs" / "heads" / ref).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return text if _SHA.match(text) else None

    def changed_paths(self, commit: str) -> list[str]:
        """The paths ``commit`` adds, changes or removes, against its first parent."""
        out = self.git("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", "-z", commit)
        return sorted(p for p in out.split("\0") if p)

    def ensure_branch(self, branch: str, base: str) -> str:
        head = self.rev(branch)
        if head:
            return head
        base_sha = self.rev(base)
        if not base_sha:
            raise ForgeError(f"{self.path}: base branch {base!r} does not exist")
        self.git("update-ref", f"refs/heads/{branch}", base_sha, "")
        return base_sha

    def commit_files(
        self, branch: str, files: dict[str, bytes], *, message: str, remove: tuple[str, ...] = ()
    ) -> str | None:
        """One commit of ``files`` (and removals) on ``branch``, moved by compare-and-swap; None when nothing changed."""
        parent = self.rev(branch)
        if parent is None:
            raise ForgeError(f"branch {branch} does not exist; call ensure_branch first")
        for path in files:
            check_path(path)
        for path in remove:
            check_removal(path)
        with tempfile.TemporaryDirectory() as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", parent, env=env)
            gone = [path for path in sorted(remove) if path not in files]
            if gone:  # mode 0 drops the entry; --force-remove needs a work tree, which a bare clone has not
                listing = "".join(f"0 {'0' * 40}\t{path}\n" for path in gone)
                self.git("update-index", "--index-info", input=listing.encode(), env=env)
            self._add_blobs(Path(tmp), files, env)
            tree = self.git("write-tree", env=env).strip()
        if tree == self.git("rev-parse", f"{parent}^{{tree}}").strip():
            return None
        commit = self.git("commit-tree", tree, "-p", parent, "-F", "-", input=message.encode()).strip()
        self.git("update-ref", f"refs/heads/{branch}", commit, parent)  # fails if the branch moved meanwhile
        return commit

    def _add_blobs(self, tmp: Path, files: dict[str, bytes], env: dict) -> None:
        """Store ``files`` as blobs and stage them in the private index: two git processes, not two per file
        (a stage commits up to ~50 files). Contents are hashed as they are (no filters, like ``--stdin``)."""
        if not files:
            return
        names = sorted(files)
        blobs_dir = tmp / "blobs"
        blobs_dir.mkdir()
        for i, name in enumerate(names):
            (blobs_dir / str(i)).write_bytes(files[name])
        listing = "".join(f"{blobs_dir / str(i)}\n" for i in range(len(names))).encode()
        blobs = self.git("hash-object", "-w", "--no-filters", "--stdin-paths", input=listing).split()
        if len(blobs) != len(names):
            raise ForgeError(f"git hash-object stored {len(blobs)} of {len(names)} files in {self.path}")
        info = b"".join(f"100644 {blob}\t{name}".encode() + b"\0" for blob, name in zip(blobs, names, strict=True))
        self.git("update-index", "-z", "--index-info", input=info, env=env)

    def read_file(self, branch: str, path: str) -> bytes | None:
        head = self.rev(branch)
        if head is None:
            return None
        blob = self._tree(head).get(path)
        if blob is None:  # not a file there (a directory, a name git would normalise): ask git as it is
            proc = subprocess.run(
                ["git", "-C", str(self.path), "show", f"{head}:{path}"], capture_output=True, check=False
            )
            return proc.stdout if proc.returncode == 0 else None
        return self._blob(blob)

    def _blob(self, blob: str) -> bytes | None:
        """A blob's bytes, kept when small (a stage reads the same files again); None when git cannot read it."""
        data = self._blobs.get(blob)
        if data is None:
            proc = subprocess.run(
                ["git", "-C", str(self.path), "cat-file", "blob", blob], capture_output=True, check=False
            )
            if proc.returncode != 0:
                return None
            data = proc.stdout
            if len(data) <= _KEPT_BLOB_BYTES:
                _keep(self._blobs, blob, data, _KEPT_BLOBS)
        return data

    def files_at(self, commit: str, prefix: str) -> dict[str, bytes] | None:
        """The files under ``prefix`` as they are in ``commit`` (path -> bytes); None when ``commit`` is not a
        full commit id this repository holds (one of a history since rewritten, or never fetched): what a
        report names as the commit it measured is checked against the code there, not taken on its word."""
        if not _SHA.match(commit):
            return None
        known = subprocess.run(
            ["git", "-C", str(self.path), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, check=False
        )
        if known.returncode != 0:
            return None
        under = prefix.rstrip("/") + "/" if prefix else ""
        out: dict[str, bytes] = {}
        for path, blob in sorted(self._tree(commit).items()):
            if path.startswith(under):
                data = self._blob(blob)
                if data is None:
                    return None
                out[path] = data
        return out

    def _tree(self, commit: str) -> dict[str, str]:
        """Every file of ``commit``'s tree and its blob, listed once per commit."""
        tree = self._trees.get(commit)
        if tree is None:
            out = self.git("ls-tree", "-r", "-z", "--full-tree", commit, check=False)
            tree = {}
            for line in out.split("\0"):
                meta, _, name = line.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob":
                    tree[name] = parts[2]
            _keep(self._trees, commit, tree, _KEPT_TREES)
        return tree

    def list_files(self, branch: str, prefix: str = "") -> list[str]:
        if not self.rev(branch):
            return []
        out = self.git("ls-tree", "-r", "--name-only", f"refs/heads/{branch}", "--", prefix or ".")
        return sorted(line for line in out.splitlines() if line)

    def find_commit(self, branch: str, trailer: str) -> str | None:
        if not self.rev(branch):
            return None
        # The trailer must be a whole line: quoted text (a reviewer's reason) is indented and cannot match.
        anchored = "^" + re.sub(r"([.\[\]*^$\\])", r"\\\1", trailer) + "$"
        out = self.git("log", "--format=%H", f"--grep={anchored}", f"refs/heads/{branch}", "-n", "1")
        return out.strip() or None

    def commits(self, branch: str, base: str) -> list[tuple[str, str]]:
        if not self.rev(branch):
            return []
        out = self.git("log", "--reverse", "--format=%H %s", f"refs/heads/{base}..refs/heads/{branch}")
        return [tuple(line.split(" ", 1)) for line in out.splitlines() if line]  # type: ignore[misc]

    def changed_lines(self, base: str, branch: str) -> dict[str, set[int]]:
        """Lines of ``branch`` a review comment may anchor to: the RIGHT side of the PR diff (added and context lines)."""
        from bot.forge.diff import commentable_lines

        if not self.rev(branch) or not self.rev(base):
            return {}
        return commentable_lines(self.git("diff", "--no-color", "-U3", f"refs/heads/{base}...refs/heads/{branch}"))


#: git's words for "no room to write", and the errno each stands for.
_NO_ROOM = (
    ("No space left on device", errno.ENOSPC),
    ("Disk quota exceeded", errno.EDQUOT),
    ("File too large", errno.EFBIG),
)
#: git's words when the path, not the room, is the problem ("unable to write" appears with these too).
_NOT_ROOM = ("Permission denied", "insufficient permission", "Read-only file system")


def no_room(stderr: str, returncode: int) -> int | None:
    """The errno when git failed for want of room to write (see ``GitNoRoom``), else None. git names the cause
    only sometimes: an object it cannot write says why, a new index file it cannot write ("unable to write new
    index file") does not, and a file past ``ulimit -f`` kills it with SIGXFSZ."""
    if returncode == -signal.SIGXFSZ:
        return errno.EFBIG
    for words, code in _NO_ROOM:
        if words in stderr:
            return code
    if "unable to write" in stderr and not any(words in stderr for words in _NOT_ROOM):
        return errno.ENOSPC
    return None


def _last_line(text: str) -> str:
    """git's last line without its ``fatal:``/``error:`` prefix: the one that says what it could not do."""
    last = text.strip().splitlines()[-1] if text.strip() else text
    return re.sub(r"^(?:fatal|error): ", "", last.strip())


def _signal_name(returncode: int) -> str:
    """Why git ended without a word: the signal that killed it (SIGXFSZ: a file past `ulimit -f`), or its status."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def _keep(cache: dict, key: str, value, most: int) -> None:
    while len(cache) >= most:
        cache.pop(next(iter(cache)))
    cache[key] = value


class GitBranches:
    """The fork side of the Forge protocol, for a forge that holds its branches in a ``GitRepo``."""

    repo: GitRepo

    def ensure_branch(self, branch: str, base: str) -> str:
        return self.repo.ensure_branch(branch, base)

    def commit_files(
        self, branch: str, files: dict[str, bytes], *, message: str, remove: tuple[str, ...] = ()
    ) -> str | None:
        return self.repo.commit_files(branch, files, message=message, remove=remove)

    def branch_head(self, branch: str) -> str | None:
        return self.repo.rev(branch)

    def changed_paths(self, commit: str) -> list[str]:
        return self.repo.changed_paths(commit)

    def read_file(self, branch: str, path: str) -> bytes | None:
        return self.repo.read_file(branch, path)

    def list_files(self, branch: str, prefix: str = "") -> list[str]:
        return self.repo.list_files(branch, prefix)

    def files_at(self, commit: str, prefix: str) -> dict[str, bytes] | None:
        return self.repo.files_at(commit, prefix)

    def find_commit(self, branch: str, trailer: str) -> str | None:
        return self.repo.find_commit(branch, trailer)

    def commits(self, branch: str, base: str) -> list[tuple[str, str]]:
        return self.repo.commits(branch, base)
