"""A guard measured about 10% worse, wholly beyond its margin but not significantly after multiplicity control, is
said to be a regression indicated everywhere a person reads the outcome (reanalysis finding 1, perturbation P1)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import BRANCH, git
from tests.e2e.perturbed import promote_scaled

DOCS = "docs/promotion/evolved-adaptive-scorer"


@pytest.mark.slow
def test_a_guard_measured_beyond_its_margin_is_an_indicated_regression_in_the_headline_pr_and_gate_3(tmp_path):
    work, fork = promote_scaled(tmp_path, "sanity-random", "request_latency", 1.10)

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
