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
  compares nothing, so those reports are left out, with what differs.

Everything is checked only when the report records it: a hand-run report that records little is
held to what it does record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.bench.errors import ReportError
from bot.bench.layout import RunKey, parse_run_treatment, split_condition

#: ``scenario.load.standardized`` fields that describe the load offered (not the harness's version or stage).
_STANDARDIZED = ("source", "input_seq_len", "output_seq_len", "prefix", "multi_turn", "rate_qps", "concurrency")
#: ``scenario.load.native.config`` sections that define the load (not the server URL or report settings).
_NATIVE = ("profile", "overrides", "data")
#: Differences named in one reason; the rest are counted.
_SHOWN = 3


@dataclass(frozen=True)
class PlannedLoad:
    """What the plan runs for one workload: its inference-perf profile, overrides, and the profile's data settings."""

    profile: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    data: Mapping[str, Any] = field(default_factory=dict)  # dotted data.* leaf -> value, from the rendered profile
    load_type: str | None = None


def planned_loads(request: Any) -> dict[str, PlannedLoad]:
    """Workload name -> its PlannedLoad, from the request's workloads (what stage 4 rendered into profiles)."""
    from bot.bench.experiment import workload_profile
    from bot.bench.plan import PlanError

    out = {}
    for w in request.workloads:
        try:
            doc = workload_profile(request, w.name)
        except PlanError:  # a harness or profile the planner does not render: its name and overrides still bind
            doc = {}
        data = _leaves(doc.get("data"), "data")
        load_type = (doc.get("load") or {}).get("type")
        out[w.name] = PlannedLoad(w.profile, dict(w.overrides), data, str(load_type) if load_type else None)
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
