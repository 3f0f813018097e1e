"""What an evolved policy reads and which numbers it decides on: stage 1's analysis.

The translator must know, before it writes a line of llm-d code, which BLIS signals the evolved
logic reads (through any alias, range variable, index or helper), which numeric literals it compares
those signals against or combines them with (they become plugin parameters), and which constructs
cannot survive the move to llm-d (the hazards in ``bot.golang.hazards``). sim2real's regex extractor
missed aliases such as ``sloClass := req.SLOClass``; this walks the tree-sitter AST with a small
data-flow pass instead (``bot.golang.flow``), so a value keeps the set of signals it was computed
from however many assignments later it is compared.

The walk is deliberately simple and deterministic: the same source gives the same analysis, in
source order. The host function is found by ``bot.golang.host`` (check ids there); this module adds:

- ``source.legacy-signature``    (finding, SUGGESTION) the design doc's ``Admit(*RouterState, *Request) bool`` shape
- ``source.era-conflict``        (finding, IMPORTANT, ``blis_era``) the program's names, its metadata's timestamp and
  ``origin.blis_version`` disagree on whether its BLIS copy predates 9a603bca
"""

from __future__ import annotations

import re

from bot.dictionary import Dictionary
from bot.golang import blis_era, counter_era, dead_branches, hazards, lifetime_count, package_vars
from bot.golang.analysis_types import (
    BUILTIN_RECEIVERS,
    NEVER_CARRIED,
    SHIMMED_FUNCS,
    SHIMMED_TYPES,
    SIGNATURES,
    Analysis,
    FuncInfo,
    Node,
    Occurrence,
    SignalUse,
    Threshold,
)
from bot.golang.assigned_fields import lift_assigned_fields
from bot.golang.blend_terms import weigh_terms
from bot.golang.carry import GENERATED_NAMES, thread_params
from bot.golang.ctor_fields import constructor_fields, outside_fields
from bot.golang.field_signals import fill_field_signals
from bot.golang.flow import Walker
from bot.golang.flow_args import arg_findings
from bot.golang.gonames import lower_camel
from bot.golang.gotree import norm_type, parse_number, text_of, walk
from bot.golang.host import (
    CHECK_AMBIGUOUS_HOST,
    CHECK_KIND_MISMATCH,
    CHECK_NO_POLICY,
    CHECK_REMOVED_INTERFACE,
    collect_functions,
    find_host,
)
from bot.golang.literals import join_reason_copies, unlisted_literals
from bot.golang.local_consts import lift_local_consts
from bot.golang.order_keys import keep_ordinal_ranks
from bot.golang.package_consts import lift_package_consts
from bot.golang.param_names import name_parameters, pair_weights
from bot.golang.regime_weights import lift_regimes
from bot.golang.safety import IMPLICIT_IMPORTS
from bot.golang.source import EvolvedSource
from bot.model import EvolvedOn, Finding, PolicyKind, Severity

CHECK_LEGACY_SIGNATURE = "source.legacy-signature"

__all__ = [
    "BUILTIN_RECEIVERS",
    "CHECK_AMBIGUOUS_HOST",
    "CHECK_KIND_MISMATCH",
    "CHECK_LEGACY_SIGNATURE",
    "CHECK_NO_POLICY",
    "CHECK_REMOVED_INTERFACE",
    "NEVER_CARRIED",
    "SHIMMED_FUNCS",
    "SHIMMED_TYPES",
    "SIGNATURES",
    "Analysis",
    "FuncInfo",
    "Occurrence",
    "SignalUse",
    "Threshold",
    "analyze",
    "collect_functions",
    "find_host",
    "lower_camel",
    "parse_number",
    "text_of",
    "walk",
]


def analyze(
    src: EvolvedSource,
    dictionary: Dictionary,
    kind: PolicyKind | str | None = None,
    evolved_on: EvolvedOn | None = None,
) -> Analysis:
    """Classify the policy, find its signals and thresholds, and flag the hazards. ``evolved_on`` is what the
    request says of the BLIS copy (``PromotionRequest.evolved_on``): it dates a copy whose file cannot (``blis_era``)."""
    kind = PolicyKind(kind) if kind is not None else None
    funcs = collect_functions(src)
    host = find_host(src, funcs, kind)
    an = Analysis(kind=host.kind, host=host.label, signals=[], thresholds=[], findings=[], src=src, host_info=host)
    if host.legacy:
        an.findings.append(
            Finding(
                severity=Severity.SUGGESTION,
                check=CHECK_LEGACY_SIGNATURE,
                message=(
                    f"{host.label} has the design-doc signature, not BLIS's {SIGNATURES[host.kind]}; "
                    "translated by argument type — check that the copy really ran in BLIS"
                ),
                source_line=src.to_original_line(host.node.start_point[0] + 1),
            )
        )
    by_name: dict[str, FuncInfo] = {}
    for f in funcs:
        by_name.setdefault(f.label, f)
    struct_fields = _struct_fields(src)
    recv_types = {f.receiver_type for f in funcs if f.receiver_type}
    w = Walker(src, dictionary, an, by_name, recv_types, struct_fields)

    # Pass 1 settles data flow (call-site arguments, loop-carried values); pass 2 records.
    for recording in (False, False, True):
        w.recording = recording
        w.called = set()
        order = [host]
        seen = {host.label}
        i = 0
        while i < len(order):
            f = order[i]
            w.run_function(f)
            for name in sorted(w.called):
                g = by_name.get(name)
                if g is not None and g.label not in seen and g is not host:
                    seen.add(g.label)
                    order.append(g)
            i += 1
        an.helpers = list(order[1:])
    thread_params(src, an)  # a helper's per-class values are parameters when its callers can pass them
    for k, v in w.env.items():
        if "::" in k and not k.startswith("@"):
            an.var_signals[k] = v.signals()
        elif k.startswith("@recv::"):
            an.field_signals[k.removeprefix("@recv::")] = v.signals()
    lift_local_consts(src, an, w.const_lits, w.const_uses)  # a local const's number, read from its parameter

    _collect_types(src, an, funcs, struct_fields)
    lift_package_consts(src, an, w.pkg_lits, w.pkg_reads, w.const_uses)  # after: it reads the carried types
    arg_findings(src, an, w.kept_args)  # after: a number passed as a compared argument, unless lifted elsewhere
    package_vars.check(src, an)  # a package variable the carried code writes: state every request shares
    constructor_fields(src, an)
    outside_fields(src, an)
    lift_assigned_fields(src, an)
    fill_field_signals(an)  # a field parameter names the signals it is combined with (field_signals.py)
    _collect_imports(src, an)
    an.era = _era(src, an)
    an.signals.sort(key=lambda s: (s.line, s.name, s.via))
    join_reason_copies(src, an)  # a number that only formats a reason reads its decision's parameter
    pair_weights(src, an)  # before the unlisted literals: a blend's other weight is a parameter with its mate
    weigh_terms(src, an)  # likewise each literal weight of a sum of weighted terms beside a coefficient parameter
    lift_regimes(src, an)  # a switch's weights, one parameter per regime, before what is left is called unlisted
    unlisted_literals(src, an)
    keep_ordinal_ranks(src, an)  # a whole number per class read only as an order is a rank: no parameter
    name_parameters(an)  # first, so hazard fixes can name the JSON parameter a threshold becomes
    hazards.check(src, an, dictionary, w.hazard_nodes)
    lifetime_count.check(src, an, dictionary, w.hazard_nodes)  # after: it reads an.client_keyed_maps
    dead_branches.demote(an, GENERATED_NAMES, dictionary)  # a number that cannot act in llm-d is no parameter
    blis_era.check(an, evolved_on)  # before counter_era: a copy dated before the change by its metadata is pre-rename
    counter_era.check(an)  # after demote: it names the numbers that stay parameters by their names
    return an


def _struct_fields(src: EvolvedSource) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for node in walk(src.tree.root_node):
        if node.type != "type_spec":
            continue
        name = text_of(src, node.child_by_field_name("name"))
        t = node.child_by_field_name("type")
        if t is None or t.type != "struct_type":
            continue
        fields: dict[str, str] = {}
        for fd in walk(t):
            if fd.type == "field_declaration":
                ftype = norm_type(text_of(src, fd.child_by_field_name("type")))
                for n in fd.children:
                    if n.type == "field_identifier":
                        fields[text_of(src, n)] = ftype
        out[name] = fields
    return out


def _collect_types(src: EvolvedSource, an: Analysis, funcs: list[FuncInfo], struct_fields: dict) -> None:
    """Type declarations the carried code references (besides the shimmed BLIS types), and the receiver's constructor."""
    host = an.host_info
    assert host is not None
    carried_nodes = [host.node] + [h.node for h in an.helpers]
    referenced: set[str] = set()
    for n in carried_nodes:
        for c in walk(n):
            if c.type == "type_identifier":
                referenced.add(text_of(src, c))
    decls: dict[str, Node] = {}
    for node in src.tree.root_node.children:
        if node.type == "type_declaration":
            for spec in node.children:
                if spec.type == "type_spec":
                    decls[text_of(src, spec.child_by_field_name("name"))] = spec
    if host.receiver_type and host.receiver_type in decls:
        an.receiver_decl = decls[host.receiver_type]
        for k, v in struct_fields.get(host.receiver_type, {}).items():
            an.receiver_fields[k] = v
    # transitive closure over referenced local types
    todo = [
        r
        for r in sorted(referenced)
        if r in decls and r not in SHIMMED_TYPES and r != host.receiver_type and r not in NEVER_CARRIED
    ]
    seen = set(todo)
    while todo:
        name = todo.pop(0)
        an.types.append(decls[name])
        for c in walk(decls[name]):
            if c.type == "type_identifier":
                r = text_of(src, c)
                if r in decls and r not in seen and r not in SHIMMED_TYPES and r != host.receiver_type:
                    seen.add(r)
                    todo.append(r)
    if an.receiver_decl is not None:
        for c in walk(an.receiver_decl):
            if c.type == "type_identifier":
                r = text_of(src, c)
                if r in decls and r not in seen and r not in SHIMMED_TYPES and r != host.receiver_type:
                    seen.add(r)
                    an.types.append(decls[r])
    an.types.sort(key=lambda n: n.start_byte)
    # constructor: New<Receiver>() with no parameters returning the receiver
    if host.receiver_type:
        for f in funcs:
            if f.receiver_type is None and f.name.lower() == f"new{host.receiver_type.lower()}" and not f.params:
                an.constructor = f
                break


def _collect_imports(src: EvolvedSource, an: Analysis) -> None:
    declared: dict[str, str] = {}
    for node in walk(src.tree.root_node):
        if node.type == "import_spec":
            path = text_of(src, node.child_by_field_name("path")).strip('"`')
            alias = node.child_by_field_name("name")
            name = text_of(src, alias) if alias is not None else path.rsplit("/", 1)[-1]
            declared[name] = path
    nodes = [an.host_info.node] + [h.node for h in an.helpers] + list(an.types)
    if an.receiver_decl is not None:
        nodes.append(an.receiver_decl)
    if an.constructor is not None:
        nodes.append(an.constructor.node)
    used: dict[str, str] = {}
    for n in nodes:
        for c in walk(n):
            if c.type in ("selector_expression", "qualified_type"):
                operand = (
                    c.child_by_field_name("operand")
                    if c.type == "selector_expression"
                    else c.child_by_field_name("package")
                )
                if operand is not None and operand.type in ("identifier", "package_identifier"):
                    name = text_of(src, operand)
                    if name in declared:
                        used[name] = declared[name]
                    elif name in IMPLICIT_IMPORTS and not _is_local(name, an, src):
                        used[name] = IMPLICIT_IMPORTS[name]
    an.imports.update(used)


def _is_local(name: str, an: Analysis, src: EvolvedSource) -> bool:
    for n in [an.host_info.node] + [h.node for h in an.helpers]:
        for c in walk(n):
            if c.type in ("short_var_declaration",) and name in text_of(src, c.child_by_field_name("left")).split(","):
                return True
    return False


def _era(src: EvolvedSource, an: Analysis) -> str:
    text = src.go_text
    if "PendingRequests" in text:
        return "2026-02"
    if re.search(r"\bPriority\s+float64", text) and "RoutingDecision" in text:
        return "2026-03"
    return "head"
