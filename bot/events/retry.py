"""`/retry [stage]` on a promotion issue: what it does, and the reply that says so.

A `/retry` that ran the failed stage again used to be answered only by the status comment, which looks the same
when a retry repeats a failure: a maintainer who followed the bot's advice could not tell whether anything
happened. Every applied `/retry` is answered with what it did (``retried``). Two cases matter most. Stage 5
failed on the benchmark reports on the branch (``StageFailure.reports``): a plain `/retry` judges those same
reports again, and its reply says so and points at `/retry 5`. `/retry 5` asks for the benchmark again
(``pipeline.benchmark_sent`` with None sets ``benchmark_again``): stage 5 dispatches a new run, whose publish
replaces the reports on the branch, instead of judging what is there.
"""

from __future__ import annotations

from bot import pipeline
from bot.escape import md
from bot.events import benchmark
from bot.events.benchmark import benchmark_out, waiting_for_benchmark
from bot.events.promotion import Result
from bot.model import PipelineState


def retry(asked):
    """`/retry [stage]`: the failed stage (or the one named) runs again; a GPU run still out is not sent again.

    `/retry 5` asks for the GPU benchmark anew in any case (the run out, if any, is cancelled): the reports on the
    branch, delivered by an earlier run, are not judged again."""
    from bot.events.comments import Move

    promotion, login, now = asked.promotion, asked.actor.login, asked.now
    stage = int(asked.command.argument) if asked.command.argument else None
    state = promotion.benchmark_ended(asked.state)  # a run GitHub cancelled: stage 5 fails, the retry re-runs it
    if stage is None and benchmark_out(state) and state.status.value == "running":
        asked.reply(f"`/retry` was not applied: {waiting_for_benchmark(state)}.")
        promotion.refused(state)
        return Result("answered /retry: the benchmark is out", state)

    def move(s):
        s = pipeline.retry(s, actor=login, now=now, stage=stage)
        if stage == 5:  # on purpose: a new run, whatever the one before left on the branch
            s = pipeline.benchmark_sent(s, None, now=now, actor=login)
        return s

    def after(old, new):  # `/retry 5`: the new run replaces the one out
        replaced = benchmark_out(old) and not new.benchmark
        return new, benchmark.cancel(promotion.client, old.benchmark)[1] if replaced else ""

    def said(before: PipelineState, result: Result) -> str:
        return retried(before, stage, result.state or before, promotion.config.benchmark_workflow)

    return Move(move, base=state, after=after, reopens=True, said=said)


def retried(before: PipelineState, stage: int | None, after: PipelineState, workflow: str) -> str:
    """What a `/retry` (``stage``: `/retry N`) did, from the state before it and where the run it started left the
    promotion (Markdown, after "@person ")."""
    command = f"`/retry {stage}`" if stage else "`/retry`"
    sent = after.benchmark
    if sent is not None and (before.benchmark is None or before.benchmark.at != sent.at):
        link = f"; {sent.link()}" if sent.link() else ""
        return (
            f"{command} dispatched the GPU benchmark again ({md(workflow)} at `{sent.commit[:12]}`{link}): its run "
            "replaces the reports on the promotion branch, and stage 5 judges that run's reports when they come back."
        )
    failure = before.failure
    if stage is None and failure is not None and failure.reports:
        if _same_failure(before, after):
            did = "ran stage 5 again on the same reports on the promotion branch, and it failed the same way"
        else:
            did = (
                "runs stage 5 again on the same reports on the promotion branch, the ones it could not use: unless "
                "what refused them changed, it fails the same way"
            )
        return (
            f"{command} {did}. To have the benchmark run again and its reports judged instead, an approver "
            "comments `/retry 5`."
        )
    return f"{command} was applied; now: {md(pipeline.describe(after))}."


def _same_failure(before: PipelineState, after: PipelineState) -> bool:
    return (
        after.failure is not None
        and before.failure is not None
        and after.failure.stage == before.failure.stage
        and after.failure.reason == before.failure.reason
        and after.failure.at != before.failure.at
    )
