"""Lint as tests: ruff's broad rule set (pyproject.toml) and ruff format, on everything we write in Python."""

from __future__ import annotations

import subprocess

from bot import PROJECT_ROOT
from tests.workflows.test_workflows import tool

PYTHON_TREES = ["bot", "perf", "tests", "examples/weighted-adaptive"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [tool("ruff"), *args, *PYTHON_TREES], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_check_is_clean():
    proc = _ruff("check", "--output-format", "concise")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean():
    proc = _ruff("format", "--check")
    assert proc.returncode == 0, "run `ruff format`: " + proc.stdout + proc.stderr
