"""pyflakes-level lint (ruff's F rules): no unused imports or variables, no undefined names."""

from __future__ import annotations

import subprocess

from bot import PROJECT_ROOT
from tests.workflows.test_workflows import tool


def test_ruff_pyflakes_rules_are_clean():
    proc = subprocess.run([tool("ruff"), "check", "--select", "F", "--output-format", "concise", "bot", "perf", "tests"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
