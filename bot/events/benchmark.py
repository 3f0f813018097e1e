"""Stage 5's GPU benchmark run on GitHub: named when dispatched, cancelled when the promotion no longer wants it.

GitHub names the run a dispatch starts when asked (``return_run_details``); `promote dispatch-next` keeps that
run in the state (``record_run``). A `/cancel`, closing the issue, a needs-info edit, a restart that drops the
benchmark and a `/retry 5` that replaces it then cancel that run (``cancel``, ``stop``), so it neither holds the
GPU runners nor pushes reports nobody asked for. Without a run id (an older GHES answers the dispatch with 204),
or when GitHub refuses the cancel, the replies say that the run goes on and how a person cancels it.
"""

from __future__ import annotations

from datetime import datetime

from bot import pipeline
from bot.escape import md
from bot.github.client import GitHub, GitHubError
from bot.github.records import WorkflowRun
from bot.model import BenchmarkDispatch, PipelineState, RequestError


def cancel(client: GitHub, sent: BenchmarkDispatch) -> tuple[bool, str]:
    """Cancel the run ``sent`` names: whether it is over now (cancelled, or finished before), and what to tell
    people (Markdown; "" when GitHub never named the run: the callers keep saying it goes on)."""
    if sent.run_id is None:
        return False, ""
    what = f"The GPU benchmark of `{sent.commit[:12]}` ({sent.link()})"
    try:
        accepted = client.cancel_run(sent.run_id)
    except GitHubError as exc:
        return (
            False,
            f"The bot could not cancel the GPU benchmark run {sent.run_id}: {md(str(exc))}. {sent.still_running()}",
        )
    if accepted:
        return True, (
            f"{what} was cancelled: it publishes no reports, and stage 5 dispatches the benchmark anew when it runs."
        )
    return True, (
        f"{what} had already finished, so there was nothing to cancel; the reports it published, if any, are on "
        "the promotion branch, and stage 5 judges them when it runs."
    )


def stop(client: GitHub, state: PipelineState, *, now: datetime, actor: str) -> tuple[PipelineState, str]:
    """Cancel the benchmark run the state waits for; the state no longer waits for it once it is over."""
    sent = state.benchmark
    if sent is None:
        return state, ""
    over, said = cancel(client, sent)
    if over:
        state = pipeline.benchmark_stopped(state, now=now, actor=actor, detail=f"run {sent.run_id}")
    return state, said


def record_run(session, issue: int, commit: str, run: WorkflowRun | None) -> str:
    """Keep the run GitHub started for the benchmark of ``commit`` in the promotion's state (after `promote
    dispatch-next` sent the dispatch the write job saved as sent); says what was done, for the job log.

    No other run of the issue runs meanwhile (the workflow's concurrency group holds this job), so the state read
    here is the one the write job saved."""
    if run is None:
        return "GitHub did not name the benchmark run (204): a cancel will tell people to cancel it by hand"
    promotion = session.promotion(session.client.issue(issue), current=True)
    state = promotion.load() if promotion is not None else None
    sent = state.benchmark if state is not None else None
    if state is None or sent is None or sent.commit != commit or sent.run_id is not None:
        return f"benchmark run {run.id} not recorded: #{issue} waits for no benchmark of {commit[:12]}"
    named = sent.model_copy(update={"run_id": run.id, "run_url": run.html_url})
    try:
        promotion.save(state.model_copy(update={"benchmark": named}))
    except RequestError as exc:  # the issue broke since (its needs-info reply says the run goes on)
        return f"benchmark run {run.id} not recorded: {exc}"
    return f"recorded benchmark run {run.id} ({run.html_url})"
