"""Read llm-d-benchmark's priority-mix results into per-class admission counts the statistics can trust.

An admitter is judged by whom it refuses: it should shed sheddable traffic (priority < 0) and keep
critical traffic admitted. One priority cannot show that, so the plan runs upstream's ``priority-mix``
harness (``workload/harnesses/priority_mix.py``), which sends traffic classes with different
``x-llm-d-inference-objective`` headers and writes, per run:

- ``results.json``: ``summary.traffic_classes.<class>.{requests, successes, errors, configured_priority,
  configured_weight, headers, latency_ms, ttft_ms, tpot_ms, output_tokens}`` and a ``requests`` list with
  each request's ``traffic_class``, ``status_code``, ``ttft_ms``, ``output_tokens`` and ``error`` (the text of a
  transport failure only: the harness keeps no response body);
- ``run_metadata.yaml``: ``harness_name``, ``experiment_id``, ``description_text`` and
  ``description_keywords`` (the comma-separated ``--run-keywords`` / ``description.keywords``).

There is no v0.2 benchmark report for this harness and no EndpointPickerConfig in its output, so a
result is bound to this promotion's arm by its description keywords alone (``promotion:<id>``,
``arm:<arm>``, ``epp-config:<digest>`` of the arm's config, ``epp-image:<ref>``, as ``bot.bench.evidence`` binds
v0.2 reports): a result that does not record them is left out with the reason, never silently used. Sample data follows the same rule as
reports. Every result that is not used is listed with the reason.

What a shed looks like (``is_shed``): on llm-d-router v0.10.0 the built-in admission refuses with 429, and an
Admitter plugin's refusal reaches the client as 500 (``bot.model.evidence.ADMITTER_REJECT_STATUS``). A refusal
comes before any token, so a 500 that streamed a token or ended in a transport error is a server failure, not a
shed. Any other 500 cannot be told from an unrelated server error (no response body is recorded): it is counted
as shed, in both arms and every class, and counted apart (``shed_500``) so the verdict says how many there were.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bot.bench.errors import ReportError, bound_then_deduped
from bot.bench.evidence import ALLOW_HINT, EvidencePolicy, arm_keywords
from bot.bench.layout import SETUP_PREFIX, RunKey, link_reason, parse_layout, results_files
from bot.bench.priority_plan import PriorityMixPlan
from bot.model.evidence import ADMITTER_REJECT_STATUS, SHED_STATUS
from bot.yaml_safe import YamlInputError, check_yaml_size, load_yaml, read_yaml_text

HARNESS = "priority-mix"
RESULTS_FILE = "results.json"
METADATA_FILE = "run_metadata.yaml"
OBJECTIVE_HEADER = "x-llm-d-inference-objective"  # upstream's OBJECTIVE_HEADER
LAYOUT = (
    "RESULTS/<treatment>/<workload>/rate-<rate>/rep-<n>/results.json (+ run_metadata.yaml), or llm-d-benchmark's "
    "setup-treatment-<treatment>/results/priority-mix-<workload>-rate-<rate>-rep-<n>-<ts>-<rand>/results.json"
)
COUNT_COLUMNS = [
    "treatment",
    "workload",
    "rate",
    "repetition",
    "traffic_class",
    "priority",
    "requests",
    "successes",
    "errors",
    "shed",
    "shed_500",
]
_COUNTS = ("requests", "successes", "errors")


@dataclass(frozen=True)
class ClassCounts:
    """One traffic class of one run: what was sent, admitted and served (2xx), failed, and shed (``is_shed``: a 429,
    or a 500 that streamed nothing), of the shed how many were such 500s, and the share of the mix the harness was
    told to give it (``configured_weight``; None when the run does not say)."""

    name: str
    priority: int | None
    objective: str | None
    requests: int
    successes: int
    errors: int
    shed: int
    weight: float | None = None
    shed_500: int = 0

    @property
    def admit_rate(self) -> float | None:
        """successes / requests (None when the class sent nothing)."""
        return self.successes / self.requests if self.requests else None


@dataclass(frozen=True)
class PriorityMixRun:
    """One priority-mix run that parsed and sits in a layout, before duplicates and binding are decided."""

    rel: str
    key: RunKey
    classes: tuple[ClassCounts, ...]
    keywords: tuple[str, ...]
    description: str
    experiment_id: str
    sha256: str
    model: str = ""  # the model run_metadata.yaml records (upstream's ``model``), "" when it records none


#: Decides whether a parsed run is evidence for its arm: None (use it) or the reason not to.
Binder = Callable[[PriorityMixRun], str | None]


@dataclass
class PriorityMixSet:
    """Every usable priority-mix run of a results directory, as per-class counts, plus what was left out and why."""

    table: pd.DataFrame  # COUNT_COLUMNS, one row per (run, traffic class)
    runs: list[PriorityMixRun] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (results-relative path, reason)
    loaded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what every verdict from this set must say (e.g. sample data)


# --------------------------------------------------------------------------
# One results.json
# --------------------------------------------------------------------------


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ReportError(f"{where} is {value!r}: expected a count (a whole number >= 0)")
    if value < 0 or value != int(value):
        raise ReportError(f"{where} is {value!r}: expected a count (a whole number >= 0)")
    return int(value)


def is_shed(code: int, record: dict) -> bool:
    """Whether a request record is a shed as llm-d-router v0.10.0 sends one: a 429 (its built-in admission), or a
    500 (an Admitter plugin's refusal, rewritten to errcommon.Internal) that streamed no token and ended in no
    transport error. A refusal is answered before any token, so a 500 after tokens, or one the harness recorded an
    error for, is the stack failing; the other 500s cannot be told from unrelated server errors and count as shed."""
    if code == SHED_STATUS:
        return True
    return (
        code == ADMITTER_REJECT_STATUS
        and not record.get("error")
        and not record.get("output_tokens")
        and (record.get("ttft_ms") is None)
    )


def _shed_by_class(doc: dict) -> dict[str, tuple[int, int, int]]:
    """class -> (requests listed, of which shed, of those HTTP 500s) from the per-request list."""
    listed = doc.get("requests")
    if not isinstance(listed, list):
        raise ReportError(
            f"no per-request list (requests): the shed (HTTP {SHED_STATUS} or {ADMITTER_REJECT_STATUS}) requests "
            "cannot be counted; pass the harness's results.json unchanged"
        )
    out: dict[str, tuple[int, int, int]] = {}
    for i, r in enumerate(listed):
        if not isinstance(r, dict) or not isinstance(r.get("traffic_class"), str):
            raise ReportError(f"requests[{i}] has no traffic_class: not a priority-mix request record")
        code = _count(r.get("status_code"), f"requests[{i}].status_code")
        n, shed, shed_500 = out.get(r["traffic_class"], (0, 0, 0))
        hit = is_shed(code, r)
        out[r["traffic_class"]] = (n + 1, shed + hit, shed_500 + (hit and code == ADMITTER_REJECT_STATUS))
    return out


def _class(name: str, s: Any, listed: dict[str, tuple[int, int, int]]) -> ClassCounts:
    where = f"summary.traffic_classes.{name}"
    if not isinstance(s, dict):
        raise ReportError(f"{where} is not a mapping")
    requests, successes, errors = (_count(s.get(k), f"{where}.{k}") for k in _COUNTS)
    if successes + errors > requests:
        raise ReportError(
            f"{where}: {successes} successes + {errors} errors exceed its {requests} requests; the summary is corrupt"
        )
    n, shed, shed_500 = listed.get(name, (0, 0, 0))
    if n != requests:
        raise ReportError(
            f"{where}.requests is {requests}, but the requests list has {n} requests of that class; "
            "the file was edited or truncated"
        )
    priority = s.get("configured_priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise ReportError(f"{where}.configured_priority is {priority!r}: expected an integer (or null)")
    weight = s.get("configured_weight")
    if weight is not None and (
        isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0
    ):
        raise ReportError(f"{where}.configured_weight is {weight!r}: expected a share of the mix (a number >= 0)")
    headers = s.get("headers") if isinstance(s.get("headers"), dict) else {}
    objective = headers.get(OBJECTIVE_HEADER)
    return ClassCounts(
        name,
        priority,
        str(objective) if objective else None,
        requests,
        successes,
        errors,
        shed,
        None if weight is None else float(weight),
        shed_500,
    )


def parse_results(text: str) -> tuple[ClassCounts, ...]:
    """Per-class counts of a priority-mix results.json text; ReportError whose message is the reason (no path)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"not JSON (line {exc.lineno}: {exc.msg}); expected the priority-mix harness's results.json"
        ) from None
    except (RecursionError, ValueError):
        raise ReportError("not JSON the bot reads (nested too deep or a number too large)") from None
    classes = ((doc.get("summary") if isinstance(doc, dict) else None) or {}).get("traffic_classes")
    if not isinstance(classes, dict) or not classes:
        raise ReportError("no summary.traffic_classes: not results of the priority-mix harness")
    listed = _shed_by_class(doc)
    extra = sorted(set(listed) - set(classes))
    if extra:
        raise ReportError(f"the requests list has classes the summary lacks: {', '.join(extra)}")
    return tuple(_class(str(name), s, listed) for name, s in sorted(classes.items()))


def load_priority_mix(path: str | Path) -> tuple[ClassCounts, ...]:
    """Read one results.json; ReportError names the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ReportError(f"{path}: no such file; pass the priority-mix harness's {RESULTS_FILE}")
    try:
        return parse_results(_read_text(path))
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None


def _read_text(path: Path) -> str:
    return _decode(_read_bytes(path))


def _read_bytes(path: Path) -> bytes:
    try:
        check_yaml_size(path)  # the same bound as every report the bot reads
    except YamlInputError as exc:
        raise ReportError(str(exc)) from None
    return path.read_bytes()


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportError("not UTF-8 text") from None


def read_metadata(path: Path) -> dict:
    """run_metadata.yaml beside a results.json ({} when there is none); ReportError when it is unreadable."""
    if not path.is_file():
        return {}
    try:
        doc = load_yaml(read_yaml_text(path))
    except (YamlInputError, UnicodeDecodeError) as exc:
        raise ReportError(f"{METADATA_FILE}: {exc}") from None
    if not isinstance(doc, dict):
        raise ReportError(f"{METADATA_FILE}: expected a mapping at the top level")
    return doc


def split_keywords(raw: Any) -> tuple[str, ...]:
    """``description_keywords`` as upstream splits it (``native_to_br0_2._user_keywords``): commas, trimmed."""
    if isinstance(raw, list):
        return tuple(str(k).strip() for k in raw if str(k).strip())
    return tuple(k.strip() for k in str(raw or "").split(",") if k.strip())


# --------------------------------------------------------------------------
# A results directory
# --------------------------------------------------------------------------


def _harness_of(rel: Path, meta: dict) -> str | None:
    """The harness a results.json belongs to, as its directory (upstream layout) or metadata says; None: unsaid."""
    if any(p.startswith(SETUP_PREFIX) for p in rel.parts) and len(rel.parts) >= 2:
        run_dir = rel.parts[-2]
        return HARNESS if run_dir.startswith(f"{HARNESS}-") else run_dir.split("-", 1)[0]
    name = meta.get("harness_name")
    return str(name) if name else None


def _run(root: Path, path: Path) -> PriorityMixRun | None:
    """The run of one results.json, None when it is another harness's (guidellm also writes results.json)."""
    rel = path.relative_to(root)
    if (path.parent / METADATA_FILE).is_symlink():
        raise ReportError(f"{METADATA_FILE} beside it is {link_reason(root, path.parent / METADATA_FILE)}")
    meta = read_metadata(path.parent / METADATA_FILE)
    harness = _harness_of(rel, meta)
    data = _read_bytes(path)  # hashed as is: the run manifest records the SHA-256 of these bytes
    text = _decode(data)
    if harness is None and '"traffic_classes"' not in text:
        return None
    if harness is not None and harness != HARNESS:
        return None
    key = parse_layout(rel)
    classes = parse_results(text)
    return PriorityMixRun(
        rel=rel.as_posix(),
        key=key,
        classes=classes,
        keywords=split_keywords(meta.get("description_keywords")),
        description=str(meta.get("description_text") or ""),
        experiment_id=str(meta.get("experiment_id") or ""),
        sha256=hashlib.sha256(data).hexdigest(),
        model=str(meta.get("model") or ""),
    )


def mix_results_in(results_dir: str | Path) -> list[str]:
    """The results-relative paths of every priority-mix result under ``results_dir`` (usable or not), for a
    reader whose plan has none: each is then listed as not used, never silently passed over."""
    root = Path(results_dir)
    if not root.is_dir():
        return []
    found = []
    for path in results_files(root, lambda name: name == RESULTS_FILE)[0]:
        try:
            is_mix = _run(root, path) is not None
        except ReportError:  # it claims to be the harness's (or a results.json in no layout): listed all the same
            is_mix = True
        if is_mix:
            found.append(path.relative_to(root).as_posix())
    return found


def _dedupe(runs: list[PriorityMixRun], rejected: list[tuple[str, str]]) -> list[PriorityMixRun]:
    """The first of byte-identical results, or of results with one experiment_id, counts; the rest are duplicates."""
    by_hash: dict[str, str] = {}
    by_id: dict[str, str] = {}
    kept = []
    for r in runs:
        if r.sha256 in by_hash:
            rejected.append((r.rel, f"duplicate: byte-identical to {by_hash[r.sha256]}; counted once"))
            continue
        if r.experiment_id and r.experiment_id in by_id:
            rejected.append(
                (r.rel, f"duplicate: the same run (experiment_id {r.experiment_id}) as {by_id[r.experiment_id]}")
            )
            continue
        by_hash[r.sha256] = r.rel
        if r.experiment_id:
            by_id[r.experiment_id] = r.rel
        kept.append(r)
    return kept


def load_priority_mix_results(
    results_dir: str | Path, *, binder: Binder | None = None, settle: Callable | None = None
) -> PriorityMixSet:
    """Every priority-mix run under ``results_dir`` in either layout, as per-class counts.

    ``binder`` rejects runs that are not evidence for this promotion's arms (``bind_with``), ``settle`` what only
    the bound runs together show (``EvidencePolicy.one_runner_commit``). Raises
    ReportError when the directory is missing, holds no priority-mix results, or none usable. No message
    names ``results_dir``: stage 5 commits them (verdicts, priority-mix.json) and posts them, and a local
    path names someone's machine; paths in them are relative to it, as a report's reasons are.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise ReportError(f"the results directory does not exist; expected {LAYOUT}")
    files, links = results_files(root, lambda name: name == RESULTS_FILE)
    rejected: list[tuple[str, str]] = list(links)
    runs: list[PriorityMixRun] = []
    for path in files:
        try:
            run = _run(root, path)
        except ReportError as exc:
            rejected.append((path.relative_to(root).as_posix(), str(exc)))
            continue
        if run is not None:
            runs.append(run)
    if not runs and not rejected:
        raise ReportError(f"no priority-mix results found in the results directory; expected {LAYOUT}")
    runs = bound_then_deduped(runs, binder, rejected, _dedupe, settle)
    by_key: dict[RunKey, list[PriorityMixRun]] = {}
    for r in runs:
        by_key.setdefault(r.key, []).append(r)
    used: list[PriorityMixRun] = []
    for key in sorted(by_key):
        same = by_key[key]
        if len(same) > 1:
            names = ", ".join(r.rel for r in same)
            rejected.extend(
                (r.rel, f"ambiguous: {len(same)} results for one repetition ({names}); keep one") for r in same
            )
            continue
        used.append(same[0])
    rejected.sort()
    if not used:
        first = f"{rejected[0][0]}: {rejected[0][1]}" if rejected else "none"
        raise ReportError(f"no usable priority-mix results ({len(rejected)} left out; first: {first})")
    rows = [
        (*_key_row(r.key), c.name, c.priority, c.requests, c.successes, c.errors, c.shed, c.shed_500)
        for r in used
        for c in r.classes
    ]
    table = pd.DataFrame(rows, columns=COUNT_COLUMNS)
    table["priority"] = table["priority"].astype("Int64")
    return PriorityMixSet(table=table, runs=used, rejected=rejected, loaded=[r.rel for r in used])


def _key_row(key: RunKey) -> tuple:
    return (key.treatment, key.workload, key.rate, key.repetition)


# --------------------------------------------------------------------------
# Evidence binding
# --------------------------------------------------------------------------


def _shares(weights: dict[str, float]) -> dict[str, float]:
    """Each class's share of the mix (weights need not sum to 1: upstream draws a class by weight / total)."""
    total = sum(weights.values())
    return {n: w / total for n, w in weights.items()} if total > 0 else dict(weights)


def _load_differs(run: PriorityMixRun, plan: PriorityMixPlan) -> list[str]:
    """How a run's load (workload, rate, class shares) differs from the plan's; [] when it is the plan's."""
    diffs = []
    if run.key.workload != plan.workload:
        diffs.append(f"workload {run.key.workload!r}, the plan's is {plan.workload!r}")
    if not math.isclose(run.key.rate, plan.rate, rel_tol=1e-9):
        diffs.append(f"rate {run.key.rate:g} req/s, the plan's is {plan.rate:g} (priority_mix.rate)")
    got = {c.name: c.weight for c in run.classes}
    want = {c.name: c.weight for c in plan.classes}
    if set(got) == set(want) and all(w is not None for w in got.values()):
        have, need = _shares(got), _shares(want)  # type: ignore[arg-type]
        if any(not math.isclose(have[n], need[n], rel_tol=1e-6, abs_tol=1e-9) for n in got):
            # One changed weight moves every class's share; name only the weights that differ, as the run sets them.
            diffs += [
                f"{name} has configured_weight {got[name]:g}, the plan's is {want[name]:g}"
                for name in sorted(got)
                if not math.isclose(got[name], want[name], rel_tol=1e-6, abs_tol=1e-9)  # type: ignore[arg-type]
            ]
    return diffs


def mix_differs(run: PriorityMixRun, plan: PriorityMixPlan) -> str | None:
    """How a run's mix differs from the plan's (classes, priorities, objectives, class weights, workload and
    rate), or None when it is the plan's.

    The plan sized the mix, and the shedding order reads sheddable and protected by the priorities it set: a run
    of another profile (a hand-edited one, upstream's defaults changed) measured another question, so it decides
    nothing here, as a report of another EPP config is not evidence for an arm. Its load counts as much: whether
    an admitter sheds depends on how saturated the stack is, so a run at another rate or with other class
    weights measured another saturation, and an arm driven harder than the other "sheds" from load alone. A
    run that records no class weights is judged on its rate and classes.
    """
    want = {c.name: c for c in plan.classes}
    got = {c.name: c for c in run.classes}
    diffs = []
    if set(got) != set(want):
        diffs.append(f"classes {', '.join(sorted(got))}, the plan's are {', '.join(sorted(want))}")
    for name in sorted(set(got) & set(want)):
        g, w = got[name], want[name]
        if g.priority != w.priority:
            diffs.append(f"{name} has configured_priority {g.priority!r}, the plan's is {w.priority}")
        if g.objective != w.objective:
            diffs.append(f"{name} sends {OBJECTIVE_HEADER} {g.objective!r}, the plan's is {w.objective!r}")
    diffs += _load_differs(run, plan)
    if not diffs:
        return None
    return (
        f"not the plan's priority mix: {'; '.join(diffs)} (evaluation.yaml priority_mix); "
        "run the plan's priority-mix/experiment.yaml with its profile and rate unchanged"
    )


def _model_differs(run: PriorityMixRun, model: str | None) -> str | None:
    """Why a run that records another model than the plan's stack serves is not evidence (a cell report on another
    model is not either); None when it records the plan's, or no model at all."""
    if model is None or not run.model or run.model == model:
        return None
    return (
        f"measured model {run.model} ({METADATA_FILE} model), but the plan's stack serves {model}; run the plan's "
        "priority-mix/experiment.yaml against the plan's stack"
    )


def _beyond_plan(run: PriorityMixRun, plan: PriorityMixPlan) -> str | None:
    """Why a repetition past the plan's count is not used: the first ``repetitions`` of each arm decide, so that
    running the mix more often and keeping the runs that look best cannot change the verdict."""
    if run.key.repetition <= plan.repetitions:
        return None
    return (
        f"repetition {run.key.repetition} is beyond the plan's {plan.repetitions} (priority_mix.repetitions): "
        f"repetitions 1-{plan.repetitions} of each arm decide, and the runs past them are not used"
    )


def bind_with(policy: EvidencePolicy, planned: PriorityMixPlan | None = None) -> Binder:
    """The evidence rules of ``policy`` for priority-mix runs, which record keywords but no EPP config or stack.

    With a run manifest (``policy.custody``) a results.json it does not list, or whose bytes differ from the
    SHA-256 it recorded, is left out first, as a v0.2 report is (``bot.bench.custody``).
    With a plan's policy (``policy.promotion`` set) a run must record its promotion and arm
    (``promotion:<id>``, ``arm:<arm>`` in ``description_keywords``), and with the plan's arm configs
    (``policy.arms``) the digest of the one it ran (``epp-config:<digest>``, ``_no_config``): nothing else in its
    output says which plugin and config it measured. Without one (a local evaluation) only the sample-data rule and the
    keywords a run does record are checked, as for reports, and a model it records must be the plan's stack's.
    With ``planned`` (the plan's priority mix) a run of another mix or load (``mix_differs``), or a repetition past
    the plan's count, is left out.
    """

    def bind(run: PriorityMixRun) -> str | None:
        if problem := policy.held(run.rel, run.sha256):  # edited or added after the run (bot.bench.custody)
            return problem
        doc = {"run": {"keywords": list(run.keywords), "description": run.description}}
        reason = policy.bind_recorded(doc, run.key.treatment, run.rel) or _model_differs(run, policy.model)
        if reason is None and planned is not None:
            reason = mix_differs(run, planned) or _beyond_plan(run, planned)
        if reason is not None:
            return reason
        if policy.promotion is not None:
            missing = [k for k in ("promotion", "arm") if not any(kw.startswith(f"{k}:") for kw in run.keywords)]
            if missing:
                return (
                    f"cannot be bound to this promotion's {run.key.treatment} arm: {METADATA_FILE} records no "
                    f"{' / '.join(f'{k}:' for k in missing)} keyword (description_keywords), and priority-mix results "
                    "record no EPP config; run it from the plan's experiment.yaml (it sets description.keywords) "
                    "or pass --run-keywords promotion:<id>,arm:<arm>,epp-config:<digest>"
                )
        if policy.arms and not any(kw.startswith("epp-config:") for kw in run.keywords):
            return _no_config(policy.arms, policy.promotion, run.key.treatment)
        return None

    return bind


def _no_config(arms: Mapping[str, dict], promotion: str | None, arm: str) -> str:
    """Why a run that records no ``epp-config:`` keyword is no evidence for an arm of the plan: a cell report with no
    config record is not either (``EvidencePolicy.config_hint``). A priority-mix result records no
    EndpointPickerConfig, so that keyword is all that shows which config it ran: without the rule, runs made for an
    earlier plan (before a gate-1 ``param`` change) decided the shedding order of the config the plan runs now."""
    expected = arms.get(arm)
    if expected is None:
        return f"arm {arm!r} is not in this plan ({', '.join(sorted(arms))})"
    kws = ",".join(arm_keywords(promotion or "<id>", arm, expected))
    return (
        f"records no EPP config: priority-mix results hold no EndpointPickerConfig and its {METADATA_FILE} "
        "description_keywords have no epp-config: keyword, so it cannot show which arm it measured; run the plan's "
        "priority-mix/experiment.yaml or `promote bench run` (both record it), or by hand with "
        f"`--run-keywords {kws}` for the {arm} arm"
    )


def load_priority_mix_evidence(
    results_dir: str | Path, policy: EvidencePolicy, planned: PriorityMixPlan | None = None
) -> PriorityMixSet:
    """``load_priority_mix_results`` with this promotion's evidence rules and, given ``planned``, its plan's mix;
    the notes say when sample data was used."""
    try:
        pm = load_priority_mix_results(results_dir, binder=bind_with(policy, planned), settle=policy.one_runner_commit)
    except ReportError as exc:
        if "sample data, not a measurement" in str(exc):
            raise ReportError(
                f"every priority-mix result in the results directory is sample data, not a measurement; {ALLOW_HINT}"
            ) from None
        raise
    pm.notes = policy.notes(pm.loaded)
    return pm
