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


def other_runs(ctx: StageContext, run_id: int | None) -> list[int]:
    """The GitHub Actions runs the benchmark results on the branch record (their manifest's ``runs``) when every one
    of them is older than ``run_id``, the run stage 5 waits for; else [] (they are its answer or a later run's,
    or nothing says whose they are: no run named, a manifest from outside Actions or from an older bot).

    After `/retry 5` the bot waits for the new run; the one it replaced goes on when GitHub would not cancel it,
    and publishes onto the same commit. Without this, those reports were judged as the new run's answer. GitHub
    numbers runs in the order they are created, so a replaced run is older than its replacement; a run dispatched
    later (by hand) is newer, benchmarks the same approved commit, and is judged as before."""
    import json

    if run_id is None:
        return []
    try:
        runs = json.loads(ctx.read(f"{ctx.paths.benchmarks}/results/manifest.json") or "{}").get("runs")
    except (ValueError, AttributeError):
        return []  # unreadable: stage 5 says why when it reads the reports
    if not isinstance(runs, list) or not runs or not all(isinstance(r, int) for r in runs) or max(runs) >= run_id:
        return []
    return runs
