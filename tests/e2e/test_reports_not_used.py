"""Reports that are not evidence for this plugin reach gate 3 as findings, not only a table on a page."""

from __future__ import annotations

import json
import shutil

import pytest

from bot.cli import main
from bot.model import PipelineState
from tests.conftest import BRANCH, REQUEST, RESULTS, git


@pytest.mark.slow
def test_reports_for_other_parameters_are_raised_at_gate_3(tmp_path):
    example = tmp_path / "example"
    shutil.copytree(REQUEST.parent, example, ignore=shutil.ignore_patterns("results"))
    program = example / "best_program.py"
    text = program.read_text()
    assert "delta > 0.2 {" in text
    program.write_text(text.replace("delta > 0.2 {", "delta > 0.5 {"))  # the sample reports ran 0.2
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice"]
    code = main(["run", str(example / REQUEST.name), "--results", str(RESULTS), "--allow-sample-data", *args])
    assert code == 0
    for gate in (1, 2):
        assert main(["approve", str(gate), "--work", str(work), "--quiet", "--actor", "alice"]) == 0

    not_used = json.loads(
        git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/validation/reports-not-used.json")
    )
    assert not_used and all("0.5" in r["reason"] for r in not_used if r["report"].startswith("evolved/"))
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    assert state.open_gate == 3
    thread = (work / "issue" / "thread.md").read_text()
    assert "G3.report-invalid" in thread
    assert f"benchmark report {not_used[0]['report']} was not used" in thread
