"""The command-line tools a run needs, checked before the image build and the first stand-up.

A tool missing on the runner otherwise shows only when a step first calls it: llm-d-benchmark after the image
build, ``kubectl`` at the namespace lock or, worse, inside each pod-failure run, where the fault thread cannot stop
the run, so every pod-failure run was spent with a fault that could never happen. Checking up front costs nothing
and names the fix.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping

from bot.bench.run.commands import Target
from bot.bench.run.schedule import CellRun


def _labels(cells: Iterable[CellRun]) -> list[str]:
    return sorted({f"{c.workload}@{c.rate:g}" for c in cells})


def needed(target: Target, cells: Iterable[CellRun], *, builds_image: bool = False) -> dict[str, str]:
    """Tool (as the runner calls it) -> what needs it (a sentence). ``builds_image``: this run builds the evolved
    EPP image (no --image, none recorded yet), which needs git, make and the container runtime; a runner without
    make failed only after the lock was taken, with "fix the path or its permissions" (admin findings #7)."""
    cells = list(cells)
    out = {
        target.llmdbenchmark: "every stand-up, run and teardown needs it (llm-d-benchmark's CLI)",
        target.kubectl: "the namespace lock needs it (one benchmark per namespace: bot.bench.run.lock)",
    }
    if builds_image:
        out["git"] = "the EPP image is built in a worktree of the fork at the approved commit"
        out["make"] = "the EPP image build runs llm-d-router's `make image-build-epp`"
        runtime = target.container_runtime
        out[runtime] = f"the EPP image is built, pushed and inspected with it (CONTAINER_RUNTIME={runtime}" + (
            "; on a podman host set CONTAINER_RUNTIME=podman in the runner's environment)"
            if runtime == "docker"
            else ")"
        )
    if faulty := [c for c in cells if c.condition == "pod-failure"]:
        labels = _labels(faulty)
        shown = ", ".join(labels[:4]) + (f" and {len(labels) - 4} more" if len(labels) > 4 else "")
        out[target.kubectl] += f", and the plan's pod-failure cells ({shown}) need it to delete a model-server pod"
    return out


def missing_problem(
    target: Target, cells: Iterable[CellRun], env: Mapping[str, str] | None, *, builds_image: bool = False
) -> str | None:
    """What to say when a tool the run needs is not on PATH (``env``'s, the runner's own when None), or None."""
    path = (env if env is not None else os.environ).get("PATH", "")
    wanted = needed(target, cells, builds_image=builds_image)
    lost = {tool: why for tool, why in wanted.items() if shutil.which(tool, path=path) is None}
    if not lost:
        return None
    what = " ".join(f"{tool} not found on PATH: install it on this runner; {why}." for tool, why in lost.items())
    return f"{what} Nothing was built or stood up: with {', '.join(lost)} on PATH, run the same command again"
