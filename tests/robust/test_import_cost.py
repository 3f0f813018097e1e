"""Stages 1-3 import no more than they use: scipy.stats takes most of a second to import, and a run that stops at
gate 1 (or a GitHub event that runs only stages 1-2) opens the draft PR, which imports the PR stage's modules."""

from __future__ import annotations

import subprocess
import sys


def _loaded(module: str, heavy: tuple[str, ...]) -> list[str]:
    code = f"import sys, {module}; print(' '.join(m for m in {heavy!r} if m in sys.modules))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def test_the_pr_draft_imports_no_scipy_stats_or_matplotlib():
    assert _loaded("bot.stages.pull_request", ("scipy.stats", "matplotlib")) == []
