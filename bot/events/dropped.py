"""What a restart or a re-check's reopened gate threw away, undone on GitHub too: one path for both.

A restart (the request changed) and a gate the re-check reopened (``bot.recheck``: another bot version made the
artifacts a person approved, and they came out different) both drop decisions and, when the plan goes, the
benchmark stage 5 waited for. The state alone does not undo what GitHub still shows or runs: the approval labels
of those decisions would stay on the issue (the reopened gate's is the one ``sync_labels`` leaves to its own
run, which would then judge a decision that no longer counts), and the GPU run would hold the runners and push
reports nobody asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from bot import pipeline
from bot.events.benchmark import cancel_line
from bot.github.client import GitHub
from bot.github.labels import Label, desired
from bot.model import BenchmarkDispatch, Decision, PipelineState


def undo_dropped(
    promotion,
    before: PipelineState,
    after: PipelineState,
    *,
    actor: str,
    why: str,
    say: Callable[[GitHub, BenchmarkDispatch], tuple[bool, str]],
) -> tuple[PipelineState, str, list[str]]:
    """The approval labels of the decisions ``after`` dropped come off now (the same run may open that gate again,
    whose label ``sync_labels`` then leaves alone), and the GPU benchmark run ``after`` no longer waits for is
    cancelled (``say``: ``benchmark.cancel`` for Markdown, ``benchmark.cancel_line`` for a re-check's line).
    Returns the state (stage 5 no longer waits for a run that is over: the caller saves it), what ``say`` said
    ("" no run) and the labels taken off."""
    approved = {str(Label.approved(d.gate)) for d in before.decisions if d.decision is Decision.APPROVE}
    removed = promotion.drop_labels(approved - desired(after))
    sent = before.benchmark
    if sent is None or after.benchmark is not None:
        return after, "", removed
    over, said = say(promotion.client, sent)
    if over:
        detail = f"run {sent.run_id}: {why}"
        after = pipeline.benchmark_stopped(after, now=promotion.runner().clock(), actor=actor, detail=detail)
    return after, said, removed


def recheck_reopened(promotion, before: PipelineState, after: PipelineState) -> tuple[PipelineState, str]:
    """A gate the re-check reopened (the Runner's ``on_reopen``): undone as a restart's (``undo_dropped``), in the
    bot's name, and said in words for its line (plain text: the audit trail keeps it, the re-check notice and
    the status comment show it escaped)."""
    gate = after.open_gate or next(g for g, covers in pipeline.GATE_COVERS.items() if after.next_stage in covers)
    after, said, removed = undo_dropped(
        promotion, before, after, actor="bot", why=f"the re-check reopened gate {gate}", say=cancel_line
    )
    if before.benchmark is not None and after.benchmark is None:
        # Stage 5 runs again (gate 3 reopened from stage 4) or after the decision: it dispatches the benchmark
        # anew, even from a run that only continues what was due (which otherwise leaves the dispatch to the run
        # that made stage 5 due: here that is this one, and it dropped the run stage 5 waited for).
        promotion._dispatch_benchmark = True
    if removed:
        names = " and ".join(f"`{n}`" for n in removed)
        said = "; ".join(x for x in (said, f"the approval label{'s' * (len(removed) > 1)} {names} came off") if x)
    return after, said
