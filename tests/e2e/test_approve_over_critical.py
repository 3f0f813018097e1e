"""Approving a gate while CRITICAL findings are open stays the person's call, but is never silent: the CLI warns,
and the decision, the status and the audit trail keep how many were open and which checks raised them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from bot.model import PipelineState
from tests.conftest import EXAMPLE, REQUEST

pytestmark = pytest.mark.slow

#: The new user's n03: the program reads a signal the dictionary does not know, a field no BLIS version has, so it
#: does not compile as BLIS Go either (three CRITICAL findings at gate 1).
UNKNOWN_SIGNAL = (
    "\tfor _, snap := range snapshots {\n\t\tscores[snap.ID] += 0.1 * (1.0 - snap.GPUMemoryBandwidth)\n\t}\n"
)


def _request(tmp_path: Path) -> Path:
    src = (PROJECT_ROOT / "examples" / "corpus" / "r01_pattern_a_penalties.go").read_text()
    assert src.count("\tbestIdx := 0\n") == 1
    (tmp_path / "route.go").write_text(src.replace("\tbestIdx := 0\n", UNKNOWN_SIGNAL + "\tbestIdx := 0\n"))
    shutil.copy(EXAMPLE / "best_program_info.json", tmp_path)
    text = REQUEST.read_text().replace("source: best_program.py", "source: route.go")
    (tmp_path / "promotion.yaml").write_text(text)
    return tmp_path / "promotion.yaml"


def test_approving_over_critical_findings_is_warned_and_recorded(tmp_path, capsys):
    work = tmp_path / "work"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert main(["run", str(_request(tmp_path)), "--fork", str(tmp_path / "fork"), *common]) == 0
    assert "findings: 3 CRITICAL" in capsys.readouterr().out

    assert main(["approve", "1", *common]) == 0
    checks = ["G1.unknown-signal", "hazard.unmapped-signal", "translate.program-does-not-compile"]
    note = f"3 CRITICAL findings were open when approved: {', '.join(checks)}"
    err = capsys.readouterr().err
    assert f"promote: warning: gate 1: {note}" in err, err  # said even with --quiet

    state = PipelineState.model_validate_json((work / "state.json").read_text())
    [decision] = state.decisions
    assert decision.open_critical == checks
    assert any(a.event == "gate 1 approve" and note in a.detail for a in state.audit)
    assert main(["status", "--work", str(work)]) == 0
    assert f"gate 1 approve by bob (its review's findings were open: unconverged); {note}" in capsys.readouterr().out
    assert note in (work / "issue" / "thread.md").read_text()  # the status comment's gate row


def test_approving_with_no_critical_finding_open_says_nothing_more(tmp_path, capsys):
    work = tmp_path / "work"
    common = ["--work", str(work), "--quiet", "--actor", "bob"]
    assert main(["run", str(REQUEST), "--fork", str(tmp_path / "fork"), *common]) == 0
    assert "findings: 0 CRITICAL" in capsys.readouterr().out
    assert main(["approve", "1", *common]) == 0
    assert "CRITICAL" not in capsys.readouterr().err
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.decisions[0].open_critical == [] and state.decisions[0].critical_note() == ""
