"""Short metric names: every one points at a real v0.2 Statistics field in a real v0.2 unit."""

from __future__ import annotations

import pytest

from bot.model import RequestError
from bot.model.metrics import AGGREGATE_ROOT, BLIS_TO_SHORT, METRICS, MetricError, metric, short_metric

CONTRACT_SHORT = [
    "ttft_mean",
    "ttft_p50",
    "ttft_p90",
    "ttft_p95",
    "ttft_p99",
    "tpot_mean",
    "tpot_p95",
    "itl_mean",
    "itl_p95",
    "e2e_mean",
    "e2e_p50",
    "e2e_p90",
    "e2e_p95",
    "e2e_p99",
    "throughput",
    "request_rate",
]
CONTRACT_BLIS = {
    "ttft_mean_ms": "ttft_mean",
    "ttft_p95_ms": "ttft_p95",
    "ttft_p99_ms": "ttft_p99",
    "e2e_p90_ms": "e2e_p90",
    "itl_p90_ms": "itl_p90",
    "itl_p95_ms": "itl_p95",
    "itl_p99_ms": "itl_p99",
    "e2e_mean_ms": "e2e_mean",
    "e2e_p95_ms": "e2e_p95",
    "e2e_p99_ms": "e2e_p99",
    "itl_mean_ms": "itl_mean",
    "tokens_per_sec": "throughput",
    "responses_per_sec": "request_rate",
}


def test_contract_names_present():
    assert set(CONTRACT_SHORT) <= set(METRICS)
    for blis, short in CONTRACT_BLIS.items():
        assert BLIS_TO_SHORT[blis] == short
        assert short_metric(blis) == short
    for short in CONTRACT_SHORT:
        assert short_metric(short) == short
        assert metric(short).name == short


def test_every_metric_is_a_schema_statistic():
    from bot.bench.schema.br.schema_v0_2 import BenchmarkReportV02

    defs = BenchmarkReportV02.model_json_schema()["$defs"]
    groups = {"latency": defs["AggregateLatency"], "throughput": defs["AggregateThroughput"]}
    stats = defs["Statistics"]["properties"]
    units = defs["Units"]["enum"]
    for m in METRICS.values():
        group, name = m.path.split(".")
        assert name in groups[group]["properties"], m
        assert m.statistic in stats, m
        assert m.unit in units, m
        assert m.report_path == f"{AGGREGATE_ROOT}.{m.path}"
        assert m.better == ("higher" if m.unit in ("tokens/s", "queries/s") else "lower")


def test_every_latency_percentile_a_report_carries_is_a_metric():
    """Each latency block the bot reads gets mean and the four tail percentiles, read from a real sample report."""
    from pathlib import Path

    import yaml

    from bot.model.metrics import LATENCY_QUANTITIES, reported_field

    root = Path(__file__).resolve().parents[2] / "examples" / "weighted-adaptive" / "results"
    doc = yaml.safe_load(next(root.rglob("benchmark_report_v0.2*.yaml")).read_text())
    latency = doc["results"]["request_performance"]["aggregate"]["latency"]
    for q, path in LATENCY_QUANTITIES.items():
        block = latency[path.split(".")[1]]
        for stat in ("mean", "p50", "p90", "p95", "p99"):
            assert stat in block, (q, stat)
            assert METRICS[f"{q}_{stat}"].report_path + f".{stat}" == reported_field(f"{q}_{stat}_ms")
        assert "p99p9" in block and f"{q}_p99p9" not in METRICS  # carried, deliberately not a metric
    assert reported_field("slo_attainment") is None and reported_field("ttft_p42_ms") is None


def test_reported_statistics_are_schema_fields():
    from bot.bench.schema.br.schema_v0_2 import BenchmarkReportV02
    from bot.model.metrics import REPORTED_STATISTICS

    stats = BenchmarkReportV02.model_json_schema()["$defs"]["Statistics"]["properties"]
    assert set(REPORTED_STATISTICS) <= set(stats)


def test_unknown_metric_lists_the_known_names():
    with pytest.raises(MetricError) as exc:
        short_metric("ttft_avg")
    msg = str(exc.value)
    assert isinstance(exc.value, RequestError)
    assert "'ttft_avg'" in msg and "\n" not in msg
    for name in CONTRACT_SHORT + list(CONTRACT_BLIS):
        assert name in msg
