"""How much the statistics cost next to reading the reports: evaluate 200 hypotheses over 1,000 reports.

Stage 5 loads every llm-d-benchmark v0.2 report of a results directory
(schema validation, unit normalisation) and then decides every hypothesis
(bootstrap intervals, Welch tests, Holm, guards). The acceptance line asks for
the evaluation time as a ratio to the time it takes just to load the reports;
a ratio well below 1 means the statistics never become the bottleneck.

The script writes 1,000 reports in the results layout
(``RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/benchmark_report_v0.2,_*.yaml``:
2 treatments x 10 workloads x 5 rates x 10 repetitions) into a temporary
directory, with seeded log-normal run-to-run noise and a known evolved effect
per workload, then times ``load_results`` and ``evaluate`` separately (best of
``--repeat`` runs each, so one cold cache does not decide the ratio).

Report shape: by default the upstream v0.2 example (the bench tests' fixture;
~1,000 lines with its stack and time series, the size a real report has) with
its aggregate metrics replaced; ``--compact`` uses a minimal schema-valid
report instead, which makes loading cheaper and the ratio larger (worst case).

Usage:
    .venv/bin/python perf/evaluate.py [--reports 1000] [--hypotheses 200] [--repeat 3] [--compact] [--keep DIR]
"""

from __future__ import annotations

import argparse
import copy
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from bot.model import (  # noqa: E402
    VVUQ,
    Direction,
    Family,
    Hypothesis,
    HypothesisType,
    Prediction,
    Track,
)

UPSTREAM_EXAMPLE = ROOT / "tests" / "bench" / "fixtures" / "br_v0_2_example.yaml"
REPORT_NAME = "benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml"
WORKLOADS = [f"wl-{i:02d}" for i in range(10)]
RATES = [2.0, 5.0, 10.0, 20.0, 40.0]
#: Evolved effect on latency per workload (wl-00 is the one it was evolved for).
EFFECTS = {w: (-0.18 if i == 0 else -0.06 + 0.02 * (i % 4)) for i, w in enumerate(WORKLOADS)}


def _compact_doc() -> dict:
    """The smallest report the v0.2 schema accepts with every metric the bot reads."""
    return {
        "version": "0.2",
        "run": {"uid": "perf-evaluate"},
        "scenario": {
            "load": {
                "metadata": {"schema_version": "0.0.1", "cfg_id": "perf"},
                "standardized": {
                    "tool": "inference-perf",
                    "tool_version": "0.3.0",
                    "source": "random",
                    "input_seq_len": {"distribution": "fixed", "value": 1024},
                    "rate_qps": 1.0,
                },
                "native": {"config": {}},
            }
        },
        "results": {"request_performance": {"aggregate": {"requests": {"total": 1}, "latency": {}, "throughput": {}}}},
    }


def _template(compact: bool) -> tuple[dict, str]:
    if not compact and UPSTREAM_EXAMPLE.is_file():
        loader = type("L", (yaml.CSafeLoader,), {})
        loader.yaml_implicit_resolvers = {  # keep timestamps as strings, as the schema wants
            k: [(t, r) for t, r in v if t != "tag:yaml.org,2002:timestamp"]
            for k, v in yaml.CSafeLoader.yaml_implicit_resolvers.items()
        }
        doc = yaml.load(UPSTREAM_EXAMPLE.read_text(encoding="utf-8"), Loader=loader)
        return doc, f"upstream example ({UPSTREAM_EXAMPLE.relative_to(ROOT)})"
    return _compact_doc(), "compact schema-valid report"


def _stat(value_s: float, unit: str, spread: float) -> dict:
    return {
        "units": unit,
        "mean": value_s,
        "p50": value_s * 0.95,
        "p90": value_s * (1 + spread),
        "p95": value_s * (1 + 2 * spread),
        "p99": value_s * (1 + 4 * spread),
    }


def write_reports(root: Path, n_reports: int, template: dict, seed: int = 7) -> int:
    """Write ``n_reports`` reports (inference-perf units: s, s/token) in the results layout."""
    rng = np.random.default_rng(seed)
    reps = max(2, n_reports // (2 * len(WORKLOADS) * len(RATES)))
    cv = 0.04
    sigma = np.sqrt(np.log1p(cv * cv))
    written = 0
    for treatment in ("baseline", "evolved"):
        for wl in WORKLOADS:
            for rate in RATES:
                for rep in range(1, reps + 1):
                    if written >= n_reports:
                        return written
                    shift = 1 + (EFFECTS[wl] if treatment == "evolved" else 0.0)
                    noise = lambda: float(rng.lognormal(-sigma * sigma / 2, sigma))  # noqa: E731
                    ttft = 0.05 * (1 + rate / 40) * shift * noise()
                    tpot = 0.02 * shift * noise()
                    e2e = 2.0 * (1 + rate / 40) * shift * noise()
                    doc = copy.deepcopy(template)
                    doc.setdefault("run", {})["uid"] = f"perf-evaluate-{treatment}-{wl}-{rate:g}-{rep}"  # one run each
                    agg = doc["results"]["request_performance"]["aggregate"]
                    agg["latency"] = {
                        "time_to_first_token": _stat(ttft, "s", 0.1),
                        "time_per_output_token": _stat(tpot, "s/token", 0.05),
                        "inter_token_latency": _stat(tpot, "s/token", 0.05),
                        "request_latency": _stat(e2e, "s", 0.1),
                    }
                    agg.setdefault("throughput", {})
                    agg["throughput"]["output_token_rate"] = {"units": "tokens/s", "mean": 1000.0 / shift * noise()}
                    agg["throughput"]["request_rate"] = {"units": "queries/s", "mean": rate}
                    total = int(rate * 120)
                    agg["requests"] = {"total": total, "failures": 0, "incomplete": 0}
                    doc["scenario"]["load"]["standardized"]["rate_qps"] = rate
                    d = root / treatment / wl / f"rate-{rate:g}" / f"rep-{rep}"
                    d.mkdir(parents=True, exist_ok=True)
                    (d / REPORT_NAME).write_text(
                        yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8"
                    )
                    written += 1
    return written


def make_hypotheses(n: int) -> list[Hypothesis]:
    """A deterministic mix like a real promotion's: Track A directional, B structural, C no-regression/equivalence."""
    metrics = ["ttft_mean", "ttft_p99", "e2e_mean", "e2e_p95", "tpot_mean", "throughput"]
    out = []
    for i in range(n):
        track = (Track.A, Track.B, Track.C, Track.C)[i % 4]
        metric = metrics[i % len(metrics)]
        if track is Track.C:
            direction = Direction.EQUIVALENT if i % 8 == 2 else Direction.NO_WORSE
            htype = HypothesisType.EQUIVALENCE if direction is Direction.EQUIVALENT else HypothesisType.DOMINANCE
        else:
            direction = Direction.INCREASE if metric == "throughput" else Direction.DECREASE
            htype = HypothesisType.DOMINANCE
        workloads = sorted({WORKLOADS[i % len(WORKLOADS)], WORKLOADS[(i * 7 + 3) % len(WORKLOADS)]})
        rates = [] if i % 3 else [RATES[i % len(RATES)]]
        out.append(
            Hypothesis(
                id=f"{track.value}{i + 1}",
                track=track,
                title=f"perf hypothesis {i + 1}",
                statement=f"{metric} {direction.value}",
                family=Family.CROSS_POLICY,
                vvuq=VVUQ.VALIDATION,
                type=htype,
                diagnostic="If this fails, it would indicate nothing; this is a timing fixture.",
                workloads=workloads,
                rates=rates,
                prediction=Prediction(
                    metric=metric, direction=direction, blis_magnitude=-0.1 if track is Track.A else None
                ),
                source=f"perf-{i + 1}",
            )
        )
    return out


def _best(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=1000)
    ap.add_argument("--hypotheses", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compact", action="store_true", help="minimal reports instead of the upstream example's shape")
    ap.add_argument("--keep", type=Path, help="write the reports here and keep them")
    args = ap.parse_args(argv)

    from bot.bench.reports import load_results
    from bot.stats.verdicts import evaluate

    template, shape = _template(args.compact)
    tmp = Path(tempfile.mkdtemp(prefix="perf-evaluate-")) if args.keep is None else args.keep
    try:
        results = tmp / "results"
        written = write_reports(results, args.reports, template)
        hyps = make_hypotheses(args.hypotheses)
        load_s, reports = _best(lambda: load_results(results), args.repeat)
        if reports.rejected:
            print(
                f"error: {len(reports.rejected)} generated reports were rejected, first: {reports.rejected[0]}",
                file=sys.stderr,
            )
            return 1
        eval_s, verdicts = _best(lambda: evaluate(hyps, reports, evolved_for=WORKLOADS[0]), args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)

    cells = sum(len(v.effects) for v in verdicts)
    counts = {s: sum(1 for v in verdicts if v.status.value == s) for s in ("confirmed", "refuted", "inconclusive")}
    print(f"reports: {written} ({shape}); hypotheses: {len(hyps)}; cells evaluated: {cells}")
    print(
        f"verdicts: {counts['confirmed']} confirmed, {counts['refuted']} refuted, {counts['inconclusive']} inconclusive"
    )
    print(f"load_results: {load_s:.3f} s   evaluate: {eval_s:.3f} s   (best of {args.repeat})")
    print(f"evaluate / load ratio: {eval_s / load_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
