"""The images a promotion commits on the bundled example: few, each shown, none dangling, no mixed chart."""

from __future__ import annotations

import posixpath
import re

from tests.conftest import BRANCH, branch_tree, git

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")


def test_at_most_eight_images_each_shown_and_none_dangling(full_run):
    _, _, fork = full_run
    files = branch_tree(fork)
    pngs = {p for p in files if p.endswith(".png")}
    assert 1 < len(pngs) <= 8, sorted(pngs)
    assert any(p.endswith("/validation/plots/claims-forest.png") for p in pngs)
    shown: set[str] = set()
    for path in (p for p in files if p.startswith("docs/promotion/") and p.endswith(".md")):
        text = git(fork, "show", f"{BRANCH}:{path}")
        assert "xychart" not in text, path  # the chart that joined unrelated hypotheses is gone
        for ref in IMAGE.findall(text):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), ref))
            assert target in pngs, f"{path} shows {ref}, which is not on the branch"
            shown.add(target)
    assert shown == pngs, f"committed but never shown: {sorted(pngs - shown)}"
    report = next(p for p in files if p.startswith("docs/promotion/") and p.endswith("/report.md"))
    assert "](validation/plots/claims-forest.png)" in git(fork, "show", f"{BRANCH}:{report}")
