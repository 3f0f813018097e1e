"""Short metric names: every one points at a real v0.2 Statistics field in a real v0.2 unit."""

from __future__ import annotations

import pytest

from bot.model import RequestError
from bot.model.metrics import AGGREGATE_ROOT, BLIS_TO_SHORT, METRICS, MetricError, metric, short_metric

CONTRACT_SHORT = [
    "ttft_mean",
    "ttft_p50",
    "ttft_p90",
    "ttft_p99",
    "tpot_mean",
    "itl_mean",
    "e2e_mean",
    "e2e_p50",
    "e2e_p95",
    "e2e_p99",
    "throughput",
    "request_rate",
]
CONTRACT_BLIS = {
    "ttft_mean_ms": "ttft_mean",
    "ttft_p99_ms": "ttft_p99",
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


def test_unknown_metric_lists_the_known_names():
    with pytest.raises(MetricError) as exc:
        short_metric("ttft_avg")
    msg = str(exc.value)
    assert isinstance(exc.value, RequestError)
    assert "'ttft_avg'" in msg and "\n" not in msg
    for name in CONTRACT_SHORT + list(CONTRACT_BLIS):
        assert name in msg
