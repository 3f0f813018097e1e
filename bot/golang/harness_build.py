"""The harness for one translation, as an execution request: Go files and the states to run.

One ``ExecRequest("go-harness")`` carries everything the sandboxed job needs and nothing it must
trust: the composed BLIS package (the evolved program plus the BLIS mirror, ``blis_mirror``), the
plugin package as generated (comparisons watched) with a hook that reaches its adapter, the harness
command, and as JSON the scheduling profile, the plan the states are sampled from (the runs: as
deployed, each mapping switched off, each bypass; ``run_plan``) and the probes that choose unit-test
inputs. ``harness_run.execute_harness`` samples the states (``with_states``) while it builds the
harness once, then runs it. Pure: text in, a request out.
"""

from __future__ import annotations

import re

import orjson

from bot.dictionary import Dictionary
from bot.execution import ExecRequest
from bot.golang import harness_views as hv
from bot.golang import harness_world as world
from bot.golang.analysis_types import Analysis, scorers_read_effective_load
from bot.golang.blis_mirror import compose
from bot.golang.carry import made_fields
from bot.golang.differential import ALL_OFF, AS_DEPLOYED, DEPLOYED_VALUES
from bot.golang.generate import INFLIGHT_PRODUCER, MODULE, Generated
from bot.golang.gonames import go_float, render
from bot.golang.host import host_call_args
from bot.golang.plugin_shape import GLOBAL_RAND, TEST_DRAW_BASE
from bot.golang.slo_priority import fill_nil_priority_maps
from bot.golang.source import EvolvedSource
from bot.model import PolicyKind
from bot.yaml_safe import load_yaml

KIND = "go-harness"
SEED = 20260823
STATES = {PolicyKind.ROUTING: 1000, PolicyKind.ADMISSION: 500, PolicyKind.SCHEDULING: 500}
FLOOR_HIGH = 0.99  # every signal the plugin reads is high-fidelity and as fresh as BLIS's
FLOOR_MIXED = 0.95  # some signal is medium or low fidelity (or untranslatable), or scraped (a Map B freshness gap)
_SCALARS = {"int", "int64", "int32", "float64", "float32", "string", "bool"}


def profile(gen: Generated, kind: PolicyKind, plugin_type: str) -> list[dict]:
    """The scheduling profile the EndpointPickerConfig declares: (type, weight, parameters)."""
    cfg = load_yaml(gen.epp_config) or {}
    params = {p.get("name", p.get("type")): p for p in cfg.get("plugins", [])}
    own = params.get(plugin_type, {}).get("parameters") or {}
    if kind == PolicyKind.ADMISSION:
        return [{"type": plugin_type, "weight": 0, "parameters": own}]
    out = []
    for ref in (cfg.get("schedulingProfiles") or [{}])[0].get("plugins", []):
        name = ref.get("pluginRef")
        plugin = params.get(name, {"type": name})
        if "weight" in ref:
            out.append({"type": plugin.get("type"), "weight": ref["weight"], "parameters": plugin.get("parameters")})
    return out


def spec_for(an: Analysis, gen: Generated) -> world.Spec:
    if an.kind == PolicyKind.SCHEDULING:
        return world.Spec(kind=an.kind.value, reads=frozenset(an.signal_names), incumbents=incumbents(gen))
    # What the carried scorers read is in baseline_signals (one that ranks by EffectiveLoad() reads it as a method).
    reads = set(an.signal_names) | set(gen.baseline_signals)
    if gen.uses_scorers and scorers_read_effective_load(gen.scorer_defaults, an.era):
        reads.add("EffectiveLoad")
    # A lifted local limit (batchLimit := 0.5, compared with loadRatio) is on the scale of the value it is compared
    # with, not of any signal that value derives from: an endpoint with 0.5 in-flight requests tests nothing.
    thresholds = [
        world.Threshold(s, th.value)
        for th in an.thresholds
        if (th.param or th.constant) and not th.local and any(o.role == "threshold" for o in th.occurrences)
        for s in th.signals
    ]
    return world.Spec(kind=an.kind.value, reads=frozenset(reads), thresholds=thresholds, stateful=gen.stateful)


def incumbents(gen: Generated) -> world.Incumbents:
    """What a queue-position scorer assumes is waiting: its incumbent* parameters as the EndpointPickerConfig
    sets them (a person may have changed them at gate 1), else as generated."""
    values = {p.name: p.json_default for p in gen.params}
    for plugin in (load_yaml(gen.epp_config) or {}).get("plugins") or []:
        params = plugin.get("parameters") or {}
        if "maxPseudoQueue" in params:  # the scheduling plugin's own (incumbentSLOClass only when it reads a class)
            values |= params
    return world.Incumbents(
        str(values.get("incumbentSLOClass", "standard")),
        int(values.get("incumbentInputTokens", 512)),
        int(values.get("incumbentSpacingUs", 50_000)),
        int(values.get("incumbentSLOTargetMs", 0)) * 1000,
    )


def held_constant(an: Analysis, gen: Generated) -> list[str]:
    """The signals the program reads, keys too (``snap.Model == req.Model``), that no sampled state varies."""
    return world.held_constant(spec_for(an, gen).reads | set(an.snapshot_fields) | set(an.request_fields))


def untranslatable_reads(an: Analysis, gen: Generated, d: Dictionary) -> list[tuple[str, str]]:
    """(signal, plugin field) for every signal the logic reads that llm-d cannot provide."""
    out = []
    for name in sorted(set(an.signal_names)):
        entry = d.signal(name)
        if entry is None or entry.llmd is not None or entry.identifier_only:
            continue
        if name in gen.snapshot_fields:
            out.append((name, f"snapshot:{name}"))
        elif name in gen.request_fields and gen.request_fields[name] in _SCALARS:
            out.append((name, f"request:{name}"))
    return out


#: Why the views differ, for a mapping whose difference changes where the deployed EndpointPickerConfig runs
#: inflight-load-producer (the cause table must say what the deployed config does: "the gauges do not see requests
#: in transit" is wrong beside a producer that counts them at dispatch, as the world's llm-d view then does).
WHY_WITH_PRODUCER = {
    "in-flight-counting": (
        "inflight-load-producer counts a request from dispatch, as BLIS counts InFlightRequests, so both views hold "
        "the requests in transit; taking them out of both moves the loads the evolved thresholds compare, so these "
        "are decisions another difference (a stale gauge, an untranslated signal) tips only with the requests in "
        "transit counted"
    ),
}


#: The llm-d gauges each scraped signal comes from (dictionary Map B's expressions): the metric-staleness cause
#: names those the program reads, not all three (a scheduler reads WaitingQueueSize only).
SCRAPED_FIELDS = {
    "QueueDepth": ("WaitingQueueSize",),
    "BatchSize": ("RunningRequestsSize",),
    "KVUtilization": ("KVCacheUsagePercent",),
    "FreeKVBlocks": ("KVCacheUsagePercent",),
    "KvTokensInUse": ("KVCacheUsagePercent",),
    "InFlightRequests": ("WaitingQueueSize", "RunningRequestsSize"),
}


def mapping_why(m: str, signals: list[str], producer: bool) -> str:
    """Why the views differ under mapping ``m``, in the words of what this program reads."""
    why = WHY_WITH_PRODUCER.get(m, world.MAPPINGS[m].why) if producer else world.MAPPINGS[m].why
    fields = list(dict.fromkeys(f for s in signals for f in SCRAPED_FIELDS.get(s, ())))
    if m != "metric-staleness" or not fields:
        return why
    read = fields[0] if len(fields) == 1 else f"{', '.join(fields[:-1])} and {fields[-1]}"
    return why.replace("WaitingQueueSize, RunningRequestsSize and KVCacheUsagePercent", read, 1)


def run_plan(an: Analysis, gen: Generated, d: Dictionary, n: int | None = None) -> tuple[dict, dict[str, dict]]:
    """How to sample the differential runs (as deployed, each mapping off, each bypass, all off), and what
    each mapping means. The plan is small JSON; the job that runs the harness samples the states from it
    (``with_states``) while Go compiles, so a request stays kilobytes instead of tens of megabytes."""
    spec = spec_for(an, gen)
    applicable = world.applicable_mappings(spec)
    bypass = [world.untranslatable_mapping(s, field) for s, field in untranslatable_reads(an, gen, d)]
    # ``signals``: what each cause's example states show the values of, on both sides (differential.describe).
    producer = INFLIGHT_PRODUCER in gen.producers
    scheduling = an.kind == PolicyKind.SCHEDULING  # its pseudo-queue is as long as WaitingQueueSize
    meaning = {
        m: {
            "title": world.MAPPINGS[m].title,
            "why": mapping_why(m, named_signals(m, spec, d) + (["QueueDepth"] if scheduling else []), producer),
            "signals": named_signals(m, spec, d),
        }
        for m in applicable
    }
    meaning |= {b.id: {"title": b.title, "why": b.why, "signals": sorted(b.signals)} for b in bypass}
    # A router's BLIS original is run again on each as-deployed state with another seed where it draws at random
    # (the harness asks only when its decision says so): where its own choice changes, a draw decides, not a tie.
    out: list[dict] = [{"name": AS_DEPLOYED, "off": [], "bypass": [], "redraw": an.kind == PolicyKind.ROUTING}]
    out += [{"name": m, "off": [m], "bypass": [], "markSameBlis": True} for m in applicable]
    out += [{"name": b.id, "bypass": list(b.bypass), "like": AS_DEPLOYED} for b in bypass]
    # Every mapped signal too: its adapter line bypassed (the plugin handed BLIS's value), so a wrong
    # mapping (KV in percent, say) is named when no world mapping explains a disagreement.
    for name in sorted(gen.snapshot_fields):
        entry = d.signal(name, "snapshot")
        if name == "ID" or entry is None or entry.llmd is None or gen.snapshot_fields[name] not in _SCALARS:
            continue
        run = f"signal:{name}"
        meaning[run] = {
            "title": f"the {name} adapter line",
            "why": f"the plugin reads {name} as `{entry.llmd.expr}`",
            "signals": [name],
        }
        out.append({"name": run, "bypass": [f"snapshot:{name}"], "like": AS_DEPLOYED})
    out.append({"name": ALL_OFF, "off": applicable, "bypass": [f for b in bypass for f in b.bypass]})
    plan = {"spec": spec.to_json(), "states": n or STATES.get(an.kind, 600), "seed": SEED, "runs": out}
    return plan, meaning


def named_signals(mapping: str, spec: world.Spec, d: Dictionary) -> list[str]:
    """The signals ``mapping`` changes that the program reads (a method's parts too: EffectiveLoad's queue, batch
    and in-flight count): what its example states show the values of, on both sides (``differential.describe``)."""
    reads = set(spec.reads)
    for name in spec.reads:
        entry = d.signal(name)
        reads |= set(entry.expands_to) if entry is not None else set()
    return sorted(world.MAPPINGS[mapping].signals & reads)


#: The most states a plan may ask for: a request comes from another job, and sampling is not free.
MAX_STATES = 20_000


def with_states(inp: dict) -> dict:
    """The harness input with every run's states sampled from its plan (``run_plan``); an input that
    already carries its runs is returned as it is. Deterministic: the same plan gives the same states."""
    plan = inp.get("sample")
    if plan is None:
        return inp
    spec = world.Spec.from_json(plan.get("spec") or {})
    n, seed = plan.get("states"), plan.get("seed")
    if not isinstance(n, int) or not 0 < n <= MAX_STATES or not isinstance(seed, int):
        raise ValueError(f"sampling plan: states must be 1..{MAX_STATES} and seed an integer")
    states = world.sample(spec, n, seed)
    base = [hv.views(s) for s in states]
    runs = []
    for run in plan.get("runs") or []:
        name, bypass = str(run.get("name")), [str(f) for f in run.get("bypass") or []]
        params = {"params": run["params"]} if isinstance(run.get("params"), dict) else {}
        if run.get("like"):
            runs.append({"name": name, "bypass": bypass, "states": [], "like": str(run["like"])} | params)
            continue
        off = frozenset(run.get("off") or [])
        if off - set(world.MAPPINGS):
            raise ValueError(f"sampling plan: unknown mapping(s) {sorted(off - set(world.MAPPINGS))}")
        if not off:
            views = base
        elif off & hv.HISTORY_MAPPINGS:
            views = [hv.views(s, off) for s in states]
        else:  # the as-deployed histories, the same objects: comparing them below is no work either
            views = [hv.views(s, off, b["history"]) for s, b in zip(states, base, strict=True)]
        if run.get("markSameBlis"):
            views = [_mark_same_blis(v, b) for v, b in zip(views, base, strict=True)]
        if views is not base:
            views = [_share_history(v, b) for v, b in zip(views, base, strict=True)]
        redraw = {"redraw": True} if run.get("redraw") is True else {}
        runs.append({"name": name, "bypass": bypass, "states": views} | params | redraw)
    return {k: v for k, v in inp.items() if k != "sample"} | {"runs": runs}


def _mark_same_blis(view: dict, base: dict) -> dict:
    """``sameBlis`` when switching a mapping off left BLIS's inputs (view, history, seed) as deployed: the
    harness then reuses BLIS's as-deployed decision instead of deciding (and comparing) again."""
    same = (
        view["seed"] == base["seed"]
        and view["blis"] == base["blis"]
        and [e["blis"] for e in view["history"]] == [e["blis"] for e in base["history"]]
    )
    return view | {"sameBlis": True} if same else view


def _share_history(view: dict, base: dict) -> dict:
    """``historyLike`` (and no history) when a state's history is the as-deployed run's, as it mostly is:
    the harness copies that run's history for the state instead of reading it again (a stateful
    program's histories are half the input)."""
    if view["history"] and view["history"] == base["history"]:
        return view | {"history": [], "historyLike": True}
    return view


def delta_views(inp: dict) -> dict:
    """``inp`` as the harness reads it: a later run's state sends only the parts of its views that differ
    from the first run's same state, and names the rest (``blisSame``, ``llmdSame``) for the harness to
    copy. Switching one mapping off changes one side of a view, or one part of it, so most of what a
    run would send is already in the first run: a scheduling program's queues made its input 6 copies
    of the same 6 MB, and reading JSON was half of the harness's time. ``inp`` itself is kept whole
    (the fidelity summary describes states from it)."""
    runs = inp.get("runs") or []
    base = runs[0].get("states") if runs else None
    if not base:
        return inp
    out = [runs[0]]
    for run in runs[1:]:
        states = run.get("states") or []
        if len(states) != len(base):
            out.append(run)
            continue
        out.append(run | {"states": [_delta(v, b) for v, b in zip(states, base, strict=True)]})
    return inp | {"runs": out}


def _delta(view: dict, base: dict) -> dict:
    out = dict(view)
    for side in ("blis", "llmd"):
        mine, theirs = view.get(side) or {}, base.get(side) or {}
        same = [k for k, v in mine.items() if k in theirs and theirs[k] == v]
        if same:
            out[side] = {k: v for k, v in mine.items() if k not in same}
            out[f"{side}Same"] = same
    return out


def floor_for(an: Analysis, gen: Generated, d: Dictionary) -> tuple[float, bool]:
    """The agreement the plugin must reach, and whether every signal it reads is high-fidelity and fresh.

    A signal with a Map B freshness gap (QueueDepth and KVUtilization are the high-fidelity ones) is a gauge llm-d
    scrapes: the harness runs it as of the last scrape (``metric-staleness``), which alone moves an argmax over it
    in a few states in a hundred, so 99% would flag a faithful translation of any router that reads one. How much
    that staleness costs on real pods is Track B's to decide (the ``metric-staleness`` run), not gate 1's."""
    names = set(an.signal_names) | set(gen.baseline_signals)
    entries = [d.signal(s) for s in names]
    high = all(e is not None and (e.identifier_only or (e.fidelity == "high" and not e.freshness.gap)) for e in entries)
    return (FLOOR_HIGH if high else FLOOR_MIXED), high


def _blis_file(src: EvolvedSource, an: Analysis, gen: Generated, composed) -> str:
    host = an.host_info
    receiver = host.receiver_type or "evolvedPolicy"
    rng_field = composed.receiver_fields.get("rng", "").endswith("rand.Rand")
    # math/rand's package functions are randomly seeded since Go 1.20: a tie broken with them is BLIS choosing at
    # random among the tied endpoints, so the harness compares with the tied set (else r02's agreement changed
    # from run to run).
    global_rand = bool(GLOBAL_RAND.search(src.go_text))
    scorers = None
    if gen.uses_scorers and "scorers" in composed.receiver_fields:
        scorers = [(n, go_float(w)) for n, w in gen.scorer_defaults or []]
    # The program's own constructor builds BLIS's receiver as it builds the plugin's (generate.py), scorers or not:
    # a table it sets (g10's classWeight) is in both views, not only in the plugin's.
    if an.constructor is not None:
        ptr = an.constructor.result.strip().startswith("*")
        construct = f"\tp := {an.constructor.name}()" if ptr else f"\tv := {an.constructor.name}()\n\tp := &v"
    else:
        construct = f"\tp := &{receiver}{{}}"
    construct += fill_nil_priority_maps(composed.receiver_fields, "DefaultSLOPriorityMap") + made_fields(src, an, None)
    # A number BLIS's uncarried constructor sets (NewRoutingPolicy(...): p.loadKnee = 6.0) is a parameter of the
    # plugin; BLIS ran with the number itself, not with the zero of `&policy{}` (0/0 made p1's harness die on NaN).
    construct += "".join(
        f"\n\tp.{th.receiver_field} = {th.literal}"  # type: ignore[attr-defined]
        for th in an.thresholds
        if th.role == "field" and any(o.owner == "outside" for o in th.occurrences)
    )
    # A set-valued field too (ResidentAdapters): each snapshot is decoded into a fresh RoutingSnapshot.
    snap = [
        ("InFlightRequests" if f == "PendingRequests" else f, f)
        for f, t in composed.snapshot_fields.items()
        if t in _SCALARS or t == "map[string]bool"
    ]
    req = [f for f, t in composed.request_fields.items() if t in _SCALARS and f not in ("InputTokens", "OutputTokens")]
    # What a decoded snapshot holds by reference: each state's copy of it gets its own (``promotionState``).
    maps_held = [f for f, t in composed.snapshot_fields.items() if t == "map[string]bool"]
    prefix_index = composed.files.get("routing_prefix.go", "")
    memo_hashes = all(
        f"func (idx *PrefixCacheIndex) {m}(" in prefix_index for m in ("ComputeBlockHashes", "RecordBlocks")
    )
    return render(
        "harness/blis.go.j2",
        host=an.host,
        kind=an.kind.value,
        receiver=receiver,
        construct=construct,
        scorers=scorers,
        rng_field=rng_field,
        # An rng the evolved code never draws from breaks no tie: BLIS takes its first top score, as the plugin.
        uses_rng=an.uses_rng,
        global_rand=global_rand,
        pre960=gen.uses_scorers and an.era != "head",
        snapshot_fields=snap,
        snapshot_maps=maps_held,
        memo_hashes=memo_hashes,
        request_fields=req,
        call_args=host_call_args(an),
        legacy_bool=gen.legacy_bool,
    )


def _hook_file(an: Analysis, gen: Generated) -> str:
    snap = [(f, f) for f, t in gen.snapshot_fields.items() if f != "ID" and t in _SCALARS]
    req = []
    for f, t in gen.request_fields.items():
        if f == "numInputTokens":
            req.append(("InputTokens", f))
        elif t in _SCALARS and not f.startswith("num"):
            req.append((f, f))
    return render(
        "harness/hook.go.j2",
        pkg=gen.package,
        struct=gen.struct,
        kind=an.kind.value,
        snapshot_fields=snap,
        request_fields=req,
        uses_clock=gen.uses_clock,
        data_keys=gen.data_keys,
        adapter=gen.adapter,
        draws=gen.draws,
    )


def _value(v) -> str:
    return f"{v:g}" if isinstance(v, int | float) and not isinstance(v, bool) else repr(v)


def _add_deployed_values_run(plan: dict, meaning: dict, gen: Generated, prof: list[dict], plugin_type: str) -> None:
    """When the EndpointPickerConfig deploys values a person chose at gate 1, one more run (and the all-off run)
    hands the plugin the evolved values: the disagreements that run removes are the re-calibration's, named as
    such (else a drop after `param loadThreshold: 60` read as "score composition"). The pseudo-queue's assumptions
    (incumbent*) are no evolved values: the world's incumbents already follow them (``incumbents``), on both sides."""
    own = next((p.get("parameters") or {} for p in prof if p["type"] == plugin_type), {})
    evolved = {p.name: p.json_default for p in gen.params if p.json_default is not None and not p.assumed}
    changed = {k: v for k, v in own.items() if k in evolved and evolved[k] != v}
    if not changed:
        return
    params = own | {k: evolved[k] for k in changed}
    values = ", ".join(f"{k} = {_value(v)}" for k, v in sorted(changed.items()))
    was = ", ".join(_value(evolved[k]) for k in sorted(changed))
    meaning[DEPLOYED_VALUES] = {
        "title": "the values set at gate 1",
        "why": f"the deployed config sets {values} where the program was validated with {was}",
    }
    runs = plan["runs"]
    runs.insert(len(runs) - 1, {"name": DEPLOYED_VALUES, "bypass": [], "like": AS_DEPLOYED, "params": params})
    runs[-1] = runs[-1] | {"params": params}  # all off: the evolved values too


def share_candidates(probe_specs: list[dict]) -> dict:
    """``probes`` as the harness reads them, with every candidate list that more than one probe holds sent once
    (``candidateSets``; a probe names its set by ``candidatesFrom``). The probes of one threshold share their
    candidates: an admitter's warm-up sequences made a01's input 48 MB of 14 distinct lists, and reading JSON was
    most of its harness run (and of the request the sandboxed job is handed in the GitHub home)."""
    keys = [orjson.dumps(spec.get("candidates") or []) for spec in probe_specs]
    counts: dict[bytes, int] = {}
    for key in keys:
        counts[key] = counts.get(key, 0) + 1
    index: dict[bytes, int] = {}
    sets, probes = [], []
    for spec, key in zip(probe_specs, keys, strict=True):
        if counts[key] < 2:
            probes.append(spec)
            continue
        if key not in index:
            index[key] = len(sets)
            sets.append(spec["candidates"])
        probes.append({k: v for k, v in spec.items() if k != "candidates"} | {"candidatesFrom": index[key]})
    return {"probes": probes} | ({"candidateSets": sets} if sets else {})


def request(
    src: EvolvedSource,
    an: Analysis,
    gen: Generated,
    d: Dictionary,
    plugin_type: str,
    *,
    probe_specs: list[dict],
    differential: bool = True,
    states: int | None = None,
    floor: float | None = None,
) -> tuple[ExecRequest, dict]:
    """The execution request, and what the answer needs to be read (mapping meanings, floor)."""
    composed = compose(src, an)
    files = {f"blis/sim/{name}": text for name, text in composed.files.items()}
    files["blis/sim/zz_promotion_harness.go"] = _blis_file(src, an, gen, composed)
    for path, text in gen.harness_files.items():
        if path.endswith(".go"):
            files[f"llm-d-router/{path}"] = text
    files[f"llm-d-router/{gen.package_dir}/zz_promotion_hook.go"] = _hook_file(an, gen)
    files["llm-d-router/cmd/promotion-harness/main.go"] = render(
        "harness/main.go.j2", plugin_import=f"{MODULE}/{gen.package_dir}", test_draw_base=TEST_DRAW_BASE
    )
    main = files["llm-d-router/cmd/promotion-harness/main.go"]
    files["llm-d-router/cmd/promotion-harness/main.go"] = re.sub(r"evolved\.Type\b", f"evolved.{gen.type_const}", main)
    files["llm-d-router/cmd/promotion-harness/main.go"] = files["llm-d-router/cmd/promotion-harness/main.go"].replace(
        "evolved.Factory(", f"evolved.{gen.factory}("
    )
    plan, meaning = (None, {})
    prof = profile(gen, an.kind, plugin_type)
    if differential:
        plan, meaning = run_plan(an, gen, d, states)
        _add_deployed_values_run(plan, meaning, gen, prof, plugin_type)
    default_floor, high = floor_for(an, gen, d)
    summary_floor = {"floor": default_floor if floor is None else floor}
    if floor is not None and floor != default_floor:
        summary_floor["floor_default"] = default_floor
    args = {
        "input": {
            "kind": an.kind.value,
            # A plugin that keeps state gets a new instance for every state, as BLIS's side does: else the
            # history of every earlier state would pile up in it, and its decisions drift from BLIS's.
            "fresh": gen.stateful,
            "profile": prof,
        }
        | share_candidates(probe_specs)
        | ({"sample": plan} if plan is not None else {}),
        "summary": summary_floor
        | {"all_high": high, "seed": SEED, "mappings": meaning, "notes": composed.notes}
        | {"constant": held_constant(an, gen) if differential else []},
    }
    return ExecRequest(KIND, files=files, args=args), meaning
