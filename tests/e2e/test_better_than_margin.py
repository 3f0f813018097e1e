"""An equivalence guard refuted because the plugin is much better (mean TTFT 19% lower against a ±5% margin) is
no regression: it reads "differs (better than the margin)" in the headline, the PR, gate 3 and the BLIS feedback,
which suggests stating the claim as an improvement instead of re-evolving (ghuser3 finding 3)."""

from __future__ import annotations

import pytest

from tests.conftest import BRANCH, git
from tests.e2e.perturbed import promote_scaled

DOCS = "docs/promotion/evolved-adaptive-scorer"


@pytest.mark.slow
def test_a_guard_refuted_by_being_better_is_no_regression_anywhere(tmp_path):
    work, fork = promote_scaled(tmp_path, "sanity-random", "time_to_first_token", 0.81)

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
