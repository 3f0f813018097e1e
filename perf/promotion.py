"""How long a whole rehearsal of the bundled example takes, beside the floor measured in the same run.

Times ``promote run examples/weighted-adaptive/promotion.yaml --results ... --approve all
--allow-sample-data`` in a fresh work directory (the CLI as a person runs it, in a subprocess), then
the floor no implementation can go below: the Go toolchain's gofmt, build, vet and test of the
plugin the run committed (one ``check_plugin``, in the sandbox, warm build cache) plus the git writes
(the run's commits replayed, file for file, into a fresh repository). Prints the ratio; target <= 2.
The bot's modules are byte-compiled first, as an installed bot's are. Also prints the run's CPU time (user + sys of the ``promote`` process and everything it waited for): on a
shared machine the wall clock moves with the others' load, the CPU time much less, so compare that.

    .venv/bin/python perf/promotion.py [--json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "examples" / "weighted-adaptive"
BRANCH = "promotion/1-evolved-adaptive-scorer"
TARGET = 2.0


def _git(repo: Path, *args: str, text: bool = True):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=text, check=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_run(work: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``promote run``."""
    promote = Path(sys.executable).with_name("promote")
    cmd = [
        str(promote),
        "run",
        str(EXAMPLE / "promotion.yaml"),
        "--results",
        str(EXAMPLE / "results"),
        "--approve",
        "all",
        "--allow-sample-data",
        "--work",
        str(work),
        "--quiet",
    ]
    # As an installed bot runs: with its modules' bytecode compiled (pip compiles what it installs; an editable
    # checkout compiles on its first run). Where PYTHONDONTWRITEBYTECODE is set, every run would otherwise
    # recompile the bot's ~180 modules (about 0.75 s CPU) and measure that instead.
    compileall.compile_dir(str(PROJECT_ROOT / "bot"), quiet=1)
    cpu0, t0 = _children_cpu(), time.perf_counter()
    # The plans kept on disk by an earlier run (bot.bench.plan_memo) are not read: the run plans as a first one does.
    env = {**os.environ, "PROMOTION_PLAN_CACHE": "off"}
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    elapsed, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"promote run failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return elapsed, cpu


def time_checks(fork: Path) -> tuple[float, int]:
    """gofmt/build/vet/test of the committed plugin package (with its tests and registration)."""
    from bot.golang.toolchain import check_plugin
    from bot.model import TranslationSummary

    summary = TranslationSummary.model_validate_json(
        _git(fork, "show", f"{BRANCH}:docs/promotion/evolved-adaptive-scorer/translation.json").stdout
    )
    paths = _git(fork, "ls-tree", "-r", "--name-only", BRANCH, summary.package_dir).stdout.split()
    files = {p: _git(fork, "show", f"{BRANCH}:{p}").stdout for p in paths if p.endswith(".go")}
    check_plugin(files, registration_import=summary.registration_import, registration_line=summary.registration_line)
    t0 = time.perf_counter()  # the second run is the floor: the build cache is warm, as in a real loop
    report = check_plugin(
        files, registration_import=summary.registration_import, registration_line=summary.registration_line
    )
    return time.perf_counter() - t0, report.tests_passed


def time_git(fork: Path) -> tuple[float, int]:
    """Replay the promotion branch's commits (same files, same contents) into a fresh repository."""
    base = _git(fork, "merge-base", "main", BRANCH).stdout.strip() if _has(fork, "main") else None
    span = f"{base}..{BRANCH}" if base else BRANCH
    commits = _git(fork, "rev-list", "--reverse", span).stdout.split()
    with tempfile.TemporaryDirectory(prefix="promotion-perf-git-") as tmp:
        repo = Path(tmp)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        _git(repo, "config", "user.email", "perf@example.invalid")
        _git(repo, "config", "user.name", "perf")
        changes = []
        for c in commits:
            names = _git(fork, "show", "--name-only", "--format=", c).stdout.split()
            changes.append({n: _git(fork, "show", f"{c}:{n}", text=False).stdout for n in names if _exists(fork, c, n)})
        t0 = time.perf_counter()
        for i, files in enumerate(changes):
            for name, data in files.items():
                target = repo / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            _git(repo, "add", "-A")
            _git(repo, "commit", "-q", "--allow-empty", "-m", f"stage {i}")
        return time.perf_counter() - t0, len(changes)


def _has(repo: Path, ref: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "-q", ref], capture_output=True, check=False
    )
    return proc.returncode == 0


def _exists(repo: Path, commit: str, name: str) -> bool:
    return _has(repo, f"{commit}:{name}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="promotion-perf-run-") as tmp:
        work = Path(tmp) / "work"
        t_run, cpu_run = time_run(work)
        fork = work / "fork"
        t_checks, tests = time_checks(fork)
        t_git, commits = time_git(fork)
    floor = t_checks + t_git
    result = {
        "promote_run_s": round(t_run, 2),
        "promote_run_cpu_s": round(cpu_run, 2),
        "floor_s": round(floor, 2),
        "go_checks_s": round(t_checks, 2),
        "git_writes_s": round(t_git, 2),
        "commits": commits,
        "go_tests": tests,
        "ratio": round(t_run / floor, 2),
        "target": TARGET,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"promote run --approve all: {result['promote_run_s']:.1f} s ({result['promote_run_cpu_s']:.1f} s CPU); floor {result['floor_s']:.1f} s "
        f"(Go checks {result['go_checks_s']:.1f} s, {tests} tests; git writes {result['git_writes_s']:.1f} s, "
        f"{commits} commits); ratio {result['ratio']:.2f} (target <= {TARGET:g})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
