"""Read llm-d-benchmark v0.2 benchmark reports into one table the statistics can trust.

Two things make raw reports unsafe to compare directly: harnesses disagree on
units (inference-perf reports TTFT in seconds, guidellm in milliseconds), and a
report that does not match the schema may be silently missing the very field a
verdict rests on. So every report is validated against the upstream JSON
schema, every number is converted to the canonical unit of its metric using the
report's own ``units`` field (authoritative, whatever the harness), and every
report that is not used is listed with the reason — a verdict built on fewer
reports than were run must say so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import pandas as pd
import yaml
from jsonschema.exceptions import best_match

from bot.bench.metrics import METRICS
from bot.model import RequestError

SCHEMA_DIR = Path(__file__).resolve().parent / "schema"
SCHEMA_FILE = SCHEMA_DIR / "br_v0_2_json_schema.json"

REPORT_VERSION = "0.2"
TREATMENTS = ("baseline", "evolved")
V02_GLOB = "benchmark_report_v0.2,_*.yaml"
V01_PREFIX = "benchmark_report,_"
LAYOUT = "RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/benchmark_report_v0.2,_<native-file>.yaml (treatment: baseline or evolved)"
CONVERT_HINT = (
    "convert with `python -m llmdbenchmark.analysis.benchmark_report.cli -w <harness> -b 0.2 <native-file> <out.yaml>`"
)

#: Relative tolerance between the rate in the directory name and the report's offered rate.
RATE_TOLERANCE = 0.05

TABLE_COLUMNS = ["treatment", "workload", "rate", "repetition", "metric", "statistic", "value", "unit"]
REQUEST_COLUMNS = ["treatment", "workload", "rate", "repetition", "total", "failures", "incomplete"]


class ReportError(RequestError):
    """A benchmark report, or a results directory, that cannot be used."""


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

#: Unit families upstream enforces in pydantic (schema_v0_2.py check_units) but the JSON schema cannot.
_TIME = ("ms", "s")
_GEN_LATENCY = ("ms/token", "s/token")
_UNIT_FAMILIES: dict[str, tuple[str, ...]] = {
    "latency.time_to_first_token": _TIME,
    "latency.request_latency": _TIME,
    "latency.time_per_output_token": _GEN_LATENCY,
    "latency.inter_token_latency": _GEN_LATENCY,
    "latency.normalized_time_per_output_token": _GEN_LATENCY,
    "throughput.input_token_rate": ("tokens/s",),
    "throughput.output_token_rate": ("tokens/s",),
    "throughput.total_token_rate": ("tokens/s",),
    "throughput.request_rate": ("queries/s",),
    "requests.input_length": ("count",),
    "requests.output_length": ("count",),
}


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
    """A safe YAML loader that keeps timestamps as strings, as the JSON schema expects."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _ReportLoader(base):  # type: ignore[misc, valid-type]
        pass

    _ReportLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    return _ReportLoader


_LOADER = _loader()


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    # Upstream's own example carries results.session_performance, which the schema file omits (see NOTICE.md).
    schema["$defs"]["Results"]["properties"].setdefault(
        "session_performance", {"anyOf": [{"type": "object"}, {"type": "null"}], "default": None}
    )
    return jsonschema.Draft202012Validator(schema)


def _where(parts: list[Any] | tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _schema_reason(error: jsonschema.ValidationError) -> str:
    path = list(error.absolute_path)
    where = _where(path)
    if error.validator == "required":
        missing = re.match(r"'([^']+)' is a required property", error.message)
        name = missing.group(1) if missing else error.message
        return f"missing required field '{name}' at {where}"
    if error.validator == "additionalProperties":
        return f"unknown field at {where}: {error.message}"
    if error.validator == "enum" and path and path[-1] == "units":
        return f"wrong unit {error.instance!r} at {where}; a v0.2 unit is one of {', '.join(error.validator_value)}"
    return f"schema violation at {where}: {error.message}"


def check_version(doc: dict) -> None:
    """Reject anything but a v0.2 report, before schema validation gives a less helpful message."""
    if "version" not in doc:
        raise ReportError(f"wrong version: no 'version' field; expected version: '{REPORT_VERSION}'")
    version = doc["version"]
    if isinstance(version, str) and version.strip() == "0.1":
        raise ReportError(f"v0.1 report: {CONVERT_HINT}")
    if version != REPORT_VERSION:
        hint = " (quote it: version: '0.2')" if version == 0.2 else f"; {CONVERT_HINT}"
        raise ReportError(f"wrong version {version!r}: expected the string '{REPORT_VERSION}'{hint}")


def _check_units(doc: dict) -> None:
    aggregate = (((doc.get("results") or {}).get("request_performance") or {}).get("aggregate")) or {}
    for dotted, allowed in _UNIT_FAMILIES.items():
        group, name = dotted.split(".")
        stat = (aggregate.get(group) or {}).get(name)
        if isinstance(stat, dict) and stat.get("units") not in allowed:
            raise ReportError(
                f"wrong unit {stat.get('units')!r} at results.request_performance.aggregate.{dotted}.units; "
                f"expected one of {', '.join(allowed)}"
            )


def parse_report(text: str) -> dict:
    """Validate report text; ReportError whose message is the reason (no path)."""
    try:
        doc = yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ReportError(f"malformed YAML{where}: {problem}") from None
    if not isinstance(doc, dict):
        raise ReportError("not a benchmark report: expected a mapping at the top level")
    check_version(doc)
    error = best_match(_validator().iter_errors(doc))
    if error is not None:
        raise ReportError(_schema_reason(error))
    _check_units(doc)
    return doc


def load_report(path: str | Path) -> dict:
    """Read and validate one v0.2 report; ReportError names the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"{path}: no such report file; pass a benchmark_report_v0.2,_*.yaml")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ReportError(f"{path}: not UTF-8 text; pass a benchmark_report_v0.2,_*.yaml") from None
    try:
        return parse_report(text)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------
# Metrics out of one report
# --------------------------------------------------------------------------


def extract_metrics(doc: dict) -> list[tuple[str, str, float, str]]:
    """(metric, statistic, value, canonical unit) for every METRICS entry present in a validated report."""
    aggregate = doc["results"].get("request_performance") or {}
    aggregate = aggregate.get("aggregate") or {}
    rows = []
    for name, m in METRICS.items():
        group, stat_name = m.path.split(".")
        stat = (aggregate.get(group) or {}).get(stat_name)
        if not isinstance(stat, dict):
            continue
        value = stat.get(m.statistic)
        if value is None:
            continue
        rows.append((name, m.statistic, convert(float(value), stat["units"], m.unit), m.unit))
    return rows


def extract_requests(doc: dict) -> tuple[int | None, int | None, int | None]:
    aggregate = (doc["results"].get("request_performance") or {}).get("aggregate") or {}
    req = aggregate.get("requests") or {}
    return req.get("total"), req.get("failures"), req.get("incomplete")


# --------------------------------------------------------------------------
# A results directory
# --------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class RunKey:
    treatment: str
    workload: str
    rate: float
    repetition: int


_RATE_DIR = re.compile(r"^rate-([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$")
_REP_DIR = re.compile(r"^rep-([0-9]+)$")


def rate_dir(rate: float) -> str:
    """Directory name of a rate: ``rate-<rate:g>`` (10.0 -> rate-10, 2.5 -> rate-2.5)."""
    return f"rate-{rate:g}"


def run_dir(treatment: str, workload: str, rate: float, repetition: int) -> str:
    """Results-relative directory of one run; the inverse of what load_results parses."""
    return f"{treatment}/{workload}/{rate_dir(rate)}/rep-{repetition}"


def parse_layout(rel: Path) -> RunKey:
    """RunKey from a results-relative report path; ReportError says how it breaks the layout."""
    parts = rel.parts
    if len(parts) != 5:
        raise ReportError(f"not in the results layout {LAYOUT}")
    treatment, workload, rate_s, rep_s, _ = parts
    if treatment not in TREATMENTS:
        raise ReportError(f"unknown treatment directory {treatment!r}; expected one of {', '.join(TREATMENTS)}")
    rm = _RATE_DIR.match(rate_s)
    if not rm:
        raise ReportError(f"bad rate directory {rate_s!r}; expected rate-<number>, e.g. rate-10")
    pm = _REP_DIR.match(rep_s)
    if not pm:
        raise ReportError(f"bad repetition directory {rep_s!r}; expected rep-<n>, e.g. rep-1")
    return RunKey(treatment, workload, float(rm.group(1)), int(pm.group(1)))


@dataclass
class ReportSet:
    """Every usable report of a results directory, in canonical units, plus what was not usable and why."""

    table: pd.DataFrame  # TABLE_COLUMNS, one row per (run, metric)
    requests: pd.DataFrame  # REQUEST_COLUMNS, one row per run; counts are nullable (pd.NA = not reported)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (results-relative path, reason)
    loaded: list[str] = field(default_factory=list)  # results-relative paths of the reports in the table

    def runs(self) -> list[RunKey]:
        return sorted(
            RunKey(r.treatment, r.workload, float(r.rate), int(r.repetition))
            for r in self.requests.itertuples(index=False)
        )


def _is_report_file(p: Path) -> bool:
    return p.is_file() and p.name.startswith(("benchmark_report_v0.2,_", V01_PREFIX)) and p.suffix in (".yaml", ".yml")


def _check_rate(doc: dict, key: RunKey) -> None:
    load = ((doc.get("scenario") or {}).get("load") or {}).get("standardized") or {}
    offered = load.get("rate_qps")
    if offered is None or key.rate == 0:
        return
    if abs(float(offered) - key.rate) > RATE_TOLERANCE * key.rate:
        raise ReportError(
            f"rate mismatch: the directory says {rate_dir(key.rate)} but scenario.load.standardized.rate_qps is {offered:g}"
        )


def load_results(results_dir: str | Path) -> ReportSet:
    """Load ``RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/benchmark_report_v0.2,_*.yaml``.

    Raises ReportError when the directory is missing, holds no report, or holds no valid report.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise ReportError(f"{root}: no such results directory; expected {LAYOUT}")
    files = sorted((p for p in root.rglob("benchmark_report*") if _is_report_file(p)), key=lambda p: p.as_posix())
    if not files:
        raise ReportError(f"{root}: no benchmark reports found; expected {LAYOUT}")

    rejected: list[tuple[str, str]] = []
    accepted: dict[RunKey, list[tuple[str, dict, list]]] = {}
    for path in files:
        rel = path.relative_to(root)
        rel_s = rel.as_posix()
        try:
            if path.name.startswith(V01_PREFIX):
                raise ReportError(f"v0.1 report: {CONVERT_HINT}")
            if "_session_lifecycle_metrics" in path.name:
                raise ReportError(
                    "session report (multi-turn session metrics): not used; request metrics come from the stage report"
                )
            key = parse_layout(rel)
            doc = parse_report(path.read_text(encoding="utf-8"))
            _check_rate(doc, key)
            metrics = extract_metrics(doc)
            if not metrics:
                raise ReportError(
                    "no request metrics: results.request_performance.aggregate has none of " + ", ".join(METRICS)
                )
        except ReportError as exc:
            rejected.append((rel_s, str(exc)))
            continue
        except UnicodeDecodeError:
            rejected.append((rel_s, "not UTF-8 text"))
            continue
        accepted.setdefault(key, []).append((rel_s, doc, metrics))

    rows: list[tuple] = []
    req_rows: list[tuple] = []
    loaded: list[str] = []
    for key in sorted(accepted):
        reports = accepted[key]
        if len(reports) > 1:
            names = ", ".join(Path(r).name for r, _, _ in reports)
            for rel_s, _, _ in reports:
                rejected.append((rel_s, f"ambiguous: {len(reports)} reports for one repetition ({names}); keep one"))
            continue
        rel_s, doc, metrics = reports[0]
        loaded.append(rel_s)
        for metric, statistic, value, unit in metrics:
            rows.append((key.treatment, key.workload, key.rate, key.repetition, metric, statistic, value, unit))
        req_rows.append((key.treatment, key.workload, key.rate, key.repetition, *extract_requests(doc)))

    rejected.sort()
    if not loaded:
        first = f"{rejected[0][0]}: {rejected[0][1]}" if rejected else "none"
        raise ReportError(
            f"{root}: no valid benchmark report ({len(rejected)} rejected; first: {first}); expected {LAYOUT}"
        )
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    requests = pd.DataFrame(req_rows, columns=REQUEST_COLUMNS)
    for col in ("total", "failures", "incomplete"):
        requests[col] = requests[col].astype("Int64")
    return ReportSet(table=table, requests=requests, rejected=rejected, loaded=loaded)
