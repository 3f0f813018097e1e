"""What landed on the promotion branch after a given commit: stage 5 tells reports a benchmark run delivered
(on top of where the bot left the branch, or after the run it waits for was dispatched) from reports an earlier
pass judged (``run_validate.benchmark_due``)."""

from __future__ import annotations

from bot.stages.context import StageContext


def delivered_since(ctx: StageContext, prefix: str, commit: str | None) -> bool:
    """Whether a commit on the branch after ``commit`` added or changed reports under ``prefix``."""
    return any(p.startswith(prefix) for sha in added_since(ctx, commit) or [] for p in ctx.forge.changed_paths(sha))


def added_since(ctx: StageContext, commit: str | None) -> list[str] | None:
    """The branch's commits after ``commit``, oldest first; None when ``commit`` is not on the branch (a state
    saved before it was kept, a branch rewritten since)."""
    if commit is None:
        return None
    if ctx.forge.branch_head(ctx.branch) == commit:
        return []
    shas = [sha for sha, _ in ctx.forge.commits(ctx.branch, ctx.request.fork.base_branch)]
    return shas[shas.index(commit) + 1 :] if commit in shas else None
