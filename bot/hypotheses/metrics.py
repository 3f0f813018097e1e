"""BLIS and OpenEvolve metric names → the short names llm-d-benchmark evidence uses.

The BLIS → short table itself lives in ``bot.model.metrics`` (one place for
the whole bot). This module adds only what a *hypothesis* source can say that
a BLIS claim file cannot: OpenEvolve's aggregate names (``avg_e2e_ms``), its
per-workload names (``cache_warmup_e2e_ms``), and BLIS metrics that are real
but have no llm-d-benchmark v0.2 counterpart. Those last ones are not errors —
a claim about ``slo_attainment`` is a legitimate BLIS claim — they become
hypotheses without a benchmark prediction, so the gate 2 reviewer sees them.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.hypotheses.errors import HypothesisError
from bot.model.metrics import BLIS_TO_SHORT, METRICS, reported_field

#: OpenEvolve ``blis_router`` evaluator names (averaged over its BLIS workloads).
OPENEVOLVE_TO_SHORT: dict[str, str] = {
    "avg_e2e_ms": "e2e_mean",
    "avg_p95_ms": "e2e_p95",
    "e2e_ms": "e2e_mean",  # per-workload artifact key, also the suffix of <workload>_e2e_ms
}

#: Real BLIS / OpenEvolve metrics that llm-d-benchmark v0.2 reports do not carry: why, for the hypothesis body.
#: (A latency statistic the report carries but bot.model.metrics does not map, e.g. ``ttft_p99p9_ms``, is found
#: by ``reported_field`` instead, so its hypothesis says the bot, not the benchmark, lacks it.)
UNMEASURED: dict[str, str] = {
    "combined_score": "OpenEvolve fitness (-0.5·e2e_mean - 0.5·e2e_p95 in blis_router); claim e2e_mean and e2e_p95 separately",
    "success_rate": "OpenEvolve evaluator bookkeeping, not a serving metric",
    "slo_attainment": "needs per-class SLO targets; llm-d-benchmark v0.2 reports no SLO attainment",
    "goodput_rps": "needs per-class SLO targets; llm-d-benchmark v0.2 reports no goodput",
    "jain_fairness": "per-tenant fairness; llm-d-benchmark v0.2 reports no per-tenant breakdown",
    "capped_throughput": "sim2real admission fitness term; no llm-d-benchmark counterpart",
    "scheduling_delay_p99_ms": "simulator-internal queueing delay; not in llm-d-benchmark reports",
    "preemption_count": "vLLM preemptions are not in llm-d-benchmark reports",
    "kv_allocation_failures": "simulator anomaly counter",
    "dropped_unservable": "simulator anomaly counter",
    "timed_out_requests": "simulator anomaly counter",
    "completed_requests": "a count, not a performance metric; the evaluator guards failed/incomplete requests itself",
    "cache_hit_rate": "prefix-cache hit rate is not in llm-d-benchmark v0.2 aggregate metrics",
}


@dataclass(frozen=True)
class MetricTranslation:
    """What a BLIS-side metric name means for llm-d-benchmark."""

    source: str  # the name as written
    short: str | None  # None: no llm-d-benchmark counterpart (see note)
    workload_prefix: str | None = None  # "cache_warmup" for cache_warmup_e2e_ms
    note: str = ""
    reported: str | None = None  # short is None but the v0.2 report carries this path: the bot lacks the metric

    @property
    def why_unmeasured(self) -> str:
        """Why no benchmark decides a claim on this name, for the hypothesis and gate 2: the bot's gap when the
        report carries the field, llm-d-benchmark's otherwise."""
        if self.reported:
            return f"the bot has no metric for it (the v0.2 report carries `{self.reported}`; bot.model.metrics does not map it)"
        return f"llm-d-benchmark does not report it ({self.note})"


def _known() -> dict[str, str | None]:
    table: dict[str, str | None] = {name: name for name in METRICS}
    table.update(BLIS_TO_SHORT)
    table.update(OPENEVOLVE_TO_SHORT)
    table.update(dict.fromkeys(UNMEASURED))
    return table


def translate_metric(name: str) -> MetricTranslation:
    """Translate a short, BLIS or OpenEvolve metric name; HypothesisError for a name nobody reports.

    ``<workload>_<metric>`` (OpenEvolve's per-workload form) is split at the
    longest known metric suffix, so ``cache_warmup_e2e_p95_ms`` is e2e_p95 on
    the workload ``cache_warmup``.
    """
    key = name.strip()
    table = _known()
    if key in table:
        return MetricTranslation(key, table[key], None, UNMEASURED.get(key, ""))
    if (path := reported_field(key)) is not None:
        return MetricTranslation(key, None, None, "the bot has no metric for it", reported=path)
    for suffix in sorted(table, key=lambda s: (-len(s), s)):
        if key.endswith("_" + suffix) and len(key) > len(suffix) + 1:
            prefix = key[: -len(suffix) - 1]
            return MetricTranslation(key, table[suffix], prefix, UNMEASURED.get(suffix, ""))
    raise HypothesisError(
        f"unknown metric {name!r}; use a short name ({', '.join(METRICS)}), a BLIS name "
        f"({', '.join(sorted(BLIS_TO_SHORT))}) or an OpenEvolve name (avg_e2e_ms, avg_p95_ms, <workload>_e2e_ms)"
    )


def blis_metric_to_short(name: str) -> str:
    """Short llm-d-benchmark name for a BLIS/OpenEvolve metric name ("ttft_mean_ms" -> "ttft_mean").

    HypothesisError when the name is unknown or has no llm-d-benchmark counterpart.
    """
    t = translate_metric(name)
    if t.short is None:
        raise HypothesisError(
            f"metric {name!r} has no llm-d-benchmark counterpart: {t.why_unmeasured}; claim a metric from {', '.join(METRICS)}"
        )
    return t.short


def metric_label(short: str) -> str:
    """People's name for a short metric: "mean TTFT", "p95 end-to-end latency"."""
    d = METRICS[short]
    quantity = {
        "latency.time_to_first_token": "TTFT",
        "latency.time_per_output_token": "TPOT",
        "latency.inter_token_latency": "inter-token latency",
        "latency.request_latency": "end-to-end latency",
        "throughput.output_token_rate": "output-token throughput",
        "throughput.request_rate": "request throughput",
    }.get(d.path, short)
    if d.path.startswith("throughput."):
        return quantity
    return f"{d.statistic} {quantity}"
