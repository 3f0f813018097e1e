"""Receiver fields a constructor sets, and those only BLIS's own code sets: what the plugin's receiver holds.

The plugin builds the evolved receiver in ``newPolicy``: it runs the carried constructor (``NewWeightedScoring()``,
no arguments) as evolved, then sets the fields that have parameters. BLIS's ``NewRoutingPolicy(name, configs, ...)``
is not carried, so what it alone sets would be zero in the plugin. A number either constructor sets becomes a
parameter with BLIS's value (``constructor_fields``, ``outside_fields``); what stays zero is a finding, said as
what the plugin then does (``translate.field-set-outside``).
"""

from __future__ import annotations

import re
from collections import Counter

from bot.golang.analysis_types import Analysis, Node, Occurrence, Threshold
from bot.golang.gotree import named, norm_type, parse_number, text_of, walk
from bot.golang.source import EvolvedSource
from bot.model import Finding, PolicyKind, Severity


def constructor_fields(src: EvolvedSource, an: Analysis) -> None:
    """Numbers the constructor puts into the receiver are evolved values too, in either common Go form: in the
    receiver's literal (`&Shedder{QDThreshold: 5}`) or set on the value it builds (`s := &Shedder{}` then
    `s.QDThreshold = 5`). Both become the same parameter: the plugin runs the carried constructor as evolved, then
    newPolicy sets the field from its parameter (``Analysis.constructed_fields``)."""
    host = an.host_info
    if an.constructor is None or host is None or host.receiver_type is None:
        return
    sets = set_once(src, an.constructor.node, host.receiver_type).items()
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


def set_once(src: EvolvedSource, fn, receiver_type: str) -> dict[str, Node]:
    """Field -> value node for each receiver field a constructor sets in one place, the value BLIS ran with: a key
    of the receiver's literal (``&policy{loadPenalty: 0.05}``) nothing changes after, or one ``=`` in a statement
    of the function's own body (``p.loadPenalty = 0.05``) and no other change. A field set twice (in the literal
    and again, ``*=``, ``++``) or only under a condition keeps its numbers: a parameter, or a map newPolicy makes,
    set after the constructor would stand for one of them."""
    body = fn.child_by_field_name("body")
    touched = ctor_touched(src, fn)
    built = built_vars(src, fn, receiver_type)
    keyed: dict[str, list] = {}
    for k in keyed_fields(src, fn, receiver_type):
        keyed.setdefault(text_of(src, k).strip(), []).append(keyed_value(k))
    out = {f: vs[0] for f, vs in keyed.items() if len(vs) == 1 and vs[0] is not None and not touched[f]}
    for name, sets in ctor_assignments(src, fn, on=built).items():
        if len(sets) != 1 or touched[name] != 1 or name in keyed:
            continue
        stmt, value = sets[0]
        if value is not None and stmt.parent is not None and stmt.parent.parent == body:
            out[name] = value
    return dict(sorted(out.items(), key=lambda kv: kv[1].start_byte))


CHECK_FIELD_OUTSIDE = "translate.field-set-outside"
_RECEIVER_PLUMBING = {"scorers", "weights", "observers", "rng", "params"}


def outside_fields(src: EvolvedSource, an: Analysis) -> None:
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
        set_by_ctor |= {text_of(src, k) for k in keyed_fields(src, an.constructor.node, host.receiver_type)}
        # The plugin runs the carried constructor: a field it sets outright is not zero there (a number set so is
        # a parameter, constructor_fields).
        set_by_ctor |= set(ctor_assignments(src, an.constructor.node))
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
        elsewhere = _set_elsewhere(src, an, name)
        value = _number(src, elsewhere) if elsewhere is not None else None
        made = _made(src, elsewhere, fields[name]) if elsewhere is not None else None
        if made is not None:  # newPolicy makes it as BLIS's constructor did (generate.py)
            an.made_fields[name] = elsewhere
            an.findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_FIELD_OUTSIDE,
                    source_line=line,
                    message=f"reads {host.receiver_var}.{name}, which BLIS makes outside the evolved code (line "
                    f"{an.line_of(elsewhere)}: `{made}`); the plugin's newPolicy makes it the same way (`{made}`), "
                    "empty as BLIS starts it",
                    fix=f"nothing, unless BLIS fills {name} elsewhere before the first request",
                )
            )
            continue
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
            write = _map_write(src, an, carried, name) if norm_type(fields[name]).startswith("map[") else None
            what = (
                "holds the zero value, so the logic that depends on it is dead in the plugin"
                if write is None
                else f"holds a nil map, so the write at line {an.line_of(write[0])} (`{write[1]}`) panics on every "
                f"request that reaches it: the plugin recovers, logs the panic and {_NEUTRAL[an.kind]}"
            )
            an.findings.append(
                Finding(
                    severity=Severity.IMPORTANT,
                    check=CHECK_FIELD_OUTSIDE,
                    source_line=line,
                    message=f"reads {host.receiver_var}.{name}, {_where_set(src, an, name)} the plugin's receiver "
                    + what,
                    fix=f"give {name} its BLIS value (a constructor or the policy bundle) or remove the term"
                    if write is None
                    else f"make {name} in a constructor without arguments (`New{host.receiver_type}()`, which the "
                    "plugin carries), or where the evolved code first writes it",
                )
            )


#: What the plugin does for a request on which the evolved code panicked (the templates' recover).
_NEUTRAL = {
    PolicyKind.ROUTING: "stays neutral: every endpoint scores 0 for that request, so the other scorers decide",
    PolicyKind.ADMISSION: "stays neutral: it admits that request",
    PolicyKind.SCHEDULING: "stays neutral: the queue keeps its arrival order",
}


def _set_elsewhere(src: EvolvedSource, an: Analysis, name: str):
    """The value BLIS's own code, which the plugin does not carry (``NewRoutingPolicy(...)``), gives the field, in
    either Go form (``set_once``): the first such function that sets it in one place. None when none does."""
    carried = {f.node.start_byte for f in (an.host_info, *an.helpers, an.constructor) if f is not None}
    for fn in src.tree.root_node.children:
        if fn.type in ("function_declaration", "method_declaration") and fn.start_byte not in carried:
            value = set_once(src, fn, an.host_info.receiver_type).get(name)  # type: ignore[union-attr, arg-type]
            if value is not None:
                return value
    return None


def _number(src: EvolvedSource, vnode):
    """(literal node, value) when the value node is a number literal (``0.35``, ``-2``), else None."""
    if vnode.type not in ("int_literal", "float_literal", "unary_expression"):
        return None
    raw = text_of(src, vnode).strip()
    num = parse_number(raw.lstrip("-").strip())
    return None if num is None else (vnode, -num if raw.startswith("-") else num)


def _made(src: EvolvedSource, vnode, field_type: str) -> str | None:
    """The Go text of an empty map or slice of the field's own type (``make(map[string]string)``, ``make(T, 64)``,
    ``map[string]string{}``): what newPolicy can make as BLIS's constructor did, since it names nothing but the
    field's type, which the plugin declares. None for anything else (a value from an argument, a filled table)."""
    typ = norm_type(field_type)
    if not typ.startswith(("map[", "[]")):
        return None
    if vnode.type == "composite_literal":
        body = vnode.child_by_field_name("body")
        made = (
            body is not None and not named(body) and norm_type(text_of(src, vnode.child_by_field_name("type"))) == typ
        )
    elif vnode.type == "call_expression" and text_of(src, vnode.child_by_field_name("function")) == "make":
        args = named(vnode.child_by_field_name("arguments"))
        made = bool(args) and norm_type(text_of(src, args[0])) == typ
        made = made and all(a.type == "int_literal" for a in args[1:])
    else:
        made = False
    return " ".join(text_of(src, vnode).split()) if made else None


def _map_write(src: EvolvedSource, an: Analysis, carried: list, name: str):
    """(statement, its code cut at the operator) of the first write into the receiver's map ``name`` in the
    carried code (``ws.sessionHome[id] = ...``, ``+=``, ``++``): on a nil map each one panics."""
    for f in carried:
        for stmt in walk(f.node):
            if stmt.type == "assignment_statement" and stmt.child_by_field_name("left") is not None:
                targets = named(stmt.child_by_field_name("left"))
                op = text_of(src, stmt.child_by_field_name("operator")).strip() + " ..."
            elif stmt.type in ("inc_statement", "dec_statement"):
                targets, op = named(stmt)[:1], ("++" if stmt.type == "inc_statement" else "--")
            else:
                continue
            for t in targets:
                m = t.child_by_field_name("operand") if t.type == "index_expression" else None
                if m is not None and text_of(src, m) == f"{f.receiver_var}.{name}":
                    return stmt, f"{text_of(src, t)} {op}".replace(" ++", "++").replace(" --", "--")
    return None


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
        keyed = [k.parent for k in keyed_fields(src, fn, receiver_type) if text_of(src, k).strip() == name]
        assigned = [stmt for stmt, _ in ctor_assignments(src, fn).get(name, [])]
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


def keyed_fields(src: EvolvedSource, node, receiver_type: str) -> list:
    out = []
    for lit in walk(node):
        if (
            lit.type == "composite_literal"
            and text_of(src, lit.child_by_field_name("type")).lstrip("&*") == receiver_type
        ):
            body = lit.child_by_field_name("body")
            out += [named(el)[0] for el in (named(body) if body is not None else []) if el.type == "keyed_element"]
    return out


def built_vars(src: EvolvedSource, fn, receiver_type: str) -> set[str]:
    """The variables ``fn`` builds the receiver in (``p := &T{}``, ``p := T{...}``, ``p := new(T)``, ``var p T``):
    an assignment to another value's field of the same name (``cfg.loadKnee = 6``) sets nothing of the receiver."""
    shape = re.compile(rf"^(?:&\s*)?{re.escape(receiver_type)}\s*\{{|^new\(\s*{re.escape(receiver_type)}\s*\)$", re.S)
    out: set[str] = set()
    for n in walk(fn):
        if n.type in ("short_var_declaration", "assignment_statement"):
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            names, values = (named(left), named(right)) if left is not None and right is not None else ([], [])
            pairs = zip(names, values, strict=False) if len(names) == len(values) else []
        elif n.type == "var_spec":
            ids = [c for c in named(n) if c.type == "identifier"]
            kind, value = n.child_by_field_name("type"), n.child_by_field_name("value")
            values = named(value) if value is not None else []
            if kind is not None and norm_type(text_of(src, kind)).lstrip("*") == receiver_type:
                out |= {text_of(src, i) for i in ids}
            pairs = zip(ids, values, strict=False) if len(ids) == len(values) else []
        else:
            continue
        out |= {text_of(src, k) for k, v in pairs if k.type == "identifier" and shape.match(text_of(src, v).strip())}
    return out


def ctor_assignments(src: EvolvedSource, node, on: set[str] | None = None) -> dict[str, list]:
    """Each field the constructor sets outright (``p.seen = make(...)``, ``p.loadPenalty = 0.05``), with the
    (statement, value node) of every plain ``=`` that sets it (value None when the values do not line up); ``on``:
    only fields of those variables (``built_vars``)."""
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
            if operand is not None and operand.type == "identifier" and (on is None or text_of(src, operand) in on):
                value = values[i] if len(values) == len(targets) else None
                out.setdefault(text_of(src, target.child_by_field_name("field")), []).append((stmt, value))
    return out


def ctor_touched(src: EvolvedSource, node) -> Counter[str]:
    """How often the constructor changes each field after building its value: ``=``, ``+=`` and the like, ``++``,
    ``--``."""
    out: Counter[str] = Counter()
    for stmt in walk(node):
        if stmt.type == "assignment_statement":
            targets = named(stmt.child_by_field_name("left")) if stmt.child_by_field_name("left") else []
        elif stmt.type in ("inc_statement", "dec_statement"):
            targets = named(stmt)[:1]
        else:
            continue
        for target in targets:
            if target.type == "selector_expression" and target.child_by_field_name("field") is not None:
                out[text_of(src, target.child_by_field_name("field"))] += 1
    return out


def keyed_value(key):
    """The value node of a keyed element's key (``0.05`` in ``loadPenalty: 0.05``), None when it has none."""
    el = named(key.parent)[-1] if key.parent is not None else None
    return named(el)[0] if el is not None and el.type == "literal_element" and named(el) else el
