"""What the plugin package says about itself: mapping decisions, the README, the EndpointPickerConfig.

Generation findings (check ids, stable):

- ``translate.queue-order-as-score`` (SUGGESTION): an OrderQueue became a queue-position Scorer; it
  steers placement, it cannot reorder vLLM's queue.
- ``translate.scorer-config-contradiction`` (IMPORTANT): a two-scorer renormalisation with a default
  ``scorers`` of another length.
- ``translate.kv-blocks-unpublished`` (IMPORTANT): admission on KV block counts, which read 0 where the
  engine does not publish them, so the policy would shed everything.
"""

from __future__ import annotations

import re

from bot.golang import admission_docs, param_rows, scheduling_docs
from bot.golang.adapter import plain, request_headers, zero_value
from bot.golang.analysis_types import Analysis
from bot.golang.gonames import comment_lines, go_float, package_dir, render, struct_name
from bot.golang.params import ParamSpec, reads_class, reads_prompt, shown
from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind, Severity

CHECK_QUEUE_ORDER = "translate.queue-order-as-score"
CHECK_SCORER_CONFIG = "translate.scorer-config-contradiction"
CHECK_KV_BLOCKS = "translate.kv-blocks-unpublished"


def category_of(an: Analysis, kind: PolicyKind, uses_scorers: bool) -> tuple[str | None, str]:
    if kind == PolicyKind.ADMISSION:
        return None, ""
    if kind == PolicyKind.SCHEDULING:
        return (
            "Distribution",
            (
                "it prefers endpoints where the request would wait behind fewer requests, except that a request the "
                "evolved order puts ahead of the modelled waiting requests scores 1 on every short enough queue and "
                "gets no load signal from it (Score and the README's Caveats say which requests); queue-scorer in "
                "the profile spreads those."
            ),
        )
    affinity = {"CacheHitRate", "SessionID", "PrefixGroup", "PrefixLength", "ResidentAdapters", "Adapter"}
    names = {s.name for s in an.signals}
    if uses_scorers or names & affinity:
        why = "the evolved logic trades cache/session locality against load"
        if uses_scorers:
            why += " (it rescales BLIS's prefix-affinity + load composite)"
        return "Balance", why + ", which llm-d calls Balance (between Affinity and Distribution)."
    return "Distribution", "the evolved logic scores load only, spreading requests across endpoints."


#: The baseline profile's scorers (llm-d's default): an admission plugin leaves it as it is.
BASELINE_WEIGHTS = {"queue-scorer": 2.0, "kv-cache-utilization-scorer": 2.0, "prefix-cache-scorer": 3.0}

#: Why a scheduling plugin's profile keeps queue-scorer (the EndpointPickerConfig and README say it).
KEEPS_QUEUE_SCORER = (
    "The profile keeps the baseline's queue-scorer beside this scorer, not in its place: a request the evolved "
    "order puts ahead of every modelled waiting request gets position 0 everywhere and scores 1 on every "
    "endpoint, so without queue-scorer it would lose every load signal."
)


def profile_weights(kind: PolicyKind, uses_scorers: bool, scorer_defaults) -> dict[str, float]:
    """Scheduling-profile weights. A routing plugin carries every BLIS term it reads, so it stands alone; a
    scheduling plugin is added to the baseline profile (KEEPS_QUEUE_SCORER says why)."""
    if kind == PolicyKind.ROUTING:
        return {"evolved": 1.0}
    if kind == PolicyKind.SCHEDULING:
        return {"evolved": 2.0, **BASELINE_WEIGHTS}
    return dict(BASELINE_WEIGHTS)


def render_epp_config(
    plugin_type: str,
    kind: PolicyKind,
    params: list[ParamSpec],
    weights: dict[str, float],
    *,
    producers: list[str] | None = None,
    notes: dict[str, str] | None = None,
    deployed: dict[str, float | str] | None = None,
) -> str:
    """The EndpointPickerConfig; ``notes`` are YAML comments put above a parameter's line, ``deployed`` values
    a person chose for this deployment in place of the evolved defaults."""
    import yaml

    values = {p.name: as_default_type(p.json_default, (deployed or {}).get(p.name)) for p in params}
    param_yaml: list[str] = []
    for line in yaml.safe_dump(values, sort_keys=False, default_flow_style=False, allow_unicode=True).splitlines():
        key = line.split(":", 1)[0] if not line.startswith((" ", "-")) else None
        if key and notes and key in notes:
            param_yaml += [f"# {c}" for c in comment_lines(notes[key], indent=1)]
        param_yaml.append(line)
    others = [k for k in weights if k != "evolved"]
    return render(
        "epp_config.yaml.j2",
        plugin_type=plugin_type,
        kind=kind.value,
        param_yaml=param_yaml,
        weights=weights,
        others=others,
        producers=producers or [],
        fmt=go_float,
        profile_note=comment_lines(KEEPS_QUEUE_SCORER, indent=0) if kind == PolicyKind.SCHEDULING else [],
        assumed=comment_lines(assumed_note(params), indent=0) if any(p.assumed for p in params) else [],
        # a parameter whose note says it can change nothing is not offered as a knob with the rest
        inert=any("no effect here" in n for k, n in (notes or {}).items() if k in values),
        admission_note=comment_lines(admission_docs.CONFIG_NOTE, indent=0) if kind == PolicyKind.ADMISSION else [],
        detector=admission_docs.DETECTOR if kind == PolicyKind.ADMISSION else None,
        detector_parameters=admission_docs.DETECTOR_PARAMETERS,
        detector_comments=admission_docs.DETECTOR_COMMENTS,
    )


def assumed_note(params: list[ParamSpec]) -> str:
    """What the config says of a scheduling plugin's parameters: which ones are evolved and which assumed."""
    evolved = [p.name for p in params if not p.assumed]
    assumed = [p.name for p in params if p.assumed]
    head = (
        f"Parameters below: {', '.join(evolved)} {'is' if len(evolved) == 1 else 'are'} evolved (default the evolved value); "
        if evolved
        else "Parameters below: "
    )
    return (
        head + f"{', '.join(assumed)} are the translation's assumptions about the requests already waiting on an "
        "endpoint, which the EPP cannot see (not evolved). Every one can be tuned here without a rebuild."
    )


def config_line(epp_config: str, param: str) -> int | None:
    """1-based line of a parameter in the EndpointPickerConfig (for findings anchored on it)."""
    for i, line in enumerate(epp_config.splitlines(), start=1):
        if line.strip().startswith(f"{param}:"):
            return i
    return None


def decisions_of(
    an, d, kind, iface, category, category_reason, uses_scorers, scorer_defaults, weights, stateful, plugin_type
):
    struct = struct_name(plugin_type)
    out: list[tuple[str, str]] = []
    out.append(
        (
            "extension point",
            f"BLIS {iface.blis_interface}.{iface.blis_method} → llm-d {iface.llmd_extension_point} "
            f"(package {package_dir(d, kind, plugin_type)}). " + plain(iface.why_changed or ""),
        )
    )
    if kind == PolicyKind.ADMISSION:
        out.append(
            (
                "admission, not a filter",
                (
                    "The design doc mapped admission to a Filter; a Filter can only narrow the "
                    "endpoint list and cannot reject a request. llm-d v0.10.0 has requestcontrol.Admitter: a non-nil error "
                    "rejects the request, so BLIS's (false, reason) becomes errcommon.Error{Code: ResourceExhausted, Msg: reason} "
                    "and (true, _) becomes nil, like probabilistic-admitter. " + admission_docs.REJECTION
                ),
            )
        )
        out.append(admission_docs.SHEDDING_DECISION)
    if kind == PolicyKind.SCHEDULING:
        out.append(
            (
                "queue ordering as a score",
                (
                    "BLIS's OrderQueue reorders an instance's wait queue every step; the EPP cannot reorder vLLM's queue. Following "
                    "Map A (Scorer with queue-position weighting), the plugin builds, per endpoint, a BLIS-shaped pseudo-queue of "
                    f"WaitingQueueSize incumbents ({_incumbent_words(an)}), appends the request, runs the evolved OrderQueue on it, and scores "
                    "endpoints by the request's resulting position (min-max, earlier = higher). So the evolved ordering decides "
                    "*where* a request goes (to an endpoint where it would jump the queue), not the order vLLM serves it in. "
                    "The EPP-side alternative, a flow-control ordering policy (fcfs-ordering-policy, edf-ordering-policy), orders "
                    "requests before dispatch but is outside this mirror and changes admission timing; see gap queue-ordering-authority."
                    + scheduling_docs.deadline_policy_note(an.request_fields)
                ),
            )
        )
    if category:
        out.append(("scorer category", f"{category}: {category_reason}"))
    if kind == PolicyKind.ROUTING:
        out.append(
            (
                "argmax and ties",
                (
                    "BLIS takes the argmax of its composite (ties: lowest index, or rng). The plugin "
                    "returns the composite per endpoint, order-preserved into [0,1] (values already in [0,1] are unchanged); "
                    "max-score-picker takes the argmax and shuffles ties. Where the evolved code's own scores do not "
                    "put its choice alone on top, the plugin does (the others 1e-6 below), so an evolved argmax with "
                    "side conditions (an instance skipped at score 0, a least-loaded fallback) is honoured; where the "
                    "evolved code picks at random (its rng, math/rand), its choice keeps a top score tied with the "
                    "others' and the picker draws among them."
                ),
            )
        )
        if uses_scorers:
            out.append(
                (
                    "prefix term carried",
                    (
                        "BLIS prefix-affinity and precise-prefix-cache are router-side indexes of prompt block hashes. The plugin reads "
                        "llm-d's equivalent, the PrefixCacheMatchInfo attribute of approx-prefix-cache-producer (MatchBlocks of "
                        "TotalBlocks per endpoint, a router-side LRU of 16-token block hashes), and computes the BLIS term inside the "
                        "evolved logic, so the evolved penalties and weight decay act on it as in BLIS. Where they differ: llm-d's "
                        "index is per EPP replica and capped by maxPrefixTokensToMatch; BLIS's precise-prefix-cache scores every "
                        "instance 1 when none has a hit (min-max of equal counts), which the plugin keeps; prefix-affinity scores 0 "
                        "everywhere for a prompt shorter than one block. The plugin declares the attribute in Consumes(), so the EPP "
                        "runs the producer, and the profile needs no separate prefix-cache-scorer: no term is delegated."
                    ),
                )
            )
    if stateful:
        out.append(
            (
                "state and concurrency",
                (
                    "The evolved receiver keeps state between requests. llm-d calls plugins concurrently, so "
                    "calls into it are serialised with a mutex per plugin instance; the state is per EPP replica "
                    "(gap concurrency-races). Stateless receivers are built once and shared without a lock."
                ),
            )
        )
    out.append(
        (
            "registration",
            (
                f"plugin.Register({struct}Type, plugin.StabilityAlpha, {struct}Factory) in cmd/epp/runner/runner.go "
                "registerInTreePlugins(); Alpha plugins need the EPP flag --allow-experimental-plugins "
                "(llm-d-benchmark: router.epp.flags.allow-experimental-plugins: true)."
            ),
        )
    )
    return out


def generation_findings(
    an: Analysis,
    kind: PolicyKind,
    uses_scorers: bool,
    stateful: bool,
    src: EvolvedSource,
    scorer_defaults: list[tuple[str, float]] | None = None,
) -> list[Finding]:
    out: list[Finding] = []
    renorm = [f for f in an.findings if f.check == "hazard.two-scorer-renormalization"]
    if uses_scorers and renorm and scorer_defaults is not None and len(scorer_defaults) != 2:
        names = ", ".join(f"{n}:{go_float(w)}" for n, w in scorer_defaults)
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check=CHECK_SCORER_CONFIG,
                source_line=renorm[0].source_line,
                message=(
                    f"the program renormalises its weights as if exactly two scorers were configured (line "
                    f"{renorm[0].source_line}), but the default `scorers` ({names}) has {len(scorer_defaults)}: with it "
                    "the evolved weights no longer sum to 1 and the third term is counted wrongly"
                ),
                fix="set `scorers` to the two-scorer profile the program was evolved with "
                "(request changes with e.g. `scorers: prefix-affinity:1, load-balance:1`)",
            )
        )
    kv_blocks = sorted(
        {u.name for u in an.signals if u.name in ("FreeKVBlocks", "TotalKvCapacityTokens", "KvTokensInUse")}
    )
    if kind == PolicyKind.ADMISSION and kv_blocks:
        first = min(u.line for u in an.signals if u.name in kv_blocks)
        out.append(
            Finding(
                severity=Severity.IMPORTANT,
                check=CHECK_KV_BLOCKS,
                source_line=first,
                message=(
                    f"the admission logic reads {', '.join(kv_blocks)}, which the adapter derives from CacheNumBlocks "
                    "(vllm:cache_config_info); an engine that does not publish it reports 0 blocks, so every endpoint "
                    "looks out of KV cache and a policy that sheds on low free KV would reject everything"
                ),
                fix="check the engines publish cache_config_info, or treat 0 blocks as unknown in the adapter",
            )
        )
    if kind == PolicyKind.SCHEDULING:
        out.append(
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_QUEUE_ORDER,
                source_line=src.to_original_line(an.host_info.node.start_point[0] + 1),
                message=(
                    "OrderQueue becomes a queue-position Scorer: the plugin cannot reorder vLLM's queue, it only sends "
                    "requests where the evolved ordering would serve them sooner, assuming waiting requests look like the "
                    "incumbent* parameters"
                ),
                fix=f"{scheduling_docs.UNPLANNED_CONTROL}; the control is {scheduling_docs.queue_control()}; tune "
                + "/".join(
                    n for n in ("incumbentSLOClass", "incumbentInputTokens", "incumbentSpacingUs") if n in _assumed(an)
                )
                + " to the workload's waiting requests",
            )
        )
    return out


def _assumed(an: Analysis) -> set[str]:
    """The pseudo-queue parameters a scheduling plugin has (a class or prompt length only when the logic reads one)."""
    return {
        "incumbentSpacingUs",
        *(["incumbentSLOClass"] if reads_class(an.request_fields) else []),
        *(["incumbentInputTokens"] if reads_prompt(an.request_fields) else []),
    }


def _incumbent_words(an: Analysis) -> str:
    has = _assumed(an)
    return ", ".join(
        [
            *(["assumed class incumbentSLOClass"] if "incumbentSLOClass" in has else []),
            *(["prompt incumbentInputTokens tokens"] if "incumbentInputTokens" in has else []),
            "arrivals incumbentSpacingUs apart, oldest first",
        ]
    )


def _md(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def readme(
    *,
    an,
    d,
    kind,
    iface,
    plugin_type,
    struct,
    main_go,
    test_path,
    params,
    registration_import,
    registration_line,
    epp_config,
    uses_scorers,
    lines,
    baseline_signals,
    stateful,
) -> str:
    """The generated package's README.md. Keyword-only: sixteen values, several of one type, are too easy
    to pass in the wrong order (``lines``: the adapter lines, snapshot then request then state signals)."""
    what = {
        PolicyKind.ROUTING: (
            "It scores endpoints the way the evolved `Route` scored instances: the adapter builds BLIS "
            "snapshots of the candidate endpoints, the evolved code computes its composite per instance, and "
            "the scores are mapped back to endpoints (order-preserved into [0, 1]) for `max-score-picker`."
        ),
        PolicyKind.ADMISSION: (
            "It admits or rejects each request the way the evolved `Admit` did: a rejection returns "
            "`errcommon.Error{Code: ResourceExhausted}` with the evolved reason; admission returns nil. "
            + admission_docs.REJECTION
        ),
        PolicyKind.SCHEDULING: (
            "It turns the evolved queue ordering into routing: for each endpoint it models the waiting "
            "requests as a BLIS queue, runs the evolved `OrderQueue` with the request appended, and scores "
            "endpoints by the position the request would get (earlier is better). It does not reorder "
            "vLLM's queue."
        ),
    }[kind]
    params_note, rows = param_rows.table(params)
    ps = [{**r, "doc_text": _md(r["doc_text"])} for r in rows]
    sigs = []
    for aline in lines:
        e = aline.entry
        src_text = (
            _source_text(e)
            if e is not None and e.llmd is not None
            else ("no llm-d source: zero value" if e else "not in the dictionary")
        )
        sigs.append(
            {
                "name": aline.signal,
                "source": _md(src_text),
                "fidelity": (
                    f"none in llm-d: only read where {aline.never_acts} (no llm-d source) must exceed a threshold"
                    if aline.never_acts
                    else e.fidelity
                    if e
                    else "none"
                ),
                "gap": _md(plain(e.freshness.gap)) if e is not None and e.freshness.gap else "—",
            }
        )
    reads = [s for s in [*an.signal_names, *baseline_signals] if d.signal(s)]
    gaps = d.touched_gaps(kind, reads)
    if kind == PolicyKind.SCHEDULING:  # the waiting count drives the score; the caveats are about this code
        sigs.insert(0, {k: _md(v) for k, v in scheduling_docs.waiting_signal(d).items()})
    caveats = [_md(gap_concern(d, g, kind, stateful)) for g in gaps]
    caveats += header_caveats(lines)
    if kind == PolicyKind.SCHEDULING:
        caveats += [*scheduling_docs.caveats(an), KEEPS_QUEUE_SCORER]
    if uses_scorers:
        caveats.append(
            "The BLIS prefix terms read `PrefixCacheMatchInfo` (approx-prefix-cache-producer, or the producer "
            "`prefixMatchInfoProducerName` names), declared in `Consumes()`."
        )
    if kind == PolicyKind.ADMISSION:
        caveats += [_md(admission_docs.CONFIG_NOTE.removeprefix("Admission: "))]
        alternative = admission_docs.upstream_alternative(an.signal_names, {p.name: p.json_default for p in params})
        caveats += [_md(alternative)] if alternative else []
    caveats.append(
        _md(admission_docs.UNSCRAPED)
        if kind == PolicyKind.ADMISSION
        else "An endpoint the EPP has not scraped yet (no metrics, or never updated: a pod that just started) "
        "scores 0, so its empty gauges never make it look idle."
    )
    return render(
        "readme.md.j2",
        plugin_type=plugin_type,
        router_version=d.pins.get("llm_d_router", "v0.10.0"),
        extension_point=iface.llmd_extension_point,
        host=an.host,
        type_const=struct + "Type",
        factory=struct + "Factory",
        kind=kind.value,
        what=what,
        main_file=main_go.rsplit("/", 1)[-1],
        test_file=test_path.rsplit("/", 1)[-1],
        baseline=uses_scorers,
        baseline_scorers=next((p.json_default for p in params if p.name == "scorers"), []),
        registration_import=registration_import,
        registration_line=registration_line,
        epp_config=epp_config,
        params=ps,
        params_note=_md(params_note),
        signals=sigs,
        caveats=caveats,
    )


def header_caveats(lines) -> list[str]:
    """One caveat per signal the adapter reads from a request header: the term it feeds acts only where clients
    send that header, which a deployment (and a benchmark workload) must arrange."""
    out = []
    for aline in lines:
        e = aline.entry
        if aline.status != "mapped" or e is None or e.llmd is None:
            continue
        names = request_headers(e.llmd.expr)
        if names and aline.never_acts:
            out.append(
                f"`{aline.signal}` is read from the request header `{names[0]}`, but it changes no decision in llm-d: "
                f"every condition that reads it also needs {aline.never_acts}, which llm-d cannot provide."
            )
            continue
        if names:
            alias = "".join(f" (failing that, `{n}`)" for n in names[1:])
            out.append(
                f"`{aline.signal}` is read from the request header `{names[0]}`{alias}: a request without it, or with "
                f"a value the adapter cannot read, gets `{zero_value(e.go_type)}`, what BLIS holds for a request "
                "without one, so that term acts only where clients send the header."
            )
    return out


def as_default_type(default: object, chosen: float | str | None) -> object:
    """The chosen value in the default's JSON type (an integer parameter stays an integer; a string, a string)."""
    if chosen is None or isinstance(chosen, str):
        return chosen if chosen is not None else default
    return round(chosen) if isinstance(default, int) and not isinstance(default, bool) else chosen


def _source_text(entry) -> str:
    """Where llm-d's value comes from, in words (the expression itself only when it is short)."""
    expr = " ".join(entry.llmd.expr.split())
    words = plain(entry.llmd.source).split(". ")[0].rstrip(".")
    return f"`{expr}`: {words}" if len(expr) <= 40 and "{" not in expr else words


#: What a receiver that keeps state adds to the concurrency-races gap (a stateless one has nothing to race on).
KEEPS_STATE = (
    "The evolved policy keeps state: calls into it are serialised per plugin instance, and the state is per EPP "
    "replica, so stateful replicas race (each decides on its own history)."
)


def gap_concern(d, gap_id: str, kind: PolicyKind, stateful: bool) -> str:
    """A Map C gap's concern said of this plugin, in plain text: the README's caveats and the translation report's
    Map C section both read it, so the two never disagree on what applies. Which gaps apply is the dictionary's
    ``touched_gaps`` (kind and signals read); the wording is per kind, and only a receiver that keeps state is told
    that replicas race."""
    text = _for_kind(plain(d.gap(gap_id).concern_for(kind)), kind)
    return f"{text} {KEEPS_STATE}" if stateful and gap_id == "concurrency-races" else text


def _for_kind(text: str, kind: PolicyKind) -> str:
    """A dictionary sentence written for every plugin, said of this one: a scorer has no Admit, an admitter
    no Score."""
    if kind == PolicyKind.ADMISSION:
        return text.replace("Score and Admit run", "Admit runs")
    return text.replace("Score and Admit run", "Score runs")


def config_notes(an: Analysis, d, blis_values: dict, deployed: dict) -> dict[str, str]:
    """The comment above a parameter's line in the EndpointPickerConfig: a simulator-scale threshold (and the
    parameters that must move with it), a setting that cannot act in llm-d, a value a person chose at gate 1."""
    notes = {
        th.param: (
            f"{th.param}: simulator scale, calibrated on a few simulated instances; re-calibrate to this "
            f"deployment's {_scale_of(th)} before relying on it{_moves_with(th, an)}."
        )
        for th in sim_scale_thresholds(an)
    }
    evolved = {th.param for th in an.thresholds if th.param}
    for name, value in deployed.items():
        if _same_value(value, blis_values[name]):  # set back: no re-calibration to speak of, the plain note stays
            back = f"set back at gate 1 to the {'evolved' if name in evolved else 'default'} value"
            notes[name] = f"{notes[name].rstrip('.')}; {back}." if name in notes else f"{name}: {back}, {shown(value)}."
        elif name in evolved:
            notes[name] = (
                f"{name}: re-calibrated at gate 1 to {shown(value)} for this deployment (BLIS: {shown(blis_values[name])})."
            )
        else:  # the plugin's own setting (a scheduling plugin's pseudo-queue), not an evolved number
            notes[name] = (
                f"{name}: set at gate 1 to {shown(value)} for this deployment (default: {shown(blis_values[name])})."
            )
    return notes


def _same_value(value, default) -> bool:
    """A value set at gate 1 that is the plugin's default (4 and 4.0 alike): a person set it back."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, default))
    return float(value) == float(default) if numbers else value == default


def _scale_of(th) -> str:
    """What a simulator-scale parameter must be re-calibrated to: a budget of prompt tokens (a token bucket's
    capacity or rate) to the stack's token throughput, a threshold to the load a pod carries."""
    return "prompt-token throughput" if th.assigned and "InputTokens" in th.signals else "per-pod load"


def sim_scale_thresholds(an: Analysis) -> list:
    """The parameters the analysis found at simulator scale (an IMPORTANT hazard.sim-scale-threshold of their own:
    a prompt-length threshold on the line of a load threshold is not one)."""
    return [
        th
        for th in an.thresholds
        if th.param
        and any(
            f.check == "hazard.sim-scale-threshold" and f.param == th.param and f.severity.value == "IMPORTANT"
            for f in an.findings
        )
    ]


def _moves_with(th, an: Analysis) -> str:
    """The parameters computed on the same variable as ``th`` (a taper's coefficient beside its threshold):
    moving one without the others can turn a factor negative and reverse the ranking."""
    others = same_step(an, [th.param])
    if not others:
        return ""
    verb = "acts" if len(others) == 1 else "act"
    return f"; {', '.join(others)} {verb} on the same value and must move with it"


def same_step(an: Analysis, params) -> list[str]:
    """The other parameters computed on a value one of ``params`` acts on (a taper's coefficient beside its
    threshold), in the program's order: the ones a re-calibration of ``params`` must move too."""
    chosen = set(params)
    names = set().union(*(_variables(th.subject) for th in an.thresholds if th.param in chosen and _on_value(th)))
    return [
        o.param
        for o in an.thresholds
        if o.param and o.param not in chosen and _on_value(o) and names & _variables(o.subject)
    ]


def _on_value(th) -> bool:
    """The parameter acts on the value its subject names: a bonus or penalty added to a score under a condition on
    it (a session bonus while the queue is short) is not on the queue's scale and need not move with its threshold."""
    return th.role not in ("bonus", "penalty")


def _variables(expr: str) -> set[str]:
    """The values an expression reads: identifiers that are neither qualifiers (``snap.``) nor called."""
    return set(re.findall(r"\b[A-Za-z_]\w*\b(?!\s*[.(])", expr))


def sentence(text: str) -> str:
    """``text`` as a sentence of its own: capitalised, ending in a full stop."""
    t = text.strip()
    return (t[:1].upper() + t[1:]).rstrip(".") + "." if t else t
