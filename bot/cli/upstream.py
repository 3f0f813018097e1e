"""`promote upstream-patch`: the minimal llm-d-router change for the day a fork's promotion goes upstream.

From a finished promotion (its work directory, or a fork and branch) it writes one ``git
format-patch`` mail with the plugin package, its tests, the registration line and a sample
EndpointPickerConfig, and nothing else of the branch. It then proves the mail is usable: it applies
it with ``git am`` to a fresh git repository of the llm-d-router tree the bot builds with, and runs
``go vet`` and ``go test`` on what that produced, through the execution port (sandboxed, like every
run of generated code). Exit 0: written, applies, checks pass; 1: written, but it does not apply or
a check fails; 2: unusable input, one line on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bot.cli.files import output_dir
from bot.escape import line
from bot.model import RequestError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "upstream-patch",
        help="write the minimal llm-d-router change (plugin, tests, registration, sample config) as a patch",
        description=(
            "Cut the upstream llm-d-router change out of a finished promotion: the plugin package with its "
            "tests, the registration line and a sample EndpointPickerConfig, as a git format-patch mail; "
            "check that it applies to llm-d-router and passes go vet and go test."
        ),
    )
    p.add_argument("--work", type=Path, default=Path(".promote"), help="the promotion's work directory")
    p.add_argument("--fork", type=Path, help="a clone of the fork (default: the work directory's)")
    p.add_argument("--branch", help="the promotion branch (default: the work directory's)")
    p.add_argument("--out", type=Path, help="the patch file to write (default: WORK/upstream/<plugin>.patch)")
    p.add_argument("--no-check", action="store_true", help="write the patch without applying and checking it")
    p.set_defaults(func=handle)


def _where(args: argparse.Namespace) -> tuple[Path, str]:
    """The fork clone and the promotion branch: given, or the work directory's."""
    fork, branch = args.fork, args.branch
    if fork is None or branch is None:
        from bot.cli.workdir import read_settings
        from bot.forge.state_file import STATE_FILE, read_state

        work = args.work.resolve()
        settings = read_settings(work)
        state = read_state(work / STATE_FILE)
        if state is None:
            raise RequestError(f"--work {args.work}: no promotion state; run the promotion first (promote run)")
        fork = fork or Path(settings["fork"])
        branch = branch or state.branch
    if not (Path(fork) / ".git").exists():
        raise RequestError(f"--fork {fork}: not a git clone of the fork; pass the fork the promotion committed to")
    return Path(fork), branch


def handle(args: argparse.Namespace) -> int:
    from bot.upstream import MIRROR, RUNNER_GO, apply_to_mirror, format_patch, read_promotion, upstream_change

    fork, branch = _where(args)
    summary, files, origin, head = read_promotion(fork, branch)
    runner = (MIRROR / RUNNER_GO).read_text(encoding="utf-8")
    change = upstream_change(summary, files, runner, origin=origin, branch=branch, commit=head)
    patch = format_patch(change)
    out = args.out or (args.work / "upstream" / f"{summary.plugin_type}.patch")
    output_dir(out.parent, "--out")
    out.write_text(patch, encoding="utf-8")
    package = [p for p in change.paths if p.startswith(summary.package_dir)]
    others = [p for p in change.paths if p not in package]
    print(f"upstream patch: {line(out)}")
    print(f"  {len(package)} file(s) of {summary.package_dir}/, " + ", ".join(others))
    print(f"  apply upstream with: git am {line(out.name)}")
    if args.no_check:
        return 0
    from bot.golang.toolchain import run_checks
    from bot.stages.checks import check_problems

    try:
        applied = apply_to_mirror(patch)
    except RequestError as exc:
        print(f"  does NOT apply to llm-d-router: {line(exc)}")
        return 1
    print(f"  applies to llm-d-router (the {MIRROR.parent.name}/{MIRROR.name} tree the bot builds with): yes")
    report = run_checks(applied)  # generated code: through the execution port, in the sandbox
    problems = check_problems(report)
    print(
        f"  go vet: {'pass' if report.vet_ok else 'FAIL'}; go test: {report.tests_passed} passed, "
        f"{report.tests_failed} failed" + ("" if report.sandboxed else " (no sandbox on this machine: limits only)")
    )
    for p in problems:
        print(f"  {line(p)}")
    return 1 if problems else 0
