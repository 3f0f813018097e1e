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

import re
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

#: Short-name prefix of each latency quantity the bot reads -> its Statistics block under AGGREGATE_ROOT.
LATENCY_QUANTITIES: dict[str, str] = {"ttft": _TTFT, "tpot": _TPOT, "itl": _ITL, "e2e": _E2E}

#: The statistics of a v0.2 Statistics block that reports really fill in (upstream's example report and
#: inference-perf's reports carry all of these for every latency block; the schema's ``mode`` no harness fills).
REPORTED_STATISTICS: tuple[str, ...] = (
    "mean", "stddev", "min", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99p9", "max",
)  # fmt: skip

#: The percentiles a claim or guard names: every latency quantity gets all four, so no BLIS latency name
#: (``ttft_p95_ms``, ``itl_p90_ms`` ...) is left without a metric. The report's other statistics (p0p1 ... p75,
#: p99p9, min, max, stddev) are not metrics: low percentiles say nothing about tail latency, and a p99.9 or max
#: of one ~1,000-request run is one or two requests, too noisy to compare; ``reported_field`` names them so a
#: claim on one is told "the bot has no metric for it", not that the benchmark cannot measure it.
_PERCENTILES: tuple[Statistic, ...] = ("p50", "p90", "p95", "p99")
_LATENCY_UNITS: dict[str, CanonicalUnit] = {"ttft": "ms", "tpot": "ms/token", "itl": "ms/token", "e2e": "ms"}

METRICS: dict[str, MetricDef] = dict(
    [
        *(
            _m(f"{q}_{s}", LATENCY_QUANTITIES[q], s, _LATENCY_UNITS[q], "lower")
            for q in ("ttft", "tpot", "itl", "e2e")
            for s in ("mean", *_PERCENTILES)
        ),
        _m("throughput", "throughput.output_token_rate", "mean", "tokens/s", "higher"),
        _m("request_rate", "throughput.request_rate", "mean", "queries/s", "higher"),
    ]
)

#: BLIS metric names (as in BLIS experiment output and OpenEvolve claims) -> short names. BLIS's JSON has
#: mean/p90/p95/p99 for e2e, ttft and itl, and tpot_mean; the p50 names are its fitness-weight spellings.
BLIS_TO_SHORT: dict[str, str] = {
    **{f"{q}_{s}_ms": f"{q}_{s}" for q in ("ttft", "e2e", "itl") for s in ("mean", "p90", "p95", "p99")},
    "ttft_p50_ms": "ttft_p50",
    "e2e_p50_ms": "e2e_p50",
    "tpot_mean_ms": "tpot_mean",
    "tokens_per_sec": "throughput",
    "responses_per_sec": "request_rate",
}

_REPORTED = re.compile(rf"^({'|'.join(LATENCY_QUANTITIES)})_({'|'.join(REPORTED_STATISTICS)})(?:_ms)?$")


def reported_field(name: str) -> str | None:
    """Full report path of the latency statistic a short or BLIS-style name spells ("ttft_p99p9_ms" ->
    "results...time_to_first_token.p99p9"), whether or not METRICS maps it; None for any other name.

    Lets a caller tell a name the bot has no metric for (the report carries it) from one llm-d-benchmark
    does not report at all."""
    m = _REPORTED.match(name.strip())
    return f"{AGGREGATE_ROOT}.{LATENCY_QUANTITIES[m.group(1)]}.{m.group(2)}" if m else None


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
