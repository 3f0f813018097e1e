"""A count the evolved code loops with, set once from a number: ``k := 3`` in a power-of-k router that samples ``k``
instances (``for j := 0; j < k; j++ { i := ws.rng.Intn(len(snapshots)) ... }``).

How many endpoints are sampled is such a router's main knob, yet the number is compared with no signal (with
``len(snapshots)``, to clamp it, and with the loop's index), so it once got only a finding whose fix was to rewrite
the evolved code. A local of an integer type, set from a literal once, that bounds a ``for`` loop's count is now a
parameter itself: the plugin sets it from the parameter where it is declared (``k := ws.params.SampleCount``), and
what follows, a clamp to the endpoints there are (``if k > len(snapshots) { k = len(snapshots) }``) included, runs
as evolved. Named by the local when its name says something (``samples``, ``probeCount``), else ``sampleCount`` when
the loop draws at random and ``loopCount`` when it does not.
"""

from __future__ import annotations

from bot.golang.analysis_types import Analysis, FuncInfo, Node, Occurrence, Threshold
from bot.golang.gotree import named, parse_number, text_of, walk
from bot.golang.source import EvolvedSource

_COUNT_TYPES = ("int", "int64")


def lift_count(src: EvolvedSource, an: Analysis, f: FuncInfo, decl: Node, node: Node, name: str, go_type) -> bool:
    """Make the local ``name`` (declared by ``decl`` from the literal ``node``) a count parameter when it bounds a
    loop and is set again only to clamp it (see the module doc); True when it did."""
    value = parse_number(text_of(src, node))
    if f.receiver_type is None or go_type not in _COUNT_TYPES or value is None or value < 2:
        return False
    loop = next((n for n in walk(f.node) if n.type == "for_statement" and _bounded_by(src, n, name)), None)
    if loop is None or any(not _clamp(src, stmt, name) for stmt in _set_again(src, f.node, decl, name)):
        return False
    signals: set[str] = set()
    for n in walk(loop.child_by_field_name("body") or loop):
        if n.type == "identifier":
            signals |= an.var_signals.get(f"{f.label}::{text_of(src, n)}", set())
    if not signals:
        return False
    th = Threshold(
        value=value,
        literal=text_of(src, node).strip(),
        go_type=go_type,
        role="field",
        signals=sorted(signals),
        subject=name,
        base=_name(src, loop, name),
        line=an.line_of(node),
        local=name,
        assigned=True,
        suffix="",
    )
    th.occurrences.append(Occurrence(node.start_byte, node.end_byte, th.line, "field", owner=f.label))
    at = next((i for i, t in enumerate(an.thresholds) if t.line > th.line), len(an.thresholds))
    an.thresholds.insert(at, th)
    an.literal_nodes[node.start_byte] = th
    return True


def _bounded_by(src: EvolvedSource, loop: Node, name: str) -> bool:
    """``loop`` is ``for i := ...; i < name; ...`` (or ``<=``, or ``name > i``)."""
    clause = next((c for c in loop.children if c.type == "for_clause"), None)
    cond = clause.child_by_field_name("condition") if clause is not None else None
    if cond is None or cond.type != "binary_expression":
        return False
    op = text_of(src, cond.child_by_field_name("operator"))
    left, right = (text_of(src, cond.child_by_field_name(s)).strip() for s in ("left", "right"))
    return (op in ("<", "<=") and right == name) or (op in (">", ">=") and left == name)


def _set_again(src: EvolvedSource, fn: Node, decl: Node, name: str) -> list[Node]:
    """Every statement other than ``decl`` that sets ``name`` (or takes its address)."""
    out = []
    for n in walk(fn):
        if n.start_byte == decl.start_byte and n.end_byte == decl.end_byte:
            continue
        if n.type in ("assignment_statement", "short_var_declaration", "inc_statement", "dec_statement"):
            left = n.child_by_field_name("left") if n.type != "inc_statement" and n.type != "dec_statement" else n
            targets = named(left) if left is not None else []
            if any(text_of(src, t).strip() == name for t in targets):
                out.append(n)
        elif n.type == "unary_expression" and text_of(src, n.child_by_field_name("operator")) == "&":
            if text_of(src, n.child_by_field_name("operand")).strip() == name:
                out.append(n)
    return out


def _clamp(src: EvolvedSource, stmt: Node, name: str) -> bool:
    """``stmt`` is ``name = X`` inside ``if name > X { ... }`` (or ``X < name``, ``>=``): the count held to a bound."""
    if stmt.type != "assignment_statement" or text_of(src, stmt.child_by_field_name("operator")) != "=":
        return False
    right = named(stmt.child_by_field_name("right"))
    bound = text_of(src, right[0]).strip() if len(right) == 1 else None
    n = stmt.parent
    while n is not None and n.type not in ("if_statement", "function_declaration", "method_declaration"):
        n = n.parent
    cond = n.child_by_field_name("condition") if n is not None and n.type == "if_statement" else None
    if cond is None or cond.type != "binary_expression" or bound is None:
        return False
    op = text_of(src, cond.child_by_field_name("operator"))
    left, right_side = (text_of(src, cond.child_by_field_name(s)).strip() for s in ("left", "right"))
    return (op in (">", ">=") and (left, right_side) == (name, bound)) or (
        op in ("<", "<=") and (left, right_side) == (bound, name)
    )


def _name(src: EvolvedSource, loop: Node, name: str) -> str:
    """The local's own name when it says something, else what the loop does with it."""
    if len(name) > 2:
        return name
    body = text_of(src, loop.child_by_field_name("body") or loop)
    return "sampleCount" if ".Intn(" in body or ".Float64(" in body or "rand." in body else "loopCount"
