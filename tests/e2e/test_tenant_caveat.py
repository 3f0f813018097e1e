"""G3TEN through the stages: trial3 p2's per-tenant admitter, rehearsed on sample data with gate 2's
``G2.tenants-exercised`` approved anyway, has its verdicts judged with the caveat: gate 3, the report and the PR
say the per-tenant rule was not exercised, never "confirmed" bare.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main
from bot.forge.local import LocalForge

pytestmark = pytest.mark.slow

TRIAL = PROJECT_ROOT / "tests" / "review" / "fixtures" / "tenant_fair" / "promotion.yaml"
SAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive" / "make_sample_reports.py"
CAVEAT = "per-tenant rule not exercised on these cells (gate 2's G2.tenants-exercised)"


def test_a_per_tenant_admitter_on_one_tenant_cells_is_confirmed_only_with_the_caveat(tmp_path: Path):
    results, work, fork = tmp_path / "results", tmp_path / "work", tmp_path / "fork"
    subprocess.run(
        [sys.executable, str(SAMPLE), "--request", str(TRIAL), "--out", str(results)], check=True, capture_output=True
    )
    common = ["--work", str(work), "--quiet"]
    args = ["run", str(TRIAL), "--fork", str(fork), "--results", str(results), "--allow-sample-data"]
    assert main([*args, "--approve", "all", *common]) == 0
    thread = (work / "issue" / "thread.md").read_text()
    assert "`G2.tenants-exercised#" in thread  # gate 2 raised it and was approved anyway
    gate3 = thread.split("## Gate 3")[-1]
    [note] = [line for line in gate3.splitlines() if line.startswith("- ") and CAVEAT in line]  # said once
    assert (
        note.startswith("- A1, B1, B3, B5, C1,")
        and "x-llm-d-inference-fairness-id" in note
        and "otel_trace_replay" in note
    )
    assert f"Track A 1 of 1 claims transferred, caveat: {CAVEAT};" in gate3  # the brief's count carries it too
    forge = LocalForge(fork, work)
    report = forge.read_file("promotion/t3p2-tenant-fair-admitter", "docs/promotion/tenant-fair-admitter/report.md")
    text = report.decode()
    headline = text.splitlines()[2]
    assert headline.startswith("**Transferred") and CAVEAT in headline
    [row] = [line for line in text.splitlines() if line.startswith("| **A1**")]
    assert "✅ confirmed (" in row and "G2.tenants-exercised" in row
    pr = (work / "pr" / "pull-request.md").read_text()
    [heading] = [line for line in pr.splitlines() if line.startswith("## Claims")]
    assert "G2.tenants-exercised" in heading
