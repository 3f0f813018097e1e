"""Our own workflows and action pass the linters people run on GitHub, offline."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot import PROJECT_ROOT

WORKFLOWS = sorted((PROJECT_ROOT / ".github" / "workflows").glob("*.yml"))
ACTION = PROJECT_ROOT / "action.yml"


def tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found, f"{name} is a test dependency (pip install -e '.[test]')"
    return found


def test_actionlint_is_clean():
    proc = subprocess.run([tool("actionlint"), *map(str, WORKFLOWS)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_is_clean_offline():
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")}
    proc = subprocess.run(
        [tool("zizmor"), "--offline", *map(str, WORKFLOWS), str(ACTION)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _run_blocks(doc) -> list[str]:
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "run" and isinstance(v, str):
                out.append(v)
            else:
                out += _run_blocks(v)
    elif isinstance(doc, list):
        for item in doc:
            out += _run_blocks(item)
    return out


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION], ids=lambda p: p.name)
def test_no_expressions_inside_run_blocks(path):
    """Untrusted text reaches shell steps only through env:, never as ${{ }} inside run:."""
    for block in _run_blocks(yaml.safe_load(path.read_text())):
        assert "${{" not in block, f"{path.name}: expression inside run: {block!r}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_least_privilege_permissions_per_job(path):
    doc = yaml.safe_load(path.read_text())
    assert doc.get("permissions") == {}, f"{path.name}: top-level permissions must be {{}}"
    for name, job in doc["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} must declare its permissions"
        assert "write-all" not in str(job["permissions"])


def test_actions_are_pinned_to_full_shas():
    for path in [*WORKFLOWS, ACTION]:
        for ref in re.findall(r"uses:\s*([^\s#]+)", path.read_text()):
            if ref.startswith("./"):
                continue
            assert re.search(r"@[0-9a-f]{40}$", ref), f"{path.name}: {ref} is not pinned to a commit SHA"


def test_ci_runs_the_readme_test_command():
    readme = (PROJECT_ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.+?)\n```", readme.split("## Quick start")[1].split("\n## ")[0], re.S)
    assert len(blocks) == 2, "the Quick start has exactly two commands"
    assert blocks[1].strip() in (PROJECT_ROOT / ".ci" / "run").read_text()


def test_the_gpu_runner_labels_have_one_home_and_actionlint_yaml_does_not_send_forks_to_runs_on():
    """install #8: runs-on is the dispatch's `runner_labels` (from `gpu.runner_labels`); editing it breaks them."""
    bench = yaml.safe_load((PROJECT_ROOT / ".github" / "workflows" / "benchmark.yml").read_text())
    assert bench["jobs"]["benchmark"]["runs-on"] == "${{ fromJSON(inputs.runner_labels) }}"
    comment = (PROJECT_ROOT / ".github" / "actionlint.yaml").read_text()
    assert "changes runs-on" not in comment and "gpu.runner_labels" in comment, comment
