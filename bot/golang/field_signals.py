"""The signals a receiver-field parameter is combined with, so the report and the probes name them.

A number the constructor puts in the receiver (``&Shedder{QDThreshold: 5}``) is a parameter whose subject is the
field, and the field reads no signal itself: without this its Signals column stayed empty and the probes said "no
llm-d input sets its subject", for the two thresholds that decide a02's saturation
(``float64(snap.QueueDepth)/s.QDThreshold``). Its signals are those of the operand it is compared with or
combined with where the carried code reads it: a signal field read there (``snap.QueueDepth``) or a local whose
value derives from signals (``sat``, in ``sat <= s.RampStart``). Pure: the analysis in, ``th.signals`` filled for
field parameters that had none.
"""

from __future__ import annotations

from bot.golang.analysis_types import COMPARE, Analysis, Node
from bot.golang.gotree import text_of, walk

_THROUGH = {"parenthesized_expression", "call_expression", "argument_list", "unary_expression"}


def fill_field_signals(an: Analysis) -> None:
    if an.src is None or an.host_info is None:
        return
    fields = {getattr(th, "receiver_field", None): th for th in an.thresholds if th.role == "field" and not th.signals}
    if not fields:
        return
    written = {s.written: s.name for s in an.signals if s.scope in ("snapshot", "request", "method")}
    found: dict[str, set[str]] = {}
    for func in [an.host_info, *an.helpers]:
        recv = func.receiver_var
        if recv is None:
            continue
        for node in walk(func.node):
            if node.type != "selector_expression" or text_of(an.src, node.child_by_field_name("operand")) != recv:
                continue
            th = fields.get(text_of(an.src, node.child_by_field_name("field")))
            other = _other_operand(an, node) if th is not None else None
            if other is not None:
                found.setdefault(th.receiver_field, set()).update(_signals(an, other, func.label, written))  # type: ignore[union-attr]
    for name, signals in found.items():
        if signals:
            fields[name].signals = sorted(signals)


def _other_operand(an: Analysis, node: Node) -> Node | None:
    """The other side of the arithmetic or comparison ``node`` is an operand of (through parentheses and a
    conversion or a unary minus)."""
    child = node
    parent = node.parent
    while parent is not None and parent.type in _THROUGH:
        child, parent = parent, parent.parent
    if parent is None or parent.type != "binary_expression":
        return None
    op = text_of(an.src, parent.child_by_field_name("operator"))
    if op not in ("+", "-", "*", "/") and op not in COMPARE:
        return None
    left, right = parent.child_by_field_name("left"), parent.child_by_field_name("right")
    return right if left is not None and left.start_byte == child.start_byte else left


def _signals(an: Analysis, node: Node, func: str, written: dict[str, str]) -> set[str]:
    out: set[str] = set()
    for n in [node, *walk(node)]:
        if n.type == "selector_expression":
            fld = text_of(an.src, n.child_by_field_name("field"))
            if fld in written:
                out.add(written[fld])
        elif n.type == "identifier" and (n.parent is None or n.parent.type != "selector_expression"):
            out |= an.var_signals.get(f"{func}::{text_of(an.src, n)}", set())
    return out


__all__ = ["fill_field_signals"]
