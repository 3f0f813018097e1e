"""v0.2 reports: validation with named reasons, unit normalisation per harness, the results layout."""

from __future__ import annotations

import copy
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from bot.bench.reports import (
    REQUEST_COLUMNS,
    TABLE_COLUMNS,
    ReportError,
    RunKey,
    convert,
    extract_metrics,
    load_report,
    load_results,
    parse_layout,
    parse_report,
    run_dir,
)
from bot.model import RequestError
from bot.model.metrics import METRICS
from tests.bench.bench_helpers import EXAMPLE, example_doc, make_doc, write_report

AGG = ("results", "request_performance", "aggregate")


def _dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False)


def _reason(doc_or_text) -> str:
    text = doc_or_text if isinstance(doc_or_text, str) else _dump(doc_or_text)
    with pytest.raises(ReportError) as exc:
        parse_report(text)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def _agg(doc: dict) -> dict:
    node = doc
    for k in AGG:
        node = node[k]
    return node


# --------------------------------------------------------------------------
# One report
# --------------------------------------------------------------------------


def test_reference_example_parses_and_converts():
    doc = load_report(EXAMPLE)
    assert doc["version"] == "0.2"
    assert isinstance(doc["run"]["time"]["start"], str)  # timestamps stay strings, as the schema types them
    got = {name: (stat, value, unit) for name, stat, value, unit in extract_metrics(doc)}
    # The example's TTFT is in seconds (inference-perf): 0.0368578234128654 s.
    assert got["ttft_mean"] == ("mean", pytest.approx(36.8578234128654), "ms")
    assert got["ttft_p99"] == ("p99", pytest.approx(50.29489721637218), "ms")
    assert got["tpot_mean"] == ("mean", pytest.approx(36.8578234128654), "ms/token")
    assert got["throughput"] == ("mean", pytest.approx(2262.448), "tokens/s")
    assert got["request_rate"][2] == "queries/s"
    # request_latency has only a mean in the example: the percentiles are absent, not invented.
    assert "e2e_mean" in got and "e2e_p95" not in got and "e2e_p99" not in got


def test_wrong_unit_outside_the_enum_is_named():
    doc = example_doc()
    _agg(doc)["latency"]["time_to_first_token"]["units"] = "sec"
    reason = _reason(doc)
    assert reason.startswith(
        "wrong unit 'sec' at results.request_performance.aggregate.latency.time_to_first_token.units"
    )


def test_wrong_unit_family_is_named():
    doc = example_doc()
    _agg(doc)["latency"]["time_to_first_token"]["units"] = "tokens/s"  # a valid unit, but not a time
    reason = _reason(doc)
    assert "wrong unit 'tokens/s'" in reason and "time_to_first_token" in reason and "ms, s" in reason
    doc = example_doc()
    _agg(doc)["latency"]["time_per_output_token"]["units"] = "ms"  # a time, but not per token
    assert "expected one of ms/token, s/token" in _reason(doc)


@pytest.mark.parametrize(
    "path, field",
    [
        ((), "run"),
        (("run",), "uid"),
        ((*AGG, "latency", "time_to_first_token"), "mean"),
        ((*AGG, "requests"), "total"),
        ((*AGG, "latency", "request_latency"), "units"),
    ],
)
def test_missing_required_field_is_named(path, field):
    doc = example_doc()
    node = doc
    for k in path:
        node = node[k]
    del node[field]
    where = ".".join(path) or "(top level)"
    assert _reason(doc) == f"missing required field '{field}' at {where}"


def test_wrong_versions_are_named():
    doc = example_doc()
    doc["version"] = "0.1"
    r = _reason(doc)
    assert r.startswith("v0.1 report") and "-b 0.2" in r
    doc["version"] = "0.3"
    assert _reason(doc).startswith("wrong version '0.3'")
    doc["version"] = 0.2  # unquoted in YAML
    assert "quote it" in _reason(doc)
    del doc["version"]
    assert _reason(doc).startswith("wrong version: no 'version' field")


def test_malformed_yaml_names_the_line():
    lines = EXAMPLE.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith("  eid:"))
    lines[line - 1] = "   eid: x: y"  # over-indented, inside the `run` mapping
    reason = _reason("\n".join(lines))
    assert reason.startswith(f"not valid YAML at line {line}, column 4:")


def test_unknown_field_and_non_mapping():
    doc = example_doc()
    _agg(doc)["latency"]["ttft"] = {"units": "s", "mean": 1.0}
    assert _reason(doc).startswith("unknown field at results.request_performance.aggregate.latency")
    assert _reason("- 1\n- 2\n").startswith("not a benchmark report")


def test_load_report_names_the_file(tmp_path):
    p = tmp_path / "benchmark_report_v0.2,_x.yaml"
    doc = example_doc()
    doc["version"] = "0.3"
    p.write_text(_dump(doc))
    with pytest.raises(RequestError, match=r"benchmark_report_v0\.2,_x\.yaml: wrong version"):
        load_report(p)
    with pytest.raises(ReportError, match="no such report file"):
        load_report(tmp_path / "missing.yaml")


def test_convert():
    assert convert(0.25, "s", "ms") == 250.0
    assert convert(0.02, "s/token", "ms/token") == 20.0
    assert convert(7.0, "ms", "ms") == 7.0
    with pytest.raises(ReportError, match="cannot be converted"):
        convert(1.0, "count", "ms")


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------


def test_parse_layout():
    f = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
    assert parse_layout(Path(f"baseline/load-spikes/rate-2.5/rep-3/{f}")) == RunKey("baseline", "load-spikes", 2.5, 3)
    assert parse_layout(Path(f"evolved/w/rate-10/rep-1/{f}")) == RunKey("evolved", "w", 10.0, 1)
    assert run_dir("evolved", "w", 10.0, 1) == "evolved/w/rate-10/rep-1"
    assert run_dir("baseline", "w", 2.5, 2) == "baseline/w/rate-2.5/rep-2"
    bad = {
        f"treatment/w/rate-10/rep-1/{f}": "unknown treatment directory 'treatment'",
        f"baseline/w/10/rep-1/{f}": "bad rate directory '10'",
        f"baseline/w/rate-10/1/{f}": "bad repetition directory '1'",
        f"baseline/w/rate-10/{f}": "not in the results layout",
        f"baseline/extra/w/rate-10/rep-1/{f}": "not in the results layout",
    }
    for rel, reason in bad.items():
        with pytest.raises(ReportError) as exc:
            parse_layout(Path(rel))
        assert str(exc.value).startswith(reason), rel


# --------------------------------------------------------------------------
# A results directory
# --------------------------------------------------------------------------


def _value(rs, treatment, workload, rate, rep, metric) -> float:
    t = rs.table
    row = t[
        (t.treatment == treatment)
        & (t.workload == workload)
        & (t.rate == rate)
        & (t.repetition == rep)
        & (t.metric == metric)
    ]
    assert len(row) == 1
    return float(row["value"].iloc[0])


def test_units_normalised_per_harness(results_factory):
    root, write = results_factory
    # The same true latencies written by three harnesses in their own units.
    for rep, harness in enumerate(["inference-perf", "guidellm", "vllm-benchmark"], start=1):
        write("baseline", "w", 10, rep, make_doc(harness=harness, ttft_ms=48.0, tpot_ms=21.5, e2e_ms=1875.0))
    rs = load_results(root)
    assert rs.rejected == []
    assert list(rs.table.columns) == TABLE_COLUMNS
    for rep in (1, 2, 3):
        assert _value(rs, "baseline", "w", 10.0, rep, "ttft_mean") == pytest.approx(48.0)
        assert _value(rs, "baseline", "w", 10.0, rep, "tpot_mean") == pytest.approx(21.5)
        assert _value(rs, "baseline", "w", 10.0, rep, "itl_mean") == pytest.approx(21.5)
        assert _value(rs, "baseline", "w", 10.0, rep, "e2e_mean") == pytest.approx(1875.0)
        assert _value(rs, "baseline", "w", 10.0, rep, "e2e_p95") == pytest.approx(1875.0 * 1.2)
    units = dict(zip(rs.table.metric, rs.table.unit, strict=False))
    assert units["ttft_mean"] == "ms" and units["tpot_mean"] == "ms/token" and units["throughput"] == "tokens/s"
    # The units came from each file's `units` field: the raw files really differ.
    raw = [yaml.safe_load(p.read_text()) for p in sorted(root.rglob("*.yaml"))]
    assert [
        r["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["units"] for r in raw
    ] == ["s", "ms", "ms"]


def test_layout_and_requests_table(results_factory):
    root, write = results_factory
    for treatment, ttft in (("baseline", 50.0), ("evolved", 40.0)):
        for wl, rates in (("alpha", (5, 12.5)), ("beta", (20,))):
            for rate in rates:
                for rep in (1, 2):
                    write(treatment, wl, rate, rep, make_doc(ttft_ms=ttft + rep, rate=rate, failures=rep - 1))
    write("evolved", "beta", 20, 3, make_doc(rate=20, failures=None, incomplete=4, total=480))
    rs = load_results(root)
    assert rs.rejected == []
    assert len(rs.loaded) == 2 * 3 * 2 + 1
    runs = rs.runs()
    assert RunKey("baseline", "alpha", 12.5, 2) in runs and RunKey("evolved", "beta", 20.0, 3) in runs
    assert _value(rs, "evolved", "alpha", 12.5, 2, "ttft_mean") == pytest.approx(42.0)
    assert _value(rs, "baseline", "beta", 20.0, 1, "ttft_mean") == pytest.approx(51.0)
    assert set(rs.table.treatment) == {"baseline", "evolved"}
    req = rs.requests
    assert list(req.columns) == REQUEST_COLUMNS
    row = req[(req.treatment == "evolved") & (req.workload == "beta") & (req.repetition == 3)].iloc[0]
    assert row.total == 480 and row.incomplete == 4 and pd.isna(row.failures)
    row = req[
        (req.treatment == "baseline") & (req.workload == "alpha") & (req.rate == 5.0) & (req.repetition == 2)
    ].iloc[0]
    assert row.total == 500 and row.failures == 1 and pd.isna(row.incomplete)
    # Deterministic: the same directory gives the same tables.
    again = load_results(root)
    pd.testing.assert_frame_equal(rs.table, again.table)
    pd.testing.assert_frame_equal(rs.requests, again.requests)


def test_a_directory_loaded_again_is_parsed_once_and_each_load_gets_its_own_documents(results_factory, monkeypatch):
    from bot.bench import reports

    root, write = results_factory
    for rep in (1, 2):
        write("baseline", "alpha", 5, rep, make_doc(ttft_ms=50.0 + rep, rate=5))
    write("evolved", "alpha", 5, 1, "not: [valid")
    monkeypatch.setattr(reports, "_VALIDATED", {})
    real, parsed = reports.parse_report, []
    monkeypatch.setattr(reports, "parse_report", lambda text: parsed.append(text) or real(text))
    seen: list[str] = []

    def binder(candidate):  # a binder that changes what it is handed: the next load must not see it
        seen.append(candidate.doc["run"]["uid"])
        candidate.doc["run"]["uid"] = "changed by a caller"

    first = load_results(root, binder=binder)
    assert len(parsed) == 3 and len(first.loaded) == 2 and len(first.rejected) == 1
    again = load_results(root, binder=binder)
    assert len(parsed) == 4  # only the broken report is parsed again (and rejected again)
    assert again.rejected == first.rejected and again.loaded == first.loaded
    assert len(seen) == 4 and seen[2:] == seen[:2] and "changed by a caller" not in seen
    pd.testing.assert_frame_equal(first.table, again.table)
    write("baseline", "alpha", 5, 2, make_doc(ttft_ms=60.0, rate=5))  # new bytes: parsed
    third = load_results(root, binder=binder)
    assert _value(third, "baseline", "alpha", 5.0, 2, "ttft_mean") == pytest.approx(60.0)
    assert len(parsed) == 6 and seen[4] == seen[0] and "changed by a caller" not in seen


def test_the_parsed_reports_kept_are_bounded_and_the_oldest_is_parsed_again(results_factory, monkeypatch):
    """The memo of parsed reports holds at most ``_VALIDATED_SIZE`` contents, each by its digest: a long-lived
    process (the GitHub App) reading many results directories does not grow without bound."""
    from bot.bench import reports

    root, write = results_factory
    for rep in (1, 2, 3):
        write("baseline", "alpha", 5, rep, make_doc(ttft_ms=50.0 + rep, rate=5))
    monkeypatch.setattr(reports, "_VALIDATED", {})
    monkeypatch.setattr(reports, "_VALIDATED_SIZE", 2)
    real, parsed = reports.parse_report, []
    monkeypatch.setattr(reports, "parse_report", lambda text: parsed.append(text) or real(text))
    load_results(root)
    assert len(parsed) == 3 and len(reports._VALIDATED) == 2
    load_results(root)  # each load evicts the content it needs next: all three are parsed again, two kept
    assert len(parsed) == 6 and len(reports._VALIDATED) == 2
    assert all(isinstance(kept, bytes) for kept in reports._VALIDATED.values())  # nothing a caller can change


def test_broken_reports_are_listed_with_reasons(results_factory):
    root, write = results_factory
    write("baseline", "w", 10, 1, make_doc())
    write("evolved", "w", 10, 1, make_doc(ttft_ms=40.0))

    bad_unit = make_doc()
    _agg(bad_unit)["latency"]["request_latency"]["units"] = "count"
    write("baseline", "w", 10, 2, bad_unit)

    no_mean = make_doc()
    del _agg(no_mean)["latency"]["time_to_first_token"]["mean"]
    write("baseline", "w", 10, 3, no_mean)

    v01 = make_doc()
    v01["version"] = "0.1"
    write("evolved", "w", 10, 2, v01)
    write("evolved", "w", 10, 3, make_doc(), name="benchmark_report,_stage_0_lifecycle_metrics.json.yaml")
    write("evolved", "w", 10, 4, "version: '0.2'\nrun: {uid: x\nresults: {}\n")
    write("evolved", "w", 10, 5, make_doc(rate=5.0))  # filed under rate-10
    write("control", "w", 10, 1, make_doc())
    write("evolved", "w", 10, 6, make_doc())
    write("evolved", "w", 10, 6, make_doc(), name="benchmark_report_v0.2,_stage_1_lifecycle_metrics.json.yaml")
    write("evolved", "w", 10, 7, make_doc(), name="benchmark_report_v0.2,_stage_0_session_lifecycle_metrics.json.yaml")
    (root / "evolved" / "w" / "rate-10" / "rep-1" / "stdout.log").write_text("not a report")

    rs = load_results(root)
    reasons = dict(rs.rejected)
    expect = {
        "baseline/w/rate-10/rep-2/": "wrong unit 'count' at results.request_performance.aggregate.latency.request_latency.units",
        "baseline/w/rate-10/rep-3/": "missing required field 'mean' at results.request_performance.aggregate.latency.time_to_first_token",
        "evolved/w/rate-10/rep-2/": "v0.1 report: convert with",
        "evolved/w/rate-10/rep-3/benchmark_report,_": "v0.1 report: convert with",
        "evolved/w/rate-10/rep-4/": "not valid YAML at line",
        "evolved/w/rate-10/rep-5/": "rate mismatch: the directory says rate-10",
        "control/w/rate-10/rep-1/": "unknown treatment directory 'control'",
        "evolved/w/rate-10/rep-6/benchmark_report_v0.2,_stage_0": "ambiguous: 2 reports for one repetition",
        "evolved/w/rate-10/rep-6/benchmark_report_v0.2,_stage_1": "ambiguous: 2 reports for one repetition",
        "evolved/w/rate-10/rep-7/": "session report",
    }
    for prefix, reason in expect.items():
        hits = [r for p, r in reasons.items() if p.startswith(prefix)]
        assert len(hits) == 1, (prefix, reasons)
        assert hits[0].startswith(reason), (prefix, hits[0])
    assert len(rs.rejected) == len(expect)  # the log file is not a report; nothing else is dropped
    assert rs.loaded == [
        "baseline/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
        "evolved/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
    ]
    assert sorted(set(rs.table.repetition)) == [1]


def test_results_dir_errors(tmp_path, results_factory):
    with pytest.raises(ReportError) as exc:
        load_results(tmp_path / "nope")
    assert "no such results directory" in str(
        exc.value
    ) and "RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>" in str(exc.value)

    root, write = results_factory
    (root / "baseline").mkdir()
    with pytest.raises(ReportError, match=r"no benchmark reports found; expected RESULTS/<treatment>"):
        load_results(root)

    bad = make_doc()
    bad["version"] = "0.1"
    write("baseline", "w", 10, 1, bad)
    with pytest.raises(ReportError) as exc:
        load_results(root)
    msg = str(exc.value)
    assert "\n" not in msg and str(root) in msg
    assert "no valid benchmark report (1 rejected; first: baseline/w/rate-10/rep-1/" in msg and "v0.1 report" in msg


def test_table_holds_only_known_metrics_in_canonical_units(results_factory):
    root, write = results_factory
    doc = make_doc()
    _agg(doc)["latency"]["normalized_time_per_output_token"] = {"units": "s/token", "mean": 0.5}
    write("baseline", "w", 10, 1, doc)
    rs = load_results(root)
    assert set(rs.table.metric) <= set(METRICS)
    assert set(rs.table.unit) == {"ms", "ms/token", "tokens/s", "queries/s"}
    assert rs.table.groupby(["metric"]).size().max() == 1


# --------------------------------------------------------------------------
# Versions, strictness, broken numbers, duplicates, llm-d-benchmark's layout
# --------------------------------------------------------------------------


def test_version_0_2_1_is_read_by_its_own_model():
    doc = example_doc()
    doc["version"] = "0.2.1"
    assert parse_report(_dump(doc))["version"] == "0.2.1"
    # v0.2.1's multi-modal request statistics are known to v0.2.1 only.
    _agg(doc)["requests"]["multimodal"] = {"image": {"count": {"units": "count", "mean": 1.0}}}
    assert parse_report(_dump(doc))["version"] == "0.2.1"
    doc["version"] = "0.2"
    assert _reason(doc).startswith("unknown field at results.request_performance.aggregate.requests")


@pytest.mark.parametrize(
    "mutate, reason",
    [
        # Upstream's pydantic model is stricter than its JSON schema file (llm-d.md §D).
        (lambda d: d["scenario"]["load"]["standardized"].__setitem__("concurrency", 2.5), "concurrency"),
        (
            lambda d: d["results"].__setitem__("session_performance", {"sessions": {"total": 3, "bogus": 1}}),
            "unknown field at results.session_performance.sessions",
        ),
        (lambda d: d["run"]["time"].__setitem__("start", "yesterday"), "run.time.start"),
    ],
)
def test_upstream_model_strictness(mutate, reason):
    doc = example_doc()
    mutate(doc)
    assert reason in _reason(doc)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.5])
def test_nan_infinite_and_negative_statistics_reject_the_report(results_factory, bad):
    root, write = results_factory
    write("baseline", "w", 10, 1, make_doc())
    broken = make_doc()
    _agg(broken)["latency"]["request_latency"]["p95"] = bad
    write("baseline", "w", 10, 2, broken)
    rs = load_results(root)
    [(path, reason)] = rs.rejected
    assert path.startswith("baseline/w/rate-10/rep-2/")
    assert "results.request_performance.aggregate.latency.request_latency.p95" in reason
    assert ("negative" if bad == -0.5 else "non-finite") in reason
    assert rs.loaded == ["baseline/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"]


@pytest.mark.parametrize(
    "raw, reason",
    [(1.0e308, "is inf in ms: too large to be a measurement"), (1.0e12, "implausible value 1000000000000.0 s")],
)
def test_a_value_that_overflows_or_is_implausible_once_converted_rejects_the_report(results_factory, raw, reason):
    """1e308 s is finite, 1e308 s in ms is not: the check after conversion catches what the one before cannot."""
    root, write = results_factory
    write("evolved", "w", 10, 1, make_doc())
    broken = make_doc()  # inference-perf: TTFT in seconds
    assert _agg(broken)["latency"]["time_to_first_token"]["units"] == "s"
    _agg(broken)["latency"]["time_to_first_token"]["mean"] = raw
    write("evolved", "w", 10, 2, broken)
    rs = load_results(root)
    [(path, why)] = rs.rejected
    assert path.startswith("evolved/w/rate-10/rep-2/")
    assert "results.request_performance.aggregate.latency.time_to_first_token.mean" in why
    assert reason in why and why.endswith("re-run the cell")
    assert set(rs.table["value"].map(math.isfinite)) == {True}


def test_negative_request_counts_reject_the_report():
    doc = example_doc()
    _agg(doc)["requests"]["failures"] = -3
    reason = _reason(doc)
    assert "results.request_performance.aggregate.requests.failures" in reason and ">= 0" in reason.replace(
        "greater than or equal to", ">="
    )


@pytest.mark.parametrize(
    ("counts", "reason"),
    [
        ({"total": 0}, "latency statistics over 0 requests"),
        ({"total": 10, "failures": 8, "incomplete": 5}, "13 requests failed or incomplete but 10 in all"),
    ],
)
def test_request_counts_that_contradict_the_run_reject_the_report(counts, reason):
    """Found by an evidence audit: a report of 0 requests with latency percentiles confirmed a latency claim."""
    doc = example_doc()
    _agg(doc)["requests"].update(counts)
    why = _reason(doc)
    assert reason in why and "results.request_performance.aggregate.requests.total" in why


def test_evidence_counted_twice_counts_once(results_factory):
    """Three byte-identical copies of one repetition are one replicate, the others listed as duplicates."""
    root, write = results_factory
    one = make_doc(ttft_ms=50.0)
    one["run"]["uid"] = "run-a"
    for rep in (1, 2, 3):
        write("baseline", "w", 10, rep, one)
    # Same run identity, different bytes (re-converted), filed as another repetition of its cell: still one run.
    again = copy.deepcopy(one)
    again["run"]["description"] = "converted again"
    write("baseline", "w", 10, 4, again)
    write("evolved", "w", 10, 2, make_doc(ttft_ms=40.0))
    rs = load_results(root)
    reasons = dict(rs.rejected)
    assert reasons == {
        "baseline/w/rate-10/rep-2/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml": (
            "duplicate: byte-identical to baseline/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics"
            ".json.yaml; counted once"
        ),
        "baseline/w/rate-10/rep-3/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml": (
            "duplicate: byte-identical to baseline/w/rate-10/rep-1/benchmark_report_v0.2,_stage_0_lifecycle_metrics"
            ".json.yaml; counted once"
        ),
        "baseline/w/rate-10/rep-4/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml": (
            "duplicate: the same run (run.uid run-a) as baseline/w/rate-10/rep-1/benchmark_report_v0.2,"
            "_stage_0_lifecycle_metrics.json.yaml; counted once"
        ),
    }
    assert len(rs.table[(rs.table.treatment == "baseline") & (rs.table.metric == "ttft_mean")]) == 1


SAMPLES = Path(__file__).resolve().parents[2] / "examples" / "weighted-adaptive" / "results"
REPORT = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"


def _copy_run(root: Path, src: str, dst: str, edit=None) -> None:
    """One report of the bundled sample results filed again under ``dst`` (same run.uid), edited by ``edit``."""
    doc = yaml.safe_load((root / src / REPORT).read_text())
    if edit is not None:
        edit(doc)
    (root / dst).mkdir(parents=True)
    (root / dst / REPORT).write_text(yaml.safe_dump(doc, sort_keys=False))


def _as_pod_failure(doc: dict) -> None:
    kws = doc["run"]["keywords"]
    doc["run"]["keywords"] = [k.replace("workload:load-spikes", "workload:load-spikes+pod-failure") for k in kws] + [
        "condition:pod-failure"
    ]


def test_one_run_in_two_cells_is_never_kept_by_path_order(tmp_path):
    """Found by a statistician: a baseline load-spikes@30 run copied into the pod-failure cell (keywords edited to
    pass its binding) kept the copy, whose path sorts first, and dropped the run from its own cell with "counted
    once", when it was counted nowhere (no look of the fault cell reached an 8th run)."""
    from bot.bench.evidence import EvidencePolicy, load_evidence

    root = tmp_path / "results"
    shutil.copytree(SAMPLES, root)
    src, dst = "baseline/load-spikes/rate-30/rep-1", "baseline/load-spikes+pod-failure/rate-30/rep-8"
    _copy_run(root, src, dst, _as_pod_failure)
    rs = load_evidence(root, EvidencePolicy(allow_sample_data=True))
    reasons = dict(rs.rejected)
    assert set(reasons) == {f"{src}/{REPORT}", f"{dst}/{REPORT}"}
    assert (
        reasons[f"{src}/{REPORT}"]
        == reasons[f"{dst}/{REPORT}"]
        == (
            "provenance conflict: the same run (run.uid 0a695a1e0740b97637f1efecb3b78fbf) is filed in 2 places "
            "(baseline/load-spikes+pod-failure/rate-30, baseline/load-spikes/rate-30), and what it records (arm, workload "
            "and condition keywords, load description) fits each of those directories: which one it ran the reports "
            "cannot tell, so no copy counts; keep it only in the directory of the cell it ran"
        )
    )

    # Unedited, the copy's keywords name load-spikes and no fault: the run counts in its own cell, once.
    shutil.rmtree(root / dst)
    _copy_run(root, src, dst)
    rs = load_results(root)  # no binder: the duplicate rule alone decides
    assert f"{src}/{REPORT}" in rs.loaded and f"{dst}/{REPORT}" not in rs.loaded
    assert dict(rs.rejected) == {
        f"{dst}/{REPORT}": (
            f"duplicate: the same run (run.uid 0a695a1e0740b97637f1efecb3b78fbf) as {src}/{REPORT}, filed in another "
            "cell: what the run records fits "
            "baseline/load-spikes/rate-30 and not baseline/load-spikes+pod-failure/rate-30, so it is counted once, "
            "there"
        )
    }


def test_one_run_in_both_arms_counts_in_neither(results_factory):
    """The same run.uid under baseline and evolved, neither recording its arm: which arm ran it nothing says."""
    root, write = results_factory
    one = make_doc(ttft_ms=50.0)
    one["run"]["uid"] = "run-a"
    write("baseline", "w", 10, 1, one)
    write("baseline", "w", 10, 2, make_doc(ttft_ms=51.0))
    write("evolved", "w", 10, 1, one)
    write("evolved", "w", 10, 2, make_doc(ttft_ms=40.0))
    rs = load_results(root)
    assert [p.split("/")[0] + "/" + p.split("/")[3] for p, _ in rs.rejected] == ["baseline/rep-1", "evolved/rep-1"]
    assert all(
        r.startswith("provenance conflict: the same run (run.uid run-a) is filed in 2 places") for _, r in rs.rejected
    )
    # Recorded, the arm decides: the copy whose arm: keyword is its directory's counts there.
    one["run"]["keywords"] = ["arm:evolved"]
    write("baseline", "w", 10, 1, one)
    write("evolved", "w", 10, 1, one)
    rs = load_results(root)
    assert "evolved/w/rate-10/rep-1/" + REPORT in rs.loaded
    [(path, reason)] = rs.rejected
    assert path.startswith("baseline/w/rate-10/rep-1/") and reason.endswith(
        "what the run records fits evolved/w/rate-10 and not baseline/w/rate-10, so it is counted once, there"
    )


def _upstream(root: Path, setup: str, run: str, doc: dict, *, pod: str = "_1") -> Path:
    d = root / f"setup-treatment-{setup}" / "results" / f"inference-perf-{run}-1763900000-a1b2c3{pod}"
    d.mkdir(parents=True, exist_ok=True)
    p = d / "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
    doc = copy.deepcopy(doc)
    doc["run"]["uid"] = f"{setup}-{run}{pod}"
    p.write_text(_dump(doc))
    return p


def test_llm_d_benchmark_layout_is_read_directly(tmp_path):
    """setup-treatment-<T>/results/inference-perf-<run-treatment>-<ts>-<rand>/ (llm-d.md §D)."""
    ws = tmp_path / "workspace"
    for setup, ttft in (("baseline", 50.0), ("evolved", 40.0)):
        for rep in (1, 2):
            _upstream(ws, setup, f"load-spikes-rate-2.5-rep-{rep}", make_doc(ttft_ms=ttft + rep, rate=2.5))
    _upstream(ws, "evolved", "load-spikes+pod-failure-rate-2.5-rep-1", make_doc(rate=2.5), pod="")
    _upstream(ws, "evolved", "load-spikes-rate-2.5-rep-3", make_doc(rate=2.5), pod="_2")
    _upstream(ws, "control", "load-spikes-rate-2.5-rep-1", make_doc(rate=2.5))
    _upstream(ws, "evolved", "warmup", make_doc(rate=2.5))
    (ws / "setup-treatment-evolved" / "plan").mkdir()
    rs = load_results(ws)
    assert rs.runs() == [
        RunKey("baseline", "load-spikes", 2.5, 1),
        RunKey("baseline", "load-spikes", 2.5, 2),
        RunKey("evolved", "load-spikes", 2.5, 1),
        RunKey("evolved", "load-spikes", 2.5, 2),
        RunKey("evolved", "load-spikes+pod-failure", 2.5, 1),
    ]
    assert _value(rs, "evolved", "load-spikes", 2.5, 2, "ttft_mean") == pytest.approx(42.0)
    reasons = {p.split("/")[0] + "/" + p.split("/")[2]: r for p, r in rs.rejected}
    assert reasons["setup-treatment-evolved/inference-perf-load-spikes-rate-2.5-rep-3-1763900000-a1b2c3_2"].startswith(
        "results of harness pod 2"
    )
    assert reasons["setup-treatment-control/inference-perf-load-spikes-rate-2.5-rep-1-1763900000-a1b2c3_1"].startswith(
        "unknown treatment 'control'"
    )
    assert reasons["setup-treatment-evolved/inference-perf-warmup-1763900000-a1b2c3_1"].startswith(
        "run treatment 'warmup' does not name a cell"
    )


def test_two_workspace_runs_of_one_repetition_are_named_by_their_directories(tmp_path):
    """Their report files share one name, so naming the files ("ambiguous: 2 reports for one repetition (benchmark_
    report_v0.2,_stage_0_lifecycle_metrics.json.yaml, benchmark_report_v0.2,_stage_0_...)") said nothing."""
    ws = tmp_path / "workspace"
    _upstream(ws, "baseline", "load-spikes-rate-2.5-rep-1", make_doc(rate=2.5))
    first = _upstream(ws, "evolved", "load-spikes-rate-2.5-rep-1", make_doc(rate=2.5, ttft_ms=41.0))
    first.write_text(first.read_text().replace("evolved-load-spikes-rate-2.5-rep-1_1", "another-run"))
    first.parent.rename(first.parent.with_name(first.parent.name.replace("1763900000", "1763999999")))  # run again
    _upstream(ws, "evolved", "load-spikes-rate-2.5-rep-1", make_doc(rate=2.5))
    rs = load_results(ws)
    run = "setup-treatment-evolved/results/inference-perf-load-spikes-rate-2.5-rep-1"
    assert {r for _, r in rs.rejected} == {
        f"ambiguous: 2 reports for one repetition, in {run}-1763900000-a1b2c3_1, {run}-1763999999-a1b2c3_1; keep one"
    }


def test_the_runners_own_workspace_skips_its_warm_ups_and_says_where_its_mix_runs_belong(tmp_path):
    """Found by a GPU operator who passed the runner's --workspace as --results: its warm-up runs were listed as
    reports that failed validation (gate 3 raised them), and its mix runs under setup-treatment-<arm>+priority-mix
    were refused with "the run treatment's workload is 'priority-mix'", which says nothing an operator can act on."""
    ws = tmp_path / "workspace"
    for setup in ("baseline", "evolved"):
        _upstream(ws, setup, "load-spikes-rate-2.5-rep-1", make_doc(rate=2.5))
        _upstream(ws, setup, f"warmup-{setup}", make_doc(rate=2.5))  # what the runner names them
        _upstream(ws, f"{setup}+pod-failure", f"warmup-{setup}-pod-failure", make_doc(rate=2.5))
    _upstream(ws, "evolved", "warmup-baseline", make_doc(rate=2.5))  # not this setup's warm-up: still listed
    rs = load_results(ws)
    assert len(rs.loaded) == 2 and not any("warmup-evolved-1" in p or "pod-failure" in p for p, _ in rs.rejected)
    assert [r.split(";")[0] for _, r in rs.rejected] == ["run treatment 'warmup-baseline' does not name a cell"]
    with pytest.raises(ReportError) as exc:
        parse_layout(
            Path(
                "setup-treatment-evolved+priority-mix/results/priority-mix-priority-mix-rate-6-rep-1-1763900000-abc_1/results.json"
            )
        )
    assert "runner's own workspace" in str(exc.value) and "setup-treatment-evolved/results/" in str(exc.value)
    assert "evolved/priority-mix/" in str(exc.value)


def test_links_under_results_are_never_followed_and_each_is_listed(results_factory, tmp_path):
    """Found by the evidence audit: a report linked from outside --results was read and used, /etc/passwd behind a
    report's name was read (and its text could be quoted), while a linked directory's 14 reports, or a whole linked
    arm, vanished without a word. One policy now: nothing is read through a link, and every link is listed."""
    root, write = results_factory
    for rep in (1, 2):
        write("baseline", "w", 10, rep, make_doc(ttft_ms=50.0 + rep))
        write("evolved", "w", 10, rep, make_doc(ttft_ms=40.0 + rep))
    elsewhere = tmp_path / "elsewhere"
    outside = write_report(elsewhere, "evolved", "w", 10, 3, make_doc(ttft_ms=30.0))
    name = outside.name
    (root / "evolved/w/rate-10/rep-3").mkdir()
    (root / "evolved/w/rate-10/rep-3" / name).symlink_to(outside)  # a file outside
    (root / "evolved/w/rate-10/rep-4").mkdir()
    (root / "evolved/w/rate-10/rep-4" / name).symlink_to("/etc/passwd")
    write_report(elsewhere, "evolved", "v", 10, 1, make_doc(ttft_ms=30.0))
    (root / "evolved/v").symlink_to(elsewhere / "evolved/v", target_is_directory=True)  # a directory outside
    (root / "baseline/w/rate-10/rep-5").symlink_to(root / "baseline/w/rate-10/rep-1")  # a directory inside
    (root / "evolved/w/rate-10/rep-1/notes.txt").symlink_to("/etc/hostname")  # no report's name: not a report

    rs = load_results(root)
    assert sorted(rs.loaded) == sorted(
        f"{arm}/w/rate-10/rep-{n}/{name}" for arm in ("baseline", "evolved") for n in (1, 2)
    )
    why = dict(rs.rejected)
    assert sorted(why) == [
        "baseline/w/rate-10/rep-5",
        "evolved/v",
        f"evolved/w/rate-10/rep-3/{name}",
        f"evolved/w/rate-10/rep-4/{name}",
    ]
    assert why["evolved/v"].startswith("a symbolic link to a directory outside the results directory: links under")
    assert "nothing under it was read" in why["evolved/v"]
    assert why["baseline/w/rate-10/rep-5"].startswith("a symbolic link to a directory inside the results directory")
    assert why[f"evolved/w/rate-10/rep-3/{name}"].startswith("a symbolic link to a file outside the results")
    assert "root:" not in " ".join(why.values())  # /etc/passwd was never read

    # A whole arm behind a link is said, not silently absent; with nothing else readable the load fails naming it.
    arm = tmp_path / "results2"
    arm.mkdir()
    (arm / "evolved").symlink_to(root / "evolved", target_is_directory=True)
    with pytest.raises(ReportError, match=r"first: evolved: a symbolic link to a directory outside"):
        load_results(arm)
