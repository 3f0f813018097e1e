"""The local forge against real git repositories."""

from __future__ import annotations

import subprocess

import pytest

from bot.forge.base import ReviewComment
from bot.forge.local import ForgeError, LocalForge


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture()
def forge(tmp_path):
    return LocalForge(tmp_path / "fork", tmp_path / "work")


def test_new_fork_is_created_with_a_base_commit(forge):
    assert git(forge.fork, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert "README.md" in git(forge.fork, "ls-files")


def test_seeded_fork_copies_the_seed(tmp_path):
    seed = tmp_path / "seed"
    (seed / "cmd").mkdir(parents=True)
    (seed / "cmd" / "x.go").write_text("package cmd\n")
    f = LocalForge(tmp_path / "fork", tmp_path / "work", seed_dir=seed)
    assert f.read_file("main", "cmd/x.go") == b"package cmd\n"


def test_commits_are_atomic_and_never_touch_the_working_tree(forge):
    forge.ensure_branch("promotion/1-x", "main")
    sha = forge.commit_files(
        "promotion/1-x", {"a/b.txt": b"one\n", "c.md": b"two\n"}, message="stage 1: x\n\nPromotion-Stage: 1\n"
    )
    assert sha and forge.read_file("promotion/1-x", "a/b.txt") == b"one\n"
    assert forge.list_files("promotion/1-x", "a") == ["a/b.txt"]
    assert not (forge.fork / "a").exists()  # working tree untouched
    assert git(forge.fork, "status", "--porcelain") == ""
    assert forge.commits("promotion/1-x", "main") == [(sha, "stage 1: x")]


def test_identical_content_makes_no_commit_and_removal_works(forge):
    forge.ensure_branch("b", "main")
    first = forge.commit_files("b", {"x.txt": b"1"}, message="s1")
    assert forge.commit_files("b", {"x.txt": b"1"}, message="s1 again") is None
    second = forge.commit_files("b", {"y.txt": b"2"}, message="s2", remove=("x.txt",))
    assert second and forge.read_file("b", "x.txt") is None and forge.read_file("b", "y.txt") == b"2"
    assert forge.find_commit("b", "s1") == first


def test_many_files_are_stored_byte_for_byte_whatever_the_repository_filters(forge):
    """Blobs are hashed as they are: no end-of-line conversion from the fork's attributes or settings."""
    forge.ensure_branch("b", "main")
    forge.commit_files("b", {".gitattributes": b"* text eol=crlf\n"}, message="attributes")
    git(forge.fork, "config", "core.autocrlf", "true")
    files = {f"plots/p{i:02d}.png": bytes([137, 80, 78, 71, 13, 10, 26, 10, i]) * 50 for i in range(40)}
    files |= {"docs/a b,c.md": b"line one\nline two\r\n", "x.txt": b"", "docs/b.md": b"no newline"}
    sha = forge.commit_files("b", files, message="many")
    assert sha
    for name, data in files.items():
        assert forge.read_file("b", name) == data, name
    assert set(forge.list_files("b")) == set(files) | {".gitattributes", "README.md"}


@pytest.mark.parametrize("bad", ["../escape.txt", "/abs.txt", ".git/config", "a/../../b", ".github/workflows/x.yml"])
def test_unsafe_paths_are_refused_and_nothing_is_committed(forge, bad):
    forge.ensure_branch("b", "main")
    head = git(forge.fork, "rev-parse", "refs/heads/b").strip()
    with pytest.raises(ForgeError, match="refusing to write"):
        forge.commit_files("b", {"ok.txt": b"1", bad: b"2"}, message="m")
    assert git(forge.fork, "rev-parse", "refs/heads/b").strip() == head


def test_a_directory_that_is_not_a_repository_is_refused(tmp_path):
    d = tmp_path / "notgit"
    d.mkdir()
    (d / "file").write_text("x")
    with pytest.raises(ForgeError, match="not a git repository"):
        LocalForge(d, tmp_path / "w")


def test_sticky_comments_are_updated_not_duplicated(forge):
    forge.upsert_comment("bot:status", "first")
    forge.upsert_comment("bot:review-1", "review")
    forge.upsert_comment("bot:status", "second")
    thread = (forge.work / "issue" / "thread.md").read_text()
    assert thread.count("<!-- bot:status -->") == 1 and "second" in thread and "first" not in thread
    assert thread.index("bot:status") < thread.index("bot:review-1")


def test_pr_record_and_anchored_review_comments(forge):
    forge.ensure_branch("promotion/1-x", "main")
    code = "".join(f"// line {i}\n" for i in range(1, 21)).encode()
    forge.commit_files("promotion/1-x", {"pkg/a.go": code}, message="stage 2")
    assert forge.pull_request("promotion/1-x") is None
    pr = forge.open_or_update_pr("promotion/1-x", "main", "Title", "Body text")
    assert forge.pull_request("promotion/1-x") == pr
    forge.set_review_comments(pr, "m", [ReviewComment("pkg/a.go", 12, "IMPORTANT: x")], body="round 1")
    forge.set_review_comments(
        pr,
        "m",
        [ReviewComment("pkg/a.go", 14, "IMPORTANT: y"), ReviewComment("pkg/b.go", 3, "off the diff")],
        body="round 2",
    )
    text = (forge.work / "pr" / "pull-request.md").read_text()
    assert "# PR #1 (draft): Title" in text and "Body text" in text
    assert "`pkg/a.go` line 14" in text and "line 12" not in text and "round 1" not in text
    assert "round 2" in text and "`pkg/b.go:3` (not in the diff): off the diff" in text
    forge.mark_ready(pr)
    assert "# PR #1: Title" in (forge.work / "pr" / "pull-request.md").read_text()


def test_removal_works_in_a_bare_clone(tmp_path):
    """Found with a restart on GitHub: `update-index --force-remove` needs a work tree, and the GitHub forge's
    clone of the fork is bare, so the first commit that removed files failed."""
    from bot.forge.git import GitRepo

    bare = tmp_path / "fork.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    repo = GitRepo(bare)
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").strip()
    tree = repo.git("mktree", input=f"100644 blob {blob}\tREADME.md\n".encode()).strip()
    repo.git("update-ref", "refs/heads/main", repo.git("commit-tree", tree, "-m", "base").strip())
    repo.commit_files("main", {"a/x.txt": b"1", "a/y.txt": b"2"}, message="add")
    assert repo.commit_files("main", {}, message="remove", remove=("a/x.txt", "a/gone.txt"))
    assert repo.git("ls-tree", "-r", "--name-only", "main").split() == ["README.md", "a/y.txt"]


def test_a_file_the_benchmark_delivered_can_be_removed_but_nothing_outside_the_branch(tmp_path):
    """Benchmark reports are named `.../load-spikes+metric-staleness/...`: a stage never writes such a name, but a
    restart must be able to remove it."""
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    forge.ensure_branch("b", "main")
    report = "benchmarks/promotion/x/results/baseline/load-spikes+metric-staleness/rate-45/rep-1/r,1.yaml"
    git(forge.fork, "checkout", "-q", "b")
    (forge.fork / report).parent.mkdir(parents=True)
    (forge.fork / report).write_text("r\n")
    git(forge.fork, "add", report)
    git(forge.fork, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "benchmark results")
    git(forge.fork, "checkout", "-q", "main")
    assert forge.commit_files("b", {}, message="restart", remove=(report,))
    assert forge.read_file("b", report) is None
    for bad in ("../x", "/etc/passwd", ".git/config", "a/\nb"):
        with pytest.raises(ForgeError, match="refusing to remove"):
            forge.commit_files("b", {}, message="m", remove=(bad,))


def test_reads_follow_the_branch_when_another_writer_moves_it_loose_or_packed(forge, tmp_path):
    """Reads are kept per commit, and the head is read from git's ref file: another process's commit, a
    packed ref and a branch that goes away are all seen at once."""
    from bot.forge.git import GitRepo

    forge.ensure_branch("promotion/1-x", "main")
    forge.commit_files("promotion/1-x", {"a.txt": b"one\n"}, message="one\n")
    assert forge.read_file("promotion/1-x", "a.txt") == b"one\n"
    other = GitRepo(forge.fork)  # another process on the same fork
    other.commit_files("promotion/1-x", {"a.txt": b"two\n"}, message="two\n")
    assert forge.read_file("promotion/1-x", "a.txt") == b"two\n"
    assert forge.read_file("promotion/1-x", "missing.txt") is None
    git(forge.fork, "pack-refs", "--all")
    assert not (forge.fork / ".git" / "refs" / "heads" / "promotion" / "1-x").exists()
    head = git(forge.fork, "rev-parse", "refs/heads/promotion/1-x").strip()
    assert forge.branch_head("promotion/1-x") == head
    other.commit_files("promotion/1-x", {"a.txt": b"three\n"}, message="three\n")
    assert forge.read_file("promotion/1-x", "a.txt") == b"three\n"
    git(forge.fork, "update-ref", "-d", "refs/heads/promotion/1-x")
    assert forge.read_file("promotion/1-x", "a.txt") is None and forge.branch_head("promotion/1-x") is None
    assert forge.branch_head("../../HEAD") is None  # never a file outside refs/heads


def _half_made_fork(path):
    """What an older version left when a full disk stopped its seeding: `git init`, files staged, no commit."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("half\n")
    git(path, "add", "-A")
    return path


def test_the_bot_s_own_half_made_fork_is_made_again(tmp_path):
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "go.mod").write_text("module example.com/x\n")
    fork = _half_made_fork(tmp_path / "work" / "fork")
    forge = LocalForge(fork, tmp_path / "work", seed_dir=seed, own=True)
    assert forge.repo.rev("main")
    assert git(fork, "ls-tree", "--name-only", "main").split() == ["go.mod"]
    assert not list((tmp_path / "work").glob(".fork.seeding-*"))


def test_a_half_made_fork_the_person_gave_is_refused_and_left_alone(tmp_path):
    fork = _half_made_fork(tmp_path / "theirs")
    with pytest.raises(ForgeError, match="is a git repository without a commit; pass a clone of the fork"):
        LocalForge(fork, tmp_path / "work")
    assert git(fork, "status", "--short").strip() == "A  README.md"


def test_a_new_fork_appears_only_with_its_first_commit(tmp_path):
    """The seeding happens next to the fork and is renamed into place: an empty directory given as --fork
    becomes the fork; a seeding that fails leaves the path as it was and nothing next to it."""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert LocalForge(empty, tmp_path / "w1").repo.rev("main")
    with pytest.raises(FileNotFoundError):
        LocalForge(tmp_path / "f2", tmp_path / "w2", seed_dir=tmp_path / "no-such-seed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "w1"]


@pytest.mark.parametrize(
    ("stderr", "returncode", "code"),
    [
        ("error: file write error: No space left on device\nfatal: unable to write loose object file", 128, "ENOSPC"),
        ("fatal: unable to write new index file", 128, "ENOSPC"),  # git names no cause for the index
        ("error: unable to write file x: Disk quota exceeded", 128, "EDQUOT"),
        ("killed by SIGXFSZ", -25, "EFBIG"),
        ("error: insufficient permission for adding an object to repository database .git/objects", 128, None),
        ("fatal: Unable to create '/f/.git/index.lock': Read-only file system\nunable to write", 128, None),
        ("fatal: bad object deadbeef", 128, None),
    ],
)
def test_git_out_of_room_is_told_apart_from_a_path_problem(stderr, returncode, code):
    import errno

    from bot.forge.git import no_room

    assert no_room(stderr, returncode) == (getattr(errno, code) if code else None)


def test_git_out_of_room_is_an_os_error_naming_the_fork_and_still_a_forge_error(forge, tmp_path, monkeypatch):
    """At the process boundary: a commit whose git runs under a 1 KiB file-size limit (its index is larger)."""
    import errno
    import os
    import shutil

    from bot.forge.git import GitNoRoom

    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nulimit -f 1\nexec {shutil.which("git")} "$@"\n')
    wrapper.chmod(0o755)
    forge.ensure_branch("promotion/1-x", "main")
    files = {f"docs/f{i}.md": f"file {i}\n".encode() for i in range(40)}
    forge.commit_files("promotion/1-x", files, message="forty files")
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(GitNoRoom) as caught:
        forge.commit_files("promotion/1-x", {"docs/g.md": b"g\n"}, message="one more")
    exc = caught.value
    assert isinstance(exc, ForgeError) and isinstance(exc, OSError)
    assert (exc.errno, exc.filename) == (errno.EFBIG, str(forge.fork))
    assert exc.strerror == "git read-tree: File too large (killed by SIGXFSZ)"
    assert "failed in" in str(exc) and "killed by SIGXFSZ" in str(exc)
