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


def test_every_module_we_write_stays_under_600_lines():
    """The style rule (small modules, one concern each); the v0.2 report schema is llm-d-benchmark's, vendored."""
    vendored = {"bot/bench/schema/br/schema_v0_2.py"}
    long = {
        p.relative_to(PROJECT_ROOT).as_posix(): n
        for p in sorted((PROJECT_ROOT / "bot").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert {k: v for k, v in long.items() if k not in vendored} == {}
