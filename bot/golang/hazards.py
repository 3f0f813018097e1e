"""Where simulation and reality part ways: the hazard checks run on every evolved policy.

Each hazard is a ``Finding`` with a severity, the evolved line it comes from
(``source_line``), an explanation a reviewer can act on, and a fix. The check
ids below are a contract with ``examples/corpus/manifest.yaml`` and with the
gate-1 checklist: keep them stable.

Check ids and severities:

- ``hazard.inv9-output-tokens`` (CRITICAL): the logic reads ``Request.OutputTokens``
  (or another oracle field). BLIS invariant INV-9: output tokens are the
  simulator's pre-generated answer; no router can know them. Never translatable.
- ``hazard.unmapped-signal``: a signal with no llm-d source. CRITICAL when the
  dictionary has no entry at all (nothing can justify a fallback); IMPORTANT when
  the dictionary is explicit that it is untranslatable and proposes a fallback
  (the generated adapter applies the fallback value and says so on the line).
- ``hazard.positional-scorer-index`` (IMPORTANT): ``ws.scorers[0]``,
  ``ws.weights[1]``, or a per-scorer slice indexed by a constant: the meaning
  depends on the order of scorers in the BLIS policy YAML.
- ``hazard.two-scorer-renormalization`` (IMPORTANT): ``1 - w0`` style
  renormalisation that is only correct with exactly two scorers.
- ``hazard.removed-identifier``: names from older BLIS copies. ``PendingRequests``
  (renamed ``InFlightRequests``, translated automatically: SUGGESTION), ``[]int``
  token slices (``[]TokenID`` since 2026-06-29: SUGGESTION),
  ``RoutingDecision.Priority`` (removed in ce85515e; llm-d has no per-decision
  priority hint, so the write is dropped: IMPORTANT), the pre-composable
  ``ws.cacheWeight``/``ws.loadWeight`` (IMPORTANT: their values are not in the
  program), ``req.Priority`` (convention flipped in #1238: SUGGESTION).
- ``hazard.counter-meaning-changed`` (IMPORTANT, ``bot.golang.counter_era``): ``PendingRequests`` was renamed
  *and redefined* in 9a603bca (routed and not yet queued, then routed until completed); the numbers a pre-rename
  copy compares with it were tuned on the old count, and the plugin reads the new one.
- ``hazard.dead-slo-branch`` (IMPORTANT): comparisons of the SLO class with the
  v1 names ``realtime``/``interactive``, which BLIS v2 workloads auto-upgrade, so
  the branch never runs in BLIS and never runs in llm-d either.
- ``hazard.unreachable-slo-branch`` (IMPORTANT): comparisons of the SLO class with ``batch``,
  ``background`` or the empty class, which the llm-d mapping never produces (it reads critical, standard
  or sheddable from the request's priority), so the condition is constant in llm-d. SUGGESTION when the
  same clause also accepts a class the mapping produces (``case "standard", "":``, or ``||``): the branch
  still runs and only that alternative is dead. IMPORTANT too at the ``default:`` of a switch on the class whose
  cases name critical, standard and sheddable: only a class llm-d never yields reaches it (not in a scheduler,
  whose modelled waiting requests may carry such a class through ``incumbentSLOClass``); so at the last ``else``
  of an if/else chain on the class naming all three, or the code after one whose every branch returns.
- ``hazard.unbounded-client-keyed-state`` (IMPORTANT): the evolved receiver writes a map entry keyed by
  a client-controlled request value (TenantID = the fairness-ID header, SessionID, a header-derived
  SLO target), itself or through a plain function it hands the map to (``record(a.counts, t)``,
  ``receiver_views.passed_writes``, reported at that call), and nothing deletes, resets or caps the map (a cap is a comparison of its length that guards the
  write, ``lifetime_count.bounded``: one that only rejects while the write still happens on every request is none). In BLIS the keys were bounded by
  the simulated workload; in the EPP any client grows the map, and the EPP's memory, without limit. The
  generated plugin caps such a map (``bot.golang.state_caps``), and the translation rewrites the finding to say
  where and what a clear does, as a SUGGESTION (``an.client_keyed_maps`` names the maps).
- ``hazard.lifetime-count`` (IMPORTANT, ``bot.golang.lifetime_count``): a decision reads ``len()`` of such a map,
  or a receiver counter the code only increments: one BLIS run's clients there, every client since the EPP started
  in llm-d.
- ``hazard.client-steerable-draw`` (IMPORTANT): a value the client controls (the request ID, which llm-d takes
  from x-request-id as sent; the session; the fairness ID; a header) is passed to a function that hashes it
  (one whose body calls a ``hash/*`` or ``crypto/*`` package, or such a package directly). In BLIS the hash
  was a replayable random draw; in the EPP a client that reuses or chooses the value picks its own draw.
  See ``bot.golang.client_draw``.
- ``hazard.sim-scale-threshold``: a threshold calibrated to the simulator's scale.
  Load thresholds (QueueDepth, BatchSize, InFlightRequests, EffectiveLoad or
  per-instance means of them, literal >= 1) were tuned on 4 simulated instances
  with loads of a few requests each: IMPORTANT. KV-utilisation thresholds on a
  0-1 fraction: SUGGESTION, because llm-d's ``KVCacheUsagePercent`` is also a 0-1
  fraction at v0.10.0 (no rescaling), but the value behind it is scraped, not
  simulated. Absolute KV capacity thresholds (blocks, tokens): SUGGESTION, they
  depend on the GPU.
"""

from __future__ import annotations

from bot.dictionary import Dictionary
from bot.golang import client_draw, counter_era, lifetime_count, receiver_views
from bot.golang.analysis_types import KV_ABSOLUTE as _KV_ABSOLUTE
from bot.golang.analysis_types import KV_FRACTION as _KV_FRACTION
from bot.golang.analysis_types import LOAD_SIGNALS as _LOAD_SIGNALS
from bot.golang.analysis_types import Analysis, Threshold
from bot.golang.gotree import text_of
from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind, Severity

INV9 = "hazard.inv9-output-tokens"
UNMAPPED = "hazard.unmapped-signal"
POSITIONAL = "hazard.positional-scorer-index"
RENORM = "hazard.two-scorer-renormalization"
REMOVED = "hazard.removed-identifier"
DEAD_SLO = "hazard.dead-slo-branch"
UNREACHABLE_SLO = "hazard.unreachable-slo-branch"
SIM_SCALE = "hazard.sim-scale-threshold"
UNBOUNDED_STATE = "hazard.unbounded-client-keyed-state"
CLIENT_DRAW = client_draw.CLIENT_DRAW
COUNTER_MEANING = counter_era.CHECK
LIFETIME_COUNT = lifetime_count.CHECK

ALL_CHECKS = (
    INV9,
    UNMAPPED,
    POSITIONAL,
    RENORM,
    REMOVED,
    DEAD_SLO,
    UNREACHABLE_SLO,
    SIM_SCALE,
    UNBOUNDED_STATE,
    CLIENT_DRAW,
    COUNTER_MEANING,
    LIFETIME_COUNT,
)


def check(src: EvolvedSource, an: Analysis, d: Dictionary, nodes: list) -> None:
    """Turn the walker's raw observations and the thresholds into findings on ``an.findings``."""
    out: list[Finding] = []
    seen_unmapped: dict[str, int] = {}
    keyed: dict[str, list[tuple[int, str, list[str]]]] = {}  # receiver map -> its signal-keyed writes
    out.extend(client_draw.findings(src, an, d, [(n, i) for k, n, i in nodes if k == "tainted-call"]))
    for kind, node, info in [*nodes, *receiver_views.passed_writes(src, an, nodes)]:  # record(a.counts, t) too
        line = src.to_original_line(node.start_point[0] + 1)
        snippet = text_of(src, node).splitlines()[0][:80] if text_of(src, node) else ""
        if kind == "oracle":
            out.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check=INV9,
                    source_line=line,
                    message=(
                        f"`{snippet}` reads Request.{info['name']}: BLIS invariant INV-9 forbids admission and routing "
                        "from reading output tokens (oracle knowledge — the simulator's pre-generated answer); no llm-d "
                        "router can know them before generation, so the policy's benefit may come from the oracle"
                    ),
                    fix="remove the read and re-evolve; if a bound on output length is needed, use MaxOutputLen (the client's max_tokens)",
                )
            )
        elif kind == "unmapped":
            name = info["name"]
            if name in seen_unmapped:
                continue
            seen_unmapped[name] = line
            out.append(
                Finding(
                    severity=Severity.CRITICAL,
                    check=UNMAPPED,
                    source_line=line,
                    message=(
                        f"`{snippet}` reads {info['scope']} field {name}, which has no entry in the translation dictionary "
                        "(it exists in no known BLIS version), so there is no llm-d source and no justified fallback; the "
                        "generated adapter sets it to its zero value only so the package compiles"
                    ),
                    fix=f"add {name} to dictionary/map-b-signals.yaml with its llm-d source or a justified fallback, or remove it from the evolved logic",
                )
            )
        elif kind == "positional":
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=POSITIONAL,
                    source_line=line,
                    message=(
                        f"`{snippet}` picks a scorer (or its weight or score map) by position {info.get('index', '')}: "
                        "the meaning depends on the order of scorers in the BLIS policy YAML the program was evolved with; "
                        "the plugin keeps the order of its `scorers` parameter, so a reordered config silently changes the logic"
                    ),
                    fix="look the scorer up by name (carry names next to scorers) or keep `scorers` in exactly the evolved order and say so in the config",
                )
            )
        elif kind == "renorm":
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=RENORM,
                    source_line=line,
                    message=(
                        f"`{snippet}` renormalises weights as 1 - w: correct only when exactly two scorers are configured; "
                        "with a third scorer the weights no longer sum to 1 and the third term is double-counted or lost"
                    ),
                    fix="renormalise by dividing every weight by their sum, or pin `scorers` to the two evolved scorers",
                )
            )
        elif kind == "renamed":
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=REMOVED,
                    source_line=line,
                    message=(
                        f"`{snippet}` uses {info['name']}, the pre-rename name of {info['canonical']} ({info['removed']}); "
                        f"translated as {info['canonical']}"
                    ),
                    fix=f"rename to {info['canonical']} when porting the program to current BLIS"
                    + (counter_era.RENAME_FIX if info["name"] == counter_era.OLD else ""),
                )
            )
        elif kind == "decision-priority":
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=REMOVED,
                    source_line=line,
                    message=(
                        f"`{snippet}` sets RoutingDecision.Priority, a one-shot priority hint removed from BLIS in ce85515e; "
                        "an llm-d Scorer cannot set request priority, so the generated plugin computes it and drops it — any "
                        "benefit that came from the hint will not transfer"
                    ),
                    fix="drop the hint, or express it as an InferenceObjective priority in the deployment (outside the plugin)",
                )
            )
        elif kind in ("int-tokens", "int-tokens-decl"):
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=REMOVED,
                    source_line=line,
                    message=(
                        f"`{snippet}` treats token slices as []int; BLIS switched to []TokenID (int32) on 2026-06-29. The "
                        "generated code keeps []int locally; only the prompt length transfers to llm-d, token ids do not"
                    ),
                    fix="use []TokenID (or only len()) when porting the program to current BLIS",
                )
            )
        elif kind == "early-weight":
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=REMOVED,
                    source_line=line,
                    message=(
                        f"`{snippet}` reads ws.{info['name']}, a field of the pre-composable WeightedScoring (flags "
                        "--routing-cache-weight/--routing-load-weight, gone from BLIS); its evolved value is not in the program, "
                        "so the plugin exposes it as a parameter with a placeholder default of 0.5"
                    ),
                    fix=f"set the `{info['name']}` parameter to the value used in the evolution run",
                )
            )
        elif kind == "slo-unreachable" and info.get("beside"):
            name = info["name"] or "the empty class"
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=UNREACHABLE_SLO,
                    source_line=line,
                    message=(
                        f'the SLO class "{info["name"]}" shares its clause with "{info["beside"]}"'
                        + (f" (`{snippet}`)" if snippet != f'"{info["name"]}"' else "")
                        + f": the plugin reads the class from the request's llm-d priority, which never yields {name}, "
                        f"so only that alternative is dead in llm-d; the branch still runs for {info['beside']} requests"
                    ),
                    fix=f"nothing to do unless {name} requests were meant to be treated apart from {info['beside']} ones "
                    "(then map the class explicitly, e.g. a priority band per class in the InferenceObjectives)",
                )
            )
        elif kind == "slo-unreachable":
            name = info["name"] or "the empty class"
            queued = an.kind == PolicyKind.SCHEDULING
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=UNREACHABLE_SLO,
                    source_line=line,
                    message=(
                        f"`{snippet}` compares the SLO class with {info['name']!r}: the plugin reads the class from "
                        "the request's llm-d priority, which only yields critical, standard or sheddable, so "
                        + (
                            f"the request being placed is never {name}: for it this condition is constant in llm-d"
                            if queued
                            else f"{name} never arrives and this condition is constant in llm-d"
                        )
                        + f" (the branch BLIS took for {name} requests never runs, or always runs)"
                        + (_incumbent_half(info["name"]) if queued else "")
                    ),
                    fix="map the class explicitly (e.g. a priority band per class in the InferenceObjectives) or "
                    "compare with the class the mapping produces (sheddable, standard)"
                    + (
                        f"; `param incumbentSLOClass` makes only the modelled waiting requests {name}, never the "
                        "request being placed"
                        if queued
                        else ""
                    ),
                )
            )
        elif kind in ("slo-default-unreachable", "slo-fallback-unreachable") and an.kind != PolicyKind.SCHEDULING:
            # A scheduler's modelled waiting requests take incumbentSLOClass, which may be such a class: reachable.
            left = " or ".join(f"`{c}`" if c else "the empty class" for c in info["left"]) or "a class it never names"
            where, arm, it = {
                None: (f"the `default:` of `switch {info['subject']}`", "case", "the default"),
                "else": (f"the last `else` of the if/else chain on `{info['subject']}`", "branch", "the else"),
                "after": (
                    f"`{snippet}`, after the if/else chain on `{info['subject']}` whose every branch returns,",
                    "branch",
                    "that code",
                ),
            }[info.get("form")]
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=UNREACHABLE_SLO,
                    source_line=line,
                    message=(
                        f"{where} is reached only by a class no {arm} names "
                        f"(in BLIS: {left}), but the plugin reads the class from the request's llm-d priority, which "
                        f"only yields critical, standard or sheddable, and each has its own {arm}: "
                        f"{it} never runs in llm-d, and what it sets or returns never acts (such requests arrive as one "
                        f"of the three and take its {arm} instead)"
                    ),
                    fix=f"nothing to do if {it} only caught unclassified requests in BLIS; if they should keep "
                    "its value in llm-d, map them explicitly (e.g. a priority band of their own in the "
                    "InferenceObjectives) and compare with the class the mapping produces",
                )
            )
        elif kind == "keyed-write":
            keyed.setdefault(info["field"], []).append((line, snippet, info["signals"], (info["within"], info["key"])))
        elif kind == "dead-slo":
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=DEAD_SLO,
                    source_line=line,
                    message=(
                        f"`{snippet}` compares the SLO class with {info['name']!r}, a v1 name that BLIS v2 workloads auto-upgrade "
                        f"({'realtime→critical' if info['name'] == 'realtime' else 'interactive→standard'}); the branch never ran "
                        "during evolution and llm-d priorities never produce that name, so it is dead code in both"
                    ),
                    fix="compare with "
                    + ('"critical"' if info["name"] == "realtime" else '"standard"')
                    + " if the branch matters, else delete it",
                )
            )
    for field, writes in keyed.items():
        out.extend(_unbounded_state(src, an, d, field, writes))
    # Untranslatable-but-known signals (dictionary says llmd: null with a fallback).
    done: set[str] = set()
    for use in an.signals:
        if not use.known or use.name in done:
            continue
        entry = d.signal(use.name)
        if entry is None or entry.llmd is not None or entry.oracle:
            continue
        done.add(use.name)
        lines = sorted({u.line for u in an.signals if u.name == use.name})
        rest = lines[1:]
        more = f" (also line{'s' if len(rest) > 1 else ''} {', '.join(map(str, rest))})" if rest else ""
        out.append(
            Finding(
                severity=Severity.IMPORTANT if entry.fallback else Severity.CRITICAL,
                check=UNMAPPED,
                source_line=lines[0],
                message=f"{use.name} has no llm-d source{more}. {entry.fallback}",
                fix="accept the fallback (the adapter line says what it does) or re-evolve without this signal; Track B covers the gap",
            )
        )
    # req.Priority convention flip
    for use in an.signals:
        if use.name == "Priority" and use.scope == "request":
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=REMOVED,
                    source_line=use.line,
                    message=(
                        "reads Request.Priority, whose convention flipped in BLIS #1238 (before: higher = more urgent, "
                        "recomputed every step; after: lower = more urgent, set once); the adapter follows HEAD "
                        "(negated llm-d priority) — check the era of this copy"
                    ),
                    fix="if this program predates ce85515e, negate the Priority adapter line",
                )
            )
            break
    for th in an.thresholds:
        out.extend(_sim_scale(th, d))
    an.findings.extend(_dedupe(out))


def _unbounded_state(src: EvolvedSource, an: Analysis, d: Dictionary, field: str, writes: list) -> list:
    """A receiver map grown by a client-controlled key with no eviction: unbounded memory in the EPP.

    One finding per map, at its first client-keyed write (the line that grows it), the others named."""
    if not an.receiver_fields.get(field, "").strip().startswith("map[") or lifetime_count.bounded(src, an, field):
        return []
    grows = []
    for line, snippet, signals, key in sorted(writes):
        client = [e for e in (d.signal(n, "request") for n in signals) if e is not None and client_draw.client_keyed(e)]
        if client:
            grows.append((line, snippet, client, key))
    if not grows:
        return []
    line, snippet, client, _ = grows[0]
    an.client_keyed_maps[field] = line  # the plugin caps it (state_caps) and the translation says so here
    an.client_map_keys[field] = sorted({g[3] for g in grows})  # (function, key text): state_caps.request_keys
    names = ", ".join(f"{e.name} (llm-d: {e.llmd.source})" for e in client)
    also = sorted({g[0] for g in grows[1:]} - {line})
    more = f" (also written on line{'s' if len(also) > 1 else ''} {', '.join(map(str, also))})" if also else ""
    return [
        Finding(
            severity=Severity.IMPORTANT,
            check=UNBOUNDED_STATE,
            source_line=line,
            message=(
                f"`{snippet}` adds an entry to the receiver map `{field}` for every distinct {names}{more}, and no carried "
                "code deletes, resets or caps it: in BLIS the keys were bounded by the simulated workload, but in the "
                "EPP the key is whatever the client sends, so the plugin (one instance for the life of the EPP) would "
                "grow the map, and the EPP's memory, without limit, one entry per new value"
            ),
            fix=(
                f"bound `{field}` and evict (cap the entries and drop the oldest or least recently seen, or reset it "
                "with the rest of the windowed state), or key it by something bounded (the SLO class, or a hash of "
                "the value modulo a fixed number of buckets); then re-run the evolution or the fidelity check"
            ),
        )
    ]


#: A load threshold at or above this many requests per endpoint is already at real-pod scale: BLIS's
#: simulated instances carried a few requests each, vLLM pods run tens to hundreds (max-num-seqs).
POD_SCALE_LOAD = 16


def _sim_scale(th: Threshold, d: Dictionary) -> list[Finding]:
    out: list[Finding] = []
    if th.assigned and th.param and "InputTokens" in th.signals:
        return [_token_budget(th)]
    # A field the evolved code sets (assigned_fields) is on the scale of what it meets, as a threshold is.
    comparisons = [o for o in th.occurrences if o.role == "threshold" or th.assigned]
    if not comparisons:
        return out
    sig = set(th.signals)
    param = (
        f"parameter `{th.param}`"
        if th.param
        else f"the literal (kept in code: {th.reason})"
        if th.reason
        else "the literal"
    )
    for occ in comparisons:
        if sig and sig <= _KV_FRACTION:
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=SIM_SCALE,
                    source_line=occ.line,
                    param=th.param,
                    message=(
                        f"KV threshold {th.literal} on `{th.subject}` assumes a 0–1 utilisation fraction: llm-d's "
                        "KVCacheUsagePercent is also a 0–1 fraction at v0.10.0, so no rescaling is needed; it is a scraped "
                        "gauge, so crossings happen later than in BLIS"
                    ),
                    fix=f"keep the value; tune {param} against the metric-staleness Track B result if the branch misfires",
                )
            )
        elif sig and sig <= (_LOAD_SIGNALS | {"EffectiveLoad"}) and abs(th.value) >= POD_SCALE_LOAD:
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=SIM_SCALE,
                    source_line=occ.line,
                    param=th.param,
                    message=(
                        f"load threshold {th.literal} on `{th.subject}` is already in the range real vLLM pods run "
                        "(tens to hundreds of concurrent requests, max-num-seqs); check it against this deployment's "
                        "per-pod load before relying on it"
                    ),
                    fix=f"compare {param} with a baseline run's waiting/running gauges per pod",
                )
            )
        elif sig and sig <= (_LOAD_SIGNALS | {"EffectiveLoad"}) and abs(th.value) >= 1:
            out.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=SIM_SCALE,
                    source_line=occ.line,
                    param=th.param,
                    message=(
                        f"load threshold {th.literal} on `{th.subject}` was calibrated in BLIS on 4 simulated instances "
                        "carrying a few requests each; real vLLM pods run tens to hundreds of concurrent requests "
                        "(max-num-seqs), so the branch fires far more (or less) often than it did in simulation; the "
                        "parameter is live in the EndpointPickerConfig at the simulator's value"
                    ),
                    fix=f"re-calibrate {param} to the deployment's per-pod load (e.g. from a baseline run's waiting/running gauges)",
                )
            )
        elif sig and sig <= _KV_ABSOLUTE:
            out.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=SIM_SCALE,
                    source_line=occ.line,
                    param=th.param,
                    message=(
                        f"absolute KV threshold {th.literal} on `{th.subject}` depends on the simulated GPU's KV capacity; "
                        "real pods differ by GPU memory and --gpu-memory-utilization (pod-heterogeneity gap)"
                    ),
                    fix=f"express it relative to TotalKvCapacityTokens or tune {param} per pool",
                )
            )
    return out


def _token_budget(th: Threshold) -> Finding:
    """A number the evolved code sets on its receiver, or in a local it sets once (local_scales.py), and charges
    prompt tokens against (a token bucket's capacity or refill rate): it sizes admission to the simulated
    cluster's throughput, not a real stack's."""
    return Finding(
        severity=Severity.IMPORTANT,
        check=SIM_SCALE,
        source_line=th.line,
        param=th.param,
        message=(
            f"{getattr(th, 'receiver_field', None) or th.local} = {th.literal} sizes a budget that requests' prompt "
            f"tokens are charged against (`{th.subject}`): it was calibrated to the prompt tokens BLIS's few simulated "
            "instances served, while real vLLM pods serve far more (or fewer) tokens per second, so the plugin admits far less (or more) "
            "than it did in simulation; the parameter is live in the EndpointPickerConfig at the simulator's value"
        ),
        fix=(
            f"re-calibrate parameter `{th.param}` to the deployment's prompt-token throughput (e.g. from a baseline "
            "run's prompt tokens per second), with the other numbers of the same budget"
        ),
    )


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out: list[Finding] = []
    for f in findings:
        k = (f.check, f.source_line, f.message)
        if k in seen:
            continue
        seen.add(k)
        out.append(f)
    return out


def _incumbent_half(cls: str) -> str:
    """A scheduler's class comparison, said per half: the request being placed never has the class, the modelled
    waiting requests have the one ``incumbentSLOClass`` sets (Validate accepts every BLIS class), so the branch
    runs on every one of them when a person sets that class (sched-e2e #8)."""
    value = cls or '""'
    return (
        f"; the modelled waiting requests carry `incumbentSLOClass` (standard unless set at gate 1), so the branch "
        f"runs on every one of them only with `param incumbentSLOClass: {value}`"
    )
