"""The Go checks as a stage sees them: a toolchain that cannot run fails the stage, failing checks are problems.

Two different things can go wrong when a stage checks the plugin. The
toolchain (or the sandbox it runs in) may be unable to run at all: nothing
was checked, so the stage fails, with the reason and what to fix before a
retry. Or the checks run and find the plugin wanting (it does not build, vet
complains, a generated test fails, a sandbox limit stopped it): the stage's
artifacts are committed so the gate's review and the author loop can act on
them, the review raises them as CRITICAL, and the stage is recorded with these
``problems`` so no status shows it as passed.
"""

from __future__ import annotations

from bot.stages.context import StageContext, StageFailed


def run_go_checks(ctx: StageContext, files: dict[str, str], *, registration_import: str, registration_line: str):
    """``run_checks`` through the stage's executor; StageFailed when the toolchain or sandbox cannot run."""
    from bot.golang.toolchain import ToolchainMissing, run_checks
    from bot.sandbox import SandboxUnavailable

    try:
        return run_checks(
            files,
            executor=ctx.executor,
            registration_import=registration_import,
            registration_line=registration_line,
        )
    except (ToolchainMissing, SandboxUnavailable) as exc:
        raise StageFailed(
            f"the Go checks cannot run here: {exc}",
            fix="make the pinned Go toolchain and the sandbox available on this machine, then retry",
        ) from None


def check_problems(report) -> list[str]:
    """One line per failing check (empty when everything passed), each with its first blocking finding."""
    from bot.golang.toolchain import CHECK_BUILD, CHECK_GOFMT, CHECK_LIMIT, CHECK_TEST, CHECK_VET

    steps = (
        ("gofmt", report.gofmt_ok, (CHECK_GOFMT,)),
        ("go build", report.build_ok, (CHECK_BUILD,)),
        ("go vet", report.vet_ok, (CHECK_VET,)),
        ("go test", report.test_ok and not report.tests_failed, (CHECK_TEST, CHECK_LIMIT)),
    )
    problems = []
    for name, ok, checks in steps:
        if ok:
            continue
        first = next((f for f in report.findings if f.check in checks), None)
        what = f"{name} FAIL" + (
            f" ({report.tests_failed} failed)" if name == "go test" and report.tests_failed else ""
        )
        where = f" at {first.file}:{first.line}" if first and first.file and first.line else ""
        problems.append(f"{what}{where}: {first.message}" if first else what)
    return problems
