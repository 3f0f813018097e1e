"""`promote upstream-patch`: the minimal llm-d-router change for the day a fork's promotion goes upstream.

From a finished promotion (its work directory, or a fork and branch) it writes one ``git
format-patch`` mail with the plugin package, its tests, the registration line and a sample
EndpointPickerConfig, and nothing else of the branch. It then proves the mail is usable: it applies
it with ``git am`` to a fresh git repository of the llm-d-router tree the bot builds with (the mirror, whose
runner.go shares with v0.10.0 the lines the registration hunk has as context; no llm-d-router checkout), and runs
``go vet`` and ``go test`` on what that produced, through the execution port (sandboxed, like every
run of generated code). Exit 0: written, applies, checks pass; 1: written, but it does not apply or
a check fails; 2: unusable input, one line on stderr.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from bot.cli.files import output_dir
from bot.escape import line
from bot.model import RequestError, counted_noun


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "upstream-patch",
        help="write the minimal llm-d-router change (plugin, tests, registration, sample config) as a patch",
        description=(
            "Cut the upstream llm-d-router change out of a finished promotion: the plugin package with its "
            "tests, the registration line and a sample EndpointPickerConfig, as a git format-patch mail; "
            "check that it applies to the bot's llm-d-router v0.10.0 mirror and passes go vet and go test there."
        ),
    )
    p.add_argument("--work", type=Path, default=Path(".promote"), help="the promotion's work directory")
    p.add_argument("--fork", type=Path, help="a clone of the fork (default: the work directory's)")
    p.add_argument("--branch", help="the promotion branch (default: the work directory's)")
    p.add_argument("--out", type=Path, help="the patch file to write (default: WORK/upstream/<plugin>.patch)")
    p.add_argument("--no-check", action="store_true", help="write the patch without applying and checking it")
    p.set_defaults(func=handle)


def _where(args: argparse.Namespace):
    """The fork clone, the promotion branch (given, or the work directory's) and the work directory's state of
    that branch (None when it has none: the gates' decisions are then not known here)."""
    from bot.forge.state_file import STATE_FILE, read_state

    fork, branch, state = args.fork, args.branch, None
    if fork is None or branch is None:
        from bot.cli.workdir import read_settings

        work = args.work.resolve()
        settings = read_settings(work)
        state = read_state(work / STATE_FILE)
        if state is None:
            raise RequestError(f"--work {args.work}: no promotion state; run the promotion first (promote run)")
        fork = fork or Path(settings["fork"])
        branch = branch or state.branch
    elif (args.work / STATE_FILE).is_file():
        state = read_state(args.work / STATE_FILE)
    if not (Path(fork) / ".git").exists():
        raise RequestError(f"--fork {fork}: not a git clone of the fork; pass the fork the promotion committed to")
    return Path(fork), branch, state if state is not None and state.branch == branch else None


def not_ready(verdicts: list[dict], state) -> list[str]:
    """The reasons the promotion's PR stays a draft (``draft_reasons``), which the patch repeats. Without the
    state only the sample evidence is known; ``handle`` then adds ``UNKNOWN_GATES`` to the patch's notes."""
    from bot.stages.pull_request import draft_reasons, sample_evidence

    sample = sample_evidence(v.get("flags") or [] for v in verdicts)
    return draft_reasons(sample, state) if state is not None else ["its benchmark evidence is sample data"] * sample


def not_finished(state) -> str | None:
    """Why this promotion is not one to take upstream, or None: only a promotion that finished (all 7 stages, its
    gates passed) is. A patch cut from one rejected at a gate, or still waiting for a decision, would carry a
    plugin nobody approved, with notes that never say so."""
    from bot import pipeline
    from bot.model import Status

    if state is None or state.status is Status.DONE:
        return None
    return (
        f"the promotion on {state.branch} is not finished ({pipeline.describe(state)}); upstream-patch cuts the "
        "change from a finished promotion. Finish it first (promote status says what is next), or pass --fork and "
        "--branch without --work to cut it anyway: the patch then says its gates are not known"
    )


def _title_and_fork(request: dict | None) -> tuple[str, str]:
    """The request's title and its fork's owner/name, as the branch's request.json has them ("" when it does not)."""
    request = request or {}
    fork = request.get("fork")
    title, repo = request.get("title"), fork.get("repo") if isinstance(fork, dict) else None
    return (title if isinstance(title, str) else ""), (repo if isinstance(repo, str) else "")


UNKNOWN_GATES = (
    "This patch was cut without the promotion's state (--work): whether its gates' reviews converged and people "
    "passed them is not known here. Submit it only if the promotion's PR is ready for review, not a draft."
)


def handle(args: argparse.Namespace) -> int:
    from bot.upstream import (
        CHECKED_AGAINST,
        RUNNER_GO,
        apply_to_mirror,
        format_patch,
        read_promotion,
        upstream_change,
        upstream_runner,
    )

    fork, branch, state = _where(args)
    unfinished = not_finished(state)
    if unfinished is not None:
        raise RequestError(unfinished)
    summary, files, origin, head, verdicts, request = read_promotion(fork, branch)
    runner = upstream_runner()
    reasons = not_ready(verdicts, state)
    title, fork_repo = _title_and_fork(request)
    change = upstream_change(
        summary,
        files,
        runner,
        origin=origin,
        title=title,
        fork_repo=fork_repo,
        branch=branch,
        commit=head,
        not_ready=reasons,
    )
    if state is None:
        change = replace(change, notes=(*change.notes, UNKNOWN_GATES))
    patch = format_patch(change)
    out = args.out or (args.work / "upstream" / f"{summary.plugin_type}.patch")
    output_dir(out.parent, "--out")
    out.write_text(patch, encoding="utf-8")
    package = [p for p in change.paths if p.startswith(summary.package_dir)]
    others = [p for p in change.paths if p not in package]
    print(f"upstream patch: {line(out)}")
    print(f"  {counted_noun(len(package), 'file')} of {summary.package_dir}/, " + ", ".join(others))
    print(
        f"  apply upstream with: git am -s {line(out.resolve())} (for llm-d-router v0.10.0; "
        + ("not checked here" if args.no_check else "checked below against the bot's mirror of it, not a checkout")
        + ")"
    )
    for note in change.notes:
        print(f"  {line(note)}")
    if args.no_check:
        return 0
    from bot.golang.toolchain import run_checks
    from bot.stages.checks import check_problems

    try:
        applied = apply_to_mirror(patch)
    except RequestError as exc:
        print(f"  does NOT apply with git am to {CHECKED_AGAINST}: {line(exc)}")
        return 1
    print(f"  applies with git am to {CHECKED_AGAINST}: yes")
    # v0.10.0's runner.go does not build against the mirror: the registration is compiled in the mirror's own.
    checked = {p: t for p, t in applied.items() if p != RUNNER_GO}
    report = run_checks(  # generated code: through the execution port, in the sandbox
        checked, registration_import=summary.registration_import, registration_line=summary.registration_line
    )
    problems = check_problems(report)
    print(
        f"  go vet: {'pass' if report.vet_ok else 'FAIL'}; go test: {report.test_counts}"
        + ("" if report.sandboxed else " (no sandbox on this machine: limits only)")
    )
    for p in problems:
        print(f"  {line(p)}")
    return 1 if problems else 0
