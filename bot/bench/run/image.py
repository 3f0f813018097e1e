"""The evolved arm's EPP image: built from the fork at the gate-2-approved commit, pushed, its digest recorded.

Building compiles the evolved plugin, so it runs only through the execution port
(``bot.execution``, kind ``epp-image``): the request is data (fork path, commit, image
reference, container runtime) and the answer is JSON. The build happens in a detached
worktree of the fork checked out at exactly that commit (``make image-build-epp`` in
llm-d-router's Makefile, ``EPP_IMAGE`` overridden), so nothing else on the branch can
slip into the image; both arms then run this one image, pinned by digest.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bot.bench.run import commands
from bot.model import RequestError


class ImageBuildError(RequestError):
    """The EPP image could not be built, pushed or inspected."""


def image_ref(registry_repo: str, request_id: str, commit: str) -> str:
    """The image the runner builds: its tag names the promotion and commit, so stage 5 can bind a report of it
    even when the results lost their manifest (``bot.bench.evidence.runner_tag``)."""
    from bot.bench.evidence import runner_tag

    return f"{registry_repo}:{runner_tag(request_id, commit)}"


def given_image_problem(given: str, pinned: str | None) -> str | None:
    """Why an image passed with --image cannot be benchmarked for this plan (None: it may).

    The runner did not build it, so nothing shows it holds the approved commit's plugin; stage 5 then binds the
    evolved reports to the image the plan pins (experiment.yaml, compared by tag as for any report:
    ``bot.bench.evidence.image_difference``). An image with another tag would spend the whole budget on
    reports stage 5 leaves out, so it is refused before anything runs.
    """
    from bot.bench.evidence import image_difference

    diff = image_difference(given, pinned) if pinned else None
    if diff is None:
        return None
    return (
        f"--image {given} is not the image this plan pins for the evolved arm ({pinned}): {diff}. An image the "
        "runner did not build counts only as the plan's pinned image; drop --image to build it from the approved "
        "commit, or pass the pinned image"
    )


def _run(argv: list[str], cwd: str | None = None) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise ImageBuildError(f"`{shlex.join(argv)}` failed ({proc.returncode}): {' / '.join(tail)}")
    return proc.stdout


def execute_build(files: dict[str, str], args: dict[str, Any]) -> dict[str, Any]:
    """The ``epp-image`` execution kind: build, push and inspect; returns {ref, digest, commit}."""
    del files  # the code is the commit in the fork, not files sent along
    fork, commit, image, runtime = args["fork"], args["commit"], args["image"], args["runtime"]
    resolved = _run(["git", "-C", fork, "rev-parse", "--verify", f"{commit}^{{commit}}"]).strip()
    if resolved != commit:
        raise ImageBuildError(f"commit {commit} is not a full commit id in {fork} (it resolves to {resolved})")
    with tempfile.TemporaryDirectory(prefix="epp-build-") as tmp:
        tree = str(Path(tmp) / "tree")
        _run(["git", "-C", fork, "worktree", "add", "--detach", tree, commit])
        try:
            head = _run(["git", "-C", tree, "rev-parse", "HEAD"]).strip()
            if head != commit:
                raise ImageBuildError(f"worktree is at {head}, not the approved {commit}")
            _run(commands.image_build(Path(tree), image, runtime))
            _run(commands.image_push(Path(tree), image, runtime))
            digest_ref = _run(commands.image_digest(image, runtime)).strip()
        finally:
            subprocess.run(["git", "-C", fork, "worktree", "remove", "--force", tree], capture_output=True, check=False)
    if "@sha256:" not in digest_ref:
        raise ImageBuildError(f"{runtime} reports no registry digest for {image} ({digest_ref!r}); was it pushed?")
    return {"ref": image, "digest": digest_ref.split("@", 1)[1], "commit": commit}


def build_epp_image(fork: Path, commit: str, image: str, runtime: str, executor=None) -> dict[str, Any]:
    from bot.execution import DirectExecutor, ExecRequest

    request = ExecRequest(
        kind="epp-image", args={"fork": str(fork), "commit": commit, "image": image, "runtime": runtime}
    )
    return (executor or DirectExecutor()).run(request)
