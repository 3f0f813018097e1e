"""Read llm-d-benchmark benchmark reports into one table the statistics can trust.

Four things make raw reports unsafe to compare directly:

- harnesses disagree on units (inference-perf reports TTFT in seconds, guidellm in
  milliseconds), so every number is converted to the canonical unit of its metric
  using the report's own ``units`` field;
- a report that does not match the schema may be silently missing the very field a
  verdict rests on, so every report is validated with upstream's own pydantic model
  for its ``version`` (``bot.bench.report_schema``), and a NaN, infinite or negative
  statistic (a broken run) rejects the report, as does a metric that overflows or
  turns implausible once converted (``1e308`` s is ``inf`` ms);
- the same run can arrive twice (a copied file, the same run filed under two
  repetitions): byte-identical reports and reports with the same ``run.uid`` count
  once, the others are listed as duplicates; copies filed in different cells count only
  where what the run records fits, and nowhere when that is not one cell (``_dedupe``);
- a run cut short (far fewer requests than its load plans) is no repetition of its cell
  (``bot.bench.load_binding.keep_delivered``);
- a report may belong to another promotion, arm or stack: ``bot.bench.evidence``
  decides that when it is given the plan's arms.

Every report that is not used is listed with the reason: a verdict built on fewer
reports than were run must say so.
"""

from __future__ import annotations

import functools
import hashlib
import math
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bot.bench import testbed
from bot.bench.errors import NoUsableReports, ReportError, bound_then_deduped
from bot.bench.layout import (
    LAYOUT,
    TREATMENTS,
    RunKey,
    is_warmup,
    parse_layout,
    rate_dir,
    results_files,
    run_dir,
)
from bot.bench.load_binding import PlannedLoad, fits_directory, keep_delivered, keep_same_load
from bot.bench.report_schema import CONVERT_HINT, _where, check_version
from bot.bench.report_schema import validate as validate_schema
from bot.bench.waiting import peak_waiting
from bot.model.metrics import METRICS
from bot.yaml_safe import SAFE_LOADER, YamlInputError, check_yaml_size, load_yaml, read_yaml_text

__all__ = [
    "CONVERT_HINT",
    "LAYOUT",
    "REQUEST_COLUMNS",
    "TABLE_COLUMNS",
    "TREATMENTS",
    "ReportError",
    "ReportSet",
    "RunKey",
    "check_version",
    "convert",
    "extract_metrics",
    "extract_requests",
    "load_report",
    "load_results",
    "parse_layout",
    "parse_report",
    "rate_dir",
    "run_dir",
]

V01_PREFIX = "benchmark_report,_"
V02_PREFIX = "benchmark_report_v0.2"  # v0.2 and v0.2.1 reports alike: the version field decides

#: Relative tolerance between the rate in the directory name and the report's offered rate.
RATE_TOLERANCE = 0.05

TABLE_COLUMNS = ["treatment", "workload", "rate", "repetition", "metric", "statistic", "value", "unit"]
REQUEST_COLUMNS = ["treatment", "workload", "rate", "repetition", "total", "failures", "incomplete"]

#: Groups of results.request_performance.aggregate whose statistics must be finite and >= 0.
_CHECKED_GROUPS = ("latency", "throughput", "requests")
_COUNTS = ("total", "failures", "incomplete")


# --------------------------------------------------------------------------
# Units
# --------------------------------------------------------------------------

#: (reported unit, canonical unit) -> multiplier. Anything absent cannot be converted.
_CONVERSIONS: dict[tuple[str, str], float] = {
    ("ms", "ms"): 1.0,
    ("s", "ms"): 1000.0,
    ("ms/token", "ms/token"): 1.0,
    ("s/token", "ms/token"): 1000.0,
    ("tokens/s", "tokens/s"): 1.0,
    ("queries/s", "queries/s"): 1.0,
}


#: The largest converted value taken as a measurement, in any canonical unit (ms, ms/token, tokens/s,
#: queries/s): a billion is 11.6 days for one request or a billion tokens or queries a second from one
#: stack, far beyond any benchmark run; and the log-scale statistics stay exact well within it.
PLAUSIBLE_MAX = 1e9


def convert(value: float, unit: str, canonical: str) -> float:
    """``value`` in ``unit`` expressed in ``canonical``; ReportError when there is no conversion."""
    try:
        return value * _CONVERSIONS[(unit, canonical)]
    except KeyError:
        raise ReportError(f"unit {unit!r} cannot be converted to {canonical!r}") from None


# --------------------------------------------------------------------------
# One report
# --------------------------------------------------------------------------


def _loader() -> type:
    """A safe YAML loader that keeps timestamps as strings (the models parse ISO-8601 themselves)."""
    base = SAFE_LOADER

    class _ReportLoader(base):  # type: ignore[misc, valid-type]
        pass

    _ReportLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return _ReportLoader


_LOADER = _loader()


def _aggregate(doc: dict) -> dict:
    results = doc.get("results") or {}
    return ((results.get("request_performance") or {}).get("aggregate")) or {}


def _check_numbers(doc: dict) -> None:
    """A NaN, infinite or negative latency, rate or count is a broken run, not a measurement."""
    aggregate = _aggregate(doc)
    for group in _CHECKED_GROUPS:
        for name, stat in sorted((aggregate.get(group) or {}).items()):
            where = ["results", "request_performance", "aggregate", group, name]
            if group == "requests" and name in _COUNTS:
                values = {"": stat}
            elif isinstance(stat, dict):
                values = {k: v for k, v in stat.items() if k != "units"}
            else:
                continue
            for key, value in values.items():
                if not isinstance(value, (int, float)) or isinstance(value, bool):
                    continue
                path = _where([*where, key] if key else where)
                if not math.isfinite(value):
                    raise ReportError(
                        f"non-finite value {value} at {path}: the run did not measure this; re-run the cell"
                    )
                if value < 0:
                    raise ReportError(
                        f"negative value {value:g} at {path}: not a possible measurement; re-run the cell"
                    )
    _check_counts(aggregate)


def _check_counts(aggregate: dict) -> None:
    """Counts that contradict themselves, or latencies measured over no request, are a broken run too: a run
    that records 0 requests cannot have a latency percentile, nor more failed requests than it sent."""
    req = aggregate.get("requests") or {}
    counts = {
        k: req.get(k) for k in _COUNTS if isinstance(req.get(k), (int, float)) and not isinstance(req.get(k), bool)
    }
    total = counts.get("total")
    if total is None:
        return
    where = _where(["results", "request_performance", "aggregate", "requests", "total"])
    lost = counts.get("failures", 0) + counts.get("incomplete", 0)
    if lost > total:
        raise ReportError(
            f"{lost:g} requests failed or incomplete but {total:g} in all at {where}: the counts contradict "
            "each other; re-run the cell"
        )
    measured = any(
        isinstance(v, (int, float)) and not isinstance(v, bool)
        for stat in (aggregate.get("latency") or {}).values()
        if isinstance(stat, dict)
        for k, v in stat.items()
        if k != "units"
    )
    if total == 0 and measured:
        raise ReportError(
            f"latency statistics over 0 requests ({where} is 0): the run sent nothing it could measure; re-run the cell"
        )


def parse_report(text: str) -> dict:
    """Validate report text; ReportError whose message is the reason (no path)."""
    try:
        doc = load_yaml(text, loader=_LOADER)
    except YamlInputError as exc:
        raise ReportError(str(exc)) from None
    if not isinstance(doc, dict):
        raise ReportError("not a benchmark report: expected a mapping at the top level")
    validate_schema(doc)
    _check_numbers(doc)
    return doc


def load_report(path: str | Path) -> dict:
    """Read and validate one report; ReportError names the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"{path}: no such report file; pass a benchmark_report_v0.2,_*.yaml")
    try:
        text = read_yaml_text(path)
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not UTF-8 text; pass a benchmark_report_v0.2,_*.yaml") from None
    except YamlInputError as exc:
        raise ReportError(f"{path}: {exc}") from None
    try:
        return parse_report(text)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------
# Metrics out of one report
# --------------------------------------------------------------------------


def extract_metrics(doc: dict) -> list[tuple[str, str, float, str]]:
    """(metric, statistic, value, canonical unit) for every METRICS entry present in a validated report."""
    aggregate = _aggregate(doc)
    rows = []
    for name, m in METRICS.items():
        group, stat_name = m.path.split(".")
        stat = (aggregate.get(group) or {}).get(stat_name)
        if not isinstance(stat, dict):
            continue
        value = stat.get(m.statistic)
        if value is None:
            continue
        converted = convert(float(value), stat["units"], m.unit)
        _check_converted(converted, value, stat["units"], m.unit, f"{m.report_path}.{m.statistic}")
        rows.append((name, m.statistic, converted, m.unit))
    return rows


def _check_converted(converted: float, raw: Any, unit: str, canonical: str, path: str) -> None:
    """What ``_check_numbers`` checks, again after conversion: a finite raw value can overflow (1e308 s in ms)."""
    if not math.isfinite(converted):
        raise ReportError(
            f"value {raw} {unit} at {path} is {converted} in {canonical}: too large to be a measurement; "
            "re-run the cell"
        )
    if converted > PLAUSIBLE_MAX:
        raise ReportError(
            f"implausible value {raw} {unit} at {path} ({converted:.3g} {canonical}, above {PLAUSIBLE_MAX:g}): "
            "not a possible measurement; re-run the cell"
        )


def extract_requests(doc: dict) -> tuple[int | None, int | None, int | None]:
    req = _aggregate(doc).get("requests") or {}
    return req.get("total"), req.get("failures"), req.get("incomplete")


# --------------------------------------------------------------------------
# A results directory
# --------------------------------------------------------------------------


@dataclass
class ReportSet:
    """Every usable report of a results directory, in canonical units, plus what was not usable and why."""

    table: pd.DataFrame  # TABLE_COLUMNS, one row per (run, metric)
    requests: pd.DataFrame  # REQUEST_COLUMNS, one row per run; counts are nullable (pd.NA = not reported)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (results-relative path, reason)
    loaded: list[str] = field(default_factory=list)  # results-relative paths of the reports in the table
    notes: list[str] = field(default_factory=list)  # what every verdict from this set must say (e.g. sample data)
    testbeds: list = field(default_factory=list)  # bot.bench.testbed.ReportTestbed per loaded report, same order
    #: RunKey -> the highest vllm_num_requests_waiting a pod recorded (bot.bench.waiting), for reports carrying it
    waiting: dict = field(default_factory=dict)

    def runs(self) -> list[RunKey]:
        return sorted(
            RunKey(r.treatment, r.workload, float(r.rate), int(r.repetition))
            for r in self.requests.itertuples(index=False)
        )


@dataclass(frozen=True)
class Candidate:
    """One report that parsed and sits in a layout, before evidence binding and then duplicates are decided."""

    rel: str
    key: RunKey
    doc: dict
    metrics: list[tuple[str, str, float, str]]
    sha256: str
    uid: str = ""  # run.uid as parsed: duplicates are judged after binding, by what the file says, not the doc


#: Decides whether a parsed report is evidence for its arm: returns None (use it) or the reason not to.
Binder = Callable[[Candidate], str | None]
#: Refuses, into the rejected list, bound reports that only together are no evidence; returns the rest.
Settle = Callable[[list[Candidate], list[tuple[str, str]]], list[Candidate]]


def _is_report_name(name: str) -> bool:
    return name.startswith((V02_PREFIX, V01_PREFIX)) and name.endswith((".yaml", ".yml"))


def _native_rate(load: dict) -> tuple[float, str] | None:
    """The rate of the load stage this report holds, from the harness config (``scenario.load.native.config``
    ``load.stages[<standardized.stage>].rate``; a single stage needs no index), with where it was read."""
    config = (load.get("native") or {}).get("config")
    stages = ((config.get("load") or {}).get("stages") if isinstance(config, dict) else None) or []
    if not isinstance(stages, list) or not stages:
        return None
    index = (load.get("standardized") or {}).get("stage")
    if not isinstance(index, int) or isinstance(index, bool):
        index = 0 if len(stages) == 1 else None
    if index is None or not 0 <= index < len(stages) or not isinstance(stages[index], dict):
        return None
    rate = stages[index].get("rate")
    if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not math.isfinite(rate):
        return None
    return float(rate), f"scenario.load.native.config.load.stages[{index}].rate"


def _check_rate(doc: dict, key: RunKey) -> None:
    """The rate the report offered is its directory's: ``rate_qps``, else the harness config's stage rate."""
    load = (doc.get("scenario") or {}).get("load") or {}
    offered = (load.get("standardized") or {}).get("rate_qps")
    found = (float(offered), "scenario.load.standardized.rate_qps") if offered is not None else _native_rate(load)
    if found is None or key.rate == 0:
        return
    rate, where = found
    if abs(rate - key.rate) > RATE_TOLERANCE * key.rate:
        raise ReportError(f"rate mismatch: the directory says {rate_dir(key.rate)} but {where} is {rate:g}")


def _candidate(root: Path, path: Path) -> Candidate:
    rel = path.relative_to(root)
    if path.name.startswith(V01_PREFIX):
        raise ReportError(f"v0.1 report: {CONVERT_HINT}")
    if "_session_lifecycle_metrics" in path.name:
        raise ReportError(
            "session report (multi-turn session metrics): not used; request metrics come from the stage report"
        )
    key = parse_layout(rel)
    try:
        check_yaml_size(path)
    except YamlInputError as exc:
        raise ReportError(str(exc)) from None
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportError("not UTF-8 text") from None
    sha256 = hashlib.sha256(data).hexdigest()
    doc = _parse_once(sha256, text)
    _check_rate(doc, key)
    metrics = extract_metrics(doc)
    if not metrics:
        raise ReportError("no request metrics: results.request_performance.aggregate has none of " + ", ".join(METRICS))
    return Candidate(rel.as_posix(), key, doc, metrics, sha256, str((doc.get("run") or {}).get("uid") or ""))


#: Validated reports by the SHA-256 of their bytes, pickled: a rehearsal loads the same results directory at
#: preflight and again at stage 5, and parsing is most of loading. Each load unpickles a private copy (a binder
#: may change what it is handed), in a quarter of a deepcopy's time, and nothing held can be changed in place.
_VALIDATED: dict[str, bytes] = {}
_VALIDATED_SIZE = 2048


def _parse_once(sha256: str, text: str) -> dict:
    """``parse_report(text)``, parsed and validated once per content in this process; a copy every time."""
    kept = _VALIDATED.get(sha256)
    if kept is None:
        doc = parse_report(text)  # a report that fails raises every time: only valid ones are kept
        while len(_VALIDATED) >= _VALIDATED_SIZE:
            _VALIDATED.pop(next(iter(_VALIDATED)))
        _VALIDATED[sha256] = pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL)
        return doc
    return pickle.loads(kept)  # bytes this process pickled itself, never read from anywhere


def _place(key: RunKey) -> str:
    """The cell and arm a report is filed under, as its directory names them."""
    return f"{key.treatment}/{key.workload}/{rate_dir(key.rate)}"


def _dedupe(
    candidates: list[Candidate], rejected: list[tuple[str, str]], planned: Mapping[str, PlannedLoad] | None = None
) -> list[Candidate]:
    """Copies of one run (byte-identical, or one run.uid) count once, and only where the run belongs.

    Copies filed in one place (arm, workload, rate) are one repetition re-filed: the first counts, the rest are
    listed as duplicates. Copies in different places are a provenance conflict, never settled by path order: the
    copy whose records fit its directory counts when exactly one place's do (``load_binding.fits_directory``), and
    when none or several do, no copy counts, each listed with why: keeping the first by path kept a copy in a cell
    whose looks never reached it and dropped the run from its own, and called that "counted once".
    """
    groups: dict[str, list[Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.uid or f"sha256:{c.sha256}", []).append(c)
    dropped: set[str] = set()
    for copies in groups.values():
        if len(copies) < 2:
            continue
        places: dict[str, list[Candidate]] = {}
        for c in copies:
            places.setdefault(_place(c.key), []).append(c)
        fitting = [p for p, cs in places.items() if any(fits_directory(c.doc, c.key, c.rel, planned or {}) for c in cs)]
        if len(places) > 1 and len(fitting) != 1:
            _conflict(copies, places, fitting, rejected)
            dropped.update(c.rel for c in copies)
            continue
        home = places[fitting[0]] if len(places) > 1 else copies
        kept = next((c for c in home if fits_directory(c.doc, c.key, c.rel, planned or {})), home[0])
        for c in copies:
            if c is not kept:
                rejected.append((c.rel, _duplicate(c, kept)))
                dropped.add(c.rel)
    return [c for c in candidates if c.rel not in dropped]


def _duplicate(c: Candidate, kept: Candidate) -> str:
    same = (
        f"byte-identical to {kept.rel}" if c.sha256 == kept.sha256 else f"the same run (run.uid {c.uid}) as {kept.rel}"
    )
    if _place(c.key) == _place(kept.key):
        return f"duplicate: {same}; counted once"
    return (
        f"duplicate: {same}, filed in another cell: what the run records fits {_place(kept.key)} and not "
        f"{_place(c.key)}, so it is counted once, there"
    )


def _conflict(
    copies: list[Candidate], places: dict[str, list[Candidate]], fitting: list[str], rejected: list[tuple[str, str]]
) -> None:
    """Every copy of a run filed in several places whose records fit none, or several, of them: left out."""
    run = f"run.uid {copies[0].uid}" if copies[0].uid else "byte-identical copies"
    fit = "each of those directories" if fitting else "none of those directories"
    why = (
        f"provenance conflict: the same run ({run}) is filed in {len(places)} places ({', '.join(places)}), and "
        f"what it records (arm, workload and condition keywords, load description) fits {fit}: which one it ran "
        "the reports cannot tell, so no copy counts; keep it only in the directory of the cell it ran"
    )
    rejected.extend((c.rel, why) for c in copies)


def load_results(
    results_dir: str | Path,
    *,
    binder: Binder | None = None,
    settle: Settle | None = None,
    planned: Mapping[str, PlannedLoad] | None = None,
) -> ReportSet:
    """Load every report under ``results_dir`` in either layout (``bot.bench.layout``).

    ``binder`` (see ``bot.bench.evidence``) rejects reports that are not evidence for this
    promotion's arms; ``settle`` what only the bound reports together show; ``planned`` (the plan's workloads,
    ``bot.bench.load_binding.planned_loads``) says how long each load runs, so a run cut short is left out
    (``keep_delivered``; without it, the duration the report records). Raises ReportError when the directory is
    missing, holds no report, or holds no usable report.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise NoUsableReports(root, "no such results directory", f"expected {LAYOUT}")
    files, links = results_files(root, _is_report_name)
    files = [f for f in files if not is_warmup(f.relative_to(root))]  # the runner's discarded re-warm runs
    if not files and not links:
        raise NoUsableReports(root, "no benchmark reports found", f"expected {LAYOUT}")

    rejected: list[tuple[str, str]] = list(links)
    candidates: list[Candidate] = []
    for path in files:
        try:
            candidates.append(_candidate(root, path))
        except ReportError as exc:
            rejected.append((path.relative_to(root).as_posix(), str(exc)))
    dedupe = functools.partial(_dedupe, planned=planned)
    candidates = bound_then_deduped(candidates, binder, rejected, dedupe, settle)
    candidates = keep_same_load(candidates, rejected)
    candidates = keep_delivered(candidates, rejected, planned or {})
    accepted: dict[RunKey, list[Candidate]] = {}
    for c in candidates:
        accepted.setdefault(c.key, []).append(c)

    rows: list[tuple] = []
    req_rows: list[tuple] = []
    loaded: list[str] = []
    testbeds: list = []
    waiting: dict[RunKey, float] = {}
    for key in sorted(accepted):
        reports = accepted[key]
        if len(reports) > 1:
            names = ", ".join(_distinct([c.rel for c in reports]))
            for c in reports:
                rejected.append((c.rel, f"ambiguous: {len(reports)} reports for one repetition, in {names}; keep one"))
            continue
        c = reports[0]
        loaded.append(c.rel)
        testbeds.append(testbed.record(key.treatment, c.doc, c.rel))
        if (peak := peak_waiting(c.doc)) is not None:
            waiting[key] = peak
        for metric, statistic, value, unit in c.metrics:
            rows.append((key.treatment, key.workload, key.rate, key.repetition, metric, statistic, value, unit))
        req_rows.append((key.treatment, key.workload, key.rate, key.repetition, *extract_requests(c.doc)))

    rejected.sort()
    if not loaded:
        first = f"{rejected[0][0]}: {rejected[0][1]}" if rejected else "none"
        # Reports found and all left out: the reason says what to fix; the layout is no help there.
        advice = f"expected {LAYOUT}" if not rejected else "pass reports of this promotion's plan"
        raise NoUsableReports(root, f"no valid benchmark report ({len(rejected)} rejected; first: {first})", advice)
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    requests = pd.DataFrame(req_rows, columns=REQUEST_COLUMNS)
    for col in _COUNTS:
        requests[col] = requests[col].astype("Int64")
    return ReportSet(
        table=table, requests=requests, rejected=rejected, loaded=loaded, testbeds=testbeds, waiting=waiting
    )


def _distinct(rels: list[str]) -> list[str]:
    """The shortest names that tell these reports apart: their directories (two workspace runs of one repetition
    hold one file name), else their file names (two stage files in one directory), else the whole paths."""
    for names in ([Path(r).parent.as_posix() for r in rels], [Path(r).name for r in rels]):
        if len(set(names)) == len(names):
            return names
    return list(rels)


def report_identity(doc: dict[str, Any]) -> str:
    """run.uid, the identity two copies of one run share."""
    return str((doc.get("run") or {}).get("uid") or "")
