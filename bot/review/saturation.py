"""Gate 2 for a scheduler: the cells its claims are judged on must saturate, or the plugin never acts.

A queue-position scorer acts only where endpoints' waiting counts differ, and vLLM queues requests only when it
is saturated (``bot.hypotheses.saturation``). Nothing in the plan can make a cell saturate: the rates are the
request's, chosen for another purpose (the template reuses the router example's). So gate 2 names the cells
before the GPU time is spent; stage 5 then reports whether queues formed in each (``bot.bench.waiting``).
A SUGGESTION: whether a rate saturates this stack is not known before it runs, and a person decides. Only the
claims stage 4 plans and stage 5 judges are named (``set_aside.for_plan``): a claim set aside as not measurable
on these cells (``G2.priority-exercised``) takes no cell, and its queues decide nothing.
"""

from __future__ import annotations

from bot.bench.waiting import WAITING_KEY
from bot.hypotheses.saturation import cells_text, needs_queues, queue_cells
from bot.model import Finding, PolicyKind, Severity, TranslationSummary


def cells_saturate(ctx, hyps, summary: TranslationSummary) -> list[Finding]:
    """One SUGGESTION naming the cells a scheduler's predicted changes are judged on, as stage 4 plans them; none
    for another kind, or when every such claim is set aside (A1/B7 on single-priority cells: sched-e2e #4)."""
    from bot.bench.set_aside import for_plan

    kind = ctx.request.kind
    if kind is not PolicyKind.SCHEDULING:
        return []
    epp = ctx.read(ctx.paths.epp_config(summary.plugin_type))
    judged = [h for h in for_plan(ctx.request, summary, epp, [h for _, h in hyps]) if needs_queues(kind, h)]
    if not judged:
        return []
    where = cells_text(queue_cells(ctx.request, judged))
    ids = ", ".join(h.id for h in judged)
    stack = ctx.request.stack
    on = f" on {stack.replicas} × {stack.accelerator} serving {stack.model}"
    message = (
        f"the cells {ids} are judged on must saturate vLLM{on} ({where}): this scheduler is a queue-position "
        "scorer and acts only where pods have waiting requests, which exist only under saturation; on a cell "
        "where no queue forms every endpoint scores alike and the cell measures the rest of the profile. Nothing "
        "in the plan checks it"
    )
    fix = (
        "before approving, check that these rates queue requests on this stack (run one baseline repetition of "
        "the lowest and read the pods' `vllm:num_requests_waiting`), and raise the rates that do not; stage 5 "
        f"reports per cell whether queues formed when the reports carry `{WAITING_KEY}`"
    )
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check="G2.cells-saturate",
            file=ctx.paths.hypotheses_dir,
            message=message,
            fix=fix,
        )
    ]
