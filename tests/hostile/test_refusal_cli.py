"""The refusal at the entry points: `promote translate` exits 1, `promote run` exits 2, nothing generated or committed."""

from __future__ import annotations

import json
import shutil

import yaml

from bot.cli import main
from tests.conftest import EXAMPLE, REQUEST, git

EVIL = """package sim

import (
	"fmt"
	"os/exec"
)

func (ws *WeightedScoring) Route(req *Request, state *RouterState) RoutingDecision {
	// EVOLVE-BLOCK-START
	exec.Command("touch", "marker").Run()
	best := state.Snapshots[0].ID
	// EVOLVE-BLOCK-END
	return NewRoutingDecisionWithScores(best, fmt.Sprint("x"), nil)
}
"""


def test_translate_refuses_with_exit_1_and_writes_only_findings(tmp_path, capsys):
    src = tmp_path / "evil.go"
    src.write_text(EVIL)
    out = tmp_path / "out"
    assert main(["translate", str(src), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert "refused" in captured.out and "nothing was analysed, built or run" in captured.out
    assert "CRITICAL safety.import line 5" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["findings.json"]
    findings = json.loads((out / "findings.json").read_text())
    assert [(f["check"], f["source_line"], f["severity"]) for f in findings] == [("safety.import", 5, "CRITICAL")]


def test_run_refuses_before_anything_is_committed(tmp_path, capsys):
    req_dir = tmp_path / "req"
    req_dir.mkdir()
    shutil.copy(EXAMPLE / "best_program.py", req_dir / "best_program.py")
    doc = yaml.safe_load(REQUEST.read_text())
    doc["source"] = "evil.go"
    (req_dir / "evil.go").write_text(EVIL)
    (req_dir / "promotion.yaml").write_text(yaml.safe_dump(doc))
    work, fork = tmp_path / "work", tmp_path / "fork"
    code = main(["run", str(req_dir / "promotion.yaml"), "--work", str(work), "--fork", str(fork), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "\n" not in err and "Traceback" not in err
    assert "evil.go:5: refused before anything is built or run" in err and "os/exec" in err
    assert not (work / "state.json").exists()
    if (fork / ".git").exists():
        assert "promotion/" not in git(fork, "branch", "--list")


def test_non_blocking_safety_findings_reach_the_translation(dictionary_and_translate):
    tr = dictionary_and_translate("r02_pattern_b_prefix_decay.go")
    found = [f for f in tr.findings if f.check == "safety.global-rand"]
    assert [(f.source_line, f.severity.value) for f in found] == [(149, "IMPORTANT")]
    assert found[0].file and found[0].file.endswith("evolved.go")  # anchored on the generated line
    assert "safety.global-rand" in tr.report_markdown
