"""Gate 2 on a scheduler whose evolved order the planned cells leave inert (``bot.bench.order_cells``).

A scheduler's order ranks the request against modelled waiting requests by what it reads of the request (class,
TTFT target, prompt length). On cells where every request reads alike there, it ranks each the same way, so the
plugin is a second queue-scorer (or scores flat) and the hypotheses whose mechanism is the order cannot be shown
there: stage 5 reports them not measurable on these cells, and gate 2 says so before the GPU time is spent, with
what the plan sends (priority 0; each workload's prompt lengths against ``incumbentInputTokens``).
"""

from __future__ import annotations

from bot.bench.order_cells import (
    DEFAULT_INCUMBENT_TOKENS,
    deployed_parameters,
    inert_workloads,
    length_unmoved,
    on_workloads,
    order_check,
    order_fix,
    order_reads,
    order_set_aside,
    prompt_tokens,
)
from bot.directives import exclude_command
from bot.model import Finding, Severity


def order_inert(ctx, hyps, summary) -> list[Finding]:
    """The finding for a scheduler whose order hypotheses the cells cannot measure (empty: none is set aside)."""
    reads = order_reads(summary)
    if not reads:
        return []
    params = deployed_parameters(ctx.read(ctx.paths.epp_config(summary.plugin_type)), summary.plugin_type)
    inert = inert_workloads(summary, ctx.request, params)
    hypotheses = [h for _, h in hyps]
    set_aside = order_set_aside(hypotheses, inert)
    if not set_aside:
        return []
    ids = ", ".join(set_aside)
    lengths = ""
    if "InputTokens" in reads and length_unmoved(summary) is None:  # lengths that decide nothing are not listed
        incumbent = int(params.get("incumbentInputTokens", DEFAULT_INCUMBENT_TOKENS))
        known = [(w.name, prompt_tokens(ctx.request, w.name)) for w in ctx.request.workloads]
        each = ", ".join(f"`{n}` {_tokens(t)}" for n, t in known)
        lengths = f"; prompt lengths: {each}, against incumbentInputTokens = {incumbent}"
    why = on_workloads(inert, inert)
    message = (
        "the planned cells cannot measure the scheduler's evolved order (it ranks every request of them alike); "
        f"{ids} will be reported not measurable on these cells, not judged: {why}{lengths}; so the plugin acts as "
        "a second queue-scorer there (or scores flat), and those runs measure queue length re-weighted, not the "
        "order; the guards and the other gaps are judged as planned"
    )
    # Stage 4 plans them as stage 5 judges them (``run_validate.planned_hypotheses``): no alpha, no cells.
    fix = (
        f"to measure them, {order_fix(summary)}; as planned they take no alpha, no cell and no GPU time, so approving "
        f"as is costs nothing extra for them, and excluding them ({exclude_command(ctx.home, ids, ctx.work)}) "
        "changes neither the plan nor its GPU time, only drops them from the report; either way the guards and the "
        "other gaps are judged on the planned cells as they are, and this check stays until you approve (say why "
        "as the reason) or reject"
    )
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check=order_check(summary),
            file=ctx.paths.hypotheses_dir,
            message=message,
            fix=fix,
        )
    ]


def _tokens(t: tuple[int, int] | None) -> str:
    if t is None:
        return "unknown (a profile whose prompt lengths the bot does not read)"
    return f"{t[0]} tokens" if t[0] == t[1] else f"{t[0]}–{t[1]} tokens"


def priority_exercised(ctx, message: str, fix: str) -> Finding:
    """The one finding both single-priority checks raise (a class-reading scheduler or router, an admitter)."""
    return Finding(
        severity=Severity.IMPORTANT,
        check="G2.priority-exercised",
        file=ctx.paths.hypotheses_dir,
        message=message,
        fix=fix,
    )
