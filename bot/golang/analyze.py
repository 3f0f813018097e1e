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
"""

from __future__ import annotations

import re

from bot.dictionary import Dictionary
from bot.golang import dead_branches, hazards
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
from bot.golang.carry import GENERATED_NAMES
from bot.golang.field_signals import fill_field_signals
from bot.golang.flow import Walker
from bot.golang.gonames import lower_camel
from bot.golang.gotree import named, norm_type, parse_number, text_of, walk
from bot.golang.host import (
    CHECK_AMBIGUOUS_HOST,
    CHECK_KIND_MISMATCH,
    CHECK_NO_POLICY,
    CHECK_REMOVED_INTERFACE,
    collect_functions,
    find_host,
)
from bot.golang.literals import unlisted_literals
from bot.golang.param_names import name_parameters
from bot.golang.safety import IMPLICIT_IMPORTS
from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind, Severity

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


def analyze(src: EvolvedSource, dictionary: Dictionary, kind: PolicyKind | str | None = None) -> Analysis:
    """Classify the policy, find its signals and thresholds, and flag the hazards."""
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
    for k, v in w.env.items():
        if "::" in k and not k.startswith("@"):
            an.var_signals[k] = v.signals()
        elif k.startswith("@recv::"):
            an.field_signals[k.removeprefix("@recv::")] = v.signals()

    _collect_types(src, an, funcs, struct_fields)
    _constructor_fields(src, an)
    _outside_fields(src, an)
    lift_assigned_fields(src, an)
    fill_field_signals(an)  # a field parameter names the signals it is combined with (field_signals.py)
    _collect_imports(src, an)
    an.era = _era(src, an)
    an.signals.sort(key=lambda s: (s.line, s.name, s.via))
    unlisted_literals(src, an)
    name_parameters(an)  # first, so hazard fixes can name the JSON parameter a threshold becomes
    hazards.check(src, an, dictionary, w.hazard_nodes)
    dead_branches.demote(an, GENERATED_NAMES, dictionary)  # a number that cannot act in llm-d is no parameter
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


def _constructor_fields(src: EvolvedSource, an: Analysis) -> None:
    """Numbers the constructor puts into the receiver are evolved values too, in either common Go form: in the
    receiver's literal (`&Shedder{QDThreshold: 5}`) or set on the value it builds (`s := &Shedder{}` then
    `s.QDThreshold = 5`). Both become the same parameter: the plugin runs the carried constructor as evolved, then
    newPolicy sets the field from its parameter (``Analysis.constructed_fields``)."""
    host = an.host_info
    if an.constructor is None or host is None or host.receiver_type is None:
        return
    keyed = [
        (text_of(src, k).strip(), _keyed_value(k)) for k in _keyed_fields(src, an.constructor.node, host.receiver_type)
    ]
    # A field the constructor also assigns ran with the assigned number in BLIS, while newPolicy would set the
    # literal's after the constructor: one parameter cannot stand for both, so the field keeps its numbers.
    again = _ctor_touched(src, an.constructor.node)
    sets = [(f, v) for f, v in keyed if v is not None and f not in again]
    sets += _assigned_numbers(src, an, {f for f, _ in keyed})
    for fname, vnode in sorted(sets, key=lambda s: s[1].start_byte):
        raw = text_of(src, vnode).strip()
        num = (
            parse_number(raw.lstrip("-").strip())
            if vnode.type in ("int_literal", "float_literal", "unary_expression")
            else None
        )
        ftype = an.receiver_fields.get(fname)
        if num is None or ftype not in ("int", "int64", "float64"):
            continue
        value_num = -num if raw.startswith("-") else num
        th = Threshold(
            value=value_num,
            literal=raw,
            go_type=ftype,
            role="field",
            signals=[],
            subject=f"{host.receiver_type}.{fname}",
            base=fname,
            line=src.to_original_line(vnode.start_point[0] + 1),
        )
        th.occurrences.append(
            Occurrence(vnode.start_byte, vnode.end_byte, th.line, "field", owner=an.constructor.label)
        )
        th.receiver_field = fname  # type: ignore[attr-defined]
        an.thresholds.append(th)
        an.literal_nodes[vnode.start_byte] = th


def _assigned_numbers(src: EvolvedSource, an: Analysis, keyed: set[str]) -> list:
    """(field, value node) for each receiver field the constructor sets outright exactly once, in a statement of
    its own body (``p.loadPenalty = 0.05``), and not in the receiver's literal too. A field set twice or only
    under a condition keeps its number: a parameter set after the constructor would stand for one of them."""
    ctor = an.constructor.node  # type: ignore[union-attr]
    body = ctor.child_by_field_name("body")
    out = []
    for name, sets in _ctor_assignments(src, ctor).items():
        if len(sets) != 1 or name in keyed or name not in an.receiver_fields:
            continue
        stmt, value = sets[0]
        if value is not None and stmt.parent is not None and stmt.parent.parent == body:
            out.append((name, value))
    return out


CHECK_FIELD_OUTSIDE = "translate.field-set-outside"
_RECEIVER_PLUMBING = {"scorers", "weights", "observers", "rng", "params"}


def _outside_fields(src: EvolvedSource, an: Analysis) -> None:
    """Receiver fields the evolved code reads but BLIS sets elsewhere (NewRoutingPolicy, a factory): a
    number set there becomes a parameter with BLIS's value; anything else is a finding, because the
    plugin's receiver would hold the zero value (an age bonus that is dead in the plugin)."""
    host = an.host_info
    if host is None or host.receiver_type is None or host.receiver_var is None:
        return
    carried = [host, *an.helpers]
    read: dict[str, int] = {}
    written: set[str] = set()
    for f in carried:
        var = f.receiver_var
        if var is None:
            continue
        for n in walk(f.node):
            if n.type != "selector_expression":
                continue
            operand, fld = n.child_by_field_name("operand"), n.child_by_field_name("field")
            if operand is None or fld is None or text_of(src, operand) != var:
                continue
            name = text_of(src, fld)
            parent = n.parent
            is_lhs = parent is not None and (
                (
                    parent.type == "expression_list"
                    and parent.parent is not None
                    and parent.parent.type == "assignment_statement"
                    and parent.parent.child_by_field_name("left") == parent
                )
                or parent.type in ("inc_statement", "dec_statement")
            )
            if is_lhs:
                written.add(name)
            else:
                read.setdefault(name, an.line_of(n))
    set_by_ctor = {th.receiver_field for th in an.thresholds if th.role == "field"}  # type: ignore[attr-defined]
    if an.constructor is not None:
        set_by_ctor |= {text_of(src, k) for k in _keyed_fields(src, an.constructor.node, host.receiver_type)}
        # The plugin runs the carried constructor: a field it sets outright is not zero there (a number set so is
        # a parameter, _constructor_fields).
        set_by_ctor |= set(_ctor_assignments(src, an.constructor.node))
    fields = an.receiver_fields
    for name, line in sorted(read.items(), key=lambda kv: kv[1]):
        if name in _RECEIVER_PLUMBING or name in written or name in set_by_ctor or name not in fields:
            continue
        if f"{host.receiver_type}.{name}" in {h.label for h in an.helpers}:
            continue
        if fields.get(name) == "*SLOPriorityMap":  # the plugin fills it as BLIS's constructors do (slo_priority.py)
            an.findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_FIELD_OUTSIDE,
                    source_line=line,
                    message=f"reads {host.receiver_var}.{name}, which BLIS sets outside the evolved code: the plugin "
                    "uses BLIS's default SLO priorities (DefaultSLOPriorityMap), as BLIS does when none are configured",
                    fix="if the program was evolved with SLO priority overrides (slo_priorities in the policy bundle), "
                    "the plugin does not have them: check the classes it treats as sheddable",
                )
            )
            continue
        value = _literal_set_elsewhere(src, an, host.receiver_type, name)
        fallback = None if value is not None else _zero_fallback(src, carried, host.receiver_var, name)
        if (value or fallback) is not None and fields.get(name) in ("int", "int64", "float64"):
            vnode, num = value or fallback
            th = Threshold(
                value=num,
                literal=text_of(src, vnode).strip(),
                go_type=fields[name],
                role="field",
                signals=[],
                subject=f"{host.receiver_type}.{name}",
                base=name,
                line=an.line_of(vnode),
            )
            # A fallback literal stays in the carried code (it still catches a zero); the field defaults to it.
            owner = "outside" if value else "fallback"
            th.occurrences.append(Occurrence(vnode.start_byte, vnode.end_byte, th.line, "field", owner=owner))
            th.receiver_field = name  # type: ignore[attr-defined]
            th.zero_fallback = fallback is not None  # type: ignore[attr-defined]
            an.thresholds.append(th)
            said = (
                f"which BLIS sets outside the evolved code (line {th.line}: {th.literal}); the plugin exposes it as a "
                "parameter with that default"
                if value
                else f"which nothing in the evolved file sets, but the program replaces a zero with {th.literal} right "
                f"after (line {th.line}), so the logic is live; the plugin exposes the field as a parameter with that "
                "default (0 still falls back to it)"
            )
            an.findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_FIELD_OUTSIDE,
                    source_line=line,
                    message=f"reads {host.receiver_var}.{name}, {said}",
                    fix="check the value against the configuration the program was evolved with"
                    + ("" if value else f" (BLIS may have set {name} outside the file)"),
                )
            )
        else:
            an.findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=CHECK_FIELD_OUTSIDE,
                    source_line=line,
                    message=f"reads {host.receiver_var}.{name}, {_where_set(src, an, name)} the plugin's receiver "
                    "holds the zero value, so the logic that depends on it is dead in the plugin",
                    fix=f"give {name} its BLIS value (a constructor or the policy bundle) or remove the term",
                )
            )


def _where_set(src: EvolvedSource, an: Analysis, name: str) -> str:
    """Why a field the carried code reads is zero in the plugin: nothing in the file sets it, or only code the
    plugin does not carry does (BLIS's ``NewRoutingPolicy(...)``: a constructor with arguments, outside the
    evolved block), named with its lines so a reviewer reading the file sees the finding agrees with it."""
    carried = {f.node.start_byte for f in (an.host_info, *an.helpers, an.constructor) if f is not None}
    receiver_type = an.host_info.receiver_type  # type: ignore[union-attr]
    sites: dict[str, str] = {}
    for fn in src.tree.root_node.children:
        if fn.type not in ("function_declaration", "method_declaration") or fn.start_byte in carried:
            continue
        keyed = [k.parent for k in _keyed_fields(src, fn, receiver_type) if text_of(src, k).strip() == name]
        assigned = [stmt for stmt, _ in _ctor_assignments(src, fn).get(name, [])]
        for n in sorted(keyed + assigned, key=lambda n: n.start_byte)[:1]:
            code = " ".join(text_of(src, n).split())
            code = code if len(code) <= 80 else code[:77] + "..."
            sites[text_of(src, fn.child_by_field_name("name"))] = f"line {an.line_of(n)}: `{code}`"
    if not sites:
        return "which nothing in the evolved file sets to a number (BLIS fills it outside the evolved code):"
    where = " and ".join(f"{fn} ({at})" for fn, at in sites.items())
    return f"which the evolved file sets only in {where}, code the plugin does not carry:"


def _zero_fallback(src: EvolvedSource, carried: list, var: str, name: str):
    """(literal node, value) when the evolved code copies ``var.name`` into a local and replaces a zero right
    after (``x := g.F; if x <= 0 { x = 2_000_000 }``): the number the program runs with when nothing sets F."""
    for f in carried:
        for n in walk(f.node):
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            if n.type not in ("short_var_declaration", "assignment_statement") or left is None or right is None:
                continue
            if len(named(left)) != 1 or [text_of(src, r) for r in named(right)] != [f"{var}.{name}"]:
                continue
            local, nxt = text_of(src, left), n.next_named_sibling
            while nxt is not None and nxt.type == "comment":
                nxt = nxt.next_named_sibling
            if nxt is None or nxt.type != "if_statement" or nxt.child_by_field_name("initializer") is not None:
                continue
            cond = " ".join(text_of(src, nxt.child_by_field_name("condition")).split())
            if cond not in (f"{local} <= 0", f"{local} == 0", f"{local} < 1", f"0 >= {local}", f"0 == {local}"):
                continue
            body = [c for c in walk(nxt.child_by_field_name("consequence")) if c.type.endswith("statement")]
            if len(body) != 1 or body[0].type != "assignment_statement":
                continue
            target, values = body[0].child_by_field_name("left"), named(body[0].child_by_field_name("right"))
            op = text_of(src, body[0].child_by_field_name("operator"))
            if text_of(src, target) == local and op == "=" and len(values) == 1:
                if values[0].type in ("int_literal", "float_literal"):
                    num = parse_number(text_of(src, values[0]))
                    if num is not None and num > 0:
                        return values[0], num
    return None


def _keyed_fields(src: EvolvedSource, node, receiver_type: str) -> list:
    out = []
    for lit in walk(node):
        if (
            lit.type == "composite_literal"
            and text_of(src, lit.child_by_field_name("type")).lstrip("&*") == receiver_type
        ):
            body = lit.child_by_field_name("body")
            out += [named(el)[0] for el in (named(body) if body is not None else []) if el.type == "keyed_element"]
    return out


def _ctor_assignments(src: EvolvedSource, node) -> dict[str, list]:
    """Each field the constructor sets outright (``p.seen = make(...)``, ``p.loadPenalty = 0.05``), with the
    (statement, value node) of every plain ``=`` that sets it (value None when the values do not line up)."""
    out: dict[str, list] = {}
    for stmt in walk(node):
        left, right = stmt.child_by_field_name("left"), stmt.child_by_field_name("right")
        if stmt.type != "assignment_statement" or left is None or right is None:
            continue
        if text_of(src, stmt.child_by_field_name("operator")).strip() != "=":
            continue
        targets, values = named(left), named(right)
        for i, target in enumerate(targets):
            operand = target.child_by_field_name("operand") if target.type == "selector_expression" else None
            if operand is not None and operand.type == "identifier":
                value = values[i] if len(values) == len(targets) else None
                out.setdefault(text_of(src, target.child_by_field_name("field")), []).append((stmt, value))
    return out


def _ctor_touched(src: EvolvedSource, node) -> set[str]:
    """Every field the constructor changes after building its value: ``=``, ``+=`` and the like, ``++``, ``--``."""
    out = set()
    for stmt in walk(node):
        if stmt.type == "assignment_statement":
            targets = named(stmt.child_by_field_name("left")) if stmt.child_by_field_name("left") else []
        elif stmt.type in ("inc_statement", "dec_statement"):
            targets = named(stmt)[:1]
        else:
            continue
        for target in targets:
            if target.type == "selector_expression" and target.child_by_field_name("field") is not None:
                out.add(text_of(src, target.child_by_field_name("field")))
    return out


def _keyed_value(key):
    """The value node of a keyed element's key (``0.05`` in ``loadPenalty: 0.05``), None when it has none."""
    el = named(key.parent)[-1] if key.parent is not None else None
    return named(el)[0] if el is not None and el.type == "literal_element" and named(el) else el


def _literal_set_elsewhere(src: EvolvedSource, an: Analysis, receiver_type: str, name: str):
    """(literal node, value) where any function of the file sets the field to a number in a composite literal."""
    for key in _keyed_fields(src, src.tree.root_node, receiver_type):
        if text_of(src, key).strip() != name:
            continue
        vnode = _keyed_value(key)
        if vnode is None:
            continue
        raw = text_of(src, vnode).strip()
        if vnode.type in ("int_literal", "float_literal", "unary_expression"):
            num = parse_number(raw.lstrip("-").strip())
            if num is not None:
                return vnode, (-num if raw.startswith("-") else num)
    return None


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
