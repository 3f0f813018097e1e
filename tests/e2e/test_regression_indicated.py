"""A guard measured about 10% worse, wholly beyond its margin but not significantly after multiplicity control, is
said to be a regression indicated everywhere a person reads the outcome (reanalysis finding 1, perturbation P1)."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml

from bot.cli import main
from tests.conftest import BRANCH, REQUEST, RESULTS, git

DOCS = "docs/promotion/evolved-adaptive-scorer"


def _slower(results, workload: str, factor: float) -> int:
    """Every request_latency statistic of the evolved ``workload`` reports times ``factor``; how many reports."""
    paths = list((results / "evolved" / workload).rglob("benchmark_report*.yaml"))
    for path in paths:
        doc = yaml.safe_load(path.read_text())
        latency = doc["results"]["request_performance"]["aggregate"]["latency"]["request_latency"]
        for k, v in list(latency.items()):
            if k != "units":
                latency[k] = v * factor
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return len(paths)


@pytest.mark.slow
def test_a_guard_measured_beyond_its_margin_is_an_indicated_regression_in_the_headline_pr_and_gate_3(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    assert _slower(results, "sanity-random", 1.10) == 7
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice", "--approve", "all"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0

    verdicts = git(fork, "show", f"{BRANCH}:{DOCS}/validation/verdicts.md")
    report = git(fork, "show", f"{BRANCH}:{DOCS}/report.md")
    for page in (verdicts, report):
        head = page.splitlines()[2]
        assert "1 regression indicated, not significant after multiplicity control (C5 at least +7" in head, head
        assert "no regression" not in head
    assert "the evidence does not contradict the prediction" not in verdicts.split("### C5")[1].split("### C6")[0]
    assert "refutation p = " in verdicts
    pr = (work / "pr" / "pull-request.md").read_text()
    assert (
        "**Track C, regressions** (0 regressed, 1 indicated but not significant after multiplicity control (C5);"
        in (pr)
    )
    thread = (work / "issue" / "thread.md").read_text()
    assert (
        re.search(r"\| IMPORTANT \| `G3\.against-indicated#[0-9a-f]{6}` \|", thread)
        and "C5 at sanity-random @ 10 req/s: a regression of at least" in thread
    )
    assert "Track C 0 regressions of 6 guarded (4 inconclusive), 1 indicated but not significant" in thread
