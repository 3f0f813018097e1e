"""The promotion branch moved under the bot: it stops, says what moved and how to go on, and never builds on it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from bot.model import PipelineState, Status
from tests.conftest import BRANCH, REQUEST, git

pytestmark = pytest.mark.slow

EVE = {
    "GIT_AUTHOR_NAME": "eve",
    "GIT_AUTHOR_EMAIL": "eve@example.com",
    "GIT_COMMITTER_NAME": "eve",
    "GIT_COMMITTER_EMAIL": "eve@example.com",
}


def state_of(work: Path) -> PipelineState:
    return PipelineState.model_validate_json((work / "state.json").read_text())


def foreign_commit(fork: Path, path: str, text: str, subject: str) -> str:
    """A commit by someone else on the promotion branch, made as a push would (the working tree untouched)."""
    env = {**os.environ, **EVE, "GIT_INDEX_FILE": str(fork / ".git" / "eve-index")}
    run = lambda *a, **kw: subprocess.run(  # noqa: E731
        ["git", "-C", str(fork), *a], capture_output=True, text=True, check=True, env=env, **kw
    ).stdout.strip()
    parent = run("rev-parse", BRANCH)
    run("read-tree", parent)
    blob = run("hash-object", "-w", "--stdin", input=text)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    commit = run("commit-tree", run("write-tree"), "-p", parent, "-m", subject)
    run("update-ref", f"refs/heads/{BRANCH}", commit, parent)
    return commit


def to_gate_1(tmp_path: Path, capsys) -> tuple[Path, Path, list[str]]:
    work = tmp_path / "w"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert main(["run", str(REQUEST), *common]) == 0
    capsys.readouterr()
    return work, work / "fork", common


def test_a_commit_by_someone_else_during_gate_1(tmp_path, capsys):
    work, fork, common = to_gate_1(tmp_path, capsys)
    bots_head = git(fork, "rev-parse", BRANCH).strip()
    assert state_of(work).head == bots_head
    eve = foreign_commit(fork, "cmd/epp/backdoor.go", "package main\n", "tweak scorer")

    assert main(["approve", "1", *common]) == 1
    err = capsys.readouterr().err
    assert "the promotion branch promotion/1-evolved-adaptive-scorer moved" in err
    assert f'{eve[:12]} "tweak scorer"' in err and "--adopt-branch" in err and bots_head in err
    assert git(fork, "rev-parse", BRANCH).strip() == eve, "nothing was built on the foreign commit"
    s = state_of(work)
    assert s.status is Status.FAILED and int(s.failure.stage) == 3 and s.decisions[-1].decision.value == "approve"
    assert main(["status", "--work", str(work)]) == 0
    assert "stage 3 FAILED: the promotion branch" in capsys.readouterr().out

    assert main(["resume", *common]) == 1, "resuming without adopting halts again"
    assert git(fork, "rev-parse", BRANCH).strip() == eve
    capsys.readouterr()

    assert main(["resume", "--adopt-branch", *common]) == 0
    assert "stopped at gate 2" in capsys.readouterr().out
    s = state_of(work)
    assert s.open_gate == 2 and any(a.event == "adopted branch commits" and eve[:12] in a.detail for a in s.audit)
    stage3 = s.stages[3].commit
    assert git(fork, "rev-parse", f"{stage3}^").strip() == eve, "stage 3 builds on the adopted commit"


def test_a_branch_reset_to_its_first_commit(tmp_path, capsys):
    work, fork, common = to_gate_1(tmp_path, capsys)
    bots_head = git(fork, "rev-parse", BRANCH).strip()
    git(fork, "update-ref", f"refs/heads/{BRANCH}", git(fork, "rev-parse", "main").strip())

    assert main(["approve", "1", *common]) == 1, "no traceback, no state stuck at 'stage 3 due'"
    err = capsys.readouterr().err
    assert "was reset or rewritten" in err and f"git update-ref refs/heads/{BRANCH} {bots_head}" in err
    assert state_of(work).status is Status.FAILED

    assert main(["resume", "--adopt-branch", *common]) == 2
    assert "only commits added on top of the bot's can be adopted" in capsys.readouterr().err

    git(fork, "update-ref", f"refs/heads/{BRANCH}", bots_head)  # the fix the message gives
    assert main(["resume", *common]) == 0
    assert "stopped at gate 2" in capsys.readouterr().out
    assert git(fork, "rev-parse", f"{state_of(work).stages[3].commit}^").strip() == bots_head


def test_a_run_killed_between_its_commit_and_the_state_save_resumes(tmp_path, capsys, monkeypatch):
    """The bot's own unsaved commit is not mistaken for someone else's."""
    from bot.forge.state_file import FileStateStore

    work, fork, common = to_gate_1(tmp_path, capsys)
    real_save = FileStateStore.save

    def crash_after_stage_3(self, state, status):
        if 3 in state.stages:
            raise KeyboardInterrupt  # as if killed after the commit, before the save
        real_save(self, state, status)

    monkeypatch.setattr(FileStateStore, "save", crash_after_stage_3)
    assert main(["approve", "1", *common]) == 130
    monkeypatch.setattr(FileStateStore, "save", real_save)
    unsaved = git(fork, "rev-parse", BRANCH).strip()
    assert 3 not in state_of(work).stages and unsaved != state_of(work).head
    capsys.readouterr()

    assert main(["resume", *common]) == 0
    assert "stopped at gate 2" in capsys.readouterr().out
    s = state_of(work)
    assert s.stages[3].commit == unsaved == s.head, "the interrupted write is the stage's commit, not redone"
    # and the trail says the bot accepted a commit its state did not record (found in review: a commit carrying
    # the due step's inputs trailer was accepted without a word)
    accepted = [a for a in s.audit if a.event == "built on commits the guard accepted"]
    assert accepted and unsaved[:12] in accepted[-1].detail
    assert len(git(fork, "log", "--format=%H", f"main..{BRANCH}").split()) == 3
