"""SAMPLE priority-mix results for a plan that is the mix alone (make_sample_reports.py writes them).

An admitter whose cells cannot exercise it gets a plan of the priority mix and no cells
(``bot.bench.mix_only``): the mix is the only run the plan asks for, so sample data for it is the mix's
results, in the layout stage 5 reads (RESULTS/<arm>/<workload>/rate-<rate>/rep-<n>/results.json with its
run_metadata.yaml, as the priority-mix harness writes them). The counts are planted, not measured: the
baseline arm admits every class, the evolved arm sheds part of each sheddable class and no protected one
(the shedding order a shedding admitter shows). Fixed numbers, so the output is the same on every run.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

#: The share of each sheddable class the evolved arm sheds (HTTP 429); the baseline sheds none.
SHED_SHARE = 0.6
OBJECTIVE_HEADER = "x-llm-d-inference-objective"  # upstream's OBJECTIVE_HEADER (bot.bench.priority_mix)


def _class_counts(pm, arm: str, rep: int) -> dict[str, tuple[int, int]]:
    """class -> (sent, admitted) of one run: the plan's rate x duration shared by weight, a request or two more
    per repetition (runs differ)."""
    total = int(pm.rate * pm.duration_s) + rep
    weights = sum(c.weight for c in pm.classes) or 1.0
    out = {}
    for c in pm.classes:
        sent = max(1, round(total * c.weight / weights))
        shed = round(sent * SHED_SHARE) if arm == "evolved" and c.sheddable else 0
        out[c.name] = (sent, sent - shed)
    return out


def results_doc(pm, arm: str, rep: int) -> dict:
    """The priority-mix harness's results.json for these counts (per-request list and per-class summary)."""
    counts = _class_counts(pm, arm, rep)
    by_name = {c.name: c for c in pm.classes}
    requests: list[dict] = []
    classes = {}
    for name, (sent, admitted) in counts.items():
        c = by_name[name]
        ok = {"error": None, "latency_ms": 40.0 + rep, "output_tokens": 0, "status_code": 200, "tpot_ms": None}
        requests += [dict(ok, traffic_class=name) for _ in range(admitted)]
        shed = dict(ok, traffic_class=name, status_code=429, error="429 Too Many Requests")
        requests += [dict(shed) for _ in range(sent - admitted)]
        classes[name] = {
            "configured_priority": c.priority,
            "configured_weight": c.weight,
            "errors": sent - admitted,
            "headers": {OBJECTIVE_HEADER: c.objective},
            "requests": sent,
            "successes": admitted,
        }
    return {
        "requests": requests,
        "summary": {
            "errors": sum(s - a for s, a in counts.values()),
            "successes": sum(a for _, a in counts.values()),
            "total_requests": len(requests),
            "traffic_classes": classes,
        },
    }


def write_mix_runs(out: Path, pm, configs: dict[str, dict], promotion: str, model: str, label: str) -> int:
    """Every run of the plan's priority mix ``pm``, per arm of ``configs`` (arm -> the EndpointPickerConfig it runs)
    and repetition; the number of runs written. Each records its arm's ``epp-config:`` digest, as the plan's
    priority-mix/experiment.yaml and the runner do: a mix result holds no EndpointPickerConfig, so stage 5 leaves a
    run without it out, as it does a cell report that records no config (``bot.bench.priority_mix.bind_with``)."""
    from bot.bench.evidence import config_digest

    count = 0
    for arm, config in configs.items():
        keywords = f"synthetic,sample-data,not-a-measurement,promotion:{promotion},arm:{arm}"
        for rep in range(1, pm.repetitions + 1):
            run = out / arm / pm.workload / f"rate-{pm.rate:g}" / f"rep-{rep}"
            run.mkdir(parents=True, exist_ok=True)
            (run / "results.json").write_text(json.dumps(results_doc(pm, arm, rep), indent=1), encoding="utf-8")
            meta = {
                "harness_name": pm.harness,
                "experiment_id": f"{pm.workload}-{arm}-rep-{rep}",
                "model": model,
                "description_text": f"{label}. arm={arm} {pm.workload} rate={pm.rate:g} rep={rep}",
                "description_keywords": f"{keywords},epp-config:{config_digest(config)}",
            }
            (run / "run_metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False), encoding="utf-8")
            count += 1
    return count
