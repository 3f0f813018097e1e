"""priority-mix runs with chosen per-class counts, in the upstream harness's own format (the fixtures').

The fixtures are one tiny run per arm (20 requests); a verdict needs hundreds. These keep every field of the
fixture's results.json and run_metadata.yaml and set only the counts: per class, ``sent`` requests of which
``admitted`` are served (200) and the rest shed (429).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from bot.model.request import StackSpec

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "priority_mix"
#: Upstream's classes, a shedding admitter: batch (-10) loses 60% of its requests, the protected ones nothing.
SHEDS_BATCH = {"critical": (100, 100), "normal": (300, 300), "batch": (100, 40)}
ADMITS_ALL = {"critical": (100, 100), "normal": (300, 300), "batch": (100, 100)}


def config_keyword(sample: Path, arm: str) -> str:
    """The ``epp-config:<digest>`` keyword the sample script (make_sample_reports.py) gave ``arm``'s mix runs under
    ``sample``: the digest of the config that arm runs in the request's plan, which a mix run must record to count
    (``bot.bench.priority_mix.bind_with``), as the plan's priority-mix/experiment.yaml and the runner record it."""
    [meta] = sorted((sample / arm).glob("*/rate-*/rep-1/run_metadata.yaml"))
    keywords = str(yaml.safe_load(meta.read_text())["description_keywords"]).split(",")
    return next(k for k in keywords if k.startswith("epp-config:"))


def results_doc(arm: str, counts: dict[str, tuple[int, int]], n: int = 1) -> dict:
    """The fixture's results.json with these counts; ``n`` (the repetition) shifts the latencies, as runs differ."""
    doc = json.loads((FIXTURES / arm / "results.json").read_text())
    template = {r["traffic_class"]: r for r in doc["requests"] if r["status_code"] == 200}
    requests = []
    for name, (sent, admitted) in counts.items():
        s = doc["summary"]["traffic_classes"][name]
        s.update(requests=sent, successes=admitted, errors=sent - admitted)
        ok = template[name]
        requests += [copy.deepcopy(ok) for _ in range(admitted)]
        requests += [dict(copy.deepcopy(ok), status_code=429, error="429 Too Many Requests")] * (sent - admitted)
    doc["requests"] = [dict(r, latency_ms=(r.get("latency_ms") or 0.0) + n / 1000) for r in requests]
    doc["summary"].update(
        total_requests=len(requests),
        successes=sum(a for _, a in counts.values()),
        errors=sum(s - a for s, a in counts.values()),
    )
    return doc


def write_run(
    root: Path,
    arm: str,
    n: int,
    counts: dict[str, tuple[int, int]],
    keywords: str,
    rate: float = 6,
    model: str = StackSpec().model,
) -> Path:
    """RESULTS/<arm>/priority-mix/rate-<rate>/rep-<n>/ with results.json + run_metadata.yaml (bot layout); the
    default rate is the plan's (upstream's profile, 6 req/s), the default model a default stack's (the fixture
    records the model upstream's own run served)."""
    run = root / arm / "priority-mix" / f"rate-{rate:g}" / f"rep-{n}"
    run.mkdir(parents=True, exist_ok=True)
    (run / "results.json").write_text(json.dumps(results_doc(arm, counts, n), indent=1))
    meta = yaml.safe_load((FIXTURES / arm / "run_metadata.yaml").read_text())
    meta.update(experiment_id=f"priority-mix-{arm}-rep-{n}", description_keywords=keywords, model=model)
    (run / "run_metadata.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return run
