"""Report builders for tests/bench: the upstream v0.2 example, and copies of it with chosen metrics and units."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLE = FIXTURES / "br_v0_2_example.yaml"
EXAMPLE_UID = "38b1f169ca178b756f7483523b17de61"

#: Units each harness writes (llm-d.md §B5, native_to_br0_2.py).
HARNESS_UNITS = {
    "inference-perf": {"ttft": "s", "tpot": "s/token", "e2e": "s"},
    "guidellm": {"ttft": "ms", "tpot": "ms/token", "e2e": "s"},
    "vllm-benchmark": {"ttft": "ms", "tpot": "ms/token", "e2e": "ms"},
}
_SCALE = {"s": 1e-3, "ms": 1.0, "s/token": 1e-3, "ms/token": 1.0}


class _StrTimestamps(yaml.CSafeLoader):
    pass


_StrTimestamps.yaml_implicit_resolvers = {
    k: [(t, r) for t, r in v if t != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


@functools.lru_cache(maxsize=1)
def _example() -> dict:
    return yaml.load(EXAMPLE.read_text(encoding="utf-8"), Loader=_StrTimestamps)


def example_doc() -> dict:
    """A fresh copy of the upstream example report (timestamps kept as strings)."""
    return copy.deepcopy(_example())


def make_doc(
    *,
    harness: str = "inference-perf",
    ttft_ms: float = 50.0,
    tpot_ms: float = 20.0,
    e2e_ms: float = 2000.0,
    throughput: float = 1000.0,
    rate: float | None = 10.0,
    total: int = 500,
    failures: int | None = 0,
    incomplete: int | None = None,
) -> dict:
    """The example report with its aggregate metrics replaced, in the units ``harness`` writes."""
    doc = copy.deepcopy(example_doc())
    units = HARNESS_UNITS[harness]
    agg = doc["results"]["request_performance"]["aggregate"]

    def stat(value_ms: float, unit: str, spread: float = 0.1) -> dict:
        v = value_ms * _SCALE[unit]
        return {
            "units": unit,
            "mean": v,
            "p50": v * 0.95,
            "p90": v * (1 + spread),
            "p95": v * (1 + 2 * spread),
            "p99": v * (1 + 4 * spread),
        }

    agg["latency"] = {
        "time_to_first_token": stat(ttft_ms, units["ttft"]),
        "time_per_output_token": stat(tpot_ms, units["tpot"]),
        "inter_token_latency": stat(tpot_ms, units["tpot"]),
        "request_latency": stat(e2e_ms, units["e2e"]),
    }
    agg["throughput"]["output_token_rate"] = {"units": "tokens/s", "mean": throughput}
    agg["throughput"]["request_rate"] = {"units": "queries/s", "mean": rate or 1.0}
    agg["requests"] = {"total": total}
    if failures is not None:
        agg["requests"]["failures"] = failures
    if incomplete is not None:
        agg["requests"]["incomplete"] = incomplete
    doc["scenario"]["load"]["standardized"]["tool"] = harness
    if rate is None:
        doc["scenario"]["load"]["standardized"].pop("rate_qps", None)
    else:
        doc["scenario"]["load"]["standardized"]["rate_qps"] = rate
    return doc


def write_report(
    root: Path,
    treatment: str,
    workload: str,
    rate: float,
    rep: int,
    doc: dict | str,
    name: str = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
) -> Path:
    d = root / treatment / workload / f"rate-{rate:g}" / f"rep-{rep}"
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    if isinstance(doc, dict) and doc.get("run", {}).get("uid") == EXAMPLE_UID:
        # Every real report has its own run.uid; copies of one run share it and count once.
        doc = copy.deepcopy(doc)
        doc["run"]["uid"] = f"{treatment}-{workload}-{rate:g}-{rep}-{name}"
    p.write_text(
        doc if isinstance(doc, str) else yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8"
    )
    return p
