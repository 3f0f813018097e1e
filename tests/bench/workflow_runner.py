"""Just enough of a GitHub runner to execute a workflow's own `run:` steps with bash (benchmark.yml's tests,
and the GPU stand-in of the fake-GitHub end-to-end test): `env:` with its expressions evaluated, step
outputs and outcomes, `if: always()`, the job summary. Actions (`uses:`) are the caller's to do."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from bot import PROJECT_ROOT

WORKFLOW = PROJECT_ROOT / ".github" / "workflows" / "benchmark.yml"


class Runner:
    """Just enough of a GitHub runner: env from `env:` with its expressions evaluated, outputs, summaries."""

    def __init__(self, root: Path, env: dict, inputs: dict, token: str = "fake-token"):
        self.root, self.env, self.inputs, self.token = root, env, inputs, token
        self.outputs: dict[str, dict[str, str]] = {}
        self.outcomes: dict[str, str] = {}

    def expr(self, text: str, job_needs: dict) -> str:
        def one(m: re.Match) -> str:
            e = m.group(1).strip()
            if e.startswith("inputs."):
                return self.inputs[e[7:]]
            if e == "github.token":
                return self.token
            if m2 := re.fullmatch(r"needs\.(\w+)\.outputs\.(\w+)", e):
                return job_needs[m2.group(1)][m2.group(2)]
            if m2 := re.fullmatch(r"steps\.(\w+)\.outcome", e):
                return self.outcomes[m2.group(1)]
            if m2 := re.fullmatch(r"vars\.\w+ \|\| '([^']*)'", e):
                return m2.group(1)
            raise AssertionError(f"expression the test runner does not know: {e}")

        return re.sub(r"\$\{\{(.*?)\}\}", one, str(text))

    def step(self, job: str, step: dict, workspace: Path, needs: dict) -> int:
        out = self.root / f"out-{job}-{step.get('id', 'x')}"
        out.write_text("")
        env = dict(self.env)
        env.update({k: self.expr(v, needs) for k, v in (step.get("env") or {}).items()})
        env.update(
            GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(self.root / "summary.md"), GITHUB_WORKSPACE=str(workspace)
        )
        env.setdefault("GITHUB_RUN_ID", "4242")  # a runner always sets it; a test that plays a known run sets its own
        proc = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if "id" in step:
            self.outputs.setdefault(job, {}).update(
                dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
            )
            self.outcomes[step["id"]] = "success" if proc.returncode == 0 else "failure"
        self.last = proc
        return proc.returncode


def checkout(root: Path, origin: Path | str, commit: str, name: str, git_args: tuple[str, ...] = ()) -> Path:
    ws = root / name
    subprocess.run(["git", *git_args, "clone", "-q", str(origin), str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "checkout", "-q", commit], check=True)
    return ws


def jobs() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]


def run_job(r: Runner, job: str, ws: Path, needs: dict) -> None:
    for step in jobs()[job]["steps"]:
        if "run" not in step:
            continue  # actions (checkout, install, artifacts) are done by the fixture
        cond = step.get("if")
        failed = any(v == "failure" for v in r.outcomes.values())
        if failed and cond != "always()":
            continue
        code = r.step(job, step, ws, needs)
        if code != 0 and "id" not in step:
            r.outcomes[step["name"]] = "failure"
