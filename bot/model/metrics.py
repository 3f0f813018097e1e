"""Short metric names shared by hypotheses, the benchmark plan and the statistics.

BLIS speaks ``ttft_mean_ms``; llm-d-benchmark v0.2 reports speak
``results.request_performance.aggregate.latency.time_to_first_token.mean`` in
whatever unit the harness chose. Everything between those two ends uses the
short names here, in one canonical unit per quantity, so a hypothesis written
at stage 3 can be decided at stage 5 without anyone converting units by hand.
In the model, below both the benchmark plan (``bot.bench``) and the statistics
(``bot.stats``, which the plan uses to size itself), so neither imports the other to read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.model.base import RequestError

#: Where every metric path below is rooted in a v0.2 benchmark report.
AGGREGATE_ROOT = "results.request_performance.aggregate"

Statistic = Literal["mean", "p50", "p90", "p95", "p99"]
CanonicalUnit = Literal["ms", "ms/token", "tokens/s", "queries/s"]


class MetricError(RequestError):
    """A metric name that is neither a short name nor a known BLIS name."""


@dataclass(frozen=True)
class MetricDef:
    name: str
    path: str  # dotted, under AGGREGATE_ROOT, e.g. "latency.time_to_first_token"
    statistic: Statistic
    unit: CanonicalUnit
    better: Literal["lower", "higher"]

    @property
    def report_path(self) -> str:
        """Full dotted path of the Statistics block in a v0.2 report."""
        return f"{AGGREGATE_ROOT}.{self.path}"


def _m(name: str, path: str, statistic: Statistic, unit: CanonicalUnit, better: str) -> tuple[str, MetricDef]:
    return name, MetricDef(name, path, statistic, unit, better)  # type: ignore[arg-type]


_TTFT = "latency.time_to_first_token"
_TPOT = "latency.time_per_output_token"
_ITL = "latency.inter_token_latency"
_E2E = "latency.request_latency"

METRICS: dict[str, MetricDef] = dict(
    [
        _m("ttft_mean", _TTFT, "mean", "ms", "lower"),
        _m("ttft_p50", _TTFT, "p50", "ms", "lower"),
        _m("ttft_p90", _TTFT, "p90", "ms", "lower"),
        _m("ttft_p99", _TTFT, "p99", "ms", "lower"),
        _m("tpot_mean", _TPOT, "mean", "ms/token", "lower"),
        _m("itl_mean", _ITL, "mean", "ms/token", "lower"),
        _m("e2e_mean", _E2E, "mean", "ms", "lower"),
        _m("e2e_p50", _E2E, "p50", "ms", "lower"),
        _m("e2e_p95", _E2E, "p95", "ms", "lower"),
        _m("e2e_p99", _E2E, "p99", "ms", "lower"),
        _m("throughput", "throughput.output_token_rate", "mean", "tokens/s", "higher"),
        _m("request_rate", "throughput.request_rate", "mean", "queries/s", "higher"),
    ]
)

#: BLIS metric names (as in BLIS experiment output and OpenEvolve claims) -> short names.
BLIS_TO_SHORT: dict[str, str] = {
    "ttft_mean_ms": "ttft_mean",
    "ttft_p50_ms": "ttft_p50",
    "ttft_p90_ms": "ttft_p90",
    "ttft_p99_ms": "ttft_p99",
    "e2e_mean_ms": "e2e_mean",
    "e2e_p50_ms": "e2e_p50",
    "e2e_p95_ms": "e2e_p95",
    "e2e_p99_ms": "e2e_p99",
    "itl_mean_ms": "itl_mean",
    "tpot_mean_ms": "tpot_mean",
    "tokens_per_sec": "throughput",
    "responses_per_sec": "request_rate",
}


def short_metric(name: str) -> str:
    """Short name for a short or BLIS metric name; MetricError lists the known names otherwise."""
    key = name.strip()
    if key in METRICS:
        return key
    if key in BLIS_TO_SHORT:
        return BLIS_TO_SHORT[key]
    raise MetricError(
        f"unknown metric {name!r}; use a short name ({', '.join(METRICS)}) "
        f"or a BLIS name ({', '.join(sorted(BLIS_TO_SHORT))})"
    )


def metric(name: str) -> MetricDef:
    """The MetricDef for a short or BLIS name."""
    return METRICS[short_metric(name)]
