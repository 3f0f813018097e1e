"""An equivalence guard refuted because the plugin is much better (mean TTFT 19% lower against a ±5% margin) is
no regression: it reads "differs (better than the margin)" in the headline, the PR, gate 3 and the BLIS feedback,
which suggests stating the claim as an improvement instead of re-evolving (ghuser3 finding 3)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from bot.cli import main
from tests.conftest import BRANCH, REQUEST, RESULTS, git

DOCS = "docs/promotion/evolved-adaptive-scorer"


def _faster_ttft(results, workload: str, factor: float) -> int:
    """Every time_to_first_token statistic of the evolved ``workload`` reports times ``factor``; how many reports."""
    paths = list((results / "evolved" / workload).rglob("benchmark_report*.yaml"))
    for path in paths:
        doc = yaml.safe_load(path.read_text())
        ttft = doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
        for k, v in list(ttft.items()):
            if k != "units":
                ttft[k] = v * factor
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return len(paths)


@pytest.mark.slow
def test_a_guard_refuted_by_being_better_is_no_regression_anywhere(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    assert _faster_ttft(results, "sanity-random", 0.81) == 7
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice", "--approve", "all"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0

    report = git(fork, "show", f"{BRANCH}:{DOCS}/report.md")
    head = report.splitlines()[2]
    assert "1 differs (better than the margin: C4)" in head and "regression found (C1" not in head, head
    assert "➕ **differs** (at 10 req/s: better than the ±5% margin)" in report
    pr = (work / "pr" / "pull-request.md").read_text()
    assert "**Track C, regressions** (0 regressed, 1 differs (better than the margin: C4);" in pr, pr
    assert "  - differs (better than the margin): C4 sanity-random (ttft_mean −18" in pr
    assert "The plugin regressed" not in pr and "Re-evolve with a regression constraint" not in pr
    assert "(claim re-statement, from C4) The plugin is better than the ±5% margin on `sanity-random`" in pr
    assert "State the claim as an improvement (`ttft_mean` decrease)" in pr
    thread = (work / "issue" / "thread.md").read_text()
    assert "Track C 0 regressions of 6 guarded, 1 differs (better than the margin: C4)" in thread, thread
    assert "- C4 differs (better than the margin) (" in thread
