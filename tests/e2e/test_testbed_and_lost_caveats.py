"""One evolved report of another engine image and a fifth of every evolved sanity-random request lost: each is said
on the verdicts it touches and in a summary the headline can carry (consistency findings bj2 3 and 4)."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml

from bot.cli import main
from tests.conftest import BRANCH, REQUEST, RESULTS, git

DOCS = "docs/promotion/evolved-adaptive-scorer"
LOSSY = ("sanity-random", "cache-warmup", "optimized-baseline")  # 4 cells, none of A1's


def _edit(path, change) -> None:
    doc = yaml.safe_load(path.read_text())
    change(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def _other_engine(doc: dict) -> None:
    for c in doc["scenario"]["stack"]:
        if c["standardized"].get("kind") == "inference_engine":
            c["standardized"]["tool_version"] = "vllm/vllm-openai:v0.6.0"


def _lose_a_fifth(doc: dict) -> None:
    requests = doc["results"]["request_performance"]["aggregate"]["requests"]
    requests["failures"] = int(requests["total"] * 0.2)


@pytest.mark.slow
def test_an_off_testbed_report_is_a_caveat_on_its_verdicts_and_lost_requests_are_summarised(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    [odd] = (results / "evolved" / "load-spikes" / "rate-30" / "rep-1").glob("benchmark_report*.yaml")
    _edit(odd, _other_engine)
    lossy = [p for w in LOSSY for p in (results / "evolved" / w).rglob("benchmark_report*.yaml")]
    for path in lossy:
        _edit(path, _lose_a_fifth)
    work, fork = tmp_path / "work", tmp_path / "fork"
    args = ["--work", str(work), "--fork", str(fork), "--quiet", "--actor", "alice", "--approve", "all"]
    assert main(["run", str(REQUEST), "--results", str(results), "--allow-sample-data", *args]) == 0

    verdicts = git(fork, "show", f"{BRANCH}:{DOCS}/validation/verdicts.md")
    report = git(fork, "show", f"{BRANCH}:{DOCS}/report.md")
    pr = (work / "pr" / "pull-request.md").read_text()
    for page in (verdicts, report, pr):
        [row] = [ln for ln in page.splitlines() if ln.startswith("| **A1** ")]
        assert row.endswith("✅ confirmed (with 1 report from another testbed) |"), row
    assert (
        "another testbed: 1 evolved report at load-spikes @ 30 req/s ran on engine vllm/vllm-openai:v0.6.0"
        in (verdicts.split("### A1")[1])
    )
    [track_c] = [ln for ln in pr.splitlines() if ln.startswith("- **Track C, regressions**")]
    thread = (work / "issue" / "thread.md").read_text()
    [deciding] = [ln for ln in thread.splitlines() if ln.startswith("**Deciding on** the verdicts")]
    summary = re.compile(r"requests lost more often with the evolved plugin \(in 4 of \d+ cells(:|, up to) 20\.0%")
    for line in (verdicts.splitlines()[2], report.splitlines()[2], track_c, deciding):
        assert summary.search(line) and "req/s:" not in line, line  # a summary, not a clause per cell
    assert "0 regressed;" not in track_c and "0 regressed on their metrics" in track_c, track_c
