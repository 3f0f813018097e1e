"""A stage that cannot finish halts the promotion with its reason; `promote resume` runs it again."""

from __future__ import annotations

import pytest

from bot.cli import main
from bot.forge.state_file import read_state
from bot.model import Status
from bot.stages import hypothesize
from bot.stages.context import StageFailed
from tests.conftest import REQUEST, RESULTS

pytestmark = pytest.mark.slow


def test_failed_stage_is_shown_failed_and_resume_retries_it(tmp_path, capsys, monkeypatch):
    work, fork = tmp_path / "work", tmp_path / "fork"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    real_run = hypothesize.run

    def unavailable(ctx):
        raise StageFailed("the hypothesis templates could not be read", fix="restore bot/hypotheses/")

    monkeypatch.setattr(hypothesize, "run", unavailable)
    assert (
        main(
            [
                "run",
                str(REQUEST),
                "--results",
                str(RESULTS),
                "--allow-sample-data",
                "--fork",
                str(fork),
                "--approve",
                "1",
                *common,
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert "stage 3 (hypothesize) failed: the hypothesis templates could not be read" in err
    assert f"promote resume --work {work}" in err and "fix: restore bot/hypotheses/" in err
    state = read_state(work / "state.json")
    assert state.status is Status.FAILED and 3 not in state.stages
    thread = (work / "issue" / "thread.md").read_text()
    assert "| ❌ | 3. hypothesize | failed: the hypothesis templates could not be read |" in thread
    assert "✅ | 3." not in thread and f"`promote resume --work {work}`" in thread

    assert main(["status", "--work", str(work)]) == 0
    out = capsys.readouterr().out
    assert "stage 3 FAILED: the hypothesis templates could not be read; fix: restore bot/hypotheses/" in out
    assert "stage 3 done" not in out

    monkeypatch.setattr(hypothesize, "run", real_run)
    assert main(["resume", *common]) == 0
    state = read_state(work / "state.json")
    assert state.status is Status.AWAITING_DECISION and state.open_gate == 2 and 3 in state.stages
    assert [a.event for a in state.audit if a.event in ("stage 3 failed", "retry")] == ["stage 3 failed", "retry"]
