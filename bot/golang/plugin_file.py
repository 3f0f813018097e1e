"""The plugin's main Go file (``<stem>.go``): what it imports and what its scorer or admitter template is told.

Why a module of its own: ``bot.golang.generate`` writes the whole package (``evolved.go``, ``adapter.go``, this
file, ``baseline.go``, the EndpointPickerConfig and the README) and decides what the files share (the names, the
parameters, the adapter's functions, the state caps). The main file's imports and its template context are the
largest single part of that, one list of facts about the plugin (its kind, what it consumes, its state, its clock,
its docs), read here in one place. The llm-d-router import paths the generated files use live here too.
"""

from __future__ import annotations

import re

from bot.dictionary import Dictionary
from bot.golang import scheduling_docs, state_caps
from bot.golang.adapter import waiting_comment
from bot.golang.adapter_params import AdapterParams
from bot.golang.analysis_types import Analysis
from bot.golang.gofiles import MODULE, sort_imports
from bot.golang.gonames import comment_lines, render
from bot.golang.host import host_call_args
from bot.golang.params import ParamSpec, incumbent_parts
from bot.golang.plugin_docs import sentence
from bot.golang.plugin_shape import random_ties, used_scorers
from bot.golang.source import EvolvedSource
from bot.model import PolicyKind

IMPORT_PLUGIN = f"{MODULE}/pkg/epp/framework/interface/plugin"
IMPORT_SCHED = f"{MODULE}/pkg/epp/framework/interface/scheduling"
IMPORT_DL = f"{MODULE}/pkg/epp/framework/interface/datalayer"
IMPORT_RC = f"{MODULE}/pkg/epp/framework/interface/requestcontrol"
IMPORT_ERR = f"{MODULE}/pkg/common/error"
IMPORT_LOGUTIL = f"{MODULE}/pkg/common/observability/logging"
IMPORT_ATTRPREFIX = f"{MODULE}/pkg/epp/framework/plugins/datalayer/attribute/prefix"
IMPORT_CONCURRENCY = f"{MODULE}/pkg/epp/framework/plugins/datalayer/attribute/concurrency"
IMPORT_LOG = "sigs.k8s.io/controller-runtime/pkg/log"

#: The BLIS scorers that are prefix terms.
PREFIX_SCORERS = ("prefix-affinity", "precise-prefix-cache")


def plugin_file(
    src: EvolvedSource,
    an: Analysis,
    d: Dictionary,
    *,
    plugin_type: str,
    pkg: str,
    struct: str,
    params: list[ParamSpec],
    category: str | None,
    category_reason: str,
    receiver: str,
    construct: str,
    uses_scorers: bool,
    scorer_defaults: list[tuple[str, float]] | None,
    consumes_prefix: bool,
    consumes_inflight: bool,
    key_reads: list,
    stateful: bool,
    rng_per_call: bool,
    caps: list,
    uses_clock: bool,
    adapter: AdapterParams,
    request_names: set[str],
    token_slice: bool,
    token_elem: str,
) -> tuple[str, bool]:
    """The plugin's main file, rendered from ``scorer.go.j2`` or ``admitter.go.j2``, and whether the evolved
    admitter returns a bare bool (``legacy_bool``)."""
    kind = an.kind
    host = an.host_info
    assert host is not None
    field_params = an.constructed_fields
    prefix_doc = (
        "the prompt's prefix-cache match (approx-prefix-cache-producer, or the one prefixMatchInfoProducerName names)"
    )
    inflight_doc = (
        "in-flight requests (inflight-load-producer, or the one inFlightLoadProducerName names; scraped queue + "
        "running without it)"
    )
    consumed = [*([prefix_doc] if consumes_prefix else []), *([inflight_doc] if consumes_inflight else [])]
    plugin_imports = {
        '"context"',
        '"encoding/json"',
        '"fmt"',
        'goruntime "runtime"',  # evolvedPanicSite: where a recovered panic was raised, for the logged error
        '"sync/atomic"',  # failureLog: at most one logged failure a minute, lock-free
        '"time"',
        f'"{IMPORT_LOG}"',
        f'"{IMPORT_PLUGIN}"',
        f'"{IMPORT_SCHED}"',
    }
    if stateful:
        plugin_imports.add('"sync"')
    if any(c.keys for c in caps):  # keyRecency: the order capState evicts the stalest entries in
        plugin_imports.add('"container/list"')
    if uses_scorers:
        plugin_imports |= {'"errors"', '"math"'}
    if consumes_prefix:
        plugin_imports.add(f'attrprefix "{IMPORT_ATTRPREFIX}"')
    if consumes_inflight:
        plugin_imports.add(f'"{IMPORT_CONCURRENCY}"')
    if kind in (PolicyKind.ROUTING, PolicyKind.SCHEDULING):
        plugin_imports.add('"math"')
    if kind == PolicyKind.ROUTING:  # the scores' trace
        plugin_imports.add(f'logutil "{IMPORT_LOGUTIL}"')
    if kind == PolicyKind.SCHEDULING and "ID" in an.request_fields:  # the modelled queue's IDs, only when read
        plugin_imports.add('"strconv"')
    if rng_per_call:
        plugin_imports.add('"math/rand"')
    q_entry = d.signal("QueueDepth", "snapshot")
    noun = {PolicyKind.ROUTING: "scorer", PolicyKind.SCHEDULING: "scorer", PolicyKind.ADMISSION: "admitter"}[kind]
    what = {
        PolicyKind.ROUTING: "scorer",
        PolicyKind.SCHEDULING: "queue-position scorer",
        PolicyKind.ADMISSION: "admitter",
    }[kind]
    common = {
        "pkg": pkg,
        "plugin_type": plugin_type,
        "struct": struct,
        "type_const": struct + "Type",
        "factory": struct + "Factory",
        "ctor": "New" + struct,
        "noun": noun,
        "r": "a" if kind == PolicyKind.ADMISSION else "s",
        "params": params,
        "assumed_params": ", ".join(p.name for p in params if p.assumed),
        "has_constants": any(th.constant for th in an.thresholds),
        "scorer_config": uses_scorers,
        "known_scorers": ", ".join(used_scorers(scorer_defaults)),
        "prefix_scorers": [n for n in used_scorers(scorer_defaults) if n in PREFIX_SCORERS],
        "receiver": receiver,
        "construct": construct,
        "uses_scorers": uses_scorers,
        "consumes_prefix": consumes_prefix,
        "consumes_inflight": consumes_inflight,
        "data_keys": key_reads,
        "consumes_doc": " and ".join(consumed),
        "blis_method": host.label,
        "stateful": stateful,
        "rng_per_call": rng_per_call,  # the evolved code reads its rng: the plugin seeds one per call
        "state_caps": caps,
        "recency_caps": [c for c in caps if c.keys],
        "cap_doc": state_caps.cap_doc(caps) if caps else "",
        "uses_clock": uses_clock,
        "adapter": adapter,
        "call_args": host_call_args(an),
        "field_params": field_params,
        "package_doc": comment_lines(
            f"Package {pkg} provides {plugin_type}, an llm-d {what} that runs the {kind.value} policy "
            f"{host.label}, evolved in the BLIS simulator, on llm-d's view of the endpoints and the request.",
            indent=0,
        ),
        "struct_doc": comment_lines(
            f"{struct} is the evolved BLIS {host.label} as an llm-d {what}. "
            + (sentence(category_reason) if category else "A rejection carries the evolved reason."),
            indent=0,
        ),
    }
    if kind == PolicyKind.ADMISSION:
        plugin_imports |= {f'"{IMPORT_RC}"', f'errcommon "{IMPORT_ERR}"'}
        legacy_bool = re.sub(r"\s+", "", host.result) == "bool"
        plugin_text = render("admitter.go.j2", **common, imports=sort_imports(plugin_imports), legacy_bool=legacy_bool)
    else:
        legacy_bool = False
        plugin_text = render(
            "scorer.go.j2",
            **common,
            imports=sort_imports(plugin_imports),
            kind=kind.value,
            category=category,
            random_ties=random_ties(src, an),
            waiting_expr=q_entry.llmd.expr if q_entry and q_entry.llmd else "m.WaitingQueueSize",
            waiting_comment=comment_lines(waiting_comment(q_entry), indent=2),
            score_doc=comment_lines(
                f"Score estimates, for every endpoint, where the request would sit in that endpoint's wait queue "
                f"under the evolved {host.label} and prefers earlier positions: min-max normalised like "
                "queue-scorer, 1 for the best position, 0 for the worst. "
                + " ".join(scheduling_docs.score_caveats(an.request_fields)),
                indent=0,
            )
            if kind == PolicyKind.SCHEDULING
            else [],
            reads_id="ID" in an.request_fields,
            incumbent_doc=", ".join(incumbent_parts(request_names)),
            request_has_arrival="ArrivalTime" in request_names,
            request_has_class="SLOClass" in request_names,
            request_has_priority="Priority" in request_names,
            request_has_input="numInputTokens" in request_names,
            request_has_slo_target="SLOTargetUs" in request_names,
            token_slice=token_slice,
            token_elem=token_elem,
        )
    return plugin_text, legacy_bool
