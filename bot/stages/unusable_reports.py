"""Stage 5's failure when no benchmark report committed on the promotion branch can be used, said for the branch
and for the home it runs in (ghflow2 item 1: the GitHub home named the runner's temporary copy of the reports
and advised the local CLI's `--results` layout and a `/retry` that judged the same reports again)."""

from __future__ import annotations

from bot.bench.errors import NoUsableReports, ReportError
from bot.stages.context import StageContext, StageFailed


def unusable_on_branch(ctx: StageContext, exc: NoUsableReports) -> ReportError | StageFailed:
    """Stage 5 failing because no report committed on the promotion branch can be used, said for the branch: the
    temporary directory they were copied to (``results_source``) changes on every run and names nothing a person
    can open. In the GitHub home the reports are what the benchmark workflow published, so the advice is its, not
    the CLI's ``--results`` layout: a plain `/retry` judges the same reports again, `/retry 5` runs the benchmark
    again and its publish replaces them: the stage fails with that fix. In the local home (reports `promote bench
    run` committed) the error stays the one the CLI reports, with the layout it expects."""
    results = f"{ctx.paths.benchmarks}/results/"
    reason = f"`{results}` on the promotion branch: {exc.problem}"
    if ctx.home != "github":
        return ReportError(f"{reason}; {exc.advice}")
    fix = (
        "these are the reports the GPU benchmark published there: benchmark.yml's publish job replaces that "
        "directory with the files its run's manifest records (`manifest.json`, and each llm-d-benchmark v0.2 "
        "report under `<treatment>/<workload>/rate-<rate>/rep-<n>/`, treatment baseline or evolved, tagged in "
        "`run.keywords` with this promotion and its arm), so a plain `/retry` judges these same reports again. "
        "An approver comments `/retry 5`: the bot dispatches the benchmark again for the approved code, its run's "
        "reports replace these, and stage 5 judges them; if they cannot be used either, that run's logs say why"
    )
    return StageFailed(reason, fix=fix, reports=True)
