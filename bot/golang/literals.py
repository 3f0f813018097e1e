"""Numbers that decide outcomes yet are neither plugin parameters nor listed as kept literals.

The plugin's Parameters promise every number the evolved logic compares a signal with. A local limit set once
from a literal and compared with a signal later (``shedLimit := 0.75`` ... ``loadRatio > shedLimit``) is lifted
into a parameter here, named after the local, with the evolved value as its default. A number the analysis does
not follow (a bare constant in arithmetic, a local it cannot lift safely) would break that promise silently, so
it gets a ``translate.unlisted-literal`` finding saying why, and the report names what only a rebuild can tune.
"""

from __future__ import annotations

import re

from bot.golang.analysis_types import FLIP, Analysis, FuncInfo, Occurrence, Threshold
from bot.golang.gonames import exported
from bot.golang.gotree import id_of, named, parse_number, text_of, walk
from bot.golang.local_scales import field_meetings, meetings
from bot.golang.sample_counts import lift_count
from bot.golang.short_locals import plain_name, used_for
from bot.golang.source import EvolvedSource
from bot.model import Finding, Severity

CHECK_UNLISTED_LITERAL = "translate.unlisted-literal"
_TRIVIAL = {0.0, 1.0, -1.0, 2.0, 100.0, 1e3, 1e6, 1e9}


def unlisted_literals(src: EvolvedSource, an: Analysis) -> None:
    """Numbers in the carried logic's arithmetic and comparisons that are neither parameters nor listed
    as kept literals: they decide outcomes, yet only a rebuild changes them and no report names them."""
    host = an.host_info
    if host is None:
        return
    seen: set[int] = set()
    # The carried constructor is walked for the tables it puts on the receiver only (its numbers for numeric
    # fields are parameters already, ``_constructor_fields``).
    for f in [host, *an.helpers, *([an.constructor] if an.constructor is not None else [])]:
        for n in walk(f.node):
            if n.type not in ("int_literal", "float_literal") or n.start_byte in an.literal_nodes:
                continue
            parent, value_node = n.parent, n
            if parent is not None and parent.type == "unary_expression":
                if parent.start_byte in an.literal_nodes:
                    continue
                parent, value_node = parent.parent, parent
            if f is an.constructor and (parent is None or parent.type != "literal_element"):
                continue
            if parent is not None and parent.type == "expression_list" and n.start_byte not in seen:
                seen.add(n.start_byte)
                returned = parent.parent is not None and parent.parent.type == "return_statement"
                found = (
                    _returned(src, an, value_node, parent)
                    if returned
                    else _decisive_local(src, an, f, value_node, parent)
                )
                an.findings.extend(found)
                continue
            if parent is not None and parent.type == "literal_element" and n.start_byte not in seen:
                seen.add(n.start_byte)
                an.findings.extend(_table_value(src, an, f, value_node, parent))
                continue
            if parent is None or parent.type != "binary_expression" or n.start_byte in seen or formats_text(src, n):
                continue
            value = parse_number(text_of(src, n))
            if value is None or value in _TRIVIAL:
                continue
            seen.add(n.start_byte)
            an.findings.append(
                Finding(
                    severity=Severity.SUGGESTION,
                    check=CHECK_UNLISTED_LITERAL,
                    source_line=an.line_of(n),
                    message=(
                        f"`{text_of(src, parent)[:80]}`: the number {text_of(src, n)} decides outcomes but compares or "
                        "combines no signal the analysis follows, so it is neither a plugin parameter nor listed as a "
                        "kept literal; tuning it needs a rebuild"
                    ),
                    fix="check whether it is simulator-scale; make it a constant with a name if it is part of the design",
                )
            )


def formats_text(src: EvolvedSource, node) -> bool:
    """``node`` is inside an argument of a ``fmt`` call (``fmt.Sprintf("... %.0f", 1.5*fair)``): it only formats
    text (a rejection's reason, which the plugin returns but nothing decides on), so it decides nothing."""
    n = node.parent
    while n is not None and n.type not in ("function_declaration", "method_declaration", "func_literal"):
        fn = n.child_by_field_name("function") if n.type == "call_expression" else None
        operand = fn.child_by_field_name("operand") if fn is not None and fn.type == "selector_expression" else None
        if operand is not None and text_of(src, operand) == "fmt":
            return True
        n = n.parent
    return False


def join_reason_copies(src: EvolvedSource, an: Analysis) -> None:
    """A number the walk made a parameter only where it formats text (the copy of ``1.5*fair`` in the rejection's
    ``fmt.Sprintf``) is no knob of its own: it reads the parameter of the same number the same function decides
    with, so the reason prints the value in force; with none, it keeps its literal."""
    for th in list(an.thresholds):
        if th.reason is not None or not th.occurrences:
            continue
        nodes = [src.tree.root_node.descendant_for_byte_range(o.start, o.end) for o in th.occurrences]
        if not all(n is not None and formats_text(src, n) for n in nodes):
            continue
        owner = th.occurrences[0].owner
        same = [
            t
            for t in an.thresholds
            if t is not th
            and t.value == th.value
            and t.reason is None
            and any(o.owner == owner for o in t.occurrences)
            and not all(
                formats_text(src, src.tree.root_node.descendant_for_byte_range(o.start, o.end)) for o in t.occurrences
            )
        ]
        an.thresholds.remove(th)
        if same:
            same[0].occurrences.extend(th.occurrences)
            for o in th.occurrences:
                an.literal_nodes[o.start] = same[0]
        else:
            for o in th.occurrences:
                an.literal_nodes.pop(o.start, None)


def _returned(src: EvolvedSource, an: Analysis, node, values) -> list[Finding]:
    """A number a carried function returns (``return 0.2, 0.6`` in a branch on the class): what its callers compute
    from, so it decides outcomes as a number in their arithmetic does. Listed when it is not trivial, or when
    another return of the function puts a number that is not trivial in the same position (``return 1`` beside
    ``return 0.5``: entries of one table written as returns, listed all, as a composite literal's are)."""
    value = _number(src, node)
    func = values.parent
    while func is not None and func.type not in ("func_literal", "function_declaration", "method_declaration"):
        func = func.parent
    if value is None or func is None:
        return []
    position = next(i for i, v in enumerate(named(values)) if v.start_byte == node.start_byte)
    if value in _TRIVIAL and not _beside_entries(src, func, position, len(named(values))):
        return []
    name = func.child_by_field_name("name")
    owner = f"`{text_of(src, name)}`" if name is not None else "a function literal"
    nth = f"result {position + 1} of " if len(named(values)) > 1 else ""
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(node),
            message=(
                f"`{text_of(src, values.parent)[:60]}`: the number {text_of(src, node).strip()} is {nth}what {owner} "
                "returns, so it decides outcomes where its callers use it, but the translation keeps it a literal: "
                "it is neither a plugin parameter nor listed as a kept literal, and tuning it on real pods needs a "
                "rebuild"
            ),
            fix=(
                "check whether it is simulator-scale; to tune it at gate 1, call the function from the policy's "
                "method and assign its results to named variables (`kvW, queueW := weights(req.SLOClass)`): a "
                "number returned per SLO class is then a parameter; or add a parameter for it by hand"
            ),
        )
    ]


def _beside_entries(src: EvolvedSource, func, position: int, count: int) -> bool:
    """Another return of ``func`` (not of a function literal inside it) puts a number that is not trivial at
    ``position`` of ``count`` results."""
    for ret in walk(func):
        if ret.type != "return_statement" or not named(ret):
            continue
        owner = ret.parent
        while owner is not None and owner.type not in ("func_literal", "function_declaration", "method_declaration"):
            owner = owner.parent
        items = named(named(ret)[0]) if named(ret)[0].type == "expression_list" else named(ret)
        if owner == func and len(items) == count and (v := _number(src, items[position])) is not None:
            if v not in _TRIVIAL:
                return True
    return False


_COMPARE = {">", "<", ">=", "<="}
_PARAM_TYPES = ("int", "int64", "float64")


def _decisive_local(src: EvolvedSource, an: Analysis, f: FuncInfo, node, values) -> list[Finding]:
    """A local set from a literal (``shedLimit := 0.75``) and compared with a signal later (``loadRatio >
    shedLimit``): the number decides outcomes like any threshold, but it is not written where it is compared.
    Lifted into a parameter when that is safe (``_kept_because``); otherwise a finding that says why not."""
    decl = values.parent
    if decl is None or decl.type not in ("short_var_declaration", "var_spec"):
        return []
    names = decl.child_by_field_name("left") or decl.child_by_field_name("name")
    if names is None or (decl.child_by_field_name("right") != values and decl.type != "var_spec"):
        return []
    idents = named(names) if names.type == "expression_list" else [names]
    index = next((i for i, v in enumerate(named(values)) if v.start_byte == node.start_byte), -1)
    value = _number(src, node)
    if not 0 <= index < len(idents) or idents[index].type != "identifier" or value is None or value in _TRIVIAL:
        return []
    name = text_of(src, idents[index])
    compared = next((c for c in walk(f.node) if _compares(src, c, name)), None)
    if compared is None:
        return _spent_local(src, an, f, decl, node, value, name)
    other = _other_side(src, compared, name)
    signals = _signals_of(src, an, f, other)
    go_type = _declared_type(src, decl, node)
    why = _kept_because(src, an, f, decl, name, other, signals, go_type)
    if why is None:
        _lift(src, an, f, node, value, name, compared, other, signals, go_type)
        return []
    if lift_count(src, an, f, decl, node, name, go_type):  # `k := 3` sampled k times: how many, a parameter
        return []
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(node),
            message=(
                f"`{text_of(src, decl)[:60]}`: the number {text_of(src, node)} is what `{text_of(src, compared)[:60]}` "
                "compares with, so it decides outcomes, but the translation keeps it a literal because "
                f"{why}: the Parameters comment's 'every number compared' does not cover it, and tuning it on real "
                "pods needs a rebuild"
            ),
            fix=(
                f"write the number where `{name}` is compared (the translation then makes it a parameter), or add a "
                "parameter for it by hand"
            ),
        )
    ]


def _spent_local(src: EvolvedSource, an: Analysis, f: FuncInfo, decl, node, value: float, name: str) -> list[Finding]:
    """A local set from a literal that is never compared itself but is combined with signals or stored into what
    is (a bucket's ``capacity := 12000.0`` clamping ``b.tokens``, later ``b.tokens < cost``): the number decides
    outcomes as the same bucket's ``b.capacity = 20000`` does, so it becomes a parameter the same way
    (``assigned_fields``), or gets a finding saying why not."""
    subject, signals = meetings(src, an, f, decl, name)
    if not signals:
        return []
    go_type = _declared_type(src, decl, node)
    why = _unliftable_because(src, f, decl, name, go_type)
    if why is None:
        th = Threshold(
            value=value,
            literal=text_of(src, node).strip(),
            go_type=go_type,
            role="field",
            signals=sorted(signals),
            subject=subject or name,
            base=name,
            line=an.line_of(node),
            local=name,
            assigned=True,
        )
        _name_by_use(src, f, th)
        th.occurrences.append(Occurrence(node.start_byte, node.end_byte, th.line, "field", owner=f.label))
        at = next((i for i, t in enumerate(an.thresholds) if t.line > th.line), len(an.thresholds))
        an.thresholds.insert(at, th)
        an.literal_nodes[node.start_byte] = th
        return []
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(node),
            message=(
                f"`{text_of(src, decl)[:60]}`: the number {text_of(src, node)} is combined with "
                f"{', '.join(sorted(signals))} (through `{subject or name}`), so it decides outcomes, but the "
                f"translation keeps it a literal because {why}: it is neither a plugin parameter nor listed as a "
                "kept literal, and tuning it on real pods needs a rebuild"
            ),
            fix=f"add a parameter for `{name}` by hand, or set it once so the translation can read it from one",
        )
    ]


def _table_value(src: EvolvedSource, an: Analysis, f: FuncInfo, node, element) -> list[Finding]:
    """A number in a table the carried code builds in a local (``classLoadWeight := map[string]float64{"critical":
    0.9, ...}``) or puts on the receiver (the constructor's ``&policy{classWeight: map[string]float64{...}}``, or
    ``p.classWeight = map...``) and whose entries meet signals where they are read: each entry decides outcomes
    like the ``default:`` value beside it, but a composite literal's values are kept in the code (only the
    constructor's numbers for numeric fields become parameters), so each is listed as a kept literal that needs a
    rebuild. Every entry is, 1 and 0 too: a table is data, and a reviewer shown its 0.5 but not the 1 and 2 beside it
    could not tell the classes' weights apart."""
    value = _number(src, node)
    keyed = element.parent if element.parent is not None and element.parent.type == "keyed_element" else None
    if value is None or (keyed is not None and keyed.child_by_field_name("key") == element):
        return []
    composite = (keyed or element).parent.parent if (keyed or element).parent is not None else None
    if composite is None or composite.type != "composite_literal":
        return []
    held = _table_holder(src, an, f, composite)
    if held is None:
        return []
    name, (through, signals) = held
    if not signals:
        return []
    entry = f"`{name}[{text_of(src, keyed.child_by_field_name('key')).strip()}]`" if keyed is not None else f"`{name}`"
    return [
        Finding(
            severity=Severity.SUGGESTION,
            check=CHECK_UNLISTED_LITERAL,
            source_line=an.line_of(node),
            message=(
                f"{entry} = {text_of(src, node).strip()}: the table's entries are combined with "
                f"{', '.join(sorted(signals))}{f' (through `{through}`)' if through else ''}, so the number decides "
                "outcomes, but the values of a composite literal stay literals in the plugin: it is neither a plugin "
                "parameter nor listed as a kept literal, and tuning it on real pods needs a rebuild"
            ),
            fix=(
                "check whether it is simulator-scale; to tune the table at gate 1, write its values as locals set "
                "once (each then becomes a parameter) or add parameters for them by hand"
            ),
        )
    ]


def _table_holder(src: EvolvedSource, an: Analysis, f: FuncInfo, composite) -> tuple[str, tuple[str, set[str]]] | None:
    """Where the table ``composite`` is held, as the message names it (``weights``, ``Policy.classWeight``), and
    what its entries meet where they are read (``local_scales``); None when it is held anywhere else."""
    holder = composite.parent
    while holder is not None and holder.type == "unary_expression":
        holder = holder.parent
    if holder is None:
        return None
    field = _receiver_field_of(src, an, f, holder)
    if field is not None:
        return f"{an.host_info.receiver_type}.{field}", field_meetings(src, an, field)  # type: ignore[union-attr]
    decl = holder.parent if holder.type == "expression_list" else None
    if decl is None or decl.type not in ("short_var_declaration", "var_spec") or len(named(holder)) != 1:
        return None
    names = decl.child_by_field_name("left") or decl.child_by_field_name("name")
    idents = named(names) if names is not None and names.type == "expression_list" else [names]
    if len(idents) != 1 or idents[0] is None or idents[0].type != "identifier":
        return None
    name = text_of(src, idents[0])
    return name, meetings(src, an, f, decl, name)


def _receiver_field_of(src: EvolvedSource, an: Analysis, f: FuncInfo, holder) -> str | None:
    """The receiver field a table is put on: the value of a key in a literal of the receiver's type
    (``&policy{classWeight: ...}``), or set outright (``p.classWeight = ...`` in the constructor, or on the
    receiver in a carried method)."""
    host = an.host_info
    if host is None or host.receiver_type is None:
        return None
    keyed = holder.parent if holder.type == "literal_element" else None
    if keyed is not None and keyed.type == "keyed_element" and keyed.child_by_field_name("value") == holder:
        outer = keyed.parent.parent if keyed.parent is not None else None
        kind = outer.child_by_field_name("type") if outer is not None and outer.type == "composite_literal" else None
        key = text_of(src, keyed.child_by_field_name("key")).strip()
        if kind is not None and text_of(src, kind).lstrip("&*") == host.receiver_type and key in an.receiver_fields:
            return key
        return None
    stmt = holder.parent if holder.type == "expression_list" else None
    if stmt is None or stmt.type != "assignment_statement" or stmt.child_by_field_name("right") != holder:
        return None
    targets = named(stmt.child_by_field_name("left"))
    if len(targets) != 1 or len(named(holder)) != 1 or targets[0].type != "selector_expression":
        return None
    operand, field = targets[0].child_by_field_name("operand"), text_of(src, targets[0].child_by_field_name("field"))
    owner = f.receiver_var if f.receiver_type == host.receiver_type else None
    if operand is None or operand.type != "identifier" or field not in an.receiver_fields:
        return None
    return field if f is an.constructor or text_of(src, operand) == owner else None


def _number(src: EvolvedSource, node) -> float | None:
    """The value of a literal or of a negated one (``-0.5``)."""
    if node.type == "unary_expression":
        inner = node.child_by_field_name("operand")
        sign = text_of(src, node.child_by_field_name("operator"))
        value = parse_number(text_of(src, inner)) if inner is not None and sign in ("-", "+") else None
        return None if value is None else (-value if sign == "-" else value)
    return parse_number(text_of(src, node))


def _declared_type(src: EvolvedSource, decl, node) -> str | None:
    """The local's Go type: the one a ``var`` spec declares, else the default type of its literal (Go gives
    ``x := 5`` int and ``x := 0.5`` float64)."""
    declared = decl.child_by_field_name("type") if decl.type == "var_spec" else None
    if declared is not None:
        return text_of(src, declared).strip()
    lit = node.child_by_field_name("operand") if node.type == "unary_expression" else node
    if lit is None:
        return None
    return {"int_literal": "int", "float_literal": "float64"}.get(lit.type)


def _kept_because(
    src: EvolvedSource, an: Analysis, f: FuncInfo, decl, name: str, other, signals: set[str], go_type
) -> str | None:
    """Why the local cannot become a parameter without changing what the program does, or None when it can: it
    must be compared with a signal, set from a literal once (a factor or step applied to it later, ``*=``, stays
    in the code and is its own parameter), of a type a parameter carries, in a method that reaches them."""
    if not signals:
        return f"`{text_of(src, other)[:40]}`, which it is compared with, derives from no signal the analysis follows"
    return _unliftable_because(src, f, decl, name, go_type, an)


def _unliftable_because(
    src: EvolvedSource, f: FuncInfo, decl, name: str, go_type, an: Analysis | None = None
) -> str | None:
    """Why a local set from a literal cannot be read from a parameter at its declaration, or None when it can. With
    ``an``, a compared limit set again only to numbers that are parameters of their own is liftable (``_set_again``)."""
    if f.receiver_type is None:
        return f"it is set in `{f.name}`, a function without a receiver, which cannot reach the plugin's parameters"
    if go_type not in _PARAM_TYPES:
        return f"`{name}` is of type {go_type or 'unknown'}, which no parameter carries (int, int64 or float64)"
    again = _set_again(src, an, f.node, decl, name)
    if again is None:
        return None
    where = f"`{text_of(src, again)[:50]}`, line {src.to_original_line(again.start_point[0] + 1)}"
    if again.type == "unary_expression":
        return f"its address is taken ({where}), so code the analysis does not follow may change it"
    return f"`{name}` is set again ({where}), so a parameter would stand for only one of its values"


def _name_by_use(src: EvolvedSource, f: FuncInfo, th: Threshold) -> None:
    """A lifted local of one or two letters is named by where it is used (``t < load`` -> loadThreshold,
    ``w * float64(snap.QueueDepth)`` -> queueDepthWeight): its letter says nothing of the number's role."""
    text = lambda n: text_of(src, n)  # noqa: E731
    if th.local is not None and (use := used_for(f.node, th.local, text, lambda n: plain_name(n, text))):
        th.base, th.suffix = use


def _set_again(src: EvolvedSource, an: Analysis | None, fn, decl, name: str):
    """A statement other than ``decl`` that sets ``name`` outright (``=``, ``:=``, ``var``) or takes its address;
    compound assignments (``*=``, ``+=``, ``++``) adjust the lifted value and are fine, and so is setting it to a
    number that is a parameter of its own (``limit = 60`` for critical requests, ``criticalLimitValue``): the
    lifted value is then what ``name`` holds everywhere else, and each value is tuned by its own parameter."""
    for n in walk(fn):
        if n == decl or (n.start_byte == decl.start_byte and n.end_byte == decl.end_byte) or _to_parameter(an, n):
            continue
        if n.type in ("short_var_declaration", "assignment_statement", "var_spec"):
            op = text_of(src, n.child_by_field_name("operator")) if n.type == "assignment_statement" else "="
            left = n.child_by_field_name("left") or n.child_by_field_name("name")
            targets = named(left) if left is not None and left.type == "expression_list" else [left]
            if op == "=" and any(t is not None and text_of(src, t).strip() == name for t in targets):
                return n
        elif n.type == "unary_expression" and text_of(src, n.child_by_field_name("operator")) == "&":
            if text_of(src, n.child_by_field_name("operand")).strip() == name:
                return n
    return None


def _to_parameter(an: Analysis | None, stmt) -> bool:
    """``stmt`` is ``x = <number>`` whose number the analysis made a parameter (no reason to keep it)."""
    right = stmt.child_by_field_name("right") if an is not None and stmt.type == "assignment_statement" else None
    values = named(right) if right is not None and right.type == "expression_list" else [right]
    th = an.literal_nodes.get(values[0].start_byte) if len(values) == 1 and values[0] is not None else None
    return th is not None and th.reason is None


def _lift(src: EvolvedSource, an: Analysis, f: FuncInfo, node, value, name, compared, other, signals, go_type):
    """The local's literal becomes a threshold parameter: the carried code reads it from the parameters at the
    declaration (``shedLimit := a.params.ShedLimit``), and the comparison it decides is what tests watch."""
    op = text_of(src, compared.child_by_field_name("operator"))
    on_left = compared.child_by_field_name("left") == other
    th = Threshold(
        value=value,
        literal=text_of(src, node).strip(),
        go_type=go_type,
        role="threshold",
        signals=sorted(signals),
        subject=text_of(src, other),
        base=name,
        line=an.line_of(node),
        local=name,
        compared_line=an.line_of(compared),
    )
    _name_by_use(src, f, th)
    if _BARE_LIMIT.fullmatch(name) and (keyed := sorted(_KEYED[s] for s in signals if s in _KEYED)):
        th.base = keyed[0] + exported(name)  # `limit` on a tenant's count: tenantLimit, what it limits
    th.occurrences.append(
        Occurrence(
            node.start_byte, node.end_byte, th.line, "threshold", op if on_left else FLIP[op], id_of(compared), f.label
        )
    )
    at = next((i for i, t in enumerate(an.thresholds) if t.line > th.line), len(an.thresholds))
    an.thresholds.insert(at, th)  # in the order of the evolved lines, like the others (the config lists them so)
    an.literal_nodes[node.start_byte] = th


def _other_side(src: EvolvedSource, node, name: str):
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    return right if text_of(src, left).strip() == name else left


def _signals_of(src: EvolvedSource, an: Analysis, f: FuncInfo, expr) -> set[str]:
    """The signals a compared expression derives from: those of the locals it reads (the analysis's data flow)."""
    out: set[str] = set()
    for n in walk(expr):
        if n.type == "identifier":
            out |= an.var_signals.get(f"{f.label}::{text_of(src, n)}", set())
    return out


#: A local named by its role alone (``limit``): the parameter says what it limits, by the key it counts per.
_BARE_LIMIT = re.compile(r"(?i:limit|threshold|cap|ceiling|max|min|bound|cutoff)")
_KEYED = {"TenantID": "tenant", "SessionID": "session"}

#: A local's name that already says it is a limit (batchLimit, maxWaiting); another local gets "Threshold" appended.
LIMIT_WORDS = re.compile(r"(?i:limit|threshold|cap|ceiling|floor|max|min|bound|cutoff)$|^(?:max|min)(?=[A-Z0-9])")


def _compares(src: EvolvedSource, node, name: str) -> bool:
    """``node`` is a comparison with ``name`` on one side and no literal on the other."""
    if node.type != "binary_expression" or text_of(src, node.child_by_field_name("operator")) not in _COMPARE:
        return False
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    sides = {text_of(src, left).strip(), text_of(src, right).strip()}
    other = (sides - {name}) or {""}
    return name in sides and not any(ch.isdigit() for ch in next(iter(other))[:1])
