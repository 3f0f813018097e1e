"""The words every track's hypotheses share: who is compared with whom, where, and which way is better."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.bench.metrics import METRICS
from bot.hypotheses.metrics import metric_label
from bot.model import PolicyKind, PromotionRequest, TranslationSummary


@dataclass
class Ctx:
    """What every hypothesis of one promotion is written from."""

    req: PromotionRequest
    summary: TranslationSummary
    dictionary: Any
    plugin: str  # "the evolved scorer `x`"
    default: str  # "the default scorer pipeline"


def plugin_phrase(kind: PolicyKind, plugin: str) -> tuple[str, str]:
    """(the evolved plugin, what it is compared with), as the seed's example words them."""
    if kind is PolicyKind.ROUTING:
        return f"the evolved scorer `{plugin}`", "the default scorer pipeline"
    if kind is PolicyKind.ADMISSION:
        return f"the evolved admission plugin `{plugin}`", "the default admission path (every request admitted)"
    return f"the evolved queue-ordering plugin `{plugin}`", "the default scheduling pipeline"


def clause(text: str) -> str:
    """A sentence used mid-sentence: no trailing period, first letter lowered unless it starts an acronym."""
    t = text.strip().rstrip(".")
    if len(t) > 1 and t[0].isupper() and t[1].islower():
        t = t[0].lower() + t[1:]
    return t


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def fmt_rate(r: float) -> str:
    return f"{r:g}"


def where(req: PromotionRequest, workloads: list[str], rates: list[float]) -> str:
    parts = []
    for name in workloads:
        w = req.workload(name)
        desc = f" ({w.description.rstrip('.')})" if w.description else ""
        parts.append(f"`{name}`{desc}")
    names = " and ".join(parts) if len(parts) <= 2 else ", ".join(parts[:-1]) + " and " + parts[-1]
    at = " at " + ", ".join(fmt_rate(r) for r in rates) + " req/s" if rates else " at every benchmarked rate"
    return f"workload{'s' if len(workloads) > 1 else ''} {names}{at}"


def direction_words(short: str, direction: str) -> str:
    better = METRICS[short].better
    lower = direction == "decrease"
    good = (better == "lower") == lower
    return f"{'better' if good else 'worse'} ({'lower' if lower else 'higher'}) {metric_label(short)}"


def code_list(names: list[str]) -> str:
    """`a`, `b` and `c`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
