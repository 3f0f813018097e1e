"""Shared fixtures: one end-to-end run of the bundled example (it costs Go builds), reused by e2e and review tests."""

from __future__ import annotations

import hashlib
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
#: The plan cache's counts after ``full_run`` (``bot.bench.plan_memo.cache_info``).
FULL_RUN_PLANS: dict[str, int] = {}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def branch_tree(fork: Path) -> dict[str, str]:
    """path -> content id of every file on the promotion branch: 'the branch content'.

    The PR description pins its links to a commit of the branch, and commit ids differ between two
    runs that write the same content (commit times differ); a file naming one of the branch's own
    commits is identified by its text with those ids replaced, every other file by its blob sha.
    """
    out = git(fork, "ls-tree", "-r", f"refs/heads/{BRANCH}")
    tree = {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}
    commits = git(fork, "rev-list", f"refs/heads/{BRANCH}").split()
    args = [a for c in commits for a in ("-e", c[:12])]
    grep = ["git", "-C", str(fork), "grep", "-l", "-F", *args, f"refs/heads/{BRANCH}", "--"]
    naming = subprocess.run(grep, capture_output=True, text=True, check=False).stdout.splitlines()
    for hit in naming:
        path = hit.split(":", 1)[1]
        text = git(fork, "show", f"refs/heads/{BRANCH}:{path}")
        for c in commits:
            text = text.replace(c, "<commit>").replace(c[:12], "<commit>")
        tree[path] = "text:" + hashlib.sha256(text.encode()).hexdigest()
    return tree


def pytest_sessionstart(session):
    """Byte-compile the bot and the tests once, in the controller, before any worker starts. Where
    PYTHONDONTWRITEBYTECODE is set (CI's environment sets it), Python compiles every module it imports from
    source in every process it starts, and the suite starts thousands: each `promote` subprocess, sandboxed
    job and fake `kubectl` call. Reading compiled modules takes a third of the time (4.0 s to 1.5 s for the
    bot's imports); an installed bot has them too."""
    import compileall

    if not hasattr(session.config, "workerinput"):
        for tree in (PROJECT_ROOT / "bot", PROJECT_ROOT / "tests"):
            compileall.compile_dir(tree, quiet=1, workers=0)


def pytest_collection_modifyitems(session, config, items):
    """Files holding a ``slow`` test run first. ``--dist loadfile`` hands whole files to the workers in collection
    order, so a heavy file collected late (a corpus build, whole promotions) started when the others were nearly
    done and the run waited minutes on one worker: two runs of one commit took 16 m 44 s and 19 m 10 s. Longest
    first is the usual cure; the order within a file, and between files of one kind, is kept."""
    heavy = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in heavy)


def pytest_xdist_auto_num_workers(config):
    """``-n auto`` (pyproject's addopts): two workers per core. Much of the suite waits rather than computes (the
    fake clusters run their benchmark seconds in real time, sandboxes start, fake servers answer), and with one
    worker per core the cores sat idle 40% of a 25-minute run on 2 cores."""
    return 2 * len(os.sched_getaffinity(0))


@pytest.fixture(scope="session")
def full_run(tmp_path_factory):
    """One uninterrupted `promote run --approve all` of the bundled example. ``FULL_RUN_PLANS`` keeps how often it
    made its benchmark plan (the plan cache's counts, from empty)."""
    from bot.bench import plan_memo

    root = tmp_path_factory.mktemp("full")
    work, fork = root / "work", root / "fork"
    plan_memo.cache_clear()
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
    FULL_RUN_PLANS.update(plan_memo.cache_info()._asdict())
    return code, work, fork


def private_copy(full_run, tmp_path: Path):
    """(forge, context) on a private copy of ``full_run``'s finished promotion: what the tests that review or edit
    its branch start from, so an edit never reaches the session's shared run."""
    import shutil

    from bot.forge.local import LocalForge
    from bot.model import PipelineState, PromotionRequest
    from bot.stages.context import StageContext

    _, work, fork = full_run
    shutil.copytree(fork, tmp_path / "fork")
    forge = LocalForge(tmp_path / "fork", tmp_path / "work")
    state = PipelineState.model_validate_json((work / "state.json").read_text())
    return forge, StageContext(
        PromotionRequest.load(REQUEST), forge, state, results_dir=RESULTS, allow_sample_data=True
    )


def copy_promotion(root: Path, to: Path) -> None:
    """Copy the promotion a module fixture ran in ``root`` (``root/work`` driving the fork ``root/fork``) to ``to``, as if
    it had been run there: a test that resumes or edits it changes its own copy, never the one its module shares.

    The work directory names where it was (run.json's ``work`` and ``fork``, the fork's path in the thread's
    commands); those are rewritten to the copy's place, so the copy is neither refused as a copy driving the same
    fork nor taken for a moved directory. The fork holds no path of the machine."""
    import shutil

    shutil.copytree(root / "fork", to / "fork", symlinks=True)
    shutil.copytree(root / "work", to / "work", symlinks=True)
    for path in (to / "work").rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if str(root).encode() in data:
                path.write_bytes(data.replace(str(root).encode(), str(to).encode()))
