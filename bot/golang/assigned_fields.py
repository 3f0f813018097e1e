"""Receiver fields the carried code sets from a literal: the host's own settings, lifted into parameters.

A stateful policy often sets its scale in the host, before EVOLVE-BLOCK-START, and the evolved block reads it
(a token bucket's ``b.capacity = 20000; b.refillRate = 4000`` under ``if b.capacity == 0``). Those numbers are
the policy's whole scale, yet they are neither compared with a signal where they are written nor set outside
the carried code, so no other rule makes them parameters. Here such a literal becomes a parameter named after
the field, with BLIS's value as its default, read from the parameters in place (``b.capacity =
b.params.Capacity``): the code around it, the lazy initialisation included, runs as evolved.
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis, FuncInfo, Occurrence, Threshold
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.source import EvolvedSource

_PARAM_TYPES = ("int", "int64", "float64")
#: Values that reset state rather than set a scale (a counter back to 0 or 1).
_RESETS = {0.0, 1.0, -1.0}
_PLUMBING = {"scorers", "weights", "observers", "rng", "params"}
_COMPARE = {">", "<", ">=", "<=", "==", "!="}


def lift_assigned_fields(src: EvolvedSource, an: Analysis) -> None:
    """Lift every numeric receiver field the carried code sets outright exactly once, from a literal that is not
    a reset, and reads elsewhere. A field set twice (a parameter would stand for one of its values), whose
    address is taken, or that a constructor or BLIS sets too, keeps its literal."""
    host = an.host_info
    if host is None or host.receiver_type is None:
        return
    carried = [f for f in (host, *an.helpers) if f.receiver_type == host.receiver_type and f.receiver_var]
    writes: dict[str, list] = {}
    reads: set[str] = set()
    for f in carried:
        for sel in _receiver_selectors(src, f):
            name = text_of(src, sel.child_by_field_name("field"))
            target = _assigned(src, sel)
            if target is None:
                reads.add(name)
                if sel.parent is not None and sel.parent.type == "unary_expression" and _op(src, sel.parent) == "&":
                    writes.setdefault(name, []).append(None)  # address taken: anything may set it
            elif target != "compound":
                writes.setdefault(name, []).append((f, target))
    owned = {getattr(th, "receiver_field", None) for th in an.thresholds if th.role == "field"}
    for name in sorted(writes, key=lambda n: min((w[1].start_byte for w in writes[n] if w), default=0)):
        sets = writes[name]
        if len(sets) != 1 or sets[0] is None or name not in reads or name in owned or name in _PLUMBING:
            continue
        f, value = sets[0]
        go_type = an.receiver_fields.get(name)
        num = _number(src, value)
        if go_type not in _PARAM_TYPES or num is None or num in _RESETS or value.start_byte in an.literal_nodes:
            continue
        _lift(src, an, f, name, value, num, go_type)


def _receiver_selectors(src: EvolvedSource, f: FuncInfo):
    for n in walk(f.node):
        if n.type == "selector_expression":
            operand = n.child_by_field_name("operand")
            if operand is not None and operand.type == "identifier" and text_of(src, operand) == f.receiver_var:
                yield n


def _op(src: EvolvedSource, node) -> str:
    return text_of(src, node.child_by_field_name("operator")).strip()


def _assigned(src: EvolvedSource, sel):
    """The value node ``sel`` is set to when it is the target of a plain ``=`` (None when no value lines up with
    it), "compound" when a ``+=``/``++`` adjusts it, None when ``sel`` is read."""
    parent = sel.parent
    if parent is not None and parent.type in ("inc_statement", "dec_statement"):
        return "compound"
    stmt = parent.parent if parent is not None and parent.type == "expression_list" else None
    if stmt is None or stmt.type != "assignment_statement" or stmt.child_by_field_name("left") != parent:
        return None
    if _op(src, stmt) != "=":
        return "compound"
    right = stmt.child_by_field_name("right")
    values = named(right) if right is not None else []
    targets = named(parent)
    index = next(i for i, t in enumerate(targets) if t.start_byte == sel.start_byte)
    return values[index] if len(values) == len(targets) else stmt


def _number(src: EvolvedSource, node) -> float | None:
    """The value of a literal or of a negated one; None for anything else."""
    if node.type in ("int_literal", "float_literal"):
        return parse_number(text_of(src, node))
    if node.type == "unary_expression" and _op(src, node) in ("-", "+"):
        inner = node.child_by_field_name("operand")
        value = _number(src, inner) if inner is not None else None
        return None if value is None else (-value if _op(src, node) == "-" else value)
    return None


def _lift(src: EvolvedSource, an: Analysis, f: FuncInfo, name: str, value, num: float, go_type: str) -> None:
    meets, signals = _meetings(src, an, name)
    th = Threshold(
        value=num,
        literal=text_of(src, value).strip(),
        go_type=go_type,
        role="field",
        signals=sorted(signals),
        # What the field is spent against or combined with (the bucket's b.tokens): parameters meeting the same
        # value move together (plugin_docs.same_step).
        subject=meets or f"{an.host_info.receiver_type}.{name}",  # type: ignore[union-attr]
        base=name,
        line=an.line_of(value),
        assigned=True,
    )
    th.occurrences.append(Occurrence(value.start_byte, value.end_byte, th.line, "field", owner=f.label))
    th.receiver_field = name  # type: ignore[attr-defined]
    at = next((i for i, t in enumerate(an.thresholds) if t.line > th.line), len(an.thresholds))
    an.thresholds.insert(at, th)  # in the order of the evolved lines, like the others (the config lists them so)
    an.literal_nodes[value.start_byte] = th


def _meetings(src: EvolvedSource, an: Analysis, name: str) -> tuple[str, set[str]]:
    """What the field's value meets where the carried code reads it: the first receiver field it is compared
    with or stored into (``b.tokens > b.capacity``, ``b.tokens += elapsed * b.refillRate``), and the signals of
    everything it meets there (the prompt tokens a bucket is spent by, the clock it refills with)."""
    host = an.host_info
    first, signals = "", set()
    for f in (host, *an.helpers):
        if f is None or f.receiver_type != host.receiver_type or not f.receiver_var:  # type: ignore[union-attr]
            continue
        for sel in _receiver_selectors(src, f):
            if text_of(src, sel.child_by_field_name("field")) != name or _assigned(src, sel) is not None:
                continue
            for other in _met(src, sel):
                signals |= _signals(src, an, f, other)
                text = text_of(src, other).strip()
                if not first and text.startswith(f"{f.receiver_var}.") and text != text_of(src, sel).strip():
                    first = text
    return first, signals


def _met(src: EvolvedSource, sel) -> list:
    """The operands ``sel`` is combined with, up to the comparison or assignment that uses the result: the other
    side of each arithmetic step, the other side of a comparison (not a literal: ``b.capacity == 0`` tests for
    unset) and the target of an assignment."""
    out, node = [], sel
    while node.parent is not None and node.parent.type in ("binary_expression", "parenthesized_expression"):
        parent = node.parent
        if parent.type == "binary_expression":
            left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
            other = right if left == node else left
            compare = _op(src, parent) in _COMPARE
            if other is not None and not (compare and _number(src, other) is not None):
                out.append(other)
            if compare:
                return out
        node = parent
    stmt = node.parent.parent if node.parent is not None and node.parent.type == "expression_list" else None
    if stmt is not None and stmt.type == "assignment_statement" and stmt.child_by_field_name("right") == node.parent:
        out += named(stmt.child_by_field_name("left"))
    return out


def _signals(src: EvolvedSource, an: Analysis, f: FuncInfo, expr) -> set[str]:
    """The signals an expression derives from: its locals' (the analysis's data flow) and its receiver fields'."""
    out: set[str] = set()
    for n in walk(expr):
        if n.type == "identifier":
            out |= an.var_signals.get(f"{f.label}::{text_of(src, n)}", set())
        elif n.type == "selector_expression" and text_of(src, n.child_by_field_name("operand")) == f.receiver_var:
            out |= an.field_signals.get(text_of(src, n.child_by_field_name("field")), set())
    return out
