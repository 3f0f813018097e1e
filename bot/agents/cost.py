"""Token and dollar accounting in words: per call, per stage or gate, per promotion, and the cache share.

The numbers come from the API's usage fields as saved in the state
(``PipelineState.llm``); dollars are list-price estimates (``LLMSettings``
prices), ``n/a`` for a model without a known price.
"""

from __future__ import annotations

from bot.model import LLMTotals, LLMUsage


def usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


def share(t: LLMTotals) -> str:
    return "n/a" if t.cache_share is None else f"{t.cache_share:.0%}"


def line(label: str, t: LLMTotals) -> str:
    return (
        f"{label}: {t.calls} calls, input {t.input_tokens:,} + cache write {t.cache_write_tokens:,} + cache read "
        f"{t.cache_read_tokens:,} ({share(t)} of input from cache), output {t.output_tokens:,}, {usd(t.usd)}"
    )


def cost_lines(usage: LLMUsage) -> list[str]:
    """One line per stage/gate, then the promotion's total; empty when no model was called."""
    if not usage.calls:
        return []
    lines = [line(step, t) for step, t in usage.by_step().items()]
    lines.append(line("promotion", usage.totals()))
    return lines
