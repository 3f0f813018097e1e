"""Stage 5's GPU benchmark run on GitHub: named when dispatched, cancelled when the promotion no longer wants it.

GitHub names the run a dispatch starts when asked (``return_run_details``); `promote dispatch-next` keeps that
run in the state (``record_run``). A `/cancel`, closing the issue, a restart that drops the benchmark and a
`/retry 5` that replaces it then cancel that run (``cancel``, ``stop``), so it neither holds the GPU runners nor
pushes reports nobody asked for. A needs-info edit does not (``kept_running``). A run that ended without its
reports (GitHub cancelled it, it failed) fails stage 5 when the bot next looks (``ended``). Without a run id (an older GHES answers the dispatch with 204),
or when GitHub refuses the cancel, the replies say that the run goes on and how a person cancels it.
"""

from __future__ import annotations

import sys
from datetime import datetime

from bot import pipeline
from bot.escape import md
from bot.github.client import GitHub, GitHubError
from bot.github.records import WorkflowRun
from bot.model import BenchmarkDispatch, PipelineState, RequestError, Stage


def cancel(client: GitHub, sent: BenchmarkDispatch) -> tuple[bool, str]:
    """Cancel the run ``sent`` names: whether it is over now (cancelled, or finished before), and what to tell
    people (Markdown; "" when GitHub never named the run: the callers keep saying it goes on)."""
    accepted, error = _cancel_run(client, sent)
    if sent.run_id is None:
        return False, ""
    what = f"The GPU benchmark of `{sent.commit[:12]}` ({sent.link()})"
    if accepted is None:
        return (
            False,
            f"The bot could not cancel the GPU benchmark run {sent.run_id}: {md(error)}. {sent.still_running()}",
        )
    if accepted:
        return True, (
            f"{what} was cancelled: it publishes no reports, and stage 5 dispatches the benchmark anew when it runs."
        )
    return True, (
        f"{what} had already finished, so there was nothing to cancel; the reports it published, if any, are on "
        "the promotion branch, and stage 5 judges them when it runs."
    )


def cancel_line(client: GitHub, sent: BenchmarkDispatch) -> tuple[bool, str]:
    """``cancel`` for a line of plain text (a re-check's, kept in the audit trail and escaped where shown): whether
    the run is over now, and what became of it, with the page where a person cancels one that goes on."""
    accepted, error = _cancel_run(client, sent)
    which = f"the GPU benchmark of `{sent.commit[:12]}`" + (f" (run {sent.run_id})" if sent.run_id else "")
    if accepted:
        return True, f"{which} it waited for was cancelled: stage 5 dispatches the benchmark anew when it runs"
    if accepted is False:
        return True, f"{which} it waited for had already finished: there was nothing to cancel"
    page = sent.run_url or sent.runs_url
    why = f"the bot could not cancel it ({error})" if error else "GitHub did not name its run"
    return False, f"{which} it waited for goes on: {why}; cancel it on {page or 'the benchmark workflow runs page'}"


def _cancel_run(client: GitHub, sent: BenchmarkDispatch) -> tuple[bool | None, str]:
    """Ask GitHub to cancel ``sent``'s run: (True: cancelled, False: it had finished already, None: it goes on),
    and why it goes on when GitHub refused ("" when GitHub never named the run: nobody can ask)."""
    if sent.run_id is None:
        return None, ""
    try:
        return client.cancel_run(sent.run_id), ""
    except GitHubError as exc:
        return None, str(exc)


def stop(client: GitHub, state: PipelineState, *, now: datetime, actor: str) -> tuple[PipelineState, str]:
    """Cancel the benchmark run the state waits for; the state no longer waits for it once it is over."""
    sent = state.benchmark
    if sent is None:
        return state, ""
    over, said = cancel(client, sent)
    if over:
        state = pipeline.benchmark_stopped(state, now=now, actor=actor, detail=f"run {sent.run_id}")
    return state, said


def kept_running(sent: BenchmarkDispatch) -> str:
    """What the needs-info reply says of the GPU benchmark the promotion waits for (Markdown): it is not stopped.

    Breaking the form must not stop it: the issue's author (who needs no role) would then get it cancelled and,
    by restoring the same request, dispatched anew, as often as they liked; only an approver's `/retry 5`
    dispatches it again. A request that comes back unchanged judges the reports this run publishes; an edit
    that changes it restarts the promotion, which cancels the run; a `/cancel` stops it now."""
    if sent.run_id is None:  # GitHub never named it: only a person can cancel it
        return (
            f"{sent.still_running()} An edit that changes the request restarts the promotion and does not need it "
            "either; an unchanged request judges the reports it publishes."
        )
    return (
        f"The GPU benchmark of `{sent.commit[:12]}` ({sent.link()}) keeps running: when the issue asks for the same "
        "promotion again, stage 5 judges the reports it publishes, and an edit that changes the request cancels "
        "it. To stop it now, an approver (or the issue's author) comments `/cancel`, which cancels the promotion "
        "and its benchmark run."
    )


def record_run(session, issue: int, commit: str, run: WorkflowRun | None) -> str:
    """Keep the run GitHub started for the benchmark of ``commit`` in the promotion's state (after `promote
    dispatch-next` sent the dispatch the write job saved as sent); says what was done, for the job log.

    No other run of the issue runs meanwhile (the workflow's concurrency group holds this job), so the state read
    here is the one the write job saved."""
    if run is None:
        return "GitHub did not name the benchmark run (204): a cancel will tell people to cancel it by hand"
    promotion = session.promotion(session.client.issue(issue), current=True)
    # its approvals were checked by the write job that asked for this run; the run it starts checks them again
    state = promotion.store.load(checked=True) if promotion is not None else None
    sent = state.benchmark if state is not None else None
    if state is None or sent is None or sent.commit != commit or sent.run_id is not None:
        return f"benchmark run {run.id} not recorded: #{issue} waits for no benchmark of {commit[:12]}"
    named = sent.model_copy(update={"run_id": run.id, "run_url": run.html_url})
    try:
        promotion.save(state.model_copy(update={"benchmark": named}))
    except RequestError as exc:  # the issue broke since (its needs-info reply says the run goes on)
        return f"benchmark run {run.id} not recorded: {exc}"
    return f"recorded benchmark run {run.id} ({run.html_url})"


def ended(client: GitHub, state: PipelineState, *, now: datetime) -> tuple[PipelineState, str]:
    """Whether the benchmark run stage 5 waits for ended without publishing its reports (one call): then stage 5
    fails saying so, and a `/retry` dispatches the benchmark anew; what to tell people ("" when it did not).

    Nobody tells the bot when GitHub ends a run (a job no runner with the labels took within 24 hours, someone
    pressed **Cancel workflow**) or when it fails: the promotion would wait for its reports for good. A run still
    queued or running is left waiting, with its status kept when it changed (the checklist says a queued one
    waits for a runner); so is one that succeeded (its reports are on the branch, or its publish job failed and
    its own failure shows it), a run GitHub never named (204) and a GET that fails."""
    sent, step = state.benchmark, pipeline.next_step(state)
    if (
        sent is None
        or sent.run_id is None
        or not (isinstance(step, pipeline.RunStage) and step.stage is Stage.RUN_VALIDATE)
    ):
        return state, ""
    try:
        progress = client.run_progress(sent.run_id)
    except GitHubError as exc:
        print(f"promote: could not read benchmark run {sent.run_id}: {exc}", file=sys.stderr)
        return state, ""
    if not progress.over:
        if progress.status == sent.run_status or not progress.status:
            return state, ""
        seen = sent.model_copy(update={"run_status": progress.status})
        return state.model_copy(update={"benchmark": seen}), ""
    if progress.conclusion == "success":
        return state, ""
    how = _ENDED.get(progress.conclusion or "", f"ended {md(progress.conclusion or 'without a conclusion')}")
    # only a run the bot saw in progress is known to have run: pending (behind an earlier run in benchmark.yml's
    # concurrency group), waiting and requested runs had not started, like a queued one
    labels = f"the labels {sent.labels()}" if sent.runner_labels else "the labels `gpu.runner_labels` names"
    if sent.run_status == "in_progress":
        why, fix = "it ran on a runner, and its jobs' logs on the run's page say why (or a person cancelled it)", ""
    elif sent.run_status == "pending":
        why = (
            "it had not started when the bot last looked: it was waiting for an earlier benchmark run of this "
            "promotion to end (benchmark.yml's concurrency group), where a newer run takes its place or a person "
            "cancels it (had it started since, its jobs' logs on the run's page say why)"
        )
        fix = ""
    else:
        why = (
            f"no runner with {labels} took it within GitHub's limit (a job waits at most 24 hours for a runner), "
            "or a person cancelled it"
        )
        fix = (
            f"if no self-hosted runner has {labels}, register one, or set `gpu.runner_labels` in "
            "`.github/promotion-bot.yml` to the labels your GPU runners have"
        )
    reason = f"the GPU benchmark run {sent.run_id} of `{sent.commit[:12]}` {how} without publishing its reports: {why}"
    state = pipeline.stage_failed(state, Stage.RUN_VALIDATE, reason, now=now, fix=fix)
    said = (
        f"The GPU benchmark of `{sent.commit[:12]}` ({sent.link()}) {how} without publishing its reports, so stage "
        f"5 stopped waiting for it: {why}. {RETRY_FIX}"
    )
    return state, said


#: How GitHub's conclusions read after "the run".
_ENDED = {
    "failure": "failed",
    "cancelled": "was cancelled",
    "timed_out": "timed out",
    "startup_failure": "failed to start",
}

#: How a promotion whose benchmark run ended without its reports goes on (the notice; the status comment's own
#: "Then comment `/retry`" says it there).
RETRY_FIX = "An approver's `/retry` (or `/retry 5`) dispatches the benchmark again."


def benchmark_out(state) -> bool:
    """Stage 5 is due and its GPU benchmark was dispatched and has not been judged."""
    return state.benchmark is not None and state.next_stage is not None and int(state.next_stage) == 5


def waiting_for_benchmark(state) -> str:
    """Where the GPU benchmark is, for a `/retry` during the wait, and how to ask for it again on purpose."""
    sent = state.benchmark
    runs = f" ({sent.link()})" if sent.link() else ""
    return (
        f"stage 5 waits for the GPU benchmark of `{sent.commit[:12]}`, dispatched {sent.at:%Y-%m-%d %H:%M} UTC"
        f"{runs}, and the promotion continues on its own when that run publishes its reports, so nothing was "
        "dispatched again. The bot looks at that run whenever someone comments (`/status` is enough): once it ended "
        "without its reports (cancelled or failed), stage 5 stops waiting and `/retry` dispatches the benchmark "
        "again. To replace a run that still runs, comment `/retry 5`: the bot cancels it and dispatches a new one"
    )


def outrun(client: GitHub, sent: BenchmarkDispatch, runs: list[int], commit: str) -> str:
    """What to tell people when the reports published on the branch were made by ``runs``, not by the run stage 5
    waits for (``branch_history.other_runs``): a run `/retry 5` replaced that GitHub would not cancel, which
    published onto the commit both were dispatched for. Those reports are not judged; ``sent``'s run would find the
    branch moved and benchmark nothing, so it is cancelled, and the caller dispatches the benchmark at ``commit``."""
    named = ", ".join(str(r) for r in runs)
    accepted, error = _cancel_run(client, sent)
    if accepted is None:
        fate = (
            f"Run {sent.run_id} could not be cancelled ({md(error)}): it finds the branch moved and benchmarks nothing."
        )
    else:
        fate = f"Run {sent.run_id} would have found the branch moved and benchmarked nothing, so it was cancelled."
    return (
        f"The reports published on the promotion branch were made by benchmark run {named}, not by the run stage 5 "
        f"waits for ({sent.link()}, which replaced it): they are not judged. {fate} The benchmark was dispatched "
        f"again at `{commit[:12]}`, and stage 5 judges that run's reports when they come back."
    )
