"""A dispatch GitHub refused: the run that would go on never starts, so the issue must not keep saying "running".

`promote dispatch-next` starts the run the write job asked for: the sandboxed job's, a continuation, the GPU
benchmark. When GitHub refuses it (404: no such workflow file on the ref; 403: the token may not start workflows;
422: the workflow has no `workflow_dispatch` trigger or other inputs; 5xx: GitHub is down), nothing ever runs the
due step, and the status comment would keep its "running" link for good. So the due stage fails (the due review
halts) saying why and what fixes it, through the status comment's own writer: its `/retry` runs the step again,
which asks for the same dispatch. A promotion with nothing due (a continuation for the commands a run's bound left)
gets a notice: the next run of the issue, whatever starts it, answers them.
"""

from __future__ import annotations

from bot import pipeline
from bot.escape import md
from bot.github.config import BENCHMARK_WORKFLOW
from bot.github.errors import GitHubError
from bot.github.runs import benchmark_run_title
from bot.model import RequestError, Status

#: What the job token needs to start a run, as promotion.yml's write job grants it.
_ACTIONS_WRITE = (
    "the token the bot dispatches with needs Actions: write: promotion.yml's `advance` job must keep "
    "`permissions: actions: write` (a GitHub App token passed as `app-token` needs the App's Actions: write "
    "permission)"
)


def dispatch_fix(workflow: str, ref: str, status: int | None) -> str:
    """What makes GitHub accept the dispatch of ``workflow`` at ``ref`` again, by GitHub's answer (None: no answer,
    or 5xx on every try)."""
    path = f".github/workflows/{workflow}"
    if status == 404:
        return (
            f"`{path}` must exist on `{ref}` under that file name (the bot dispatches it by name; copy it from the "
            "promotion bot, docs/github-setup.md), and the token must be able to read the repository"
        )
    if status == 403:
        return _ACTIONS_WRITE
    if status == 422:
        return (
            f"`{path}` on `{ref}` must have the `workflow_dispatch` trigger with the inputs the bot sends, and be "
            "enabled (Actions tab): copy it from the promotion bot again (docs/github-setup.md)"
        )
    if status is not None and status < 500:
        return f"see GitHub's answer above; `{path}` must be on `{ref}`, enabled, and dispatchable by the job's token"
    return "wait until GitHub answers again (https://www.githubstatus.com)"


def dispatch_reason(workflow: str, error: GitHubError) -> str:
    """The failure, for the status comment: which run could not start and GitHub's answer (status and message;
    GitHubError carries neither the token nor the request's headers). When GitHub may have started it all the
    same (``may_have_started``: no clear answer), it says so rather than that nothing started."""
    what = "the GPU benchmark run" if workflow == BENCHMARK_WORKFLOW else "its next run"
    answer = str(error).removeprefix(f"POST dispatch {workflow}: ")  # the call, named by the words around it
    if error.may_have_started:
        return f"GitHub did not confirm that the bot started {what} ({workflow}), so it may have started: {answer}"
    return f"the bot could not start {what} ({workflow}): {answer}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _benchmark_unconfirmed(promotion, state, reason: str) -> str:
    """The notice for a benchmark dispatch GitHub may have carried out: stage 5 keeps waiting for it (failing it
    would drop the run from the state, and the `/retry` that invites would start a second one), and how a
    person finds it, or dispatches it when there is none."""
    sent = state.benchmark
    where = f" on the {sent.link()} page" if sent.link() else " on the benchmark workflow's runs page"
    title = benchmark_run_title(promotion.issue.number, sent.commit)
    promotion.notice(
        f"benchmark-unconfirmed-{promotion.env.run_id}",
        f"{md(_sentence(reason))}.\n\nStage 5 keeps waiting for it. Look{where} for a run titled "
        f"`{md(title)}`: if it is there, it publishes its reports and the promotion continues (the bot does not "
        "know its run id, so to stop it, press **Cancel workflow** on it). If there is none, an approver's "
        "`/retry 5` dispatches the benchmark.",
    )
    return f"#{promotion.issue.number}: said on the issue that the benchmark may have started; stage 5 waits for it"


def record_failed_dispatch(session, spec: dict, error: GitHubError) -> str:
    """Say on the issue the dispatch ``spec`` names was refused (``error``): the due stage failed, or the due
    review halted, in the status comment; a notice when nothing is due. What was done, for the job log."""
    workflow, number = str(spec["workflow"]), int(spec["inputs"]["issue"])
    reason, fix = dispatch_reason(workflow, error), dispatch_fix(workflow, str(spec.get("ref") or ""), error.status)
    promotion = session.promotion(session.client.issue(number), current=True)
    if promotion is None:
        return f"#{number} is not a promotion issue: nothing to say there"
    # acts on no decision, and the write job that asked for the dispatch checked the approvals (``checked``)
    state = promotion.store.load(checked=True)
    step = pipeline.next_step(state) if state is not None and state.status is Status.RUNNING else None
    if error.may_have_started and spec.get("benchmark") and state is not None and state.benchmark is not None:
        return _benchmark_unconfirmed(promotion, state, reason)
    try:
        if isinstance(step, pipeline.RunStage):
            failed = pipeline.stage_failed(state, step.stage, reason, now=promotion.runner().clock(), fix=fix)
        elif isinstance(step, pipeline.RunReview):
            failed = pipeline.review_halted(state, step.gate, reason, now=promotion.runner().clock(), fix=fix)
        else:
            failed = None
        if failed is not None:
            promotion.save(failed)
            promotion.sync_labels(failed)
            return f"#{number}: {pipeline.describe(failed)}"
    except RequestError as exc:  # the request broke since: the status cannot be drawn; the notice says it
        print(f"promote: #{number}: the status comment was not updated: {exc}")
    promotion.notice(
        f"dispatch-{session.env.run_id}",
        f"{md(_sentence(reason))}.\n\nFix: {md(fix)}.\n\nThen any comment on this issue "
        "(`/status` is enough) has the bot take up what that run was to do.",
    )
    return f"#{number}: said on the issue that {workflow} could not be dispatched"
