"""Locals set once from a literal that the code spends or combines with signals but never compares directly.

A token bucket written with locals (``capacity := 12000.0``, ``refillPerSec := 3000.0``, then
``b.tokens = math.Min(capacity, b.tokens+float64(dt)/1e6*refillPerSec)`` and ``b.tokens < cost``) holds the
policy's whole scale in two numbers. Neither is compared with a signal where it is read, so the rule for a
compared local limit (``literals._decisive_local``) did not apply and they went through silently: no parameter,
no finding, ``param capacity`` refused at gate 1. The same bucket with ``b.capacity = 20000`` on the receiver
is lifted by ``assigned_fields``. Here the local's value is followed to what it meets: the operands it is combined
with (through arithmetic and ``math.Min``-like calls) and what the result is stored into (``b.tokens``, also through
a composite literal's key), and that target's comparisons (``b.tokens < cost``). When those derive from signals the
literal decides outcomes, and it becomes a parameter read at the declaration, like the receiver-field form.
A table the constructor puts on the receiver (``classWeight: map[string]float64{...}``) is followed the same way
from each read of the field in the carried methods (``field_meetings``).
"""

from __future__ import annotations

from bot.golang.analysis_types import COMPARE, Analysis, FuncInfo, Node
from bot.golang.gotree import named, text_of, walk
from bot.golang.source import EvolvedSource

_ARITHMETIC = {"+", "-", "*", "/"}
#: Calls a value passes through unchanged in kind: a clamp or a conversion keeps it on the same scale.
_THROUGH_CALLS = {"math.Min", "math.Max", "min", "max", "float64", "int", "int64", "math.Floor", "math.Ceil"}


def meetings(src: EvolvedSource, an: Analysis, f: FuncInfo, decl: Node, name: str) -> tuple[str, set[str]]:
    """What the local ``name`` meets in ``f``: the first field its value is stored into (``b.tokens``), and the
    signals of everything it is combined with there or that target is compared with."""
    reads = [
        n
        for n in walk(f.node)
        if n.type == "identifier" and text_of(src, n) == name and not _inside(n, decl) and not _is_target(n)
    ]
    return _meet(src, an, f, reads)


def field_meetings(src: EvolvedSource, an: Analysis, field: str) -> tuple[str, set[str]]:
    """What the receiver field ``field`` meets where the carried methods read it (``ws.classWeight[req.SLOClass] *
    float64(snap.InFlightRequests)``), followed as a local's value is: a table the constructor puts on the
    receiver decides outcomes as the same table in a local does."""
    host = an.host_info
    first, signals = "", set()
    for f in (host, *an.helpers):
        if f is None or host is None or f.receiver_type != host.receiver_type or not f.receiver_var:
            continue
        reads = [n for n in walk(f.node) if _reads_field(src, n, f.receiver_var, field) and not _is_target(n)]
        through, met = _meet(src, an, f, reads)
        first, signals = first or through, signals | met
    return first, signals


def _reads_field(src: EvolvedSource, n: Node, var: str, field: str) -> bool:
    if n.type != "selector_expression":
        return False
    operand, name = n.child_by_field_name("operand"), n.child_by_field_name("field")
    return operand is not None and name is not None and text_of(src, operand) == var and text_of(src, name) == field


def _meet(src: EvolvedSource, an: Analysis, f: FuncInfo, reads: list[Node]) -> tuple[str, set[str]]:
    """The first field the values read at ``reads`` are stored into, and the signals of all they meet."""
    first, signals = "", set()
    for n in reads:
        others, targets = _climb(src, n)
        for other in others:
            signals |= _signals(src, an, f, other)
        for text, target in targets:
            if not first and "." in text:
                first = text
            if target is not None:
                signals |= _signals(src, an, f, target)
            for other in _met_by_reads(src, f, text):
                signals |= _signals(src, an, f, other)
    return first, signals


def _inside(n: Node, outer: Node) -> bool:
    return outer.start_byte <= n.start_byte and n.end_byte <= outer.end_byte


def _is_target(n: Node) -> bool:
    """``n`` is a name being set (the left side of an assignment), not a read of its value."""
    parent = n.parent
    stmt = parent.parent if parent is not None and parent.type == "expression_list" else None
    return stmt is not None and stmt.type == "assignment_statement" and stmt.child_by_field_name("left") == parent


def _climb(src: EvolvedSource, node: Node) -> tuple[list[Node], list[tuple[str, Node | None]]]:
    """The operands ``node``'s value is combined with on its way up, and what the result is stored into (its
    text, and its node when the code writes it as such)."""
    others: list[Node] = []
    while (parent := node.parent) is not None:
        if parent.type == "binary_expression":
            op = text_of(src, parent.child_by_field_name("operator"))
            if op not in _ARITHMETIC and op not in COMPARE:
                break
            left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
            other = right if left is not None and left.start_byte == node.start_byte else left
            if other is not None:
                others.append(other)
            if op in COMPARE:
                return others, []
        elif parent.type == "argument_list":
            call = parent.parent
            fn = call.child_by_field_name("function") if call is not None else None
            if call is None or fn is None or text_of(src, fn).strip() not in _THROUGH_CALLS:
                break
            others += [a for a in named(parent) if a.start_byte != node.start_byte]
            parent = call
        elif parent.type == "index_expression" and parent.child_by_field_name("operand") == node:
            pass  # an entry of a table is on the table's scale (`classLoadWeight["critical"]`)
        elif parent.type == "literal_element" and parent.parent is not None and parent.parent.type == "keyed_element":
            return others, _keyed_target(src, parent.parent)
        elif parent.type not in ("parenthesized_expression", "unary_expression"):
            break
        node = parent
    return others, [(text_of(src, t).strip(), t) for t in _stored_into(src, node)]


def _stored_into(src: EvolvedSource, node: Node) -> list[Node]:
    """The target of the assignment whose right side ``node`` is (a compound ``+=`` too: the target is combined
    with the value as well as set)."""
    values = node.parent
    stmt = values.parent if values is not None and values.type == "expression_list" else None
    if stmt is None or stmt.type not in ("assignment_statement", "short_var_declaration"):
        return []
    if stmt.child_by_field_name("right") != values:
        return []
    left = stmt.child_by_field_name("left")
    targets = named(left) if left is not None else []
    index = next((i for i, v in enumerate(named(values)) if v.start_byte == node.start_byte), -1)
    return [targets[index]] if 0 <= index < len(targets) and len(targets) == len(named(values)) else []


def _keyed_target(src: EvolvedSource, keyed: Node) -> list[tuple[str, Node | None]]:
    """``{tokens: capacity}`` in ``b = &tenantBucket{...}``: the value is stored into ``b.tokens``."""
    key = keyed.child_by_field_name("key")
    node = keyed.parent.parent if keyed.parent is not None else None  # literal_value -> composite_literal
    while node is not None and node.parent is not None and node.parent.type == "unary_expression":
        node = node.parent
    targets = _stored_into(src, node) if node is not None else []
    if key is None or len(targets) != 1 or targets[0].type != "identifier":
        return []
    return [(f"{text_of(src, targets[0]).strip()}.{text_of(src, key).strip()}", None)]


def _met_by_reads(src: EvolvedSource, f: FuncInfo, target: str) -> list[Node]:
    """What the value stored into ``target`` meets where ``f`` reads it (``b.tokens < cost`` for ``b.tokens``,
    ``loadW * float64(snap.InFlightRequests)`` for ``loadW``): one step further, not followed on."""
    out: list[Node] = []
    for n in walk(f.node):
        if n.type not in ("identifier", "selector_expression") or text_of(src, n).strip() != target or _is_target(n):
            continue
        if n.parent is not None and n.parent.type == "selector_expression":
            continue  # `b` of `b.tokens`, or a field named like the target
        out += _climb(src, n)[0]
    return out


def _signals(src: EvolvedSource, an: Analysis, f: FuncInfo, expr) -> set[str]:
    """The signals an expression derives from: its locals' (the analysis's data flow), the signal fields it reads
    and the receiver fields' signals."""
    written = {s.written: s.name for s in an.signals if s.scope in ("snapshot", "request", "method", "state")}
    out: set[str] = set()
    for n in walk(expr):
        if n.type == "identifier" and (n.parent is None or n.parent.type != "selector_expression"):
            out |= an.var_signals.get(f"{f.label}::{text_of(src, n)}", set())
        elif n.type == "selector_expression":
            operand, fld = n.child_by_field_name("operand"), text_of(src, n.child_by_field_name("field"))
            if operand is not None and text_of(src, operand) == f.receiver_var:
                out |= an.field_signals.get(fld, set())
            if fld in written:
                out.add(written[fld])
    return out
