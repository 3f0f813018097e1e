"""A report counts for a cell only if it ran that cell's load: the workload, its settings and its rate.

The directory a report is filed under names a workload and a rate; what the report records about
its load can say otherwise. Misfiled runs (another workload's reports moved into this one's
directory) or a harness override set wrong in one arm (16 output tokens instead of 80) would
otherwise decide claims about a load nobody planned, and a difference between the arms that
comes from the load alone would be credited to the plugin. Two checks:

- each report against its directory and, when given, the plan's workloads (``workload_reason``):
  the ``workload:`` / ``cell:`` keywords, the load description's ``<workload>:`` prefix, the
  inference-perf profile and overrides, and every ``data`` setting the planned profile makes;
- the two arms of a cell against each other (``keep_same_load``): a load only one arm ran
  compares nothing, so those reports are left out, with what differs;
- the load each run delivered (``keep_delivered``): a run that recorded far fewer requests than its load plans
  (rate x duration), or than the other arm's runs of its cell, was cut short and never put the cell under the
  load a claim is about, so it is left out with both counts.

Everything is checked only when the report records it: a hand-run report that records little is
held to what it does record.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.bench.conditions import condition_reason
from bot.bench.errors import ReportError
from bot.bench.layout import RunKey, parse_run_treatment, split_condition

#: ``scenario.load.standardized`` fields that describe the load offered (not the harness's version or stage).
_STANDARDIZED = ("source", "input_seq_len", "output_seq_len", "prefix", "multi_turn", "rate_qps", "concurrency")
#: ``scenario.load.native.config`` sections that define the load (not the server URL or report settings).
_NATIVE = ("profile", "overrides", "data")
#: Differences named in one reason; the rest are counted.
_SHOWN = 3
#: A run counts as a repetition only if it recorded at least this share of the requests its load plans (rate x
#: duration) and of the median the other arm's runs of its cell recorded. Conservative on purpose: a Poisson load
#: of a few hundred requests stays far above half its mean, and a run below it was stopped (the harness or the
#: gateway) well before its end, so its percentiles describe a few requests, not the load a claim is about.
DELIVERED_MIN_SHARE = 0.5
#: ``load.type`` values whose stages send rate x duration requests (a concurrency load sends what it can).
_RATE_LOADS = ("constant", "poisson")


@dataclass(frozen=True)
class PlannedLoad:
    """What the plan runs for one workload: its inference-perf profile, overrides, and the profile's data settings."""

    profile: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)  # dotted data.* leaf -> value, from the rendered profile
    load_type: str | None = None
    duration_s: float | None = None  # the length of the one load stage the plan runs (``workload_profile``)


def planned_loads(request: Any) -> dict[str, PlannedLoad]:
    """Workload name -> its PlannedLoad, from the request's workloads (what stage 4 rendered into profiles)."""
    from bot.bench.experiment import stage_seconds, workload_profile
    from bot.bench.plan import PlanError

    out = {}
    for w in request.workloads:
        try:
            doc = workload_profile(request, w.name)
        except PlanError:  # a harness or profile the planner does not render: its name and overrides still bind
            doc = {}
        data = _leaves(doc.get("data"), "data")
        load_type = (doc.get("load") or {}).get("type")
        out[w.name] = PlannedLoad(
            w.profile, dict(w.overrides), data, str(load_type) if load_type else None, stage_seconds(request, w.name)
        )
    return out


def _leaves(x: Any, prefix: str) -> dict[str, Any]:
    if isinstance(x, dict):
        out: dict[str, Any] = {}
        for k, v in x.items():
            out.update(_leaves(v, f"{prefix}.{k}"))
        return out
    return {prefix: x}


def _same(a: Any, b: Any) -> bool:
    return _canon(a) == _canon(b)


def _canon(x: Any) -> str:
    """JSON with every number as a float: 80 and 80.0 are one setting."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, (int, float)):
            return float(v)
        if isinstance(v, dict):
            return {str(k): norm(i) for k, i in v.items()}
        if isinstance(v, (list, tuple)):
            return [norm(i) for i in v]
        return str(v)

    return json.dumps(norm(x), sort_keys=True)


def _load(doc: dict) -> dict:
    return ((doc.get("scenario") or {}).get("load")) or {}


def _native(doc: dict) -> dict:
    config = (_load(doc).get("native") or {}).get("config")
    return config if isinstance(config, dict) else {}


def _keyword(doc: dict, name: str) -> str | None:
    kws = (doc.get("run") or {}).get("keywords") or []
    prefix = f"{name}:"
    return next((str(k)[len(prefix) :] for k in kws if isinstance(kws, list) and str(k).startswith(prefix)), None)


def _labels(doc: dict, key: RunKey, planned: Mapping[str, PlannedLoad]) -> str | None:
    """The workload the report's own labels name, when it is not the directory's."""
    workload = _keyword(doc, "workload")
    if workload is not None:
        base, condition = split_condition(workload)
        want_base, want_condition = split_condition(key.workload)
        if base != want_base or (condition is not None and condition != want_condition):
            return f"run.keywords says workload {workload!r}"
    cell = _keyword(doc, "cell")
    if cell is not None:
        try:
            workload, rate, _ = parse_run_treatment(cell)
        except ReportError:  # a label that names no cell says nothing about this one
            workload, rate = key.workload, key.rate
        if workload != key.workload or rate != key.rate:
            return f"run.keywords says cell {cell!r}"
    description = str((_load(doc).get("metadata") or {}).get("description") or "")
    named = description.split(":", 1)[0].strip() if ":" in description else ""
    base = split_condition(named)[0]
    if base in planned and base != split_condition(key.workload)[0]:  # only a workload of this plan is a name
        return f"its load description names workload {named!r}"
    return None


def fits_directory(doc: dict, key: RunKey, rel: str, planned: Mapping[str, PlannedLoad]) -> bool:
    """Whether nothing the report records about its run names another place than its directory: the ``arm:``
    keyword, the workload its labels name (``_labels``) and the condition it records (``condition_reason``). What
    decides which of two copies of one run, filed in two cells, is the run's own (``reports._dedupe``)."""
    arm = _keyword(doc, "arm")
    if arm is not None and arm != key.treatment:
        return False
    return _labels(doc, key, planned) is None and condition_reason(doc, rel, split_condition(key.workload)[1]) is None


def _settings(doc: dict, want: PlannedLoad) -> list[str]:
    """How the load settings the report records differ from the planned ones."""
    native = _native(doc)
    out = []
    profile = native.get("profile")
    if profile is not None and str(profile) != want.profile:
        out.append(f"profile {profile!r}, the plan's is {want.profile!r}")
    overrides = native.get("overrides")
    if isinstance(overrides, dict):
        for k in sorted(set(overrides) | set(want.overrides), key=str):
            if not _same(overrides.get(k), want.overrides.get(k)):
                out.append(f"override {k} is {overrides.get(k)!r}, the plan's is {want.overrides.get(k)!r}")
    recorded = _leaves(native.get("data"), "data") if isinstance(native.get("data"), dict) else {}
    for k, v in sorted(want.data.items()):
        if isinstance(v, str) and v.startswith("REPLACE_ENV_"):
            continue
        if k in recorded and not _same(recorded[k], v):
            out.append(f"{k} is {recorded[k]!r}, the plan's is {v!r}")
    load_type = (native.get("load") or {}).get("type") if isinstance(native.get("load"), dict) else None
    if load_type is not None and want.load_type is not None and str(load_type) != want.load_type:
        out.append(f"load.type {load_type!r}, the plan's is {want.load_type!r}")
    return out


def workload_reason(doc: dict, key: RunKey, planned: Mapping[str, PlannedLoad]) -> str | None:
    """Why the report did not run its directory's workload as planned (None: it did, as far as it records)."""
    named = _labels(doc, key, planned)
    if named is not None:
        return f"{named}, but it is filed under {key.workload!r}: it measured another load"
    want = planned.get(split_condition(key.workload)[0])
    if want is None:
        return None
    diff = _settings(doc, want)
    if not diff:
        return None
    more = f" and {len(diff) - _SHOWN} more" if len(diff) > _SHOWN else ""
    return (
        f"its load differs from the plan's {split_condition(key.workload)[0]!r} workload: "
        f"{'; '.join(diff[:_SHOWN])}{more}; run the plan's profile (stage 4's workloads/*.yaml)"
    )


def load_signature(doc: dict) -> dict[str, Any]:
    """The load a report records, flattened to dotted leaves (what the two arms of a cell must share)."""
    load = _load(doc)
    standardized = load.get("standardized") or {}
    native = _native(doc)
    sig: dict[str, Any] = {}
    for k in _STANDARDIZED:
        if k in standardized:
            sig.update(_leaves(standardized[k], f"scenario.load.standardized.{k}"))
    for k in _NATIVE:
        if k in native:
            value = native[k]
            # overrides are dotted keys already: one leaf each
            leaves = (
                {f"overrides.{o}": v for o, v in value.items()}
                if k == "overrides" and isinstance(value, dict)
                else None
            )
            sig.update(_leaves(value, k) if leaves is None else leaves)
    native_load = native.get("load") if isinstance(native.get("load"), dict) else {}
    for k in ("type", "stages"):
        if k in native_load:
            sig[f"load.{k}"] = native_load[k]
    return {f"scenario.load.native.config.{k}" if not k.startswith("scenario.") else k: v for k, v in sig.items()}


def signature_difference(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [f"{k} {a.get(k)!r} vs {b.get(k)!r}" for k in sorted(set(a) | set(b)) if not _same(a.get(k), b.get(k))]


def keep_same_load(candidates: list, rejected: list[tuple[str, str]]) -> list:
    """The candidates whose cell both arms ran with the same recorded load; the rest are rejected with the reason.

    Per cell (workload, rate) the load both arms ran most often is the cell's; a report with another load is
    left out. When no load was run by both arms, every report of the cell is left out: which arm ran the
    wrong one the reports cannot tell, and any comparison would measure the load difference.
    """
    by_cell: dict[tuple[str, float], list] = {}
    for c in candidates:
        by_cell.setdefault((c.key.workload, c.key.rate), []).append(c)
    bad: dict[str, str] = {}
    for (workload, rate), cs in by_cell.items():
        arms = {c.key.treatment for c in cs}
        if len(arms) < 2:
            continue
        sigs = {c.rel: load_signature(c.doc) for c in cs}
        counts: dict[str, dict[str, int]] = {}
        for c in cs:
            counts.setdefault(_canon(sigs[c.rel]), {}).setdefault(c.key.treatment, 0)
            counts[_canon(sigs[c.rel])][c.key.treatment] += 1
        shared = [(min(n.values()), s) for s, n in counts.items() if set(n) == arms]
        cell = f"{workload} @ {rate:g} req/s"
        if not shared:
            first = {t: next(c for c in cs if c.key.treatment == t) for t in sorted(arms)}
            a, b = (sigs[first[t].rel] for t in sorted(arms))
            diff = signature_difference(a, b)
            why = (
                f"the arms of {cell} recorded different loads ({sorted(arms)[0]} vs {sorted(arms)[1]}: "
                f"{'; '.join(diff[:_SHOWN])}{' and more' if len(diff) > _SHOWN else ''}): the comparison would "
                "measure the load, not the plugin; run both arms with the plan's profile"
            )
            bad.update({c.rel: why for c in cs})
            continue
        ref = max(shared)[1]
        ref_sig = json.loads(ref)
        for c in cs:
            if _canon(sigs[c.rel]) != ref:
                diff = signature_difference(sigs[c.rel], ref_sig)
                bad[c.rel] = (
                    f"its load differs from the one both arms ran at {cell}: {'; '.join(diff[:_SHOWN])}"
                    f"{' and more' if len(diff) > _SHOWN else ''}; run it with the plan's profile"
                )
    rejected.extend((c.rel, bad[c.rel]) for c in candidates if c.rel in bad)
    return [c for c in candidates if c.rel not in bad]


def _number(x: Any) -> float | None:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


def _total(doc: dict) -> float | None:
    """``results.request_performance.aggregate.requests.total``: the requests the run recorded (None: not recorded)."""
    aggregate = ((doc.get("results") or {}).get("request_performance") or {}).get("aggregate") or {}
    return _number((aggregate.get("requests") or {}).get("total"))


def _recorded_stage(doc: dict) -> tuple[float, float] | None:
    """(rate, duration) of the load stage the report holds, from its harness config (``load.stages[<stage>]``)."""
    load = _native(doc).get("load")
    stages = load.get("stages") if isinstance(load, dict) else None
    if not isinstance(stages, list) or not stages:
        return None
    index = (_load(doc).get("standardized") or {}).get("stage")
    if not isinstance(index, int) or isinstance(index, bool):
        index = 0 if len(stages) == 1 else None
    if index is None or not 0 <= index < len(stages) or not isinstance(stages[index], dict):
        return None
    rate, duration = _number(stages[index].get("rate")), _number(stages[index].get("duration"))
    return None if rate is None or duration is None else (rate, duration)


def planned_requests(doc: dict, key: RunKey, planned: Mapping[str, PlannedLoad]) -> tuple[float, str] | None:
    """About how many requests the run's load sends, and how that was worked out: the directory's rate (the report's
    own, within ``reports.RATE_TOLERANCE``) times the plan's duration for the workload; without the plan, the rate and
    duration of the stage its harness config records. None for a load that is not rate-driven (a concurrency load)
    or one whose length is not known."""
    base = split_condition(key.workload)[0]
    want = planned.get(base)
    native_load = _native(doc).get("load")
    recorded_type = native_load.get("type") if isinstance(native_load, dict) else None
    types = [t for t in (recorded_type, want.load_type if want else None) if t is not None]
    if any(str(t) not in _RATE_LOADS for t in types):
        return None
    if want is not None and want.duration_s and key.rate > 0:
        rate, duration, source = key.rate, want.duration_s, f"the plan's {base!r} workload"
    elif (stage := _recorded_stage(doc)) is not None:
        (rate, duration), source = stage, "the load stage its harness config records"
    else:
        return None
    if rate <= 0 or duration <= 0:
        return None
    return rate * duration, f"{rate:g} req/s x {duration:g} s, {source}"


def delivered_reason(doc: dict, key: RunKey, planned: Mapping[str, PlannedLoad]) -> str | None:
    """Why the run does not count as a repetition of its cell: it recorded under ``DELIVERED_MIN_SHARE`` of the
    requests its load plans (None: it did not, or nothing says how many it should have)."""
    total, expected = _total(doc), planned_requests(doc, key, planned)
    if total is None or expected is None or total >= DELIVERED_MIN_SHARE * expected[0]:
        return None
    return _cut_short(total, f"its load plans about {expected[0]:.0f} ({expected[1]})")


def _cut_short(total: float, expected: str) -> str:
    return (
        f"cut short: it recorded {total:g} requests (results.request_performance.aggregate.requests.total), "
        f"{expected}, and under {DELIVERED_MIN_SHARE:.0%} of that is no repetition of the cell: the run stopped "
        "early (the harness or the gateway), so its percentiles describe a few requests, not the cell's load; "
        "re-run the cell"
    )


def _short_of_other_arm(cs: list) -> dict[str, str]:
    """rel -> why, for each run of one cell that recorded under ``DELIVERED_MIN_SHARE`` of the median the other
    arm's runs recorded: what catches a cut-short run when nothing says how long its load was planned to run."""
    totals = {c.rel: _total(c.doc) for c in cs}
    out = {}
    for c in cs:
        total = totals[c.rel]
        others = [totals[o.rel] for o in cs if o.key.treatment != c.key.treatment and totals[o.rel] is not None]
        if total is None or not others:
            continue
        ref = statistics.median(others)
        if total < DELIVERED_MIN_SHARE * ref:
            other = sorted({o.key.treatment for o in cs if o.key.treatment != c.key.treatment})
            out[c.rel] = _cut_short(
                total,
                f"the {'/'.join(other)} arm's {len(others)} run(s) of {c.key.workload} @ {c.key.rate:g} req/s "
                f"recorded {ref:g} (median)",
            )
    return out


def keep_delivered(candidates: list, rejected: list[tuple[str, str]], planned: Mapping[str, PlannedLoad]) -> list:
    """The candidates that delivered their cell's load; each run cut short goes to ``rejected`` with its count and
    the count expected (``delivered_reason``, then ``_short_of_other_arm`` among the rest of its cell). A run cut
    short reports nothing failed or incomplete, so the shedding guard never sees it; counted as a full repetition,
    the maximum of six latencies stood as a p95 in a confirmed latency claim."""
    bad = {c.rel: why for c in candidates if (why := delivered_reason(c.doc, c.key, planned))}
    by_cell: dict[tuple[str, float], list] = {}
    for c in candidates:
        if c.rel not in bad:
            by_cell.setdefault((c.key.workload, c.key.rate), []).append(c)
    for cs in by_cell.values():
        bad.update(_short_of_other_arm(cs))
    rejected.extend((c.rel, bad[c.rel]) for c in candidates if c.rel in bad)
    return [c for c in candidates if c.rel not in bad]
