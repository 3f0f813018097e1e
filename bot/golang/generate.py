"""Writing the llm-d-router v0.10.0 plugin package for an analysed evolved policy.

The shape follows DESIGN.md: a *signal adapter* that builds BLIS-shaped values from endpoint metrics,
attributes and request fields (``bot.golang.adapter``), the *evolved logic carried over* as close to
verbatim as Go allows (``bot.golang.carry``), and the llm-d plumbing (``<Name>Type``, ``Parameters``,
``<Name>Factory`` with a strict decoder, ``TypedName``/``WithName``, ``Consumes``, the compile-time
interface assertions, registration, EndpointPickerConfig, README; ``bot.golang.plugin_docs``; the main
file's imports and template context: ``bot.golang.plugin_file``).

Carrying the code instead of re-deriving it is the point: a reviewer can diff ``evolved.go`` against
the BLIS program line by line (``line_map`` records the correspondence), and nothing the evolution
found is "simplified" away. Besides the shipped files, ``generate`` returns the harness copy of the
package (the same code with threshold subjects watched), which ``bot.golang.harness_build`` links
with the BLIS original. The unit test is written later, from the harness's probes (``testgen``).

Everything here is text in, text out, except the gofmt pass (the pinned toolchain's formatter, run
through the toolchain's one process launcher), so generated files are gofmt-clean by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.dictionary import Dictionary
from bot.golang import dead_branches, dead_code, order_keys, state_caps
from bot.golang.adapter import AdapterLine, adapter_lines
from bot.golang.adapter_params import AdapterParams, adapter_params
from bot.golang.analysis_types import Analysis, scorer_signals, scorers_read_effective_load
from bot.golang.carry import MARKER_LINE, Edit, carry_const, carry_function, carry_type, made_fields, plan_names
from bot.golang.data_keys import INFLIGHT, KEYS, PREFIX, config_note, param_spec, reads
from bot.golang.gofiles import drop_file_references, drop_marker_lines, format_go, remap_lines, sort_imports, splice
from bot.golang.golines import wrap_statements
from bot.golang.gonames import config_path as config_path_of
from bot.golang.gonames import file_stem, go_float, package_dir, package_name, render, struct_name
from bot.golang.package_consts import carried_consts
from bot.golang.params import ParamSpec, param_specs
from bot.golang.plugin_docs import (
    category_of,
    config_notes,
    decisions_of,
    generation_findings,
    profile_weights,
    readme,
    render_epp_config,
)
from bot.golang.plugin_file import IMPORT_ATTRPREFIX, IMPORT_DL, IMPORT_PLUGIN, IMPORT_SCHED, plugin_file
from bot.golang.plugin_shape import (
    mentions,
    receiver_type,
    request_fields,
    scorer_defaults_of,
    scorers_config_note,
    used_scorers,
)
from bot.golang.receiver_state import stateful_fields
from bot.golang.slo_priority import fill_nil_priority_maps, slo_priority_parts
from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind

MODULE = "github.com/llm-d/llm-d-router"

#: The scorers built on the shared inverted min-max helper.
_MINMAX_SCORERS = {"precise-prefix-cache", "queue-depth", "running-requests", "vllm-dp"}
PREFIX_PRODUCER = "approx-prefix-cache-producer"
INFLIGHT_PRODUCER = "inflight-load-producer"


@dataclass
class Generated:
    files: dict[str, str]  # shipped files, branch-relative (the unit test is added by translate)
    harness_files: dict[str, str]  # the package as the harness builds it: instrumented evolved.go + hook
    line_map: dict[str, dict[int, int]]
    registration_import: str
    registration_line: str
    epp_config: str
    package_dir: str
    package: str
    struct: str
    params: list[ParamSpec]
    snapshot_lines: list[AdapterLine]
    request_lines: list[AdapterLine]
    state_lines: list[AdapterLine]
    decisions: list[tuple[str, str]]
    findings: list[Finding]
    category: str | None
    scorer_defaults: list[tuple[str, float]] | None
    baseline_signals: list[str]
    config_path: str
    weights: dict[str, float]
    main_go: str
    test_path: str
    stateful: bool = False
    state_fields: tuple[str, ...] = ()  # the receiver fields it keeps state in (``receiver_state``), sorted
    state_caps: list = field(
        default_factory=list
    )  # state_caps.StateCap: client-keyed maps the plugin clears past a cap
    uses_clock: bool = True  # the plugin has a clock (``now``): its logic reads the time
    adapter: AdapterParams | None = None  # the parameters of the adapter's functions (what they read)
    uses_scorers: bool = False
    consumes_prefix: bool = False
    #: The producers the EndpointPickerConfig declares (inflight-load-producer, approx-prefix-cache-producer).
    producers: list[str] = field(default_factory=list)
    data_keys: list = field(default_factory=list)  # data_keys.DataKeyRead: produced data the adapter reads
    legacy_bool: bool = False
    draws: bool = False  # the plugin hands the evolved code a new rng every call (drawSeeds in the plugin file)
    snapshot_fields: dict[str, str] = field(default_factory=dict)
    request_fields: dict[str, str] = field(default_factory=dict)
    token_slice: str | None = None
    #: The values a person set at gate 1 (``param NAME: VALUE``), as the EndpointPickerConfig deploys them.
    deployed: dict = field(default_factory=dict)

    @property
    def epp_plugins(self) -> list[str]:
        """The plugins the EndpointPickerConfig runs beside the evolved one: its producers and the profile's
        other scorers (what TranslationSummary.epp_plugins records for stage 3)."""
        return [*self.producers, *(k for k in self.weights if k != "evolved")]

    @property
    def type_const(self) -> str:
        return self.struct + "Type"

    @property
    def factory(self) -> str:
        return self.struct + "Factory"

    @property
    def ctor(self) -> str:
        return "New" + self.struct


def generate(
    src: EvolvedSource,
    an: Analysis,
    d: Dictionary,
    plugin_type: str,
    *,
    options: dict | None = None,
) -> Generated:
    options = options or {}
    kind = an.kind
    host = an.host_info
    assert host is not None
    pkg, struct = package_name(plugin_type), struct_name(plugin_type)
    pdir, stem = package_dir(d, kind, plugin_type), file_stem(plugin_type)
    names = plan_names(src, an, struct)

    uses_scorers = an.uses_scorers and kind == PolicyKind.ROUTING
    snapshot_fields = dict(an.snapshot_fields)
    # A scheduling plugin's score is driven by each endpoint's waiting count, which the evolved code never reads.
    baseline_signals: list[str] = ["QueueDepth"] if kind == PolicyKind.SCHEDULING else []
    queue_signal = "QueueDepth" if an.era == "head" else "EffectiveLoad"
    scorer_defaults = None
    decisions: list[tuple[str, str]] = []
    if uses_scorers:
        scorer_defaults = scorer_defaults_of(an, options)
        # Only what the carried scorers read (baseline.go carries those `scorers` names by default): the default
        # three read no in-flight count, so no adapter line, Consumes() entry or producer for one.
        for nm in scorer_signals(scorer_defaults, an.era):
            if nm not in snapshot_fields:
                snapshot_fields[nm] = "float64" if nm == "KVUtilization" else "int"
                baseline_signals.append(nm)
        decisions.append(
            (
                "baseline score terms",
                "The evolved code reads ws.scorers/ws.weights. The plugin implements the BLIS scorers over its snapshots "
                f"(queue-depth = inverted min-max of {queue_signal}, kv-utilization = 1-KVUtilization, load-balance = "
                "1/(1+EffectiveLoad), the prefix terms from PrefixCacheMatchInfo, ...) and exposes them as the `scorers` "
                f"parameter, defaulting to BLIS's DefaultScorerConfigs of the program's era ({an.era}): "
                + ", ".join(f"{n}:{go_float(w)}" for n, w in scorer_defaults)
                + ". Set it to the routing_policy.yaml the program was evolved with.",
            )
        )
    consumes_prefix = bool(uses_scorers)
    effective_load = (
        (uses_scorers and scorers_read_effective_load(scorer_defaults, an.era))
        or any(u.written == "EffectiveLoad" for u in an.signals)
        or mentions(src, [host.node] + [h.node for h in an.helpers], "EffectiveLoad", ("field_identifier",))
    )
    if effective_load:
        for nm in ("QueueDepth", "BatchSize", "InFlightRequests"):
            snapshot_fields.setdefault(nm, "int")

    class _View:  # the analysis as the adapter sees it: snapshot fields widened by the baseline terms
        signals = an.signals
        request_fields = an.request_fields
        state_fields = an.state_fields
        src, host_info, helpers = an.src, an.host_info, an.helpers  # how the code reads a signal (presence_only)
        thresholds, cond_nodes = an.thresholds, an.cond_nodes  # which conditions never hold in llm-d (inert.py)

    _View.snapshot_fields = snapshot_fields
    snaps, reqs, states = adapter_lines(_View, d)  # type: ignore[arg-type]

    req_fields, token_slice, output_slice, token_elem = request_fields(src, an)
    request_names = {f["name"] for f in req_fields}

    # ---- carried declarations, shipped and instrumented --------------------------------
    receiver = names.receiver
    state_names = tuple(sorted(stateful_fields(src, an)))  # a field the evolved code only reads is configuration
    stateful = bool(state_names)
    caps = state_caps.caps_of(an, state_names)  # bounded after every evolved call (state_caps)
    blocks: list[tuple[str, int | None, int | None]] = []
    watched: list[tuple[str, int | None, int | None]] = []
    if an.receiver_decl is not None:
        c = carry_type(src, an, an.receiver_decl, names, add_params=True)
        blocks.append((c.text, c.source_start_line, c.mapped_lines))
    else:
        blocks.append((receiver_type(an, receiver, uses_scorers), None, None))
    watched.append(blocks[0])
    rng_per_call = an.uses_rng  # BLIS passes the receiver an rng; guarded or not, the plugin seeds one per call
    if an.constructor is not None:
        c = carry_function(src, an, an.constructor, names)
        blocks.append((c.text, c.source_start_line, None))
        watched.append(blocks[-1])
    for spec in an.types:
        c = carry_type(src, an, spec, names, add_params=False)
        blocks.append((c.text, c.source_start_line, None))
        watched.append(blocks[-1])
    notes = dead_branches.arm_comments(an)
    for at, text in order_keys.rank_comments(an).items():  # each value of a rank kept as evolved says why
        notes.setdefault(at, text)  # a line says one thing: an arm llm-d never takes says that first
    arms = [Edit(at, at, text) for at, text in notes.items()]
    for f in [host, *an.helpers]:
        c = carry_function(src, an, f, names, arms)
        blocks.append((c.text, c.source_start_line, None))
        w = carry_function(src, an, f, names, arms, instrument=True)
        watched.append((w.text, w.source_start_line, None))
    for decl in carried_consts(src, an, "\n".join(b[0] for b in blocks)):  # the package constants it still names
        c = carry_const(src, an, decl, names)
        blocks.append((c.text, c.source_start_line, None))
        watched.append(blocks[-1])

    if an.constructor is not None:
        ctor = names.idents.get(an.constructor.name, an.constructor.name)
        construct = (
            f"\tp := {ctor}()" if an.constructor.result.strip().startswith("*") else f"\tv := {ctor}()\n\tp := &v"
        )
    else:
        construct = f"\tp := &{receiver}{{}}"
    construct += fill_nil_priority_maps(an.receiver_fields, "defaultSLOPriorityMap") + made_fields(src, an, names)

    evolved_imports = sorted(
        {f'"{path}"' if name == path.rsplit("/", 1)[-1] else f'{name} "{path}"' for name, path in an.imports.items()}
    )
    if an.uses_rng and an.receiver_decl is None and not any("math/rand" in i for i in evolved_imports):
        evolved_imports.append('"math/rand"')
    carried_text = "\n".join(b[0] for b in blocks)
    evolved_ctx = {
        "pkg": pkg,
        "imports": sorted(evolved_imports),
        "kind": kind.value,
        "snapshot_fields": [{"name": n, "type": t} for n, t in sorted(snapshot_fields.items()) if n != "ID"],
        "prefix_fields": uses_scorers,
        "effective_load": effective_load,
        "token_alias": (token_elem == "tokenID" and (token_slice or output_slice)) or "tokenID" in carried_text,
        "request_fields": req_fields,
        "input_len_method": an.uses_input_len_method,
        "decision_priority": an.decision_priority,
        "uses_new_decision": bool(re.search(r"\bnewRoutingDecision\(", carried_text)),
        "uses_new_decision_scores": bool(re.search(r"\bnewRoutingDecisionWithScores\(", carried_text)),
        "scorer_types": kind == PolicyKind.ROUTING
        and "scorerFunc" in carried_text + ("scorerFunc" if uses_scorers else ""),
        "observer_type": "observerFunc" in carried_text,
        "slo_priority": slo_priority_parts(carried_text),
        "constants": dead_branches.constants(an),  # numbers no parameter: they act only where llm-d never goes
    }
    placeholder = "__PROMOTION_BLOCK_{}__"
    evolved_text, evolved_map = splice(
        render("evolved.go.j2", **evolved_ctx, blocks=[placeholder.format(i) for i in range(len(blocks))]), blocks
    )
    harness_evolved, _ = splice(
        render("evolved.go.j2", **evolved_ctx, blocks=[placeholder.format(i) for i in range(len(watched))]), watched
    )
    harness_evolved = drop_marker_lines(harness_evolved, MARKER_LINE)
    shipped = wrap_statements(drop_file_references(drop_marker_lines(evolved_text, MARKER_LINE)))
    evolved_map, evolved_text = remap_lines(evolved_text, shipped, evolved_map), shipped

    # ---- adapter.go ---------------------------------------------------------------------
    helpers = []
    signatures = {
        "m": "m *fwkdl.Metrics",
        "req": "req *scheduling.InferenceRequest",
        "ep": "ep scheduling.Endpoint",
        "endpoints": "endpoints []scheduling.Endpoint",
        "keys": "keys dataKeys",
    }
    for aline in snaps + reqs + states:
        if aline.helper:
            helpers.append(
                {
                    "helper": aline.helper,
                    "signal": aline.signal,
                    "signature": ", ".join(signatures[p] for p in aline.helper_params),
                    "helper_type": aline.helper_type,
                    "helper_body": aline.helper_body,
                }
            )
    if kind == PolicyKind.SCHEDULING:
        states = []
    # The produced data the adapter reads, each under the producer its parameter names (data_keys.py).
    key_reads = (
        []
        if kind == PolicyKind.SCHEDULING
        else [
            k
            for k in KEYS
            if (k == PREFIX and consumes_prefix) or any(k in reads(a.expr + a.helper_body) for a in snaps)
        ]
    )
    all_lines = snaps + reqs + states
    snaps_read = snaps if kind != PolicyKind.SCHEDULING else []  # a scheduling plugin builds no snapshots
    adapter = adapter_params(snaps_read, reqs, states, consumes_prefix=consumes_prefix, keys=bool(key_reads))
    adapter_imports = {'"fmt"'} if kind != PolicyKind.SCHEDULING else set()
    if kind != PolicyKind.SCHEDULING or adapter.names_scheduling or "scheduling." in str(helpers):
        adapter_imports.add(f'"{IMPORT_SCHED}"')
    if consumes_prefix:
        adapter_imports.add(f'attrprefix "{IMPORT_ATTRPREFIX}"')
    if key_reads:
        adapter_imports.add(f'"{IMPORT_PLUGIN}"')
    for aline in all_lines:
        if aline.entry is not None and aline.entry.llmd is not None and not aline.uses_now:
            adapter_imports |= {f'"{imp}"' for imp in aline.entry.llmd.imports}
    if "m" in adapter.snapshot or any("m *fwkdl.Metrics" in h["signature"] for h in helpers):
        adapter_imports.add(f'fwkdl "{IMPORT_DL}"')
    # The plugin reads the wall clock only where the logic does (a router or an admitter that never reads it gets
    # no clock: no time.Now() on every call for a value nothing uses); a scheduling plugin's pseudo-queue always
    # dates its waiting requests with it.
    uses_clock = kind == PolicyKind.SCHEDULING or any(line.uses_now for line in reqs + states + snaps)
    adapter_text = render(
        "adapter.go.j2",
        pkg=pkg,
        imports=sort_imports(adapter_imports),
        dict_version=d.version,
        kind=kind.value,
        request_lines=reqs,
        state_lines=states,
        snapshot_lines=snaps_read,
        token_slice=token_slice,
        token_elem=token_elem,
        helpers=helpers,
        consumes_prefix=consumes_prefix,
        data_keys=key_reads,
        adapter=adapter,
    )

    # ---- the plugin file (bot.golang.plugin_file) -------------------------------------
    consumes_inflight = INFLIGHT in key_reads
    params = param_specs(an, scorer_defaults, kind == PolicyKind.SCHEDULING) + [param_spec(k) for k in key_reads]
    params += [state_caps.param_spec(c) for c in caps]
    category, category_reason = category_of(an, kind, uses_scorers)
    iface = d.interface(kind)
    plugin_text, legacy_bool = plugin_file(
        src,
        an,
        d,
        plugin_type=plugin_type,
        pkg=pkg,
        struct=struct,
        params=params,
        category=category,
        category_reason=category_reason,
        receiver=receiver,
        construct=construct,
        uses_scorers=uses_scorers,
        scorer_defaults=scorer_defaults,
        consumes_prefix=consumes_prefix,
        consumes_inflight=consumes_inflight,
        key_reads=key_reads,
        stateful=stateful,
        rng_per_call=rng_per_call,
        caps=caps,
        uses_clock=uses_clock,
        adapter=adapter,
        request_names=request_names,
        token_slice=token_slice,
        token_elem=token_elem,
    )

    main_go = f"{pdir}/{stem}.go"
    files: dict[str, str] = {
        main_go: plugin_text,
        f"{pdir}/adapter.go": adapter_text,
        f"{pdir}/evolved.go": evolved_text,
    }
    if uses_scorers:
        files[f"{pdir}/baseline.go"] = render(
            "baseline.go.j2",
            pkg=pkg,
            queue_signal=queue_signal,
            queue_expr="s.QueueDepth" if queue_signal == "QueueDepth" else "s.EffectiveLoad()",
            used=used_scorers(scorer_defaults),
            minmax=bool(set(used_scorers(scorer_defaults)) & _MINMAX_SCORERS),
        )
    line_map: dict[str, dict[int, int]] = {f"{pdir}/evolved.go": evolved_map}
    amap: dict[int, int] = {}
    for i, ln in enumerate(adapter_text.splitlines(), start=1):
        for aline in all_lines:
            if aline.source_lines and ln.strip().startswith(f"{aline.target} = "):
                amap[i] = min(aline.source_lines)
    line_map[f"{pdir}/adapter.go"] = amap
    harness = {p: t for p, t in files.items() if not p.endswith("/evolved.go")}
    harness[f"{pdir}/evolved.go"] = harness_evolved
    formatted = format_go({**files, **{"harness/" + p: t for p, t in harness.items()}})
    for path in list(files):
        if path in line_map:
            line_map[path] = remap_lines(files[path], formatted[path], line_map[path])
        files[path] = formatted[path]
    harness = {p: formatted["harness/" + p] for p in harness}

    registration_import = f'{pkg} "{MODULE}/{pdir}"'
    registration_line = f"fwkplugin.Register({pkg}.{struct}Type, fwkplugin.StabilityAlpha, {pkg}.{struct}Factory)"
    weights = profile_weights(kind, uses_scorers, scorer_defaults)
    blis_values = {p.name: p.json_default for p in params}
    deployed = {k: v for k, v in (options or {}).get("deployed", {}).items() if k in blis_values}  # translate checks
    notes = scorers_config_note(scorer_defaults) | config_notes(an, d, blis_values, deployed)
    # prefix-cache-scorer in the profile reads the producer's match too (it requires it at v0.10.0).
    producers = [PREFIX_PRODUCER] * (consumes_prefix or "prefix-cache-scorer" in weights) + [
        INFLIGHT_PRODUCER
    ] * consumes_inflight
    notes.update({k.param: config_note(k) for k in key_reads if k.param not in deployed})
    notes.update({c.param: state_caps.config_note(c) for c in caps if c.param not in deployed})
    epp_config = render_epp_config(
        plugin_type,
        kind,
        params,
        weights,
        producers=producers,
        notes=notes,
        deployed=deployed,
    )
    config_path = config_path_of(plugin_type)
    files[config_path] = epp_config
    decisions += decisions_of(
        an, d, kind, iface, category, category_reason, uses_scorers, scorer_defaults, weights, stateful, plugin_type
    )
    decisions += state_caps.decisions(caps)
    test_path = f"{pdir}/{stem}_test.go"
    files[f"{pdir}/README.md"] = readme(
        an=an,
        d=d,
        kind=kind,
        iface=iface,
        plugin_type=plugin_type,
        struct=struct,
        main_go=main_go,
        test_path=test_path,
        params=params,
        registration_import=registration_import,
        registration_line=registration_line,
        epp_config=epp_config,
        uses_scorers=uses_scorers,
        lines=snaps + reqs + states,
        baseline_signals=baseline_signals,
        stateful=stateful,
    )
    return Generated(
        files=files,
        deployed=deployed,
        harness_files=harness,
        line_map=line_map,
        registration_import=registration_import,
        registration_line=registration_line,
        epp_config=epp_config,
        package_dir=pdir,
        package=pkg,
        struct=struct,
        params=params,
        snapshot_lines=snaps,
        request_lines=reqs,
        state_lines=states,
        decisions=decisions,
        findings=generation_findings(an, kind, uses_scorers, stateful, src, scorer_defaults)
        + dead_code.findings(an),  # named for the reviewer, still carried
        category=category,
        scorer_defaults=scorer_defaults,
        baseline_signals=baseline_signals,
        config_path=config_path,
        weights=weights,
        main_go=main_go,
        test_path=test_path,
        stateful=stateful,
        state_fields=state_names,
        state_caps=caps,
        uses_clock=uses_clock,
        adapter=adapter,
        uses_scorers=uses_scorers,
        consumes_prefix=consumes_prefix,
        producers=producers,
        data_keys=key_reads,
        legacy_bool=legacy_bool,
        draws=rng_per_call,
        snapshot_fields=snapshot_fields,
        request_fields={f["name"]: f["type"] for f in req_fields},
        token_slice=token_elem if token_slice else None,
    )
