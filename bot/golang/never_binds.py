"""Floors and caps that can never bind at the default values: say so, and for which values they would.

The evolved scorer's KV term is ``math.Max(0.3, 1.0-2.0*(kv-0.82))`` inside ``if kv > 0.82``. A KV utilization
is a fraction, so the other side is at least 1 - 2*(1 - 0.82) = 0.64: the floor 0.3 never applies, and no llm-d
input can make it change an outcome. "No llm-d input among the candidates made it change the outcome" is true
but reads like a gap in the search; this module works out the bound by interval arithmetic over the signal's
range (only a fraction's range is known: [0, 1], narrowed by an ``if`` on the same value around it and by the
negation of the earlier branches of its else-if chain) and says plainly that the parameter never binds at the
defaults, and which values of it, or of the parameters on the other side, would make it bind (and the plugin's
Validate() accepts). Pure: analysis in, reasons out.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from bot.golang.analysis_types import KV_FRACTION, Analysis, Node, Threshold
from bot.golang.gotree import walk
from bot.golang.param_relations import relations
from bot.model import Finding, Severity

Interval = tuple[float, float]
_CALLS = {"floor": ("math.Max", "max"), "cap": ("math.Min", "min")}


def _hull(xs: list[float]) -> Interval:
    return min(xs), max(xs)


def _interval(an: Analysis, node: Node, values: dict[str, float], signal: Callable[[Node], Interval | None]):
    """The range of ``node``'s value with the parameters at ``values``; None when it reads anything else."""
    t = node.type
    if t in ("float_literal", "int_literal"):
        th = an.literal_nodes.get(node.start_byte)
        v = values[th.param] if th is not None and th.param in values else float(node.text.decode().replace("_", ""))
        return v, v
    if t == "parenthesized_expression" and node.named_child_count == 1:
        return _interval(an, node.named_children[0], values, signal)
    if t == "unary_expression" and node.child_by_field_name("operator").type == "-":
        inner = _interval(an, node.child_by_field_name("operand"), values, signal)
        return None if inner is None else (-inner[1], -inner[0])
    if t == "selector_expression":
        return signal(node)
    if t == "binary_expression":
        a = _interval(an, node.child_by_field_name("left"), values, signal)
        b = _interval(an, node.child_by_field_name("right"), values, signal)
        op = node.child_by_field_name("operator").type
        if a is None or b is None:
            return None
        if op == "+":
            return a[0] + b[0], a[1] + b[1]
        if op == "-":
            return a[0] - b[1], a[1] - b[0]
        if op == "*":
            return _hull([x * y for x in a for y in b])
        if op == "/" and not b[0] <= 0 <= b[1]:
            return _hull([x / y for x in a for y in b])
    return None


def _literal(an: Analysis, th: Threshold) -> Node | None:
    starts = {o.start for o in th.occurrences if o.role == th.role}
    return next((n for n in walk(an.src.tree.root_node) if n.start_byte in starts and n.type.endswith("literal")), None)


_FLIP = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


def _comparison(an: Analysis, cond: Node | None, subject: str, values: dict[str, float]) -> tuple[str, float] | None:
    """``cond`` as (operator, bound) with ``subject`` on the left, when it is ``subject`` compared with a value."""
    while cond is not None and cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond is None or cond.type != "binary_expression":
        return None
    op = cond.child_by_field_name("operator").type
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if op in _FLIP and right.text.decode() == subject:
        op, left, right = _FLIP[op], right, left
    bound = _interval(an, right, values, lambda _: None) if op in _FLIP and left.text.decode() == subject else None
    return (op, bound[0]) if bound is not None else None


def _guard(an: Analysis, node: Node, subject: str, values: dict[str, float]) -> Interval | None:
    """[0, 1] narrowed by the ``if subject > x`` (or ``<``) around ``node`` and by the negation of each earlier
    branch of its if / else-if chain (``if kv > 0.9 {...} else if kv > 0.7 {node}``: (0.7, 0.9], not (0.7, 1]).
    None when an earlier branch tests ``subject`` some other way: what it leaves to ``node`` is not known, and a
    wider range would name values that never bind."""
    lo, hi = 0.0, 1.0
    child, up = node, node.parent
    while up is not None:
        cond = up.child_by_field_name("condition") if up.type == "if_statement" else None
        inside = up.child_by_field_name("consequence")
        if cond is not None and inside is not None and inside == child:
            cmp = _comparison(an, cond, subject, values)
            if cmp is not None:
                lo, hi = (max(lo, cmp[1]), hi) if cmp[0] in (">", ">=") else (lo, min(hi, cmp[1]))
        elif cond is not None and child == up.child_by_field_name("alternative"):
            cmp = _comparison(an, cond, subject, values)  # reached only where it is false
            if cmp is not None:
                lo, hi = (lo, min(hi, cmp[1])) if cmp[0] in (">", ">=") else (max(lo, cmp[1]), hi)
            elif subject in cond.text.decode():
                return None
        child, up = up, up.parent
    return lo, hi


def _named(an: Analysis, node: Node) -> str:
    """``node``'s source with each parameter literal written as the parameter's name."""
    text, base, out = node.text.decode(), node.start_byte, []
    cut = 0
    for n in walk(node):
        th = an.literal_nodes.get(n.start_byte) if n.type.endswith("literal") else None
        if th is not None and th.param:
            out += [text[cut : n.start_byte - base], th.param]
            cut = n.end_byte - base
    return "".join(out) + text[cut:]


def _readable(v: float) -> str:
    return f"{float(f'{v:.3g}'):g}"


def never_binds(an: Analysis, defaults: dict) -> dict[str, str]:
    """Parameter -> why it never binds at ``defaults`` ("it never binds ...") and which values would make it, for every floor (cap) of a
    ``math.Max`` (``math.Min``) whose other side, over a fraction's range, never goes below (above) it."""
    if an.src is None:
        return {}
    fractions = {s.written for s in an.signals if s.name in KV_FRACTION}
    out = {}
    for th in an.thresholds:
        lit = _literal(an, th) if th.param and th.role in _CALLS else None
        call = lit.parent.parent if lit is not None and lit.parent is not None else None
        if call is None or call.type != "call_expression":
            continue
        if call.child_by_field_name("function").text.decode() not in _CALLS[th.role]:
            continue
        others = [a for a in call.child_by_field_name("arguments").named_children if a != lit]
        subjects = {n.text.decode() for o in others for n in walk(o) if n.type == "selector_expression"}
        subjects = {s for s in subjects if s.rsplit(".", 1)[-1] in fractions}
        if len(others) != 1 or len(subjects) != 1:
            continue
        (subject,) = subjects
        values = {k: float(v) for k, v in defaults.items() if isinstance(v, int | float) and not isinstance(v, bool)}

        binds = partial(_binds, an, th, others[0], subject, call)

        if th.param not in values or binds(values) is not False:
            continue
        movers = [th.param, *sorted({t.param for t in an.thresholds if t.param and t.param != th.param} & set(values))]
        refused = partial(_refused, relations(an))
        would = [w for p in movers if (w := _would_bind(p, values, binds, refused))]
        lo, hi = _guard(an, call, subject, values) or (0.0, 1.0)
        other = _interval(an, others[0], values, lambda _, span=(lo, hi): span)
        side = f"at least {_readable(other[0])}" if th.role == "floor" else f"at most {_readable(other[1])}"
        span = f"{'(' if lo > 0 else '['}{_readable(lo)}, {_readable(hi)}]"
        out[th.param] = (
            f"it never binds at the default values: line {th.line} of the evolved program takes the "
            f"{'larger' if th.role == 'floor' else 'smaller'} of it ({th.literal}) and "
            f"`{_named(an, others[0])}`, which is {side} for every {subject.rsplit('.', 1)[-1]} in {span} (a "
            f"fraction), so no llm-d input can make it change an outcome"
            + (f"; it would bind with {', or '.join(would)}" if would else "")
        )
    return out


def _binds(an: Analysis, th: Threshold, other: Node, subject: str, call: Node, vals: dict[str, float]) -> bool | None:
    """Whether the floor (cap) ``th`` applies for some value of ``subject`` with the parameters at ``vals``."""
    guard = _guard(an, call, subject, vals)
    if guard is None:
        return None
    lo, hi = guard
    if lo > hi:
        return False
    rng = _interval(an, other, vals, lambda n: (lo, hi) if n.text.decode() == subject else None)
    if rng is None:
        return None
    return vals[th.param] > rng[0] if th.role == "floor" else vals[th.param] < rng[1]


def _refused(rels: list, values: dict[str, float]) -> bool:
    """Whether the plugin's Validate() refuses these values (a relation across parameters breaks)."""
    return any(r.broken(values) for r in rels)


def _would_bind(param: str, values: dict[str, float], binds, refused) -> str | None:
    """ "<param> above (below) <v>": the nearest value of ``param`` (the others at their defaults) that binds, and
    that the plugin's Validate() accepts (a steeper taper that binds by inverting the policy is no advice)."""
    start = values[param]
    for sign in (1, -1):
        prev = start
        for k in range(1, 40):
            v = start * 1.25**k if sign > 0 else start / 1.25**k
            if start == 0:
                v = sign * 0.01 * 1.25**k
            if binds(values | {param: v}):
                a, b = prev, v
                for _ in range(60):
                    mid = (a + b) / 2
                    a, b = (a, mid) if binds(values | {param: mid}) else (mid, b)
                if refused(values | {param: b}):
                    break  # this way it binds only where Validate() refuses; the other way may still
                return f"{param} {'above' if sign > 0 else 'below'} {_readable(a)}"
            prev = v
    return None


def finding(th: Threshold, why: str) -> Finding:
    """``translate.untested-parameter`` for a floor or cap that never binds: nothing to test at the defaults."""
    return Finding(
        severity=Severity.SUGGESTION,
        check="translate.untested-parameter",
        source_line=th.line,
        message=f"no generated test exercises `{th.param}` (the evolved {th.literal}): {why}",
        fix=f"nothing to test at the defaults; if {th.param} should act, set the values named above and add a test "
        f"case for it by hand, or drop it from the parameters",
    )
