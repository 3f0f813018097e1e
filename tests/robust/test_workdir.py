"""A work directory knows where it is and who is using it: copies, moves, and two commands at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import main
from bot.cli.workdir import LOCK_FILE, read_settings, work_lock, write_settings
from tests.conftest import BRANCH, REQUEST, RESULTS, git

PROMOTE = Path(sys.executable).parent / "promote"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _settings(tmp_path: Path, fork: Path) -> dict:
    return {"request": str(REQUEST), "fork": str(fork), "results": None}


# ------------------------------------------------------------------ run.json
def test_the_default_fork_is_stored_relative_to_the_work_directory(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    write_settings(work, _settings(tmp_path, work / "fork"))
    raw = json.loads((work / "run.json").read_text())
    assert raw["fork"] == "fork" and raw["work"] == str(work) and len(raw["id"]) == 32
    assert read_settings(work)["fork"] == str(work / "fork")

    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    settings = read_settings(copy)
    assert settings["fork"] == str(copy / "fork"), "a copy drives its own fork"
    assert settings["moved_from"] == str(work)


def test_a_copy_that_shares_an_outside_fork_is_refused(tmp_path):
    work, fork = tmp_path / "w", tmp_path / "shared-fork"
    work.mkdir()
    write_settings(work, _settings(tmp_path, fork))
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    with pytest.raises(Exception, match=r"copy of the work directory .*/w, and both drive the fork .*shared-fork"):
        read_settings(copy)
    assert read_settings(work)["fork"] == str(fork), "the original goes on"

    moved = tmp_path / "moved"
    work.rename(moved)  # moved, not copied: the original place is gone
    assert read_settings(moved)["moved_from"] == str(work)


def test_a_run_file_from_before_this_version(tmp_path, capsys):
    """run.json once held the fork as an absolute path and nothing else: a copy must not reach back."""
    work = tmp_path / "w"
    (work / "fork" / ".git").mkdir(parents=True)
    (work / "run.json").write_text(json.dumps(_settings(tmp_path, work / "fork")))
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    with pytest.raises(Exception, match="copy of the work directory"):
        read_settings(copy)
    code = main(["resume", "--work", str(copy), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "copy of the work directory" in err and err.count("\n") == 1

    moved = tmp_path / "moved"
    shutil.rmtree(copy)
    work.rename(moved)
    settings = read_settings(moved)
    assert settings["fork"] == str(moved / "fork") and settings["moved_from"] == str(work)


@pytest.mark.slow
def test_a_copied_work_directory_commits_into_its_own_fork(tmp_path, capsys):
    work = tmp_path / "w"
    common = ["--quiet", "--actor", "bob"]
    assert main(["run", str(REQUEST), "--work", str(work), *common]) == 0
    original_head = git(work / "fork", "rev-parse", BRANCH).strip()
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    capsys.readouterr()

    assert main(["request-changes", "1", "--reason", "param loadHighThreshold: 9", "--work", str(copy), *common]) == 0
    assert "this work directory was at" in capsys.readouterr().err
    assert git(work / "fork", "rev-parse", BRANCH).strip() == original_head, "the original's fork is untouched"
    assert git(copy / "fork", "rev-parse", BRANCH).strip() != original_head
    assert json.loads((copy / "run.json").read_text())["work"] == str(copy)
    assert main(["approve", "1", "--work", str(work), *common]) == 0, "the original goes on on its own"


# ---------------------------------------------------------------------- lock
def test_a_second_command_waits_its_turn(tmp_path, capsys):
    work = tmp_path / "w"
    work.mkdir()
    with work_lock(work, "run"):
        holder = json.loads((work / LOCK_FILE).read_text())
        assert holder["pid"] == os.getpid() and holder["command"] == "run"
        with (
            pytest.raises(Exception, match=r"another promote command holds this work directory \(pid \d+"),
            work_lock(work, "approve"),
        ):
            pass
    assert not (work / LOCK_FILE).exists(), "released"


def test_a_stale_lock_is_taken_over_with_a_note(tmp_path, capsys):
    work = tmp_path / "w"
    work.mkdir()
    import socket

    (work / LOCK_FILE).write_text(
        json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "command": "run", "since": "earlier"})
    )
    with work_lock(work, "resume"):
        assert json.loads((work / LOCK_FILE).read_text())["pid"] == os.getpid()
    assert "took over the lock of pid" in capsys.readouterr().err


def test_a_reused_pid_is_not_mistaken_for_the_holder(tmp_path, capsys):
    import socket

    work = tmp_path / "w"
    work.mkdir()
    stale = {"pid": os.getpid(), "start": 1, "host": socket.gethostname(), "command": "run", "since": "boot"}
    (work / LOCK_FILE).write_text(json.dumps(stale))
    with work_lock(work, "resume"):
        pass
    assert "took over" in capsys.readouterr().err


@pytest.mark.slow
def test_two_runs_on_one_new_work_directory(tmp_path, capsys):
    """The second run says who holds the directory; it does not fail half-way on the first one's fork."""
    work = tmp_path / "w"
    first = subprocess.Popen(
        [str(PROMOTE), "run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--work", str(work)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (work / LOCK_FILE).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (work / LOCK_FILE).exists()
    code = main(["run", str(REQUEST), "--results", str(RESULTS), "--allow-sample-data", "--work", str(work)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "another promote command holds this work directory" in err, err
    assert f"pid {first.pid}" in err and "no branch" not in err
    while not (work / "state.json").exists() and first.poll() is None:
        time.sleep(0.01)
    assert main(["status", "--work", str(work)]) == 0  # status only reads: it never waits for the lock
    assert f"in progress: `promote run` (pid {first.pid})" in capsys.readouterr().out
    assert first.wait(timeout=300) == 0, first.stderr.read()
    assert not (work / LOCK_FILE).exists()
    assert main(["status", "--work", str(work)]) == 0
    assert "in progress" not in capsys.readouterr().out
