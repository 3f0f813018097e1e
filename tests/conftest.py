"""Shared fixtures: one end-to-end run of the bundled example (it costs Go builds), reused by e2e and review tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bot import PROJECT_ROOT
from bot.cli import main

# Nothing reaches the internet: without an explicit --llm, a key in the developer's environment would make
# every test promotion call Claude. Tests that exercise the agents set a key and a fake server themselves.
for _var in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
    os.environ.pop(_var, None)

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
REQUEST = EXAMPLE / "promotion.yaml"
RESULTS = EXAMPLE / "results"
BRANCH = "promotion/1-evolved-adaptive-scorer"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def branch_tree(fork: Path) -> dict[str, str]:
    """path -> blob sha of every file on the promotion branch: 'the branch content'."""
    out = git(fork, "ls-tree", "-r", f"refs/heads/{BRANCH}")
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


@pytest.fixture(scope="session")
def full_run(tmp_path_factory):
    """One uninterrupted `promote run --approve all` of the bundled example."""
    root = tmp_path_factory.mktemp("full")
    work, fork = root / "work", root / "fork"
    code = main(
        [
            "run",
            str(REQUEST),
            "--results",
            str(RESULTS),
            "--allow-sample-data",
            "--work",
            str(work),
            "--fork",
            str(fork),
            "--approve",
            "all",
            "--quiet",
            "--actor",
            "alice",
        ]
    )
    return code, work, fork
